"""v1 fact episodes, timeline and probes (docs/generate.md#v1-replies-fact-episodes-timeline-and-probes): rates over 2,000 seeded plans, a
hand-built plan with its hand-computed timeline and probes, and the v1 checks of ``validate``."""

from __future__ import annotations

import json
import math
import random
from collections import defaultdict

import _hub_util as u
from _foundation_util import clone
from interleave_bench.cli import main
from interleave_bench.generate.facts import (
    MAX_PROBES,
    FactOptions,
    _Candidate,
    build_probes,
    build_timeline,
    episode_steps,
    first_turns,
    lay_facts,
    select_probes,
)
from interleave_bench.generate.plan import PlanRow, derive_seed, draw_shape, plan_session, skeleton_threads
from interleave_bench.schema import STEP_STATUS, Fact, Session, Thread, check_session

N_PLANS = 2000
#: as in test_plan.py: an observed rate may sit this many binomial standard errors from its parameter
SIGMAS = 4.5


def _with_alternatives(threads: list[Thread]) -> list[Thread]:
    for t in threads:
        for f in t.facts:
            f.alternative = "alt " + f.value
    return threads


def _within(hits: int, n: int, p: float) -> bool:
    return abs(hits / n - p) <= SIGMAS * math.sqrt(p * (1 - p) / n)


def test_episodes_over_2000_seeded_plans_match_section_7a():
    o = FactOptions()
    type_counts: dict[str, int] = defaultdict(int)
    n_facts = 0
    step_trials = step_hits = 0
    for k in range(N_PLANS):
        shape = draw_shape(derive_seed(3, k, "shape"))
        threads = _with_alternatives(skeleton_threads(shape))
        rows = plan_session(threads, shape.n_turns, derive_seed(3, k, "plan"))
        laid, types = lay_facts(rows, threads, derive_seed(3, k, "facts"))
        assert [(r.i, r.thread, r.action) for r in laid] == [(r.i, r.thread, r.action) for r in rows]
        for t in threads:
            for f in t.facts:
                type_counts[types[t.id][f.key]] += 1
                n_facts += 1
        facts = {t.id: t.facts for t in threads}
        steps = {(t.id, f.key): episode_steps(types[t.id][f.key], f.value, f.update, f.alternative)
                 for t in threads for f in t.facts}
        done: dict[tuple[str, str], int] = defaultdict(int)
        last: dict[tuple[str, str], int] = {}
        thread_turns: dict[str, list[int]] = defaultdict(list)
        for r in laid:
            if r.thread is None:
                assert r.fact is None  # one-offs take no step
                continue
            thread_turns[r.thread].append(r.i)
            waiting = [f.key for f in facts[r.thread]
                       if done[(r.thread, f.key)] == 1 and steps[(r.thread, f.key)][-1][0] in ("accept", "reject")]
            eligible = []
            for f in facts[r.thread]:
                n = done[(r.thread, f.key)]
                if n < len(steps[(r.thread, f.key)]):
                    step = steps[(r.thread, f.key)][n][0]
                    if step not in ("update", "retract") or r.i - last[(r.thread, f.key)] >= o.change_gap:
                        eligible.append(f.key)
            if waiting:
                # the answer comes at the thread's very next message, whatever the chance says
                assert r.fact is not None and r.fact.key == waiting[0] and r.fact.kind in ("accept", "reject")
                assert last[(r.thread, r.fact.key)] == thread_turns[r.thread][-2]
            elif r.action == "new":
                assert r.fact is not None and r.fact.key == eligible[0]  # a thread's first turn always steps
            elif eligible:
                step_trials += 1
                step_hits += r.fact is not None
                if r.fact is not None:
                    assert r.fact.key == eligible[0]  # the first fact, in order, whose gap is met
            else:
                assert r.fact is None
            if r.fact is not None:
                key = (r.thread, r.fact.key)
                kind, value = steps[key][done[key]]
                assert (r.fact.kind, r.fact.value) == (kind, value)
                if kind in ("update", "retract"):
                    assert r.i - last[key] >= o.change_gap  # gaps always met
                done[key] += 1
                last[key] = r.i
    assert n_facts > 20_000 and step_trials > 20_000
    for name, p in o.type_weights:
        assert _within(type_counts[name], n_facts, p), (name, type_counts[name] / n_facts, p)
    assert _within(step_hits, step_trials, o.step_p), step_hits / step_trials


def test_rejected_without_an_alternative_becomes_stated():
    shape = draw_shape(5)
    threads = skeleton_threads(shape)  # no alternatives
    counts: dict[str, int] = defaultdict(int)
    for k in range(300):
        _, types = lay_facts(plan_session(threads, shape.n_turns, k), threads, k)
        for kinds in types.values():
            for kind in kinds.values():
                counts[kind] += 1
    assert counts["rejected"] == 0 and counts["stated"] > counts["accepted"] + counts["withdrawn"]


class LastRng(random.Random):
    """A generator whose every draw is known: the last choice, the top of a range, 0.0 for a chance."""

    def randint(self, a: int, b: int) -> int:
        return b

    def choice(self, seq):
        return seq[-1]

    def random(self) -> float:
        return 0.0  # under any chance: a thread turn steps whenever a fact's gap is met


def _row(i: int, thread: str | None, action: str) -> PlanRow:
    style = "oneoff" if thread is None else "explicit"
    return PlanRow(i, thread, action, style, tags=(style,))


def _hand_plan():
    threads = [
        Thread(id="t1", title="Move house", domain="home", facts=[
            Fact(key="a", value="A1", update="A2", alternative=None), Fact(key="b", value="B1", update=None, alternative="Bx")]),
        Thread(id="t2", title="Tax return", domain="paperwork", facts=[
            Fact(key="c", value="C1", update=None, alternative="Cx"), Fact(key="d", value="D1", update=None, alternative=None)]),
    ]
    plan = [("t1", "new"), ("t1", "continue"), ("t2", "new"), (None, "oneoff"), ("t1", "switch"), ("t2", "switch"),
            ("t2", "continue"), ("t1", "switch"), ("t1", "continue"), ("t2", "switch"), ("t2", "continue"),
            ("t1", "switch"), ("t2", "switch"), ("t2", "continue"), ("t2", "continue")]
    rows = [_row(i, t, a) for i, (t, a) in enumerate(plan)]
    types = {"t1": {"a": "stated", "b": "rejected"}, "t2": {"c": "accepted", "d": "withdrawn"}}
    return threads, rows, types


def test_hand_built_plan_gives_the_hand_computed_timeline_and_probes():
    threads, rows, types = _hand_plan()
    laid, got_types = lay_facts(rows, threads, LastRng(), types=types)
    assert got_types == types
    steps = [(r.i, r.fact.key, r.fact.kind, r.fact.value, r.fact.previous) for r in laid if r.fact]
    # 0: t1's first turn, a's intro; 1: a's update must wait 8 turns, so b's proposal (of the
    # alternative); 2: t2's first turn, c's proposal; 4, 5: the answers at each thread's next
    # message; 6: d's intro; 7: a's gap is 7, nothing; 8: a's update; 9-13: d's gap not met; 14: retract
    assert steps == [
        (0, "a", "intro", "A1", None),
        (1, "b", "propose", "Bx", None),
        (2, "c", "propose", "C1", None),
        (4, "b", "reject", "B1", "Bx"),
        (5, "c", "accept", "C1", None),
        (6, "d", "intro", "D1", None),
        (8, "a", "update", "A2", "A1"),
        (14, "d", "retract", None, "D1"),
    ]
    timeline = build_timeline(laid)
    assert timeline == [
        {"thread": "t1", "key": "a", "turn": 0, "kind": "intro", "status": "confirmed", "value": "A1"},
        {"thread": "t1", "key": "b", "turn": 1, "kind": "propose", "status": "proposed", "value": "Bx"},
        {"thread": "t2", "key": "c", "turn": 2, "kind": "propose", "status": "proposed", "value": "C1"},
        {"thread": "t1", "key": "b", "turn": 4, "kind": "reject", "status": "confirmed", "value": "B1"},
        {"thread": "t2", "key": "c", "turn": 5, "kind": "accept", "status": "confirmed", "value": "C1"},
        {"thread": "t2", "key": "d", "turn": 6, "kind": "intro", "status": "confirmed", "value": "D1"},
        {"thread": "t1", "key": "a", "turn": 8, "kind": "update", "status": "confirmed", "value": "A2"},
        {"thread": "t2", "key": "d", "turn": 14, "kind": "retract", "status": "retracted", "value": None},
    ]
    probes = build_probes("en-0007", "en", threads, first_turns(laid), timeline, len(laid), LastRng())
    q = 'For "{b}", I need the {k} from "{a}": what is it now? Answer with just the value, or "undecided" if it is not settled.'
    move, tax = "Move house", "Tax return"
    # a: confirmed at 0, updated at 8: cross at the top of 0..7 = 7, stale 8 + 3 = 11, both by t2.
    # b: proposed at 1 (t2 has not started: no proposal probe), rejected at 4: probe at 5.
    # c: proposed at 2 (asked by t1), accepted at 5: probe at 6.
    # d: confirmed at 6, withdrawn at 14: cross at 13, stale at min(14 + 3, last turn 14) = 14.
    # Quotas: both stale pairs, the proposal, the rejected, the accepted: 7 probes, by turn.
    assert probes == [
        {"id": "en-0007-p1", "after": 2, "thread": "t1", "source": "t2", "key": "c", "category": "proposal",
         "gold": None, "decoys": ["C1"], "question": q.format(b=move, k="c", a=tax)},
        {"id": "en-0007-p2", "after": 5, "thread": "t2", "source": "t1", "key": "b", "category": "rejected",
         "gold": "B1", "decoys": ["Bx"], "question": q.format(b=tax, k="b", a=move)},
        {"id": "en-0007-p3", "after": 6, "thread": "t1", "source": "t2", "key": "c", "category": "accepted",
         "gold": "C1", "decoys": [], "question": q.format(b=move, k="c", a=tax)},
        {"id": "en-0007-p4", "after": 7, "thread": "t2", "source": "t1", "key": "a", "category": "cross",
         "gold": "A1", "decoys": [], "question": q.format(b=tax, k="a", a=move)},
        {"id": "en-0007-p5", "after": 11, "thread": "t2", "source": "t1", "key": "a", "category": "stale",
         "gold": "A2", "decoys": ["A1"], "question": q.format(b=tax, k="a", a=move)},
        {"id": "en-0007-p6", "after": 13, "thread": "t1", "source": "t2", "key": "d", "category": "cross",
         "gold": "D1", "decoys": [], "question": q.format(b=move, k="d", a=tax)},
        {"id": "en-0007-p7", "after": 14, "thread": "t1", "source": "t2", "key": "d", "category": "stale",
         "gold": None, "decoys": ["D1"], "question": q.format(b=move, k="d", a=tax)},
    ]
    # a fact the writer missed leaves the probes, and its events count for nothing
    missed = build_timeline(laid, missed=[("t2", "d")])
    assert [e.get("miss") for e in missed] == [None] * 5 + [True, None, True]
    again = build_probes("en-0007", "en", threads, first_turns(laid), missed, len(laid), LastRng())
    assert [(p["key"], p["category"]) for p in again] == [("c", "proposal"), ("b", "rejected"), ("c", "accepted"),
                                                          ("a", "cross"), ("a", "stale")]


def test_selection_quotas_pairs_and_cap():
    cands, order = [], 0

    def add(cat: str, pair: int | None = None) -> int:
        nonlocal order
        cands.append(_Candidate(order, order, "t2", "t1", f"k{order}", cat, pair))
        order += 1
        return order - 1

    for _ in range(3):
        cross = add("cross")
        add("stale", cross)
    props = [add("proposal") for _ in range(3)]
    crosses = [add("cross") for _ in range(3)]
    chosen = select_probes(cands)
    # stale quota 2, each with its cross (4), proposal quota 2 (6), then crosses: the third stale's
    # cross and one more fill the cap; no room left for anything else
    assert chosen == [1, 0, 3, 2, props[0], props[1], 4, crosses[0]]
    assert len(chosen) == MAX_PROBES


def _v1_session() -> dict:
    s = u.session("en-0001", version="interleave-v1")
    assert check_session(Session.model_validate(s)) == []
    return s


def test_validate_names_every_v1_defect(tmp_path, capsys):
    good = _v1_session()
    lines, expect = [], []

    def add(s: dict, field: str, words: str) -> None:
        s["session_id"] = f"en-{len(lines) + 2:04d}"
        for k, p in enumerate(s["probes"]):
            p["id"] = f"{s['session_id']}-p{k + 1}" if p["id"] != "dup" else p["id"]
        lines.append(json.dumps(s))
        expect.append((len(lines), field, words))

    lines.append(json.dumps(good))
    s = clone(good); s["timeline"][0]["thread"] = "t9"
    add(s, "timeline[0].thread", "'t9' is not a thread of this session")
    s = clone(good); s["timeline"][1]["key"] = "colour"
    add(s, "timeline[1].key", "'colour' is not a fact of thread 't2'")
    s = clone(good); s["timeline"][1]["value"] = "May 15"
    add(s, "timeline[1]", "turn 1 has fact 'date' 'intro' 'May 14', the event says 'date' 'intro' 'May 15'")
    s = clone(good); s["timeline"][2]["turn"] = 99
    add(s, "timeline[2].turn", "99 is not a turn of this session")
    s = clone(good); s["timeline"][2]["status"] = "confirmed"
    add(s, "timeline[2].status", "a 'retract' event has status 'retracted'")
    s = clone(good); del s["timeline"][0]
    add(s, "turns[0].fact", "a fact step with no timeline event")
    s = clone(good); s["probes"][1]["gold"] = "May 15"
    add(s, "probes[1].gold", "the timeline says 'May 14' after turn 2, got 'May 15'")
    s = clone(good); s["probes"][2]["gold"] = "May 14"  # withdrawn at turn 3: undecided at 4
    add(s, "probes[2].gold", "the timeline says None after turn 4, got 'May 14'")
    s = clone(good); s["probes"][1]["thread"] = "t2"
    add(s, "probes[1].thread", "the asking thread must differ from the source")
    s = clone(good); s["probes"][1]["thread"] = "t3"
    add(s, "probes[1].thread", "'t3' has not started by turn 2")
    s = clone(good); s["probes"][1]["id"] = "dup"; s["probes"][2]["id"] = "dup"
    add(s, "probes[2].id", "duplicate probe id 'dup'")
    s = clone(good); s["probes"][0]["category"] = "old"
    add(s, "probes[0].category", "'old' is not one of stale, proposal, rejected, accepted, cross")
    path = tmp_path / "sessions.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    for line, field, words in expect:
        want = f"{path}:{line}: {field}: {words}"
        assert any(want in e for e in err.splitlines()), (want, err)
    assert "Traceback" not in err


def test_a_decoy_equal_to_gold_is_refused():
    s = _v1_session()
    s["probes"][1]["decoys"] = ["May 14"]
    assert ("probes[1].decoys[0]", "a decoy must differ from gold 'May 14'") in check_session(Session.model_validate(s))


def test_step_status_table_is_the_one_the_timeline_uses():
    threads, rows, types = _hand_plan()
    laid, _ = lay_facts(rows, threads, LastRng(), types=types)
    assert all(e["status"] == STEP_STATUS[e["kind"]] for e in build_timeline(laid))
