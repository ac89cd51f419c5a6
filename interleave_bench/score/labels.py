"""The rules on a run's labels against its sessions' threads.

Closed mode reads every label as a thread id (docs/score.md#the-metrics-exactly): a run none of
whose labels (``CLARIFY`` and ``ERROR`` aside) names a thread of its session holds something else,
a system's own topic labels or thread ids written otherwise (``T1`` for ``t1``), and scored closed
every message would count as wrong. A run with one label that names a thread is scored, its wrong
labels and all. One rule for every reader of a run: ``score``, ``compare``, ``validate`` and the
``interleave_routing`` module count its labels here and say the same.

Open mode knows no thread id (:func:`card_label`): a label of an open-mode run that names a thread
of its session where an open-mode router would not name its topic so was read off the cards.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Container, Iterable, Optional

import numpy as np

from ..errors import InputError, shown
from ..schema import CLARIFY, ERROR, SPECIAL_LABELS, opened_label

if TYPE_CHECKING:
    from .datafile import DataColumns

#: how the CLI's readers say open mode is asked for
OPEN_MODE = 'in open mode (--mode open, or "mode": "open" in its rows)'


class ThreadLabels:
    """A closed-mode run's labels, counted as they are met, in any order: how many are a topic's
    (not ``CLARIFY`` or ``ERROR``), whether one of them names a thread of its session, and the first
    of them by its place in the input (a line, a row's number). Once one names a thread the rest
    are not counted: the run is scored."""

    def __init__(self) -> None:
        self.own = 0
        self.named = False
        self.first: tuple[int, str] | None = None

    def add(self, place: int, label: str, threads: Container[str]) -> None:
        """One row's label, at ``place``, in a session whose thread ids are ``threads``."""
        if self.named or label in SPECIAL_LABELS:
            return
        self.own += 1
        self.named = label in threads
        if self.first is None or place < self.first[0]:
            self.first = (place, label)

    def add_columns(self, data: DataColumns, session: np.ndarray, codes: np.ndarray, places: np.ndarray) -> None:
        """Rows as arrays against a block of sessions, each one's session position, label's vocab
        code and place: what :meth:`add` counts, a block at once."""
        if self.named:
            return
        words = data.vocab.code
        own = (codes != words.get(CLARIFY, -1)) & (codes != words.get(ERROR, -1))
        if not own.any():
            return
        self.own += int(own.sum())
        self.named = bool((data.thread_number(session[own], codes[own]) >= 0).any())
        at = int(np.flatnonzero(own)[np.argmin(places[own])])
        if self.first is None or int(places[at]) < self.first[0]:
            self.first = (int(places[at]), data.vocab.words()[int(codes[at])])

    @property
    def refused(self) -> bool:
        """Whether some labels are a topic's and not one names a thread: no closed-mode labels."""
        return self.own > 0 and not self.named

    def problem(self, closed: str, open_mode: str) -> str:
        """What is wrong with a run :attr:`refused`, ``closed`` and ``open_mode`` saying the
        modes as its reader is asked for them."""
        assert self.first is not None
        return (f"{closed} reads every label as a thread id, and none of the {self.own:,} labels names a thread of "
                f"its session (first: {shown(self.first[1])}): a system's own topic labels are scored {open_mode}")

    def error(self, source: str, line: int | None) -> InputError:
        """The CLI's one-line error for a run :attr:`refused`, at the first label's ``line``."""
        return InputError(source, line, "pred", self.problem("closed mode", OPEN_MODE))


def card_label(labels: Iterable[tuple[int, str]], threads: Container[str]) -> Optional[tuple[int, str, str]]:
    """The first label of an open-mode session that was read off its thread cards, else None.

    ``labels`` are the session's rows as ``(turn, label)``, in turn order; ``threads`` its thread
    ids. An open-mode router is shown no thread card: it names the topics it opens itself, the
    project's ``t1, t2, ...`` in the order it opens them (:func:`~interleave_bench.schema.opened_label`).
    The data numbers its threads the same way, in the order of their first messages, so a good
    open-mode run's labels may well be its threads' ids. Another system may number its topics from
    0, or on from its last session: the session's first label of that form (``t<k>``) fixes where
    its numbering starts, and the ``n``-th topic the rows open (``CLARIFY`` and ``ERROR`` opening
    none) is named ``t<n + k - m>`` when that label opened topic ``m``. A label that names a thread
    of the session other than as its place in that numbering is a thread id known before its topic
    was opened: ``t3`` as the second topic after ``t1``, ``t1`` after ``t2``, a descriptive id.
    Returns ``(turn, label, expected)`` of the first such row, ``expected`` the name its place has.
    """
    prefix = opened_label("open", 0)[:-1]
    place: dict[str, int] = {}
    offset: Optional[int] = None  # label number less place, fixed by the first numbered label
    for turn, label in labels:
        if label in SPECIAL_LABELS or label in place:
            continue
        place[label] = n = len(place) + 1
        number = label[len(prefix):]
        if offset is None and label.startswith(prefix) and number.isascii() and number.isdigit():
            offset = int(number) - n
        if label in threads and label != (expected := opened_label("open", n + (offset or 0))):
            return turn, label, expected
    return None
