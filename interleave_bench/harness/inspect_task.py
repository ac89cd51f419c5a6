"""The inspect_ai task ``interleavebench/routing``: the whole sequential routing task, as ``route`` runs it.

One sample per session. The solver routes the session's messages in order with the model router
(:class:`~interleave_bench.route.model.ModelRouter`: the project's routing prompt, payload, answer
validation and retry) driven by the runner's own session loop
(:func:`~interleave_bench.route.runner.route_session`), with inspect's model in place of the
project's client (:class:`InspectModel`). Its prediction rows are kept in the sample's store
(:data:`~.names.PREDICTIONS_KEY`), so ``interleave-bench import inspect LOG`` writes them out as a
predictions file. The scorer replays each session with the scorer's
:func:`~interleave_bench.score.routing.score_session` and keeps its sufficient statistics on the
sample's score; each metric pools them over the samples with the scorer's formulas
(:func:`~interleave_bench.score.routing.point_metrics`), so the log's figures are ``score``'s on
the same decisions (docs/harness.md#how-the-numbers-relate-to-score).
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ModelOutput,
    get_model,
)
from inspect_ai.scorer import SampleScore, Score, Target, metric, scorer
from inspect_ai.solver import Generate, TaskState, solver

from ..llm.client import KIND_HEADER, ModelCallError, Reply, Usage
from ..route.model import ModelRouter
from ..route.prompt import prompt_fingerprint
from ..route.runner import RouteOptions, route_session
from ..schema import JUDGE_NONE, PredictionRow, Session
from ..score.bcubed import prf, sequential_sum
from ..score.defaults import DEFAULT_SPLIT, check_mode
from ..score.routing import COL, POOLED, point_metrics, score_session
from .data import load
from .names import INSPECT_OPEN_MODE, POSITION_KEY, PREDICTIONS_KEY, SESSION_KEY, TASK

#: the policy the solver runs: every message goes to the model
POLICY = "llm"
#: temperature of every routing call: the project's client asks for 0 (reproducible decisions)
ROUTE_TEMPERATURE = 0.0
#: the score metadata keys: the session's sufficient statistics and its B-cubed terms
STATS, BCUBED_P, BCUBED_R = "stats", "bcubed_precision", "bcubed_recall"

_ROLES = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}


class InspectModel:
    """Inspect's model behind the model router's client interface (``complete``, ``reject``, ``model``).

    Each request carries the project's request-kind header, as the project's client sends it (real
    providers ignore it; the project's fake server answers by it). A call that fails is a
    :class:`~interleave_bench.llm.client.ModelCallError`, which the router turns into an ``ERROR``
    row as in ``route``.
    """

    def __init__(self, model: Model):
        self.inspect_model = model
        self.model = str(model)

    async def complete(self, kind: str, messages: list[dict[str, str]], *, attempt: int = 0, what: str = "") -> Reply:
        chat = [_ROLES[m["role"]](content=m["content"]) for m in messages]
        config = GenerateConfig(temperature=ROUTE_TEMPERATURE, extra_headers={KIND_HEADER: kind})
        try:
            out = await self.inspect_model.generate(chat, config=config)
        except Exception as exc:  # noqa: BLE001 - any failure of the call is one ERROR row, as in route
            reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise ModelCallError(kind, what, reason) from None
        if out.error:
            raise ModelCallError(kind, what, out.error)
        return Reply(text=out.completion, usage=_usage(out), elapsed_ms=round((out.time or 0.0) * 1000),
                     cached=False, model=self.model)

    def reject(self, reply: Reply) -> None:
        """Nothing to forget: inspect's own cache is the user's choice (``--cache``)."""


def _usage(out: ModelOutput) -> Usage:
    """The row's usage: input counts every prompt token, cached ones included, as the project's client does."""
    u = out.usage
    if u is None:
        return Usage()
    cached = u.input_tokens_cache_read or 0
    return Usage(input=u.input_tokens + cached + (u.input_tokens_cache_write or 0), cached_input=cached,
                 output=u.output_tokens)


def _session(state: TaskState) -> Session:
    return Session.model_validate(state.metadata[SESSION_KEY])


@solver
def route_messages(mode: str):
    """Route the sample's session message by message with the model router (``route --policy llm``)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        router = ModelRouter(InspectModel(get_model()))
        rows, _ = await route_session(_session(state), router, RouteOptions(mode=mode, policy=POLICY))
        state.store.set(PREDICTIONS_KEY, rows)
        lines = "\n".join(f"turn {r['i']}: {r['pred']}" + (f" ({r['error']})" if "error" in r else "") for r in rows)
        state.output = ModelOutput.from_content(model=router.model, content=lines)
        return state

    return solve


def _pooled(scores: list[SampleScore]) -> dict[str, Optional[float]]:
    """Every pooled metric of the scored samples, as ``score`` computes and rounds it."""
    metas = [s.score.metadata or {} for s in scores]
    matrix = np.array([m[STATS] for m in metas if STATS in m], dtype=np.float64).reshape(-1, len(COL))
    p = sequential_sum(x for m in metas for x in m.get(BCUBED_P, []))
    r = sequential_sum(x for m in metas for x in m.get(BCUBED_R, []))
    n = sum(len(m.get(BCUBED_P, [])) for m in metas)
    return point_metrics(matrix.sum(axis=0), (None, None), prf(p, r, n))


def _metric_of(key: str):
    """The inspect metric named ``key``: the pooled figure, NaN where ``score`` has none (``null``)."""

    @metric(name=key)
    def pooled():
        def compute(scores: list[SampleScore]) -> float:
            value = _pooled(scores)[key]
            return float("nan") if value is None else value

        return compute

    return pooled


#: the project's pooled metrics, as inspect metrics (registered once, at import)
METRICS = {m.key: _metric_of(m.key) for m in POOLED}


@scorer(metrics=[make() for make in METRICS.values()])
def routing_scorer(mode: str):
    """Score the session's rows as ``score`` does; the value is the session's accuracy (NaN without
    strict messages), the metadata its statistics for pooling."""

    async def score(state: TaskState, target: Target) -> Score:
        return session_score(_session(state), state.store.get(PREDICTIONS_KEY, []), mode)

    return score


def session_score(session: Session, rows: list[dict[str, Any]], mode: str) -> Score:
    """The score of one session's prediction rows: the scorer's replay, its counts kept for pooling."""
    scored = score_session(session, {r["i"]: PredictionRow(**r) for r in rows}, mode)
    counts = scored.counts or [0.0] * len(COL)
    strict = counts[COL["strict"]]
    value = counts[COL["strict_correct"]] / strict if strict else float("nan")
    return Score(value=value, answer=" ".join(scored.labels),
                 explanation=", ".join(f"turn {t.i}: {o}" for t, o in zip(session.turns, scored.outcomes)),
                 metadata={STATS: counts, BCUBED_P: scored.p_terms, BCUBED_R: scored.r_terms})


def _sample(session: Session, position: int) -> Sample:
    gold = [t.gold.thread or JUDGE_NONE for t in session.turns]  # a one-off belongs to no thread
    text = "\n".join(f"turn {t.i}: {t.text}" for t in session.turns)
    return Sample(id=session.session_id, input=text, target=gold,
                  metadata={SESSION_KEY: session.dump(), POSITION_KEY: position})


def routing_task(data: str, mode: str = "closed", split: str = DEFAULT_SPLIT) -> Task:
    """The task on ``data``'s ``split`` (any data argument of the project) in ``mode``."""
    check_mode(mode, "mode")
    got = load(data, split, mode, open_option=INSPECT_OPEN_MODE)
    dataset = MemoryDataset([_sample(s, k) for k, s in enumerate(got.sessions)], name=f"interleavebench-{split}")
    meta: dict[str, Any] = {"data": got.source, "split": split, "mode": mode, "policy": POLICY,
                            "data_fingerprint": got.fingerprint, "prompt": prompt_fingerprint()}
    return Task(dataset=dataset, solver=route_messages(mode), scorer=routing_scorer(mode),
                config=GenerateConfig(temperature=ROUTE_TEMPERATURE), metadata=meta, name=TASK)
