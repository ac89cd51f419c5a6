"""score-facts on result rows from elsewhere and from a hostile user.

The reference implementation's rows (route ``at``/``item`` with counts, delivery ``reader`` and a
``notice`` flag, session ``probes`` as a count and ``tokens``, answer ``at``, error ``step`` and
``error``) score unchanged: hand-made fixtures in tests/data/facts_reference/ with figures computed
by hand below. Rows are checked as strictly as predictions, and with ``--data`` every answer is
judged again against its probe and every delivered line against the timeline.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from interleave_bench.cli import main

from _facts_util import write_data, write_rows

FIXTURES = Path(__file__).parent / "data" / "facts_reference"


def score(path: Path, capsys, *extra: str) -> tuple[int, dict, list[str]]:
    code = main(["score-facts", str(path), "--json", *extra])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code != 2 else {}), err.strip().splitlines()


def test_the_reference_rows_score_unchanged_with_the_figures_computed_by_hand(tmp_path, capsys):
    path = tmp_path / "passing.jsonl"
    path.write_bytes((FIXTURES / "passing.jsonl").read_bytes())
    code, doc, _ = score(path, capsys)
    assert code == 0 and doc["passed"] is True
    m = doc["metrics"]
    assert (m["sessions"], m["probes"]) == (2, 3)
    facts, summ = m["strategies"]["facts"], m["strategies"]["summary"]
    # facts: 3 probes, all correct; Wilson 95% for 3/3: centre (1 + z²/6)/(1 + z²/3) = 0.7193,
    # half-width z·sqrt(z²/36)/(1 + z²/3) = 0.2807, so [0.4385, 1.0]
    assert facts["answer_accuracy"]["value"] == 1.0 and (facts["answer_accuracy"]["k"], facts["answer_accuracy"]["n"]) == (3, 3)
    assert facts["answer_accuracy"]["ci95"] == pytest.approx([0.4385, 1.0], abs=1e-4)
    assert facts["verdicts"] == {"correct": 3, "stale": 0, "proposal": 0, "missing": 0, "wrong": 0}
    # summary: right only on the undecided proposal probe; stale on the stale probe, a proposal on the rejected one
    assert summ["answer_accuracy"]["value"] == 0.3333
    assert summ["verdicts"] == {"correct": 1, "stale": 1, "proposal": 1, "missing": 0, "wrong": 0}
    assert summ["stale_answers"]["value"] == 1.0 and facts["stale_answers"]["value"] == 0.0  # 1 stale probe each
    assert summ["proposal_answers"]["value"] == 0.3333
    assert (facts["context_tokens"], summ["context_tokens"]) == (100.0, 115.0)  # (100+110+90)/3, (120+130+95)/3
    assert (facts["notes_chars"], summ["notes_chars"]) == (30.0, 45.0)  # (40+30+20)/3, (60+50+25)/3
    assert {c: v["value"] for c, v in summ["by_category"].items()} == {"stale": 0.0, "proposal": 1.0, "rejected": 0.0}
    assert {lang: (v["k"], v["n"]) for lang, v in facts["by_lang"].items()} == {"en": (2, 2), "zh": (1, 1)}
    assert m["paired"] == {"probes": 3, "facts_only_right": 2, "summary_only_right": 0, "both_right": 1,
                           "both_wrong": 0, "only_facts_answered": 0, "only_summary_answered": 0}
    # deliveries: 2 current, 1 unknown
    assert m["delivery"]["lines"] == 3 and m["delivery"]["delivered_current"]["value"] == 0.6667
    assert m["delivery"]["delivered_proposal"]["k"] == 0
    # routing: 4 requests (one sampled turn routed wrong both ways), 2 offered facts, nothing changed,
    # 1 import (a count, as the reference writes it)
    r = m["routing"]
    assert (r["requests"], r["errors"], r["offered"], r["imports"]) == (4, 0, 2, 1)
    assert r["route_accuracy_without"]["value"] == r["route_accuracy_with"]["value"] == 0.75
    assert r["route_changed"]["value"] == 0.0 and r["imports_per_request"] == 0.25
    # tokens: the reference's per-purpose counts, summed over the two sessions
    assert m["tokens"]["extract"] == {"tokens": 1500} and m["tokens"]["answer"] == {"tokens": 645}
    assert m["tokens"]["total"] == {"tokens": 1500 + 450 + 300 + 645}
    assert m["errors"] == [] and m["duplicates"] == [] and m["missing"] == []
    assert all(g["passed"] for g in m["gates"].values())


def test_reference_error_rows_and_short_sessions_fail_the_run_with_exit_1(tmp_path, capsys):
    path = tmp_path / "failing.jsonl"
    path.write_bytes((FIXTURES / "failing.jsonl").read_bytes())
    code, doc, _ = score(path, capsys)
    assert code == 1 and doc["passed"] is False
    m = doc["metrics"]
    assert m["errors"] == ["r-s3: answer: model call failed: HTTP 500"]  # its session never finished
    assert m["missing"] == ["r-s1/1 of 2 probes/facts"]  # the session row counts 2 probes, facts answered 1
    assert (m["routing"]["requests"], m["routing"]["errors"]) == (1, 1)
    assert m["routing"]["route_error_rate"]["value"] == 1.0


BASE = {"kind": "answer", "session_id": "s1", "probe": "s1-p1", "strategy": "facts", "category": "cross",
        "lang": "en", "gold": "5", "answer": "5", "verdict": "correct"}


@pytest.mark.parametrize("row,field,words", [
    ({**BASE, "after": "6"}, "after", "expected an integer"),
    ({**BASE, "context_tokens": -3}, "context_tokens", "greater than or equal to 0"),
    ({**BASE, "notes_chars": True}, "notes_chars", ""),
    ({**BASE, "strategy": "magic"}, "strategy", "'magic' is not one of"),
    ({**BASE, "category": "surprise"}, "category", "is not one of"),
    ({**BASE, "verdict": "great"}, "verdict", "is not one of"),
    ({**BASE, "session_id": "s1\nerror: forged"}, "session_id", ""),
    ({"kind": "delivery", "session_id": "s1", "probe": "p", "verdict": "fine"}, "verdict", "is not one of"),
    ({"kind": "route", "session_id": "s1", "at": 3, "offered": -1}, "offered", "greater than or equal to 0"),
    ({"kind": "session", "session_id": "s1", "tokens": {"answer": -5}}, "tokens", "answer: expected a count"),
    ({"kind": "session", "session_id": "s1", "probes": 2.5}, "probes", ""),
])
def test_a_row_no_run_could_write_is_one_line_and_exit_2(tmp_path, capsys, row, field, words):
    path = write_rows(tmp_path / "r.jsonl", [row])
    code, _, err = score(path, capsys)
    assert code == 2 and len(err) == 1 and err[0].startswith(f"error: {path}:1: {field}"), err
    assert words in err[0] and "\nerror: forged" not in "\n".join(err)


@pytest.mark.parametrize("text,words", [
    ('{"kind": "answer", "context_tokens": NaN}', "NaN is not a JSON number"),
    ('{"kind": "answer", "context_tokens": 1e400}', "outside the finite range"),
    ('{"kind": "answer", "context_tokens": %s}' % ("9" * 5000), "outside 64 bits"),
    ('{"kind": "answer", "kind": "route"}', "appears twice"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('"just a string"', "expected a JSON object"),
])
def test_numbers_and_nesting_no_reader_agrees_on_are_one_line_and_exit_2(tmp_path, capsys, text, words):
    path = tmp_path / "r.jsonl"
    path.write_text(text + "\n", encoding="utf-8")
    code, _, err = score(path, capsys)
    assert code == 2 and len(err) == 1 and words in err[0], err


def test_an_empty_results_file_is_exit_2(tmp_path, capsys):
    path = tmp_path / "r.jsonl"
    path.write_text("\n\n", encoding="utf-8")
    code, _, err = score(path, capsys)
    assert code == 2 and err == [f"error: {path}: holds no result rows"]
    from interleave_bench.facts.results import read_rows

    assert read_rows(path) == []  # a facts run resuming its own file, cut before its first session, reads on


def test_a_json_document_given_as_results_is_named_for_what_it_is(tmp_path, capsys):
    """A run's own summary given to score-facts was refused as broken JSON ("the line ends before
    the JSON value does"), though it is valid JSON over several lines: it is named, as score names a
    JSON document given as predictions, in one line, and nothing is written beside it."""
    path = tmp_path / "passing.jsonl"
    path.write_bytes((FIXTURES / "passing.jsonl").read_bytes())
    assert score(path, capsys)[0] == 0
    summary = tmp_path / "passing.score.json"
    lines = ": facts results are JSON Lines, one record a line"
    score_doc = tmp_path / "x.score.json"
    score_doc.write_text(json.dumps({"format": "interleave-score-v1", "system": "x"}, indent=2), encoding="utf-8")
    for given, words in ((summary, "a facts summary"), (score_doc, "a score document (interleave-score-v1)")):
        before = sorted(tmp_path.iterdir())
        code, _, err = score(given, capsys)
        assert (code, err) == (2, [f"error: {given}: {words}, given as facts results{lines}"])
        assert sorted(tmp_path.iterdir()) == before


def answer(probe: str, category: str, text: str, verdict: str, strategy: str = "facts") -> dict:
    return {"kind": "answer", "session_id": "en-0001", "probe": probe, "strategy": strategy, "category": category,
            "lang": "en", "answer": text, "verdict": verdict}


def test_with_the_data_every_verdict_is_judged_again_and_a_disagreeing_row_refused(tmp_path, capsys):
    data = write_data(tmp_path / "data")
    # en-0001-p7: the budget after turn 10 is 900 EUR (700 EUR was confirmed before: a stale value);
    # en-0001-p2: the deposit was only proposed (300 EUR) by turn 3
    good = [answer("en-0001-p7", "stale", "It is 900 EUR now.", "correct"),
            answer("en-0001-p2", "proposal", "Not settled yet, undecided.", "correct")]
    forged = [answer("en-0001-p7", "stale", "It is 700 EUR.", "correct", "summary"),
              answer("en-0001-p2", "proposal", "300 EUR", "correct", "summary")]
    path = write_rows(tmp_path / "r.jsonl", good + forged)
    code, doc, _ = score(path, capsys)  # without the data: verdicts as written
    assert code == 1 and doc["metrics"]["strategies"]["summary"]["answer_accuracy"]["k"] == 2
    code, _, err = score(path, capsys, "--data", str(data))
    assert code == 2
    assert err == [
        f"error: {path}:3: verdict: says 'correct', but the answer judged against probe 'en-0001-p7' of the data is 'stale'",
        f"error: {path}:4: verdict: says 'correct', but the answer judged against probe 'en-0001-p2' of the data is 'proposal'",
    ]
    path = write_rows(tmp_path / "r.jsonl", good + [{**answer("en-0001-p7", "stale", "900 EUR", "correct", "summary"), "verdict": None},
                                                    answer("en-0001-p99", "cross", "5", "correct")])
    code, _, err = score(path, capsys, "--data", str(data))
    assert code == 2 and err == [f"error: {path}:4: probe: 'en-0001-p99' is not a probe of session 'en-0001' in "
                                 f"{data / 'sessions.jsonl'}"]
    path = write_rows(tmp_path / "r.jsonl", good)
    code, doc, _ = score(path, capsys, "--data", str(data))
    assert code == 1 and doc["metrics"]["strategies"]["facts"]["answer_accuracy"]["k"] == 2
    assert doc["data"]["path"] == str(data / "sessions.jsonl") and doc["data"]["sha256"].startswith("sha256:")


def route_row(turn: int, probe, gold: str) -> dict:
    return {"kind": "route", "session_id": "en-0001", "turn": turn, "probe": probe, "gold": gold, "without": gold,
            "with": gold, "offered": 1, "imports": [], "error": None}


def test_with_the_data_every_route_rows_gold_is_the_datas_and_a_forged_one_refused(tmp_path, capsys):
    data = write_data(tmp_path / "data")
    sessions = data / "sessions.jsonl"
    good = [answer("en-0001-p7", "stale", "It is 900 EUR now.", "correct"),
            # en-0001-p7 is asked in party after turn 10; the request after turn 4 is turn 5, on move
            route_row(10, "en-0001-p7", "party"), route_row(4, None, "move")]
    path = write_rows(tmp_path / "r.jsonl", good)
    code, doc, _ = score(path, capsys, "--data", str(data))
    assert code == 1 and doc["metrics"]["routing"]["route_accuracy_without"]["k"] == 2
    # a gold set to what the router answered, so a wrong routing reads as right
    forged = [route_row(10, "en-0001-p7", "move"), route_row(4, None, "party"), route_row(3, "en-0001-p99", "move"),
              route_row(13, None, "move")]
    path = write_rows(tmp_path / "forged.jsonl", good[:1] + forged)
    code, doc, _ = score(path, capsys)  # without the data: taken as written
    assert code == 1 and doc["metrics"]["routing"]["route_accuracy_without"]["k"] == 4
    code, _, err = score(path, capsys, "--data", str(data))
    assert code == 2 and err == [
        f"error: {path}:2: gold: says 'move', but the topic of probe 'en-0001-p7' of session 'en-0001' in {sessions} "
        "is 'party'",
        f"error: {path}:3: gold: says 'party', but the topic of turn 5 of session 'en-0001' in {sessions} is 'move'",
        f"error: {path}:4: probe: 'en-0001-p99' is not a probe of session 'en-0001' in {sessions}",
        f"error: {path}:5: turn: turn 14 (the one after it) of session 'en-0001' in {sessions} is missing: no run "
        "routes it",
    ]


def delivery_row(probe: str, source: str, key: str, value, verdict: str) -> dict:
    return {"kind": "delivery", "session_id": "en-0001", "probe": probe, "strategy": "facts", "thread": "party",
            "source": source, "key": key, "value": value, "notice": None, "verdict": verdict}


def test_with_the_data_every_delivered_line_is_judged_again_and_a_disagreeing_row_refused(tmp_path, capsys):
    data = write_data(tmp_path / "data")
    sessions = data / "sessions.jsonl"
    # by turn 10 (en-0001-p7) the budget is 900 EUR (700 EUR confirmed before); by turn 3 (en-0001-p2)
    # the deposit of 300 EUR is only proposed; by turn 13 (en-0001-p8) the salary ask is withdrawn
    good = [answer("en-0001-p7", "stale", "It is 900 EUR now.", "correct"),
            delivery_row("en-0001-p7", "move", "budget", "900 EUR", "current"),
            delivery_row("en-0001-p7", "move", "budget", "700 EUR", "stale"),
            delivery_row("en-0001-p8", "hire", "salary_ask", None, "withdrawn")]
    path = write_rows(tmp_path / "r.jsonl", good)
    code, doc, _ = score(path, capsys, "--data", str(data))
    assert code == 1 and doc["metrics"]["delivery"]["delivered_current"]["k"] == 1
    # verdicts edited (current -> stale, withdrawn -> stale), a current line's value edited, and a
    # proposal said to be current (which would turn a failing proposals_shared gate into a pass)
    forged = [delivery_row("en-0001-p7", "move", "budget", "900 EUR", "stale"),
              delivery_row("en-0001-p8", "hire", "salary_ask", None, "stale"),
              delivery_row("en-0001-p7", "move", "budget", "99 Nonsense", "current"),
              delivery_row("en-0001-p2", "move", "deposit", "300 EUR", "current"),
              delivery_row("en-0001-p99", "move", "budget", "900 EUR", "current")]
    path = write_rows(tmp_path / "forged.jsonl", good[:1] + forged)
    code, doc, _ = score(path, capsys)  # without the data: taken as written
    assert code == 1 and doc["metrics"]["delivery"]["delivered_current"]["k"] == 3
    code, _, err = score(path, capsys, "--data", str(data))
    at = f"in {sessions} is"
    assert code == 2 and err == [
        f"error: {path}:2: verdict: says 'stale', but the line move/budget '900 EUR' judged against the timeline of "
        f"session 'en-0001' up to turn 10 (probe 'en-0001-p7') {at} 'current'",
        f"error: {path}:3: verdict: says 'stale', but the line hire/salary_ask without a value (a withdrawal notice) "
        f"judged against the timeline of session 'en-0001' up to turn 13 (probe 'en-0001-p8') {at} 'withdrawn'",
        f"error: {path}:4: verdict: says 'current', but the line move/budget '99 Nonsense' judged against the timeline "
        f"of session 'en-0001' up to turn 10 (probe 'en-0001-p7') {at} 'unknown'",
        f"error: {path}:5: verdict: says 'current', but the line move/deposit '300 EUR' judged against the timeline "
        f"of session 'en-0001' up to turn 3 (probe 'en-0001-p2') {at} 'proposal'",
        f"error: {path}:6: probe: 'en-0001-p99' is not a probe of session 'en-0001' in {sessions}",
    ]
