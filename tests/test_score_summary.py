"""What ``score`` says on stderr beside its tables: the summary line counts one run's sessions and
messages (never a sum over runs, which would read as the data's size)."""

from __future__ import annotations

from interleave_bench.cli import main

from _score_util import many_sessions, oracle_rows, write_jsonl


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


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

