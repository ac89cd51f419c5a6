"""How common each token is in chat at large: the ``local`` router's background weights.

BM25's IDF is taken over one chat's few topics, where it cannot tell a filler word from a subject:
with four topics, a "thanks" or "make" that one topic happens to hold weighs as much as that
topic's "itinerary", and an "ok thanks, make it shorter" follows the word to the wrong topic. The
background says how common each token is across many chats: every message and every assistant's
reply of the fit's corpora is a document, and each corpus weighs the same. A token's weight is
its IDF over that background (BM25's form) as a share of the IDF of a token the background never
saw, raised to :data:`POWER`, so it runs from near 0 (in every message) to 1 (never seen):

    share(q) = mean over corpora of (messages holding q / messages)
    weight(q) = (ln((1 + 2e) / (share(q) + e)) / ln((1 + 2e) / e)) ** POWER,   e = 0.5 / all messages

A token seen in fewer than :data:`MIN_MESSAGES` messages weighs as an unseen one. Where the
background holds no token at all of a kind (:data:`TOKEN_KINDS`: words, Chinese), as a fit whose
corpora are English only has no Chinese, every token of that kind weighs what the background's
tokens weigh on average where they occur (``absent``): nothing is known of them, and weighing
them 1 would make their overlaps count far more than the words the weights were fitted on.

In both modes (:data:`~.local.BACKGROUND_IN`) the router multiplies each shared term's BM25
contribution by its weight, and weighs each word of the first sentence by it in the share of
them a card has. The weights live in the weights file (``background``); a fit
builds its background from the sessions it fits on (:mod:`.local_corpora`), so a corpus left out
of a fit is left out of its background too.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Collection, Iterable, Iterator, Mapping, Optional, Sequence

from ..errors import InputError
from ..schema import Session
from .local_text import body
from .text import tokens

#: messages of the background a token must be in to weigh less than an unseen token (a token in
#: one message is noise, and keeping it would double the file for a weight of about 0.9)
MIN_MESSAGES = 2
#: the kinds of token: English words (and digits) and Chinese character pairs
TOKEN_KINDS = ("word", "chinese")
#: the power a token's IDF share is raised to. A message shares a dozen filler words ("i", "to",
#: "for", "it") with any long topic, and at their plain share (0.12 to 0.3 of an unseen word's) they
#: summed to more than its one or two subject words: a new subject's first message went to the
#: longest topic. Squared they weigh 0.01 to 0.1 and a subject word still over 0.3. Refitted, the
#: power 2 lifted the mean left-out accuracy at the chosen penalty 0.592 -> 0.611 and every
#: left-out row but the offline writer's data closed (0.820 -> 0.814, its ECE 0.065 -> 0.035);
#: the power 3 gave 0.611 too, but the offline writer's data left out chose penalty 100 and fell
#: to 0.771 closed and 0.515 open (docs/local_history.md#the-background)
POWER = 2
#: decimals a weight is kept to (in the file and in the fit alike)
DECIMALS = 4


def token_kind(token: str) -> str:
    """The :data:`TOKEN_KINDS` entry of a token of :func:`~.text.tokens` (Chinese from U+3400)."""
    return "chinese" if token[0] >= "\u3400" else "word"


class Lookup(dict):
    """Token -> weight, read with ``[]``: a token the table lacks weighs 1 (never seen), or what
    its kind weighs where the background has none of that kind (``absent``)."""

    __slots__ = ("absent",)

    def __missing__(self, token: str) -> float:
        return self.absent.get(token_kind(token), 1.0) if self.absent else 1.0


@dataclass(frozen=True)
class Background:
    """Token weights (0..1] and the weight of every token of a kind the background lacks."""

    weights: Mapping[str, float] = field(default_factory=dict)
    absent: Mapping[str, float] = field(default_factory=dict)
    messages: int = 0
    #: the weights as one :class:`Lookup` (what the router reads, a C dict lookup per term)
    lookup: Lookup = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        lookup = Lookup(self.weights)
        lookup.absent = dict(self.absent)
        object.__setattr__(self, "lookup", lookup)

    def weight(self, token: str) -> float:
        """The weight of ``token``."""
        return self.lookup[token]

    def to_json(self) -> dict[str, Any]:
        return {"messages": self.messages, "absent": dict(sorted(self.absent.items())),
                "tokens": dict(sorted(self.weights.items()))}

    @classmethod
    def from_json(cls, doc: Any, source: str) -> "Background":
        """The background of a document written by :meth:`to_json`; raises :class:`InputError`
        naming ``source`` (the weights file) and the field."""
        if not isinstance(doc, dict):
            raise InputError(source, None, "background", "must be an object")
        parts = {}
        for name in ("tokens", "absent"):
            part = doc.get(name)
            if not isinstance(part, dict):
                raise InputError(source, None, f"background.{name}", "must be an object")
            for key, value in part.items():
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 < value <= 1.0:
                    raise InputError(source, None, f"background.{name}.{key}", f"must be a number in (0, 1], got {value!r}")
            parts[name] = {k: float(v) for k, v in part.items()}
        unknown = [k for k in parts["absent"] if k not in TOKEN_KINDS]
        if unknown:
            raise InputError(source, None, "background.absent", f"has unknown kind {unknown[0]!r}")
        messages = doc.get("messages")
        if isinstance(messages, bool) or not isinstance(messages, int) or messages < 0:
            raise InputError(source, None, "background.messages", f"must be a count, got {messages!r}")
        return cls(parts["tokens"], parts["absent"], messages)


#: no background: every token weighs 1 (the overlaps as BM25 alone gives them)
EMPTY = Background()


def weighed_count(terms: Collection[str], lookup: Optional[Mapping[str, float]]) -> float:
    """How many ``terms`` there are, each weighing as common as ``lookup`` says
    (:attr:`Background.lookup`; None: each weighs 1). fsum: exactly rounded, whatever the order
    of a set."""
    return math.fsum(map(lookup.__getitem__, terms)) if lookup is not None else float(len(terms))


def session_texts(sessions: Iterable[Session]) -> Iterator[str]:
    """The documents of a background from ``sessions``: each message (without its speaker's name)
    and each assistant's reply."""
    for s in sessions:
        for t in s.turns:
            yield body(t.text, t.speaker)
            if t.assistant:
                yield t.assistant


def build_background(corpora: Sequence[Iterable[str]]) -> Background:
    """The background of ``corpora`` (each the texts of one corpus, :func:`session_texts`), each
    corpus weighing the same (see the module's text)."""
    holding: list[Counter] = []
    sizes: list[int] = []
    for texts in corpora:
        counts: Counter = Counter()
        n = 0
        for text in texts:
            counts.update(set(tokens(text)))
            n += 1
        if n:
            holding.append(counts)
            sizes.append(n)
    total = sum(sizes)
    if not total:
        return EMPTY
    k = len(sizes)
    share: dict[str, float] = {}
    pooled: Counter = Counter()
    for counts, n in zip(holding, sizes):
        pooled.update(counts)
        for q, m in counts.items():
            share[q] = share.get(q, 0.0) + m / n / k
    e = 0.5 / total
    unseen = math.log((1.0 + 2.0 * e) / e)
    weights = {q: round((math.log((1.0 + 2.0 * e) / (share[q] + e)) / unseen) ** POWER, DECIMALS)
               for q in sorted(pooled) if pooled[q] >= MIN_MESSAGES}
    kinds = {token_kind(q) for q in weights}
    absent: dict[str, float] = {}
    if weights and len(kinds) < len(TOKEN_KINDS):
        typical = _typical(holding, weights)
        absent = {kind: typical for kind in TOKEN_KINDS if kind not in kinds}
    return Background(weights, absent, total)


def _typical(per_corpus: Sequence[Counter], weights: Mapping[str, float]) -> float:
    """The mean weight of a kept token over the messages it is in, each corpus weighing the same."""
    means = []
    for counts in per_corpus:
        kept = [(weights[q], m) for q, m in counts.items() if q in weights]
        n = sum(m for _, m in kept)
        if n:
            means.append(math.fsum(w * m for w, m in kept) / n)
    return round(math.fsum(means) / len(means), DECIMALS) if means else 1.0
