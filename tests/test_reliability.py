"""Reliability under a hostile user: one writer per output, faults retried, ERROR rows asked again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from interleave_bench.cli import main
from interleave_bench.errors import UsageError
from interleave_bench.errors import InputError
from interleave_bench.io import parse_json
from interleave_bench.locks import exclusive_output, lock_path

import _score_util as score_util
from _route_util import read_rows, standard_sessions, write_data
from _score_util import many_sessions, oracle_rows

ROOT = Path(__file__).resolve().parents[1]
#: a safety net only: the barrier below releases long before, never a timing assumption
BARRIER_TIMEOUT_S = 120


def test_two_routes_on_one_output_one_finishes_the_other_exits_2_at_once(openai_env, tmp_path, capsys):
    srv = openai_env["server"]
    data = write_data(tmp_path / "data", standard_sessions()[:2])
    out = tmp_path / "preds.jsonl"
    args = ["route", str(data), "--mode", "closed", "--policy", "llm", "--model", "m1", "--out", str(out)]
    gate = srv.hold()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    first = subprocess.Popen([sys.executable, "-m", "interleave_bench", *args], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # barrier: the first run is waiting on its first model call, so it holds the output's lock
        assert srv.arrived.wait(BARRIER_TIMEOUT_S)
        assert main(args) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and str(out) in err[0] and f"pid {first.pid}" in err[0] and "route" in err[0], err
    finally:
        gate.set()
        stdout, stderr = first.communicate(timeout=BARRIER_TIMEOUT_S)
    assert first.returncode == 0, stderr
    keys = [(r["session_id"], r["i"]) for r in read_rows(out)]
    assert len(keys) == len(set(keys)) == sum(len(s["turns"]) for s in standard_sessions()[:2])


def test_the_lock_is_released_at_the_end_and_names_its_holder_while_held(tmp_path):
    out = tmp_path / "x.jsonl"
    with exclusive_output(out, "route --mode open --policy llm"):
        assert lock_path(out).read_text() == f"pid {os.getpid()}: route --mode open --policy llm\n"
        assert lock_path(out).name.startswith(".")  # hidden: exports and pushes leave it out
        # another process is refused (the holder's own writes take it again: tests/test_writer_lock.py)
        probe = ("import sys; from interleave_bench.locks import exclusive_output\n"
                 "try:\n    with exclusive_output(sys.argv[1], 'other'): pass\n"
                 "except Exception as exc: print(exc); sys.exit(3)\n")
        proc = subprocess.run([sys.executable, "-c", probe, str(out)], capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert proc.returncode == 3 and f"pid {os.getpid()}: route --mode open" in proc.stdout, proc
    assert not lock_path(out).exists()  # released and gone: no lock file stays behind
    with exclusive_output(out, "next"):
        pass  # free again


def test_a_plain_rerun_asks_again_for_the_error_rows_and_nothing_paid_before(openai_env, tmp_path, capsys):
    srv = openai_env["server"]
    data = write_data(tmp_path / "data", standard_sessions()[:2])  # en-0001 (14 messages), zh-0001 (9)
    srv.add_fault("500", times=1, match="Which day trips from Lisbon")  # en-0001 turn 5
    args = ["route", str(data), "--mode", "closed", "--policy", "llm", "--model", "m1", "--max-retries", "0"]
    assert main(args) == 0
    path = data / "predictions" / "closed-llm-m1.jsonl"
    assert [r["pred"] for r in read_rows(path)].count("ERROR") == 1
    assert "1 ERROR row remains in" in capsys.readouterr().err
    srv.reset_counts()
    assert main(args) == 0  # no --fresh
    # asked again: the failed turn and the later turns of its session (their prompts showed the ERROR);
    # the five turns before it and the other session are replayed from the cache
    assert srv.completions == 14 - 5
    rows = read_rows(path)
    assert "ERROR" not in [r["pred"] for r in rows] and "ERROR row" not in capsys.readouterr().err
    srv.reset_counts()
    clean = tmp_path / "clean.jsonl"
    assert main(args + ["--out", str(clean)]) == 0
    assert srv.completions == 0 and read_rows(clean) == rows


# --- clean errors for input Python's json accepts but the project cannot use -------------------------


@pytest.mark.parametrize("text,field,words", [
    ('{"a": {"b": ["ok", "\\ud800"]}}', "a.b[1]", "lone surrogate"),
    ('{"a": "\\udc00 tail"}', "a", "lone surrogate"),
    ('{"a": [1.5, NaN]}', "a[1]", "NaN and Infinity are refused"),
    ('{"x": {"y": -Infinity}}', "x.y", "NaN and Infinity are refused"),
])
def test_parse_json_names_the_field_of_a_lone_surrogate_or_a_non_number(text, field, words):
    with pytest.raises(InputError) as exc:
        parse_json("f.jsonl", 3, text)
    assert (exc.value.path, exc.value.line, exc.value.field) == ("f.jsonl", 3, field) and words in exc.value.message


def test_parse_json_keeps_surrogate_pairs_and_refuses_deep_nesting():
    assert parse_json("f", 1, '{"a": "\\ud83d\\ude00 NaN Infinity"}') == {"a": "\U0001F600 NaN Infinity"}
    with pytest.raises(InputError, match="nested too deeply"):
        parse_json("f", 1, "[" * 100_000 + "]" * 100_000)


def test_validate_checks_predictions_for_repeats_and_against_the_data(tmp_path, capsys):
    data = write_data(tmp_path / "data", standard_sessions()[:1])  # en-0001: turns 0-13
    row = {"session_id": "en-0001", "i": 0, "pred": "A", "mode": "closed", "policy": "oracle"}
    pred = tmp_path / "p.jsonl"
    lines = [row, {**row, "i": 1, "pred": 7}, row, {**row, "i": 999}, {**row, "session_id": "xx-1"}]
    pred.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    assert main(["validate", str(pred)]) == 2
    err = capsys.readouterr().err
    assert f"{pred}:3: i: duplicate row for session 'en-0001' turn 0 (first on line 1)" in err
    assert "turn 999" not in err  # no data given: nothing to check turns against
    assert main(["validate", str(data), str(pred)]) == 2
    err = capsys.readouterr().err
    assert f"{pred}:4: i: session 'en-0001' of {data / 'sessions.jsonl'} has no turn 999 (turns 0-13)" in err
    assert f"{pred}:5: session_id: 'xx-1' is not a session of" in err
    # a number as a label is read as its text (README), by validate as by score
    pred.write_text("".join(json.dumps(r) + "\n" for r in lines[:2]), encoding="utf-8")
    assert main(["validate", str(data), str(pred)]) == 0
    assert main(["score", str(data), str(pred), "--bootstrap", "0"]) == 0
    assert json.loads((tmp_path / "p.score.json").read_text())["counts"]["rows_scored"] == 2


def test_validate_reads_folders_as_score_does(tmp_path, capsys):
    data = write_data(tmp_path / "data", standard_sessions()[:1])
    preds = tmp_path / "data" / "predictions"
    preds.mkdir()
    row = {"session_id": "en-0001", "i": 0, "pred": "A", "mode": "closed", "policy": "oracle"}
    (preds / "a.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    (preds / "b.jsonl").write_text(json.dumps({**row, "i": 1}) + "\n", encoding="utf-8")
    assert main(["validate", str(tmp_path / "data"), str(preds)]) == 0
    out = capsys.readouterr().out
    assert f"{preds / 'a.jsonl'}: ok: 1 prediction rows" in out and f"{preds / 'b.jsonl'}: ok:" in out
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["validate", str(empty)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {empty}: no sessions.jsonl, manifest.json or prediction files (.jsonl, .parquet) in this folder"]


# --- scoring: nothing to score, partial runs -----------------------------------------------------


def test_a_partial_run_is_scored_loudly_and_refused_with_require_complete(tmp_path, capsys):
    ss = many_sessions(4)
    data = score_util.write_jsonl(tmp_path / "sessions.jsonl", ss)
    pred = score_util.write_jsonl(tmp_path / "p.jsonl", [r for r in oracle_rows(ss, "closed") if r["session_id"] == "s-001"])
    assert main(["score", str(data), str(pred), "--bootstrap", "0"]) == 0
    captured = capsys.readouterr()
    out = captured.out.splitlines()
    line = next(x for x in out if x.startswith("not scored:"))
    assert line == "not scored: p: 3 sessions without predictions (s-000, s-002, s-003)"
    # the table marks the run and says why below it; stderr warns
    assert any(x.startswith("| p * | closed |") for x in out)
    note = ("scored on part of the split (p 1 of 4 sessions of the dev split): not comparable with a run over all of "
            "it (compare pairs runs on the sessions both cover; --require-complete refuses such a run)")
    assert "* " + note in out and f"warning: {note}" in captured.err.splitlines()
    assert main(["report", str(data), str(pred), "--bootstrap", "0", "--html", str(tmp_path / "r.html")]) == 0
    assert f"warning: {note}" in capsys.readouterr().err.splitlines()
    assert f"<td>p *</td>" in (tmp_path / "r.html").read_text() and note in (tmp_path / "r.html").read_text()
    assert json.loads((tmp_path / "p.score.json").read_text())["not_scored_line"] == line
    assert main(["score", str(data), str(pred), "--bootstrap", "0", "--require-complete"]) == 1
    assert "incomplete: rows are missing for part of the dev split in p (see the not scored: line)" in capsys.readouterr().err


def test_turns_without_a_row_are_named_on_the_not_scored_line_require_complete_points_to(tmp_path, capsys):
    """A session with rows but for two of its turns: scored, those two as ERROR, and said so."""
    ss = many_sessions(2)
    data = score_util.write_jsonl(tmp_path / "sessions.jsonl", ss)
    rows = oracle_rows(ss, "closed")
    pred = score_util.write_jsonl(tmp_path / "p.jsonl", [r for k, r in enumerate(rows) if k not in (1, 2)])
    assert main(["score", str(data), str(pred), "--bootstrap", "0", "--require-complete"]) == 1
    captured = capsys.readouterr()
    line = next(x for x in captured.out.splitlines() if x.startswith("not scored:"))
    assert line == "not scored: p: 2 turns of scored sessions without a row, each scored as ERROR"
    doc = json.loads((tmp_path / "p.score.json").read_text())
    assert doc["counts"]["missing_rows"] == 2 and doc["not_scored_line"] == line
    assert "incomplete: rows are missing for part of the dev split in p" in captured.err


def test_a_partial_run_is_marked_in_the_burst_and_cluster_tables_and_the_pages_tables(tmp_path, capsys):
    ss = many_sessions(4)
    data = score_util.write_jsonl(tmp_path / "sessions.jsonl", ss)
    rows = [{**r, "burst": 1} for r in oracle_rows(ss, "open") if r["session_id"] == "s-001"]
    pred = score_util.write_jsonl(tmp_path / "p.jsonl", rows)
    assert main(["score", str(data), str(pred), "--bootstrap", "0"]) == 0
    out = capsys.readouterr().out.splitlines()
    systems = [x.split(" | ")[0] for x in out if x.startswith("| p")]
    assert systems == ["| p *"] * 3, out  # the main table, the burst table and the cluster table
    assert main(["report", str(data), str(pred), "--bootstrap", "0", "--html", str(tmp_path / "r.html")]) == 0
    page = (tmp_path / "r.html").read_text()
    assert "<td>p (open)</td>" not in page and page.count("<td>p * (open)</td>") >= 2  # breakdowns and outcomes


@pytest.mark.parametrize("empty", ["data", "predictions"])
def test_scoring_nothing_is_one_line_and_exit_2(tmp_path, capsys, empty):
    ss = many_sessions(2)
    data = score_util.write_jsonl(tmp_path / "sessions.jsonl", [] if empty == "data" else ss)
    pred = score_util.write_jsonl(tmp_path / "p.jsonl", [] if empty == "predictions" else oracle_rows(ss, "closed"))
    assert main(["score", str(data), str(pred), "--bootstrap", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    named = data if empty == "data" else pred
    assert err == [f"error: {named}: no {'sessions' if empty == 'data' else 'prediction rows'} in this file: nothing to score"]
    assert not (tmp_path / "p.score.json").exists()


# --- faults of every kind: the same rows as a clean run -----------------------------------------------


def _without_cost(rows: list[dict]) -> list[dict]:
    """Rows without what a fault may honestly change: latency, and usage (a garbage answer and its
    corrective retry cost more than one good answer)."""
    return [{k: v for k, v in r.items() if k not in ("elapsed_ms", "usage")} for r in rows]


def test_route_under_faults_of_every_kind_ends_like_a_clean_run_without_fresh(openai_env, tmp_path, monkeypatch):
    srv = openai_env["server"]
    data = write_data(tmp_path / "data", standard_sessions()[:2])
    base = ["route", str(data), "--mode", "closed", "--policy", "llm", "--model", "m1"]
    assert main(base + ["--out", str(tmp_path / "clean.jsonl")]) == 0
    clean = read_rows(tmp_path / "clean.jsonl")
    monkeypatch.setenv("INTERLEAVE_CACHE", str(tmp_path / "chaos-cache"))  # nothing answered from the clean run
    srv.reset_counts()
    srv.chaos(0.2, seed=5, delay=0.0)
    chaos = tmp_path / "chaos.jsonl"
    assert main(base + ["--out", str(chaos)]) == 0
    kinds = {e.status for e in srv.log}
    assert {"truncated", "malformed", 500} <= kinds, kinds  # the mix did hit unreadable bodies
    for _ in range(3):  # a plain rerun asks again for what is left (nothing, with the retries)
        if "ERROR" not in [r["pred"] for r in read_rows(chaos)]:
            break
        assert main(base + ["--out", str(chaos)]) == 0
    assert _without_cost(read_rows(chaos)) == _without_cost(clean)
