"""What ``score`` says on stderr beside its tables: the summary line counts one run's sessions and
messages (never a sum over runs, which would read as the data's size), and a run holding rows
labelled ERROR (its router's failed decisions) says how many, one line per run."""

from __future__ import annotations

import json


from _cli_util import run_cli
from _score_util import many_sessions, oracle_rows, write_jsonl


def write_run(tmp_path, name, rows):
    return write_jsonl(tmp_path / f"{name}.jsonl", rows)


def test_the_summary_line_counts_one_run_not_the_sum_of_runs(tmp_path, capsys):
    ss = many_sessions(6)
    data = write_jsonl(tmp_path / "sessions.jsonl", ss)
    rows = oracle_rows(ss, "closed")
    a, b = write_run(tmp_path, "closed-a", rows), write_run(tmp_path, "closed-b", rows)
    n = sum(len(s["turns"]) for s in ss)
    code, _, err = run_cli(capsys, "score", data, a, b, "--split", "all", "--bootstrap", 0)
    assert code == 0
    assert err.splitlines()[-1].startswith(f"done: score: 2 runs, all split, 6 sessions and {n:,} messages scored a run; ")
    # a run over part of the split: the range, not a sum
    first = [r for r in rows if r["session_id"] == ss[0]["session_id"]]
    part = write_run(tmp_path, "closed-part", first)
    code, _, err = run_cli(capsys, "score", data, part, a, "--split", "all", "--bootstrap", 0)
    assert code == 0
    assert err.splitlines()[-1].startswith(f"done: score: 2 runs, all split, 1 to 6 sessions and {len(first)} to {n:,} "
                                           "messages scored a run; ")
    code, _, err = run_cli(capsys, "score", data, a, "--split", "all", "--bootstrap", 0)
    assert err.splitlines()[-1].startswith(f"done: score: 1 run, all split, 6 sessions scored, {n:,} messages; ")


def test_a_run_with_error_rows_says_how_many_on_stderr(tmp_path, capsys):
    ss = many_sessions(3)
    data = write_jsonl(tmp_path / "sessions.jsonl", ss)
    rows = oracle_rows(ss, "closed")
    failed = [{**r, "pred": "ERROR"} if k % 5 == 0 else r for k, r in enumerate(rows)]
    n = sum(r["pred"] == "ERROR" for r in failed)
    bad, good = write_run(tmp_path, "closed-failed", failed), write_run(tmp_path, "closed-oracle", rows)
    for json_flag in ([], ["--json"]):
        code, out, err = run_cli(capsys, "score", data, bad, good, "--split", "all", "--bootstrap", 0, *json_flag)
        assert code == 0
        lines = [line for line in err.splitlines() if line.startswith("ERROR rows:")]
        assert lines == [f"ERROR rows: closed-failed: {n} of {len(rows)} rows scored are ERROR (decisions the router "
                         "failed to make): wrong on a thread message (outcome error), right on a one-off (left alone)"]
        assert "ERROR rows:" not in out
    doc = json.loads((tmp_path / "closed-failed.all.score.json").read_text(encoding="utf-8"))
    assert doc["counts"]["error_rows"] == n and 0 < doc["outcomes"]["error"] <= n
    assert json.loads((tmp_path / "closed-oracle.all.score.json").read_text(encoding="utf-8"))["counts"]["error_rows"] == 0
