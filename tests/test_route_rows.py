"""The rows the runner writes are the schema's own: each one equals ``PredictionRow(**row).dump()``,
key order and value types included, whatever shape the decisions behind it give it."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interleave_bench.route.base import BurstFailure, Decision, RouterView
from interleave_bench.route.runner import RouteOptions, route_session
from interleave_bench.schema import PredictionRow, Session

from _route_util import random_session

TEXT = st.text(st.characters(min_codepoint=32, max_codepoint=0x2FF), min_size=1, max_size=8)
#: a usage as a model call counts it: never more cached tokens than sent
USAGE = st.none() | st.integers(0, 10**6).flatmap(lambda sent: st.fixed_dictionaries(
    {"input": st.just(sent), "output": st.integers(0, 10**6), "cache_hit": st.integers(0, sent)},
    optional={"unreported": st.integers(0, 3)}))
#: a whole number of milliseconds or not, as an int or a float
ELAPSED = st.none() | st.integers(0, 10**6) | st.floats(0, 10**6) | st.integers(0, 10**6).map(float)
#: a float, or an int (0 or 1) that is written as a float
CONFIDENCE = st.none() | st.floats(0, 1) | st.integers(0, 1)
VIA = st.sampled_from(["baseline", "local", "rule-ack", "llm"]) | TEXT
REFS = st.none() | st.lists(TEXT | st.integers(0, 9), max_size=3).map(tuple)
#: extra fields are written as JSON makes them: a tuple as a list
ERROR = TEXT | TEXT.map(lambda t: (t,))


class Scripted:
    """A router whose every decision is drawn by hypothesis: any kind, any optional field."""

    policy = "scripted"
    uses_model = False

    def __init__(self, data: Any, model: Any):
        self.data = data
        if model is not None:
            self.model = model

    def decision(self, view: RouterView) -> Decision:
        kinds = ["new", "clarify", "error"] + ["topic"] * bool(view.topics)
        kind = self.data.draw(st.sampled_from(kinds))
        fields = dict(refs=self.data.draw(REFS), via=self.data.draw(VIA), usage=self.data.draw(USAGE),
                      elapsed_ms=self.data.draw(ELAPSED), confidence=self.data.draw(CONFIDENCE))
        if kind == "topic":
            return Decision.to_topic(self.data.draw(st.sampled_from(view.labels())), **fields)
        if kind == "error":
            return Decision.failed(self.data.draw(ERROR), **fields)
        return Decision(kind, title="a title" if kind == "new" else "", **fields)

    async def route(self, view: RouterView) -> Decision:
        return self.decision(view)



class ScriptedEach(Scripted):
    """:class:`Scripted` that can decide a burst in one go, or fail to."""

    async def route_each(self, view: RouterView) -> Any:
        if self.data.draw(st.booleans()):
            return BurstFailure(self.data.draw(ERROR), usage=self.data.draw(USAGE), elapsed_ms=self.data.draw(ELAPSED))
        return [self.decision(view) for _ in view.pending]


@settings(max_examples=60, deadline=None)
@given(st.data(), st.integers(0, 10**6), st.sampled_from(["closed", "open"]),
       st.sampled_from(["none", "all", "adaptive"]), st.sampled_from(["one", "each"]),
       st.sampled_from([None, "org/model:tag", ("org", "model")]), st.booleans())
def test_every_row_is_written_as_the_schema_dumps_it(data, seed, mode, merge, decide, model, each):
    if merge == "none":
        decide = "one"
    s = Session.model_validate(random_session(random.Random(seed), f"r{seed}", n_turns=12))
    opts = RouteOptions(mode=mode, policy="scripted", merge=merge, decide=decide, same=0.8, cross=0.5, seed=seed)
    rows, counts = asyncio.run(route_session(s, (ScriptedEach if each else Scripted)(data, model), opts))
    assert len(rows) == counts.messages == len(s.turns)
    for row in rows:
        dumped = PredictionRow(**row).dump()
        assert json.dumps(row) == json.dumps(dumped) and row == dumped


class Fixed:
    """A router that answers every message alike, and fails every burst alike."""

    policy = "fixed"
    uses_model = False

    def __init__(self, decision: Decision, failure: BurstFailure, model: Any):
        self.decision, self.failure, self.model = decision, failure, model

    async def route(self, view: RouterView) -> Decision:
        return self.decision

    async def route_each(self, view: RouterView) -> Any:
        return self.failure


@pytest.mark.parametrize("decision, reason, model", [
    (Decision.new("a", refs=("x", 3)), "why", None),  # a number among the refs: written as text
    (Decision.new("a", elapsed_ms=12.0), "why", None),  # a whole float of milliseconds: as an int
    (Decision.new("a", elapsed_ms=12.5), "why", None),
    (Decision.new("a", confidence=1), "why", None),  # an int confidence: as a float
    (Decision.failed(("no",)), "why", None),  # an extra field's tuple: as a list
    (Decision.new("a", via="v"), ("why",), None),
    (Decision.new("a", via="v"), "why", ("org", "model")),
    (Decision.new("a", via="v", refs=("x",), elapsed_ms=3, confidence=0.5, usage={"input": 1, "output": 2,
     "cache_hit": 0, "unreported": 1}), "why", "org/model"),  # plain values: written as they are
])
def test_rows_of_other_values_are_written_as_the_schema_dumps_them(decision, reason, model):
    s = Session.model_validate(random_session(random.Random(1), "r1", n_turns=12))
    opts = RouteOptions(mode="open", policy="fixed", merge="all", decide="each", same=0.9, cross=0.9)
    rows, counts = asyncio.run(route_session(s, Fixed(decision, BurstFailure(reason), model), opts))
    assert counts.fallback and counts.fallback < counts.messages == len(rows)
    for row in rows:
        dumped = PredictionRow(**row).dump()
        assert json.dumps(row) == json.dumps(dumped) and row == dumped
