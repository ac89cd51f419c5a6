"""The leak check: a message meant to be vague that still names its subject.

A ``pronoun`` or ``implicit`` message must not contain its thread's title nor any of its fact values,
except the value the message itself states or changes (that is new information, not a pointer).
The offline writer also knows each thread's distinctive words and forbids those too. A message that
still leaks after its one rewrite is tagged ``leak``.
"""

from __future__ import annotations

from typing import Iterable

from ..schema import Thread
from .plan import PlanRow
from .text import find, normalize

#: the styles that must not name their subject
VAGUE_STYLES = ("pronoun", "implicit")


def is_vague(row: PlanRow) -> bool:
    return row.style in VAGUE_STYLES


def allowed_values(row: PlanRow) -> list[str]:
    """The values a vague message may carry: the fact it states or changes."""
    if row.fact is None:
        return []
    return [v for v in (row.fact.value, row.fact.previous) if v]


def forbidden_for(row: PlanRow, thread: Thread, words: Iterable[str] = ()) -> list[str]:
    """What a vague message of ``thread`` must not contain (title, values, distinctive ``words``)."""
    allowed = {normalize(v) for v in allowed_values(row)}
    out = [thread.title, *words]
    for f in thread.facts:
        for v in (f.value, f.update):
            if v and normalize(v) not in allowed:
                out.append(v)
    seen: set[str] = set()
    unique = []
    for x in out:
        if x and normalize(x) not in seen:
            seen.add(normalize(x))
            unique.append(x)
    return unique


def leak_hits(
    text: str, row: PlanRow, thread: Thread, lang: str, words: Iterable[str] = (), allowed: Iterable[str] = ()
) -> list[str]:
    """The forbidden strings a vague message contains (empty for a clean or non-vague message).

    The fact the message states is new information, not a pointer: its value (and, given in
    ``allowed``, the words naming it, such as its label) are blanked out before the check, so a
    distinctive word inside them ("Stillpoint *Yoga*") does not count.
    """
    if not is_vague(row):
        return []
    norm = normalize(text)
    for a in sorted({normalize(x) for x in [*allowed_values(row), *allowed] if x}, key=len, reverse=True):
        norm = norm.replace(a, " | ")
    return [w for w in forbidden_for(row, thread, words) if find(norm, w, lang) >= 0]
