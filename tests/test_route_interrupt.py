"""Ctrl-C during a run of a router that never waits (``local``, the baselines, a plain ``route()``)
stops it after the session being routed, with every finished session written, and the rerun ends
with the bytes of an uninterrupted run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from _route_util import read_rows, standard_sessions, write_data

#: a plain router that, at the first message of session ``stop_in``, sends its own process SIGINT as
#: a user's Ctrl-C would (the signal arrives while it routes, with no await in sight)
ROUTER = '''
import os
import signal
from interleave_bench.route.base import Decision


class Plain:
    policy = "plain"

    def __init__(self, stop_in=None):
        self.stop_in = stop_in

    def route(self, view):
        if view.session_id == self.stop_in and view.pending[0].i == 0:
            os.kill(os.getpid(), signal.SIGINT)
        if view.topics:
            return Decision.to_topic(view.topics[len(view.pending_text()) % len(view.topics)].label)
        return Decision.new("first")
'''


def _route(tmp_path: Path, data: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    mods = tmp_path / "mods"
    mods.mkdir(exist_ok=True)
    (mods / "plain_router.py").write_text(ROUTER, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(mods), os.environ.get("PYTHONPATH", "")])}
    argv = ["route", str(data), "--mode", "open", "--router", "plain_router:Plain", "--out", str(out), *extra]
    return subprocess.run([sys.executable, "-c", "import sys\nfrom interleave_bench.cli import main\n"
                           "sys.exit(main(sys.argv[1:]))", *argv], env=env, capture_output=True, text=True,
                          timeout=300)


def test_ctrl_c_keeps_every_finished_session_and_the_rerun_ends_as_one_run(tmp_path):
    data = write_data(tmp_path / "data")
    sessions = standard_sessions()
    out = tmp_path / "run.jsonl"
    stop = ["--router-arg", f"stop_in={sessions[2]['session_id']}"]
    proc = _route(tmp_path, data, out, *stop)
    assert proc.returncode == 130, proc.stderr
    # the line says what the file holds: the rows of the sessions finished (no model: nothing else to keep)
    assert proc.stderr.strip().splitlines()[-1] == (f"interrupted: 3 of {len(sessions)} sessions finished and kept "
                                                    f"in {out}; run the same command again to resume")
    # the session being routed when Ctrl-C came is finished and written, and nothing after it
    assert [(r["session_id"], r["i"]) for r in read_rows(out)] == [
        (s["session_id"], t["i"]) for s in sessions[:3] for t in s["turns"]]
    # the rerun routes the sessions left (the one that was stopped in is done), and its file is an
    # uninterrupted run's, byte for byte
    rerun = _route(tmp_path, data, out, *stop)
    assert rerun.returncode == 0, rerun.stderr
    whole = tmp_path / "whole.jsonl"
    assert _route(tmp_path, data, whole).returncode == 0
    assert out.read_bytes() == whole.read_bytes()
