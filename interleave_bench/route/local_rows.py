"""The feature rows of the ``local`` router (:mod:`.local`): the features' names, which of them a
candidate's row holds (its layout), and a decision's candidates scored with weights.

A row holds only the features its layout names (:data:`LAYOUTS`): each other one is 0 for that row
by what the row is (a topic that is not the current one has no current-topic features, a chat of
one person no features of several people, a message of one sentence no overlaps of later ones). A
score adds the products of a row in :data:`FEATURES` order, and adding a product of 0 leaves a sum
as it was bit for bit (``x + 0.0 == x`` for every ``x`` but -0.0, which a sum begun at 0 never
is), so a score over the layout is the score over the full row, with a third of the products
(IRC's rows held 26 zeros of 49). :attr:`Candidates.features` gives the full rows (the fit reads them).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import repeat
from math import exp
from operator import mul, sub
from typing import Sequence

#: the kinds of chat a confidence is calibrated for apart: one person, no replies shown; one
#: person with the assistant's replies; several people (messages with speakers). Their accuracy
#: levels differ, so one map for all would be off for each
CHAT_KINDS = ("plain", "replies", "multi")

#: one name per feature, in weight order. ``topic.*`` describe an existing topic, ``new.*`` the
#: candidate "open a new topic" (open mode), ``oneoff.*`` the candidate "a one-off question".
TOPIC_FEATURES = (
    "topic.head_bm25", "topic.head_best", "topic.head_title", "topic.head_only_here",
    "topic.ref_bm25", "topic.ref_title", "topic.ref_only_here",
    "topic.rest_bm25", "topic.rest_title", "topic.rest_only_here",
    "topic.current", "topic.current_ack", "topic.current_short", "topic.current_anaphora",
    "topic.current_lead", "topic.current_other", "topic.current_unnamed", "topic.current_request",
    "topic.current_asked", "topic.current_answer", "topic.current_done", "topic.title_share", "topic.card_share",
    "topic.head_seen",
    "topic.previous", "topic.previous_other", "topic.gap", "topic.gap_other", "topic.rank", "topic.unseen",
    "topic.speaker_last", "topic.speaker_here", "topic.addressee_last", "topic.addressee_here", "topic.named_me",
    "topic.gap_multi", "topic.rank_multi", "topic.head_bm25_multi",
    "topic.bm25_pick", "topic.bm25_moves", "topic.bm25_share", "topic.head_share",
    "topic.current_replies", "topic.previous_replies", "topic.unseen_replies", "topic.head_bm25_replies",
    "topic.bm25_pick_replies", "topic.current_multi", "topic.bm25_pick_multi",
)
NEW_FEATURES = (
    "new.bias", "new.opener", "new.request", "new.head_bm25_max", "new.vague", "new.length",
    "new.oneoff_opener", "new.first_words", "new.no_speaker", "new.addresses", "new.multi", "new.bm25_pick",
    "new.replies", "new.length_replies", "new.unseen",
)
ONEOFF_FEATURES = (
    "oneoff.bias", "oneoff.opener", "oneoff.head_bm25_max", "oneoff.tail_bm25_max", "oneoff.vague",
    "oneoff.new_opener", "oneoff.length", "oneoff.request", "oneoff.replies", "oneoff.multi",
)
FEATURES = TOPIC_FEATURES + NEW_FEATURES + ONEOFF_FEATURES
#: features that fire in one kind of chat only (:data:`CHAT_KINDS`: with the assistant's replies, or
#: with several people): a chat of another kind never reads them, so they may carry that kind's
#: habits (how often it switches, how far a reply's question holds) without those reaching it
KIND_FEATURES = (
    "topic.current_asked", "topic.current_answer", "topic.current_done",
    "topic.speaker_last", "topic.speaker_here", "topic.addressee_last", "topic.addressee_here", "topic.named_me",
    "topic.gap_multi", "topic.rank_multi", "topic.head_bm25_multi",
    "topic.current_replies", "topic.previous_replies", "topic.unseen_replies", "topic.head_bm25_replies",
    "topic.bm25_pick_replies", "topic.current_multi", "topic.bm25_pick_multi",
    "new.first_words", "new.no_speaker", "new.addresses", "new.multi", "new.replies", "new.length_replies",
    "oneoff.replies", "oneoff.multi",
)
#: the features that say what the bm25 baseline would decide: a fit starts from trusting them, so
#: where the other signals teach nothing that holds, the router keeps bm25's level
BM25_CHOICE_FEATURES = ("topic.bm25_pick", "new.bm25_pick")


def _span(first: str, last: str) -> tuple[str, ...]:
    """The topic features from ``first`` through ``last``, in order."""
    return TOPIC_FEATURES[TOPIC_FEATURES.index(first):TOPIC_FEATURES.index(last) + 1]


# the runs of a topic's row, in order: each but the first sentence's, those of every topic and
# bm25's is 0 for some rows by what they are
_HEAD = _span("topic.head_bm25", "topic.head_only_here")
_PARTS = _span("topic.ref_bm25", "topic.rest_only_here")  # 0 for a message of one part (no later sentence's terms)
_CURRENT = _span("topic.current", "topic.current_done")  # 0 for a topic that is not the current one
_EVERY = _span("topic.title_share", "topic.unseen")
_PEOPLE = _span("topic.speaker_last", "topic.head_bm25_multi")  # 0 in a chat of one person
_BM25 = _span("topic.bm25_pick", "topic.head_share")
#: per kind of chat and whether the topic is the current one, its kind-of-chat features that may be
#: other than 0 (another kind's are 0, and so is ``current_*`` for any other topic)
_KIND = {
    ("plain", False): (), ("plain", True): (),
    ("replies", False): _span("topic.previous_replies", "topic.bm25_pick_replies"),
    ("replies", True): _span("topic.current_replies", "topic.bm25_pick_replies"),
    ("multi", False): ("topic.bm25_pick_multi",),
    ("multi", True): ("topic.current_multi", "topic.bm25_pick_multi"),
}
#: the layouts of a new topic's row and a one-off's: their blocks of :data:`FEATURES` whole
NEW_LAYOUT, ONEOFF_LAYOUT = 0, 1
_NAMES = [NEW_FEATURES, ONEOFF_FEATURES]
#: a topic row's layout by (later sentences have terms, the topic is the current one, several
#: people, kind of chat)
TOPIC_LAYOUT: dict[tuple[bool, bool, bool, str], int] = {}
for _parts in (False, True):
    for _current in (False, True):
        for _people in (False, True):
            for _kind in CHAT_KINDS:
                TOPIC_LAYOUT[_parts, _current, _people, _kind] = len(_NAMES)
                _NAMES.append(_HEAD + (_PARTS if _parts else ()) + (_CURRENT if _current else ()) + _EVERY
                              + (_PEOPLE if _people else ()) + _BM25 + _KIND[_kind, _current])
#: per layout, the :data:`FEATURES` entries a row of it holds, in order
LAYOUTS = tuple(tuple(FEATURES.index(name) for name in names) for names in _NAMES)


@dataclass(frozen=True)
class Candidates:
    """The candidates of one decision and their feature rows (one row per candidate).

    ``rows[k]`` holds only the features of its layout (``LAYOUTS[layouts[k]]``: every other feature
    of the candidate is 0), so a decision multiplies no zeros; :attr:`features` gives the full rows."""

    labels: tuple[str, ...]  # topic labels, then NEW (open mode), then ONEOFF (when offered)
    layouts: tuple[int, ...]
    rows: list[list[float]]
    kind: str = "plain"  # the kind of chat (:func:`~.local.chat_kind`)

    @property
    def features(self) -> list[list[float]]:
        """One row per candidate over every entry of :data:`FEATURES`."""
        out = []
        for layout, row in zip(self.layouts, self.rows):
            full = [0.0] * len(FEATURES)
            for k, x in zip(LAYOUTS[layout], row):
                full[k] = x
            out.append(full)
        return out


def split_weights(weights: Sequence[float]) -> tuple[tuple[float, ...], ...]:
    """``weights`` (one per :data:`FEATURES` entry) as the weights of each layout's row."""
    w = [float(x) for x in weights]
    return tuple(tuple(w[k] for k in layout) for layout in LAYOUTS)


def best_of(cands: Candidates, weights: Sequence[Sequence[float]]) -> tuple[int, float]:
    """The index of the best-scoring candidate (the first on a tie) and its softmax probability,
    with ``weights`` split by layout (:func:`split_weights`)."""
    scores = [sum(map(mul, row, weights[layout])) for layout, row in zip(cands.layouts, cands.rows)]
    top = max(scores)
    return scores.index(top), 1.0 / sum(map(exp, map(sub, scores, repeat(top))))  # (exp(x - top), in order)
