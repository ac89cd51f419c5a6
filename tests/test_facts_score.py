"""Scoring facts results (docs/facts.md#metrics): hand-built result files with hand-computed figures, each gate
passing and failing, missing and duplicate answers failing the run, and score-facts end to end."""

from __future__ import annotations

import json

import pytest

from interleave_bench.cli import main
from interleave_bench.errors import InputError
from interleave_bench.facts.results import parse_lines, score_rows

from _facts_util import write_rows

S = "en-0001"
PROBES = ["p1", "p2", "p3", "p4"]
CATEGORY = {"p1": "cross", "p2": "stale", "p3": "proposal", "p4": "rejected"}


def ans(probe: str, strategy: str, verdict: str, **kw) -> dict:
    return {"kind": "answer", "session_id": S, "probe": probe, "strategy": strategy, "category": CATEGORY[probe],
            "lang": kw.pop("lang", "en"), "verdict": verdict, "context_tokens": kw.pop("tokens", 100),
            "notes_chars": kw.pop("notes", 0), **kw}


def route(turn: int, gold: str, without: str, with_: str, offered: int, imports=(), error=None) -> dict:
    return {"kind": "route", "session_id": S, "turn": turn, "gold": gold, "without": without, "with": with_,
            "offered": offered, "imports": list(imports), "error": error}


def delivery(probe: str, verdict: str) -> dict:
    return {"kind": "delivery", "session_id": S, "probe": probe, "source": "move", "key": "budget",
            "value": "900 EUR", "notice": None, "verdict": verdict}


def session_row(strategies=("facts", "summary")) -> dict:
    return {"kind": "session", "session_id": S, "lang": "en", "probes": PROBES, "strategies": list(strategies),
            "system": "reference", "model": "m",
            "usage": {"answer": {"calls": 8, "input": 800, "cached_input": 0, "output": 40},
                      "route": {"calls": 5, "input": 500, "cached_input": 100, "output": 25}}}


def passing_rows() -> list[dict]:
    """facts: p1 right, p2 right, p3 right, p4 wrong; summary: p1 right, p2 stale, p3 proposal, p4 right."""
    return [
        ans("p1", "facts", "correct", tokens=120, notes=40), ans("p2", "facts", "correct", tokens=130, notes=60),
        ans("p3", "facts", "correct", tokens=110, notes=0), ans("p4", "facts", "wrong", tokens=140, notes=20),
        ans("p1", "summary", "correct", tokens=200, notes=100), ans("p2", "summary", "stale", tokens=210, notes=100),
        ans("p3", "summary", "proposal", tokens=190, notes=100), ans("p4", "summary", "correct", lang="zh", tokens=200,
                                                                      notes=100),
        delivery("p1", "current"), delivery("p2", "current"), delivery("p2", "withdrawn"),
        route(3, "a", "a", "a", 2, ["move/budget"]), route(4, "b", "b", "b", 0), route(5, "a", "b", "b", 1),
        route(6, "b", "b", "b", 1),
        session_row(),
    ]


def score(rows: list[dict]) -> dict:
    return score_rows(parse_lines(rows))


def test_hand_computed_figures():
    m = score(passing_rows())
    f, s = m["strategies"]["facts"], m["strategies"]["summary"]
    assert list(m["strategies"]) == ["summary", "facts"]  # display order of the strategies
    assert f["n"] == 4 and f["answer_accuracy"]["k"] == 3 and f["answer_accuracy"]["value"] == 0.75
    # Wilson 95% for 3/4, by hand: centre (0.75 + 1.9208/4)/1.9604 = 0.6275, half 0.3269
    assert f["answer_accuracy"]["ci95"] == [0.3006, 0.9544]
    assert f["verdicts"] == {"correct": 3, "stale": 0, "proposal": 0, "missing": 0, "wrong": 1}
    assert s["verdicts"] == {"correct": 2, "stale": 1, "proposal": 1, "missing": 0, "wrong": 0}
    assert f["by_category"]["rejected"]["value"] == 0.0 and f["by_category"]["cross"]["value"] == 1.0
    assert s["by_lang"]["zh"] == {"value": 1.0, "k": 1, "n": 1, "ci95": [0.2065, 1.0]}
    assert s["by_lang"]["en"]["value"] == 0.3333
    assert (f["stale_answers"]["k"], f["stale_answers"]["n"]) == (0, 1)
    assert s["stale_answers"]["value"] == 1.0
    assert s["proposal_answers"]["value"] == 0.25 and f["proposal_answers"]["value"] == 0.0
    assert f["context_tokens"] == 125.0 and f["notes_chars"] == 30.0
    assert s["context_tokens"] == 200.0 and s["notes_chars"] == 100.0
    assert m["paired"] == {"probes": 4, "facts_only_right": 2, "summary_only_right": 1, "both_right": 1,
                           "both_wrong": 0, "only_facts_answered": 0, "only_summary_answered": 0}
    assert m["delivery"]["lines"] == 3 and m["delivery"]["verdicts"]["current"] == 2
    assert m["delivery"]["delivered_current"]["value"] == 0.6667
    r = m["routing"]
    assert (r["requests"], r["errors"], r["offered"], r["imports"]) == (4, 0, 3, 1)
    assert r["route_changed"]["value"] == 0.0 and r["route_changed"]["n"] == 3
    assert r["route_accuracy_without"]["value"] == 0.75 and r["route_accuracy_with"]["value"] == 0.75
    assert r["imports_per_request"] == 0.25
    assert m["tokens"]["total"] == {"cached_input": 100, "calls": 13, "input": 1300, "output": 65}
    assert m["missing"] == [] and m["duplicates"] == [] and m["errors"] == []
    assert all(g["passed"] for g in m["gates"].values()), m["gates"]
    assert m["passed"] is True


def _without(rows, pred):
    return [r for r in rows if not pred(r)]


def test_beats_summary_fails_on_a_tie_and_when_summary_missed_a_probe():
    rows = passing_rows()
    rows[3] = ans("p4", "facts", "wrong")
    rows[2] = ans("p3", "facts", "proposal")  # facts-only right 1, summary-only right 1
    m = score(rows)
    assert (m["paired"]["facts_only_right"], m["paired"]["summary_only_right"]) == (1, 1)
    assert not m["gates"]["beats_summary"]["passed"] and not m["passed"]
    rows = _without(passing_rows(), lambda r: r.get("probe") == "p4" and r.get("strategy") == "summary")
    m = score(rows)
    assert not m["gates"]["beats_summary"]["passed"]
    assert m["missing"] == ["en-0001/p4/summary"]


def test_stale_answers_fails_when_a_stale_probe_is_answered_stale_or_none_exist():
    rows = passing_rows()
    rows[1] = ans("p2", "facts", "stale")
    m = score(rows)
    assert not m["gates"]["stale_answers"]["passed"]
    assert m["strategies"]["facts"]["stale_answers"]["value"] == 1.0
    rows = [dict(r, category="cross") if r.get("probe") == "p2" else r for r in passing_rows()]
    assert not score(rows)["gates"]["stale_answers"]["passed"]


def test_proposals_shared_fails_on_a_delivered_proposal_no_imports_or_no_proposal_probes():
    assert not score(passing_rows() + [delivery("p3", "proposal")])["gates"]["proposals_shared"]["passed"]
    rows = [dict(r, imports=[]) if r["kind"] == "route" else r for r in passing_rows()]
    assert not score(rows)["gates"]["proposals_shared"]["passed"]
    rows = [dict(r, category="cross") if r.get("probe") in ("p3", "p4") else r for r in passing_rows()]
    assert not score(rows)["gates"]["proposals_shared"]["passed"]
    # a stale or unknown delivered line is not a proposal: the gate still passes
    assert score(passing_rows() + [delivery("p3", "stale")])["gates"]["proposals_shared"]["passed"]


def test_routing_unchanged_fails_on_a_change_an_error_lower_accuracy_or_nothing_offered():
    rows = passing_rows()
    rows[-2] = route(6, "b", "b", "a", 1)  # changed 1/3, accuracy with 0.5 < 0.75
    m = score(rows)
    assert m["routing"]["route_changed"]["value"] == 0.3333
    assert not m["gates"]["routing_unchanged"]["passed"]
    rows = passing_rows() + [route(7, "a", None, None, 0, error="no topic")]
    m = score(rows)
    assert m["routing"]["route_error_rate"]["value"] == 0.2
    assert not m["gates"]["routing_unchanged"]["passed"]
    rows = [dict(r, offered=0) if r["kind"] == "route" else r for r in passing_rows()]
    assert not score(rows)["gates"]["routing_unchanged"]["passed"]


def test_missing_and_error_rows_fail_the_run_even_with_every_gate_passed():
    m = score(_without(passing_rows(), lambda r: r.get("probe") == "p1" and r.get("strategy") == "facts"))
    assert "en-0001/p1/facts" in m["missing"] and not m["passed"]
    m = score(passing_rows() + [{"kind": "error", "session_id": "en-0002", "problem": "HTTP 500"}])
    assert all(g["passed"] for g in m["gates"].values()) and m["errors"] == ["en-0002: HTTP 500"] and not m["passed"]
    # an error row of a session that a later run finished does not count
    m = score([{"kind": "error", "session_id": S, "problem": "HTTP 500"}] + passing_rows())
    assert m["passed"]


def test_a_probe_answered_twice_by_one_strategy_is_refused_naming_both_lines(tmp_path, capsys):
    rows = passing_rows()
    rows.insert(5, dict(rows[0]))  # facts' answer to p1 again, on line 6: it would count twice
    path = write_rows(tmp_path / "r.jsonl", rows)
    assert main(["score-facts", str(path)]) == 2
    _, err = capsys.readouterr()
    assert err.splitlines() == [f"error: {path}:6: probe: second answer row for session 'en-0001' probe 'p1' "
                                "strategy 'facts' (first on line 1); remove it"]
    assert not (tmp_path / "r.score.json").exists()
    with pytest.raises(InputError, match="second answer row .* probe 'p1' strategy 'facts'"):
        score(rows)  # the evaluate module's rows too
    # the same probe answered by another strategy is no repeat
    assert score(passing_rows())["strategies"]["facts"]["n"] == 4


@pytest.mark.parametrize("repeat,field,words", [
    (session_row(), "session_id", "second session row for session 'en-0001' (first on line 16)"),
    (route(4, "b", "b", "b", 0), "turn", "second route row for session 'en-0001' turn 4 with no probe (first on line 13)"),
])
def test_a_second_session_or_route_row_is_refused_naming_both_lines(tmp_path, capsys, repeat, field, words):
    """A session row's tokens and a route row's routing would count twice, as a repeated answer would."""
    path = write_rows(tmp_path / "r.jsonl", passing_rows() + [repeat])
    assert main(["score-facts", str(path)]) == 2
    _, err = capsys.readouterr()
    assert err.splitlines() == [f"error: {path}:17: {field}: {words}; remove it"]
    assert not (tmp_path / "r.score.json").exists()


def test_a_probe_routed_twice_is_refused_and_routes_of_one_turn_are_not():
    probed = dict(route(4, "b", "b", "b", 0), probe="p1")
    rows = passing_rows() + [probed, dict(probed, turn=7)]  # p1 routed again, at another turn: still p1's route
    with pytest.raises(InputError, match=r"second route row for session 'en-0001' probe 'p1' \(first on line 17\)"):
        score(rows)
    # a probe's route and a sampled turn's at the same turn, and two probes asked after one turn, are no repeat
    rows = passing_rows() + [probed, dict(probed, probe="p2")]
    assert score(rows)["routing"]["requests"] == 6
    # deliveries and error rows may repeat: a system may deliver one line twice
    assert score(passing_rows() + [delivery("p1", "current")])["delivery"]["lines"] == 4


def test_rows_of_another_tool_are_read_unchanged_and_judged_again_without_a_verdict():
    rows = passing_rows()
    # another writer: probe under "id", extra fields, and no verdict (judged from answer and probe fields)
    rows[0] = {"kind": "answer", "session_id": S, "id": "p1", "strategy": "facts", "category": "cross", "lang": "en",
               "gold": "900 EUR", "decoys": ["700 EUR"], "confirmed": ["700 EUR", "900 EUR"], "answer": "900 EUR",
               "context_tokens": 120, "notes_chars": 40, "extra": {"anything": 1}}
    assert score(rows) == score(passing_rows())
    rows[0] = dict(rows[0], answer="700 EUR")
    assert score(rows)["strategies"]["facts"]["verdicts"]["stale"] == 1


def test_score_facts_cli_exit_codes_json_and_score_file(tmp_path, capsys):
    good = write_rows(tmp_path / "good.jsonl", passing_rows())
    bad = write_rows(tmp_path / "bad.jsonl", _without(passing_rows(), lambda r: r.get("probe") == "p1"
                                                      and r.get("strategy") == "facts"))
    assert main(["score-facts", str(good)]) == 0
    out, err = capsys.readouterr()
    assert "| facts | 4 | 0.750 [0.301, 0.954] |" in out and "gate beats_summary: PASS" in out
    assert "passed: yes" in out and "done: score-facts" in err
    doc = json.loads((tmp_path / "good.score.json").read_text())
    assert doc["format"] == 1 and doc["passed"] is True and doc["system"] == "reference"
    assert doc["results"]["sha256"] and doc["provenance"]["package"] == "interleave-bench"
    assert main(["score-facts", str(bad), "--json"]) == 1
    out, _ = capsys.readouterr()
    assert json.loads(out)["metrics"]["missing"] == ["en-0001/p1/facts"]
    assert main(["score-facts", str(good), str(bad), "--json"]) == 1
    out, _ = capsys.readouterr()
    assert [d["passed"] for d in json.loads(out)] == [True, False]


@pytest.mark.parametrize("row,field", [
    ({"kind": "bogus", "session_id": S}, "kind"),
    ({"kind": "answer", "session_id": S, "probe": "p9", "strategy": "facts", "category": "cross"}, "answer"),
    ({"kind": "answer", "session_id": S, "probe": "p9", "strategy": "facts", "category": "cross", "verdict": "meh"},
     "verdict"),
    ({"kind": "route", "session_id": S, "turn": "x"}, "turn"),
    ({"kind": "answer", "session_id": S, "probe": "p9", "strategy": "facts", "category": "cross", "gold": None,
      "decoys": ["300 EUR"], "answer": "300 EUR"}, "confirmed"),
])
def test_bad_rows_are_one_line_naming_file_line_and_field(tmp_path, capsys, row, field):
    path = write_rows(tmp_path / "r.jsonl", passing_rows()[:2] + [row])
    assert main(["score-facts", str(path)]) == 2
    _, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}:3: {field}"), err
    assert "Traceback" not in err


def test_the_report_prints_a_rate_from_its_counts_not_the_rounded_figure():
    """By hand: 4 of 19 is 0.210526...: 0.211 at 3 decimals, where the JSON's 0.2105 would print
    0.210; its Wilson interval is taken from the counts too."""
    from interleave_bench.facts.report import _r, _v
    from interleave_bench.score.stats import wilson

    entry = {"value": 0.2105, "k": 4, "n": 19, "ci95": [0.0851, 0.4330]}
    lo, hi = wilson(4, 19)
    assert _v(entry) == "0.211 (4/19)"
    assert _r(entry) == f"0.211 [{lo:.3f}, {hi:.3f}]"
    assert _v({"value": None, "k": 0, "n": 0, "ci95": None}) == "-"
