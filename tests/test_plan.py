"""The seeded plan: observed rates over 2,000 plans match the configured parameters; invariants hold."""

from __future__ import annotations

import dataclasses
import math
from collections import Counter, defaultdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interleave_bench.errors import UsageError
from interleave_bench.generate.plan import (
    FACT_STATE,
    FACT_UPDATE,
    PlanOptions,
    PlanRow,
    derive_seed,
    draw_shape,
    plan_session,
    skeleton_threads,
)

N_PLANS = 2000
#: how many binomial standard errors an observed rate may sit from its parameter: wide enough that
#: the test never flakes (p ~ 7e-6 per check), narrow enough to catch a parameter off by a little
SIGMAS = 4.5


def plans(n: int, options: PlanOptions, seed: int = 11):
    for k in range(n):
        shape = draw_shape(derive_seed(seed, k, "shape"), options)
        threads = skeleton_threads(shape)
        yield shape, threads, plan_session(threads, shape.n_turns, derive_seed(seed, k, "plan"), options)


def observe(n: int, options: PlanOptions, seed: int = 11) -> dict[str, list[int]]:
    """``{rate name: [hits, trials]}``, each trial an independent draw with the parameter's chance."""
    obs: dict[str, list[int]] = defaultdict(lambda: [0, 0])

    def count(name: str, hit: bool) -> None:
        obs[name][0] += int(hit)
        obs[name][1] += 1

    for shape, threads, rows in plans(n, options, seed):
        count("twin", shape.twin is not None)
        facts = {t.id: t.facts for t in threads}
        started: list[str] = []
        stated: dict[str, dict[str, int]] = defaultdict(dict)  # thread -> key -> turn stated
        updated: set[tuple[str, str]] = set()
        for r in rows:
            if r.action == "new":
                assert r.style == "explicit"
                others = list(started)
                started.append(r.thread)
            else:
                count("oneoff", r.action == "oneoff")
                if len(started) >= 2:
                    count("move", r.action in ("switch", "return"))
                if r.action == "oneoff":
                    continue
                others = [t for t in started if t != r.thread]
                group = "continue" if r.action == "continue" else "move"
                for style in ("implicit", "pronoun", "explicit", "cue"):
                    count(f"{group}:{style}", r.style == style)
                # a later turn of a thread with facts still pending states the next one
                pending = len(facts[r.thread]) - len(stated[r.thread])
                if pending:
                    count("fact_later", r.fact is not None and r.fact.kind == FACT_STATE)
                if not (r.fact is not None and r.fact.kind == FACT_STATE):
                    eligible = [
                        k for k, at in stated[r.thread].items()
                        if (r.thread, k) not in updated and r.i - at >= options.update_gap
                        and next(f for f in facts[r.thread] if f.key == k).update
                    ]
                    if eligible:
                        count("update", r.fact is not None and r.fact.kind == FACT_UPDATE)
            if others:
                count("cross", bool(r.refs))
            if r.fact is not None and r.fact.kind == FACT_STATE:
                stated[r.thread][r.fact.key] = r.i
            if r.fact is not None and r.fact.kind == FACT_UPDATE:
                updated.add((r.thread, r.fact.key))
    return obs


def expected(o: PlanOptions) -> dict[str, float]:
    out = {
        "twin": o.twin_p, "oneoff": o.oneoff_p, "move": o.move_p, "cross": o.cross_p,
        "fact_later": o.fact_later_p, "update": o.update_p,
    }
    for group, weights in (("continue", o.continue_styles), ("move", o.move_styles)):
        w = dict(weights)
        for style in ("implicit", "pronoun", "explicit", "cue"):
            out[f"{group}:{style}"] = w.get(style, 0.0)
    return out


def off_rates(obs: dict[str, list[int]], exp: dict[str, float]) -> dict[str, str]:
    """The rates outside ``SIGMAS`` binomial standard errors of their parameter."""
    bad = {}
    for name, p in exp.items():
        hits, n = obs[name]
        assert n > 0, name
        rate = hits / n
        se = math.sqrt(max(p * (1 - p), 1e-12) / n)
        tol = SIGMAS * se if 0 < p < 1 else 0.0
        if abs(rate - p) > tol:
            bad[name] = f"{rate:.4f} vs {p} (n={n}, tolerance {tol:.4f})"
    return bad


def test_rates_over_2000_plans_match_the_design_defaults():
    o = PlanOptions()
    obs = observe(N_PLANS, o)
    assert obs["twin"][1] == N_PLANS
    # enough trials that the tolerances are tight: a parameter off by a fifth is caught
    assert obs["oneoff"][1] > 80_000 and obs["cross"][1] > 60_000 and obs["move:cue"][1] > 20_000
    assert off_rates(obs, expected(o)) == {}


def test_the_rate_check_catches_a_wrong_parameter():
    # The same measurement on plans drawn with other parameters must fail against the defaults,
    # parameter by parameter: the check above is not vacuous.
    drawn = PlanOptions(oneoff_p=0.065, move_p=0.34, cross_p=0.15, twin_p=0.65,
                        continue_styles=(("implicit", 0.40), ("pronoun", 0.28), ("explicit", 0.32)))
    bad = off_rates(observe(N_PLANS // 2, drawn, seed=5), expected(PlanOptions()))
    assert {"oneoff", "move", "cross", "twin", "continue:implicit"} <= set(bad)


def test_plan_is_a_pure_function_of_its_arguments():
    shape = draw_shape(123)
    threads = skeleton_threads(shape)
    a = plan_session(threads, shape.n_turns, 99)
    b = plan_session(threads, shape.n_turns, 99)
    c = plan_session(threads, shape.n_turns, 100)
    assert a == b and a != c
    assert draw_shape(123) == shape


def check_invariants(shape, threads, rows: list[PlanRow], o: PlanOptions) -> None:
    n = shape.n_turns
    assert [r.i for r in rows] == list(range(n))
    ids = [t.id for t in threads]
    twins = {t.id for t in threads if t.twinOf} | {t.twinOf for t in threads if t.twinOf}
    starts = {r.thread: r.i for r in rows if r.action == "new"}
    assert list(starts) == ids, "every thread starts once, in order"
    assert rows[0].action == "new" and rows[0].thread == ids[0] and rows[0].i == 0
    later = sorted(starts.values())[1:]
    window = math.ceil(o.start_window * n)
    for a, b in zip([0] + later, later):
        assert b - a >= o.start_spacing
    assert all(s < window and s <= n - o.start_tail - 1 for s in later)
    facts = {t.id: {f.key: f for f in t.facts} for t in threads}
    value: dict[tuple[str, str], str] = {}
    stated_at: dict[tuple[str, str], int] = {}
    last: dict[str, int] = {}
    prev_thread = None
    for r in rows:
        if r.action == "oneoff":
            assert r.thread is None and r.style == "oneoff" and not r.refs and r.fact is None and r.tags == ("oneoff",)
            continue
        assert r.i >= starts[r.thread]
        if r.action == "continue":
            assert r.thread == prev_thread
            assert r.style in dict(o.continue_styles)
        elif r.action in ("switch", "return"):
            assert r.thread != prev_thread and r.thread in last
            gap = r.i - last[r.thread]
            assert r.gap == gap
            assert (r.action == "return") == (gap >= o.return_gap)
            assert r.style in dict(o.move_styles)
        else:
            assert r.style == "explicit"
        assert r.tags[0] == r.style
        assert ("long_gap" in r.tags) == (r.action == "return")
        assert ("twin" in r.tags) == (r.thread in twins)
        assert ("cross" in r.tags) == bool(r.refs)
        for ref, d in zip(r.refs, r.ref_details):
            assert ref != r.thread and ref in last and d.thread == ref
            assert value[(ref, d.key)] == d.value, "a cross reference names a fact as it stands"
        if r.style == "cue":
            assert r.cue is not None and stated_at[(r.thread, r.cue.key)] < r.i
        if r.action == "new" and facts[r.thread]:
            assert r.fact is not None and r.fact.kind == FACT_STATE
        if r.fact is not None:
            key = (r.thread, r.fact.key)
            f = facts[r.thread][r.fact.key]
            if r.fact.kind == FACT_STATE:
                assert key not in stated_at and r.fact.value == f.value
                stated_at[key] = r.i
            else:
                assert f.update and r.fact.value == f.update and r.fact.previous == f.value
                assert r.i - stated_at[key] >= o.update_gap and value[key] == f.value
            value[key] = r.fact.value
        last[r.thread] = r.i
        prev_thread = r.thread


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    oneoff_p=st.sampled_from([0.0, 0.05, 0.3]),
    move_p=st.sampled_from([0.0, 0.3, 0.6]),
    return_gap=st.integers(2, 15),
    min_turns=st.integers(30, 50),
)
def test_plan_invariants(seed, oneoff_p, move_p, return_gap, min_turns):
    o = PlanOptions(oneoff_p=oneoff_p, move_p=move_p, return_gap=return_gap, min_turns=min_turns, max_turns=min_turns + 15)
    shape = draw_shape(seed, o)
    assert o.min_turns <= shape.n_turns <= o.max_turns
    # 3 to 5 threads in all, the twin among them: the third thread takes the second's domain
    assert o.min_threads <= len(shape.domains) <= o.max_threads
    if shape.twin is not None:
        assert (shape.twin, shape.twin_of) == (2, 1) and shape.domains[2] == shape.domains[1]
        assert len(shape.domains) == len(set(shape.domains)) + 1
    else:
        assert len(shape.domains) == len(set(shape.domains))
    threads = skeleton_threads(shape)
    check_invariants(shape, threads, plan_session(threads, shape.n_turns, seed + 1, o), o)


def test_options_overrides_and_errors():
    o = PlanOptions.from_overrides(["oneoff_p=0.1", "return-gap=8", "move_styles=explicit:0.5,cue:0.5", "domains=code,travel,home,study,events"])
    assert o.oneoff_p == 0.1 and o.return_gap == 8 and dict(o.move_styles) == {"explicit": 0.5, "cue": 0.5}
    assert o.domains == ("code", "travel", "home", "study", "events")
    d = PlanOptions().as_dict()
    assert d["oneoff_p"] == 0.05 and d["continue_styles"] == {"implicit": 0.45, "pronoun": 0.25, "explicit": 0.30}
    for bad, where in [
        (["bogus=1"], "bogus"),
        (["oneoff_p"], "NAME=VALUE"),
        (["oneoff_p=lots"], "not a valid value"),
        (["oneoff_p=1.5"], "between 0 and 1"),
        (["move_styles=implicit:1"], "move_styles"),
        (["continue_styles=implicit:0.5,explicit:0.2"], "sum to 1"),
        (["min_turns=8"], "no room"),
        (["oneoff_p=0.8", "move_p=0.5"], "at most 1"),
        (["domains=code,travel"], "need as many domains"),
        (["start_window=1e400"], "start_window: must be between 0 and 1, got inf"),
        (["start_window=nan"], "start_window: must be between 0 and 1, got nan"),
    ]:
        with pytest.raises(UsageError, match=where):
            PlanOptions.from_overrides(bad)


def test_design_defaults_are_the_documented_ones():
    o = PlanOptions()
    assert (o.min_turns, o.max_turns, o.min_threads, o.max_threads, o.twin_p) == (40, 60, 3, 5, 0.5)
    assert (o.oneoff_p, o.move_p, o.return_gap, o.cross_p) == (0.05, 0.30, 12, 0.12)
    assert (o.fact_later_p, o.update_p, o.update_gap, o.start_window, o.start_spacing, o.start_tail) == (0.35, 0.25, 10, 0.6, 2, 4)
    assert len(o.domains) >= 9
    assert dataclasses.asdict(o)["facts_per_thread"] == 3


def test_payload_round_trip():
    shape = draw_shape(5)
    threads = skeleton_threads(shape)
    for r in plan_session(threads, shape.n_turns, 6):
        back = PlanRow.from_payload(r.to_payload())
        assert (back.i, back.thread, back.action, back.style, back.refs, back.fact, back.ref_details) == (
            r.i, r.thread, r.action, r.style, r.refs, r.fact, r.ref_details)
        assert (back.cue.value if back.cue else None) == (r.cue.value if r.cue else None)


def test_actions_are_spread_as_expected_in_one_long_run():
    # returns only happen after a long gap; with the defaults both kinds of move occur
    c = Counter(r.action for _, _, rows in plans(200, PlanOptions()) for r in rows)
    assert c["return"] > 0 and c["switch"] > c["return"] and c["continue"] > c["switch"]
