"""One writer per output, on the real file: symlinks, every writer, file modes, no lock files left.

Two writers meet through barriers (events a child process sets and waits on), never sleeps.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from interleave_bench import locks as ilocks
from interleave_bench.cli import main
from interleave_bench.errors import UsageError
from interleave_bench.io import JsonlAppender, atomic_write_text, write_json, write_jsonl
from interleave_bench.locks import exclusive_output, lock_path

from _cli_util import run_cli
from _lock_util import Holder
from _route_util import standard_sessions, write_data
from _score_util import oracle_rows

ROOT = Path(__file__).resolve().parents[1]
def test_a_symlink_to_the_output_is_the_same_output(tmp_path):
    real = tmp_path / "preds" / "run.jsonl"
    real.parent.mkdir()
    real.write_text("", encoding="utf-8")
    link = tmp_path / "elsewhere.jsonl"
    link.symlink_to(real)
    assert lock_path(link) == lock_path(real)
    with Holder(real) as h:
        with pytest.raises(UsageError, match=f"pid {h.proc.pid}: holder"):
            with exclusive_output(link, "second"):
                pass
        with pytest.raises(UsageError, match="another run is writing it"):
            JsonlAppender(link)
        with pytest.raises(UsageError, match="another run is writing it"):
            atomic_write_text(link, "x\n")
    assert real.read_text(encoding="utf-8") == ""  # nothing got through
    assert not lock_path(real).exists()


def test_a_route_through_a_symlink_waits_for_no_one_and_doubles_nothing(tmp_path, capsys):
    data = write_data(tmp_path / "data", standard_sessions()[:1])
    out = tmp_path / "preds.jsonl"
    link = tmp_path / "link.jsonl"
    link.symlink_to(out)
    args = ["route", str(data), "--mode", "closed", "--policy", "oracle", "--split", "all"]
    with Holder(out):
        assert main(args + ["--out", str(link)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "another run is writing it" in err[0], err
    assert main(args + ["--out", str(link)]) == 0
    assert main(args + ["--out", str(out)]) == 0  # the same file: resumed, nothing appended twice
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    keys = [(r["session_id"], r["i"]) for r in rows]
    assert len(keys) == len(set(keys)) == len(standard_sessions()[0]["turns"])
    assert link.is_symlink()


def _score_setup(tmp_path: Path) -> tuple[Path, Path]:
    sessions = standard_sessions()[:2]
    data = write_data(tmp_path / "data", sessions)
    pred = tmp_path / "preds" / "closed-oracle.jsonl"
    write_jsonl(pred, oracle_rows(sessions, "closed"))
    return data, pred


def test_score_holds_its_score_file_while_it_scores(tmp_path, capsys):
    data, pred = _score_setup(tmp_path)
    score_file = pred.with_name("closed-oracle.all.score.json")  # the split's own score file
    with Holder(score_file) as h:
        assert main(["score", str(data), str(pred), "--split", "all", "--bootstrap", "0"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and str(score_file) in err[0] and f"pid {h.proc.pid}" in err[0], err
        assert not score_file.exists()
    assert main(["score", str(data), str(pred), "--split", "all", "--bootstrap", "0"]) == 0
    assert json.loads(score_file.read_text(encoding="utf-8"))["metrics"]["accuracy"] == 1.0
    assert sorted(p.name for p in tmp_path.rglob(".*.lock")) == []


def test_score_json_and_out_lock_no_score_file_beside_the_predictions(tmp_path, capsys):
    data, pred = _score_setup(tmp_path)
    beside = pred.with_name("closed-oracle.score.json")
    out = tmp_path / "elsewhere.json"
    with Holder(beside):  # as a read-only predictions folder would, refuses the lock there
        assert main(["score", str(data), str(pred), "--bootstrap", "0", "--json"]) == 0
        assert main(["score", str(data), str(pred), "--bootstrap", "0", "--out", str(out)]) == 0
        capsys.readouterr()
    assert json.loads(out.read_text(encoding="utf-8"))["metrics"]["accuracy"] == 1.0
    assert not beside.exists()
    with Holder(out) as h:  # the file --out names is the one held
        assert main(["score", str(data), str(pred), "--bootstrap", "0", "--out", str(out)]) == 2
        assert f"pid {h.proc.pid}" in capsys.readouterr().err


def test_writing_through_a_symlink_replaces_the_file_it_names_and_keeps_the_link(tmp_path):
    real = tmp_path / "a" / "doc.json"
    real.parent.mkdir()
    real.write_text("{}", encoding="utf-8")
    link = tmp_path / "doc.json"
    link.symlink_to(real)
    write_json(link, {"k": 1})
    assert link.is_symlink() and json.loads(real.read_text(encoding="utf-8")) == {"k": 1}


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_files_get_the_mode_the_umask_gives(tmp_path, umask):
    old = os.umask(umask)
    try:
        write_json(tmp_path / "doc.json", {"a": 1})
        write_jsonl(tmp_path / "rows.jsonl", [{"a": 1}])
        with JsonlAppender(tmp_path / "appended.jsonl") as sink:
            sink.append({"a": 1})
        atomic_write_text(tmp_path / "page.html", "<p>hi</p>\n")
    finally:
        os.umask(old)
    for name in ("doc.json", "rows.jsonl", "appended.jsonl", "page.html"):
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o666 & ~umask, name


def test_commands_leave_no_lock_files_in_data_or_prediction_folders(tmp_path):
    data, pred = _score_setup(tmp_path)
    assert main(["route", str(data), "--mode", "closed", "--policy", "stay", "--split", "all"]) == 0
    assert main(["score", str(data), str(data / "predictions"), "--split", "all", "--bootstrap", "0"]) == 0
    assert main(["generate", "--offline", "--sessions", "2", "--out", str(tmp_path / "gen")]) == 0
    assert [p for p in tmp_path.rglob("*") if p.name.endswith(".lock")] == []
    assert [p for p in tmp_path.rglob("*.tmp")] == []


def test_a_lock_file_removed_under_a_late_writer_is_never_shared(tmp_path, monkeypatch):
    """The holder removes its lock file on release; a writer that opened the old file just before
    locks an orphan and must try again on the file at the path, else two could write at once."""
    out = tmp_path / "x.jsonl"
    real_flock = ilocks.fcntl.flock
    calls = []

    def flock_after_the_holder_left(fd, op):
        calls.append(op)
        if len(calls) == 1:
            os.unlink(lock_path(out))  # what a releasing holder does between our open and our lock
        return real_flock(fd, op)

    monkeypatch.setattr(ilocks.fcntl, "flock", flock_after_the_holder_left)
    with exclusive_output(out, "late writer"):
        assert len(calls) == 2  # the orphan was let go and the file at the path locked
        probe = ("import sys; from interleave_bench.locks import exclusive_output\n"
                 "try:\n    with exclusive_output(sys.argv[1], 'other'): pass\n"
                 "except Exception as exc: print(exc); sys.exit(3)\n")
        proc = subprocess.run([sys.executable, "-c", probe, str(out)], capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert proc.returncode == 3 and "late writer" in proc.stdout, proc


def test_a_lock_file_left_by_a_killed_run_is_taken_and_removed(tmp_path):
    out = tmp_path / "x.jsonl"
    lock_path(out).write_text("pid 1: route (killed)\n", encoding="utf-8")  # no flock: its process is gone
    with exclusive_output(out, "next"):
        assert lock_path(out).read_text(encoding="utf-8").endswith(": next\n")
    assert not lock_path(out).exists()


def test_score_of_a_run_a_route_is_still_writing_says_so_without_waiting(tmp_path, capsys):
    """The lock is held by the test itself, as a running route holds it: no timing."""
    sessions = [s for s in standard_sessions() if s["split"] == "dev"]
    data = write_data(tmp_path / "data", sessions)
    pred = tmp_path / "data" / "predictions" / "closed-oracle.jsonl"
    pred.parent.mkdir()
    first = oracle_rows(sessions[:1], "closed")  # the part written so far
    write_jsonl(pred, first)
    assert ilocks.writer_of(pred) is None
    with exclusive_output(pred, "interleave-bench route data --mode closed"):
        assert ilocks.writer_of(pred) == f"pid {os.getpid()}: interleave-bench route data --mode closed"
        code, out, err = run_cli(capsys, "score", data, pred, "--bootstrap", 0)
    assert code == 0, err
    said = (f"warning: {pred} is being written by a running route (its lock is held: pid {os.getpid()}: "
            f"interleave-bench route data --mode closed): scored the {len(first)} rows written so far")
    assert said in err.splitlines()
    assert any(line.startswith("warning: scored on part of the split") for line in err.splitlines())
    code, out, err = run_cli(capsys, "score", data, pred, "--bootstrap", 0)  # its writer gone: nothing said
    assert code == 0 and "is being written" not in err
