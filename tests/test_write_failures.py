"""A write the system refuses (a full disk, a file past its size limit) is one line naming the file or
standard output, exit 2, never an internal error; what was written is kept, and a rerun resumes it.

The refusals are real ones, of real processes: ``/dev/full`` for standard output, and for files a
size limit (``RLIMIT_FSIZE``) on the process, past which the system refuses a write as a full
disk does (``EFBIG`` where a disk says ``ENOSPC``: the same failed ``write``), without root.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from interleave_bench.cli import main
from interleave_bench.errors import UsageError, cannot_write, writing

from _route_util import standard_sessions, write_data

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "INTERLEAVE_NO_PROGRESS": "1"}


def _cli(*args: str, stdout=subprocess.PIPE, file_limit: int | None = None) -> subprocess.CompletedProcess:
    """``interleave-bench ARGS`` in a process of its own; ``file_limit``: the most bytes it may
    write to a file (a write past it is refused, ``EFBIG``)."""

    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # refused with an error, not killed by the signal
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, file_limit))

    return subprocess.run([sys.executable, "-m", "interleave_bench.cli", *args], stdout=stdout,
                          stderr=subprocess.PIPE, text=True, env=ENV, cwd=ROOT,
                          preexec_fn=limited if file_limit is not None else None)


def test_the_line_names_what_was_written_and_why():
    err = cannot_write("out/x.jsonl", OSError(28, "No space left on device"))
    assert isinstance(err, UsageError) and str(err) == "out/x.jsonl: cannot write: no space left on device"
    with pytest.raises(UsageError, match="^x.json: cannot write: file too large$"):
        with writing("x.json"):
            raise OSError(27, "File too large")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("command", ["stats", "score"])
def test_standard_output_on_a_full_disk_is_one_line_and_exit_2(tmp_path, command):
    data = write_data(tmp_path / "data", standard_sessions())
    assert main(["route", str(data), "--mode", "closed", "--policy", "stay", "--split", "all"]) == 0
    args = [command, str(data)] + ([str(data / "predictions"), "--split", "all", "--bootstrap", "0"]
                                   if command == "score" else [])
    assert _cli(*args).returncode == 0  # (it prints, and succeeds, where it can write)
    with open("/dev/full", "w") as full:
        proc = _cli(*args, stdout=full)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == ["error: standard output: cannot write: no space left on device"]


def test_a_route_stopped_by_a_full_file_says_which_and_resumes_to_the_same_bytes(tmp_path):
    data = write_data(tmp_path / "data", standard_sessions())
    args = ["route", str(data), "--mode", "closed", "--policy", "bm25", "--split", "all"]
    whole = tmp_path / "whole.jsonl"
    assert main(args + ["--out", str(whole)]) == 0
    out = tmp_path / "cut.jsonl"
    proc = _cli(*args, "--out", str(out), file_limit=whole.stat().st_size // 2)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [f"error: {out}: cannot write: file too large"]
    kept = out.read_bytes()
    assert 0 < len(kept) <= whole.stat().st_size // 2 and whole.read_bytes().startswith(kept)  # its rows so far
    assert main(args + ["--out", str(out)]) == 0  # room again: the run resumes
    assert out.read_bytes() == whole.read_bytes()


def test_a_whole_file_refused_midway_leaves_the_old_one_and_no_temporary_file(tmp_path):
    # sessions in id order: the scorer reads them without spooling any to a temporary file, which
    # the size limit would refuse as well
    data = write_data(tmp_path / "data", sorted(standard_sessions(), key=lambda s: s["session_id"]))
    assert main(["route", str(data), "--mode", "closed", "--policy", "stay", "--split", "all"]) == 0
    score = tmp_path / "score.json"
    args = ["score", str(data), str(data / "predictions"), "--bootstrap", "0", "--out", str(score)]
    assert main(args + ["--split", "test"]) == 0
    old = score.read_bytes()
    proc = _cli(*args, "--split", "all", file_limit=len(old) // 2)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [f"error: {score}: cannot write: file too large"]
    assert score.read_bytes() == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "score.json"]


def test_a_full_temporary_folder_while_scoring_unsorted_sessions_is_one_line(tmp_path):
    # sessions out of id order: the scorer spools their fingerprint lines to a temporary file, which
    # the size limit refuses (as a full temporary folder would)
    sessions = sorted(standard_sessions(), key=lambda s: s["session_id"], reverse=True)
    data = write_data(tmp_path / "data", sessions)
    assert main(["route", str(data), "--mode", "closed", "--policy", "stay", "--split", "all"]) == 0
    args = ["score", str(data), str(data / "predictions"), "--split", "all", "--bootstrap", "0"]
    assert _cli(*args).returncode == 0
    proc = _cli(*args, file_limit=64)
    assert proc.returncode == 2, proc.stderr
    folder = subprocess.run([sys.executable, "-c", "import tempfile; print(tempfile.gettempdir())"],
                            capture_output=True, text=True, env=ENV).stdout.strip()
    assert proc.stderr.splitlines() == [f"error: {folder} (the temporary folder): cannot write: file too large"]
