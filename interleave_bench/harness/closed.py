"""Closed mode one message at a time on the true history: the documents of the lm-eval task.

Each strict message (docs/score.md#accuracy: a thread message the independent reading does not
dispute) is one document. Its prompt is the model router's request for that message
(:func:`~interleave_bench.route.payload.build_messages`) as the router would see it had every
earlier message gone where the ``oracle`` sends it: the gold thread, a one-off to a side topic of
its own. An answer is read by the model router's validation (:func:`~interleave_bench.route.answer.parse_one`);
an unusable one is an ``ERROR`` (one generation, no retry). Its outcome is the scorer's: the
session is replayed by :func:`~interleave_bench.score.routing.score_session` with the gold
history, the answer's label at the message and nothing after, so a document's ``accuracy`` and
``weighted_error`` are the scorer's figures for that message, and their means over documents are
the pooled figures of ``score``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Coroutine, Iterator, Sequence

from ..route.answer import AnswerError, parse_one
from ..route.base import Decision, RouterView, conversation_of, gold_of
from ..route.baselines import OracleRouter
from ..route.payload import build_messages
from ..route.runner import _label_for
from ..route.topic_state import TopicState
from ..schema import PredictionRow, Session
from ..score.routing import OUTCOME_COST, score_session

#: the one mode these documents are in: the thread cards are known, the history is gold
MODE = "closed"


def _sync(coro: Coroutine[Any, Any, Decision]) -> Decision:
    """The result of a router coroutine that never waits (the oracle's), without an event loop."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    raise RuntimeError("the oracle waited on something")


@dataclass
class Step:
    """The moment before turn ``k`` is routed: the topics so far and the router's view."""

    k: int
    state: TopicState
    view: RouterView
    labels: list[str]  # the gold-history label of every earlier turn, in order


def replay(session: Session) -> Iterator[Step]:
    """One :class:`Step` per turn, in order, the history routed by the oracle. A step is valid
    only until the next one is drawn (the topic state moves on)."""
    conv = conversation_of(session)
    gold = gold_of(session)
    oracle = OracleRouter()
    state = TopicState(conv, MODE)
    labels: list[str] = []
    for k, msg in enumerate(conv.messages):
        view = state.view([msg])
        yield Step(k, state, view, labels)
        label = _label_for(state, _sync(oracle.route_with_gold(view, gold)), {}, 0)
        state.record(msg, label)
        labels.append(label)


def is_strict(session: Session, k: int) -> bool:
    turn = session.turns[k]
    return turn.gold.thread is not None and not turn.ambiguous


def documents(sessions: Sequence[Session]) -> list[dict[str, Any]]:
    """One document per strict message: ``system`` and ``user`` (the routing request), the gold
    ``thread``, and what scoring needs (``session`` as JSON, turn index ``k``, ``session_id``, ``i``)."""
    docs: list[dict[str, Any]] = []
    for s in sessions:
        dumped = json.dumps(s.dump(), ensure_ascii=False, sort_keys=True)
        for step in replay(s):
            if not is_strict(s, step.k):
                continue
            system, user = build_messages(step.view, each=False)
            docs.append({"session_id": s.session_id, "i": s.turns[step.k].i, "k": step.k, "lang": s.lang,
                         "system": system["content"], "user": user["content"],
                         "thread": s.turns[step.k].gold.thread, "session": dumped})
    return docs


@lru_cache(maxsize=64)
def _session(dumped: str) -> Session:
    return Session.model_validate_json(dumped)


@dataclass(frozen=True)
class Judged:
    """An answer to one document: the label it gives, its outcome and cost (docs/score.md#weighted-error)."""

    pred: str
    outcome: str
    correct: bool
    cost: int


def judge(doc: dict[str, Any], answer: str) -> Judged:
    """The scorer's verdict on ``answer`` to ``doc`` (see the module docstring)."""
    session = _session(doc["session"])
    k = int(doc["k"])
    step = next(st for st in replay(session) if st.k == k)
    try:
        decision = parse_one(answer, step.view)
    except AnswerError as exc:
        decision = Decision.failed(f"invalid answer: {exc.problem}")
    pred = _label_for(step.state, decision, {}, 0)
    rows = {t.i: PredictionRow(session_id=session.session_id, i=t.i, pred=label)
            for t, label in zip(session.turns, step.labels)}
    rows[session.turns[k].i] = PredictionRow(session_id=session.session_id, i=session.turns[k].i, pred=pred)
    scored = score_session(session, rows, MODE)
    outcome = scored.outcomes[k]
    return Judged(pred, outcome, scored.correct[k], OUTCOME_COST[outcome])
