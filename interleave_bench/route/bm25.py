"""The ``bm25`` baseline: keyword match of each message against each topic's text (no model).

Exactly as docs/route.md#policies states it, so the reference's published figures
reproduce message for message: tokens are the matches of :data:`WORD` in the lowercased text
(two characters or more; "c++", "v1.2", "e-mail" are one token each), then the overlapping pairs
of each run of :data:`CJK_RUN` (a one-character run gives itself) (:func:`bm25_tokens`, kept apart
from the other routers' tokens whatever the shared text rules become). A query's terms count once
each; a document's with their frequency. Each topic's text is, in closed mode, its thread's
title, description and goal, and in both modes every message routed to it so far. A message goes
to the best-scoring topic when that score reaches :data:`MOVE_THRESHOLD`, else it stays with the
current topic; the first message of a closed-mode session takes the best match whatever its score.
In open mode an unmatched message of :data:`NEW_TOPIC_MIN_TOKENS` or more tokens starts a topic
(as does the first message, which has nothing to match).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from functools import lru_cache
from typing import Sequence

from .base import Decision, RouterView, TopicView
from .text import short_title

#: a word: a letter or digit, then one or more letters, digits or ``_ . + # -`` (the reference's pattern)
WORD = re.compile(r"[a-z0-9][a-z0-9_.+#-]+")
#: a run of Chinese characters: the CJK unified ideographs block only, as the reference reads them
CJK_RUN = re.compile(r"[\u4e00-\u9fff]+")

#: term-frequency saturation: the usual Okapi value
K1 = 1.2
#: length normalisation: the usual Okapi value
B = 0.75
#: a message moves to another topic only on a score this high; below it, keeping the current
#: topic is the safer bet (a wrong move pollutes another topic)
MOVE_THRESHOLD = 1.5
#: an unmatched open-mode message this long is a subject of its own, not a fragment
NEW_TOPIC_MIN_TOKENS = 6


@lru_cache(maxsize=1 << 16)
def bm25_tokens(text: str) -> tuple[str, ...]:
    """The bm25 tokens of ``text``: :data:`WORD` matches of the lowercased text, then each
    :data:`CJK_RUN`'s overlapping pairs (a one-character run gives itself).

    Cached: a topic's messages are tokenised again for every later message of the session.
    """
    lowered = text.lower()
    out = WORD.findall(lowered)
    for run in CJK_RUN.findall(lowered):
        if len(run) == 1:
            out.append(run)
        else:
            out.extend(run[k : k + 2] for k in range(len(run) - 1))
    return tuple(out)


def idf(n_docs: int, doc_freq: int) -> float:
    """Okapi IDF in the non-negative form ``ln(1 + (N - n + 0.5) / (n + 0.5))``.

    The classic form goes negative for a term in more than half the documents, which with the
    three to five topics of a session would punish shared words; this form never does.
    """
    return math.log(1.0 + (n_docs - doc_freq + 0.5) / (doc_freq + 0.5))


def bm25_scores(query: Sequence[str], docs: Sequence[Sequence[str]], *, k1: float = K1, b: float = B) -> list[float]:
    """The BM25 score of ``query`` (tokens) against each of ``docs`` (token lists), in order.

    Each distinct query term counts once (a word said twice weighs as once); a document's terms
    count with their frequency. Document frequencies and the mean length are taken over ``docs``
    themselves. Returns zeros when every document is empty and ``[]`` when there are no documents.
    """
    n = len(docs)
    if n == 0:
        return []
    avgdl = sum(len(d) for d in docs) / n
    if avgdl == 0:
        return [0.0] * n
    df: Counter[str] = Counter()
    for d in docs:
        df.update(set(d))
    tfs = [Counter(d) for d in docs]
    terms = tuple(dict.fromkeys(query))
    out = []
    for d, tf in zip(docs, tfs):
        norm = k1 * (1.0 - b + b * len(d) / avgdl)
        score = 0.0
        for q in terms:
            f = tf.get(q, 0)
            if f:
                score += idf(n, df[q]) * f * (k1 + 1.0) / (f + norm)
        out.append(score)
    return out


def topic_tokens(topic: TopicView) -> list[str]:
    """A topic's text as tokens: its card (title, description, goal) if any, then its messages."""
    out: list[str] = []
    if topic.card is not None:
        out += bm25_tokens(topic.card.title) + bm25_tokens(topic.card.description) + bm25_tokens(topic.card.goal)
    for m in topic.messages:
        out += bm25_tokens(m.text)
    return out


def first_best(scores: Sequence[float]) -> int:
    """The index of the highest of ``scores`` (not empty), the earliest on a tie: ``max`` keeps the
    first of equal values and ``index`` finds the first, both in C (a key function called per
    score took three times the instructions)."""
    return scores.index(max(scores))


def choice(scores: Sequence[float], current: int | None, mode: str, query_len: int, *,
           threshold: float = MOVE_THRESHOLD, new_min_tokens: int = NEW_TOPIC_MIN_TOKENS) -> int | None:
    """What bm25 decides from the topics' ``scores``: a topic's index, or None for a new topic.

    The best topic (the earliest on a tie) when its score reaches ``threshold``; else the
    ``current`` topic (an index, or None before any), except that in open mode a message of
    ``new_min_tokens`` or more (or one with no current topic) opens a topic, and the first
    closed-mode message takes the best whatever its score (a new topic only with no topics)."""
    best = first_best(scores) if scores else None
    if best is not None and scores[best] >= threshold:
        return best
    if mode == "closed":
        return best if current is None else current
    return None if current is None or query_len >= new_min_tokens else current


def best_match(view: RouterView, query: Sequence[str]) -> tuple[str | None, float]:
    """The label of the best-scoring topic and its score (the earliest topic wins a tie)."""
    if not view.topics:
        return None, 0.0
    scores = bm25_scores(query, [topic_tokens(t) for t in view.topics])
    k = first_best(scores)
    return view.topics[k].label, scores[k]


class Bm25Router:
    """The ``bm25`` policy (see the module docstring)."""

    policy = "bm25"
    uses_model = False

    def __init__(self, *, threshold: float = MOVE_THRESHOLD, new_min_tokens: int = NEW_TOPIC_MIN_TOKENS):
        self.threshold = threshold
        self.new_min_tokens = new_min_tokens

    async def route(self, view: RouterView) -> Decision:
        text = view.pending_text()
        query = bm25_tokens(text)
        labels = [t.label for t in view.topics]
        scores = bm25_scores(query, [topic_tokens(t) for t in view.topics])
        # the current topic is always one of the view's (it is the latest message's)
        current = labels.index(view.current) if view.current is not None else None
        k = choice(scores, current, view.mode, len(query), threshold=self.threshold, new_min_tokens=self.new_min_tokens)
        return Decision.to_topic(labels[k]) if k is not None else Decision.new(short_title(text))
