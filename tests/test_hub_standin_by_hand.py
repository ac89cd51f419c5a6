"""The Hub stand-in started by hand (``python tests/_hub_standin.py``), as docs/hub.md tells a user
to try ``push``, ``release`` and the leaderboard without the Hub."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from _hub_util import TOKEN, hub_env

STANDIN = Path(__file__).with_name("_hub_standin.py")


def test_started_by_hand_it_prints_the_endpoint_serves_a_release_and_stops_on_ctrl_c(tmp_path):
    env = {**os.environ, "HF_TOKEN": TOKEN}
    server = subprocess.Popen([sys.executable, str(STANDIN)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env)
    try:
        first = server.stdout.readline()  # blocks until it serves
        assert first.startswith("export HF_ENDPOINT=http://127.0.0.1:")
        url = first.strip().split("=", 1)[1]
        cmd = [sys.executable, "-m", "interleave_bench", "release", "--revision", "v0.1", "--repo", "me/bench",
               "--offline", "--sessions", "5"]
        released = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path,
                                  env={**os.environ, **hub_env(url, tmp_path)}, timeout=300)
        assert released.returncode == 0, released.stderr[-2000:]
        assert "released me/bench v0.1: commit " in released.stdout
        # writes need the token it was started with
        again = [sys.executable, "-m", "interleave_bench", "release", "--revision", "v0.2", "--repo", "me/bench",
                 "--offline", "--sessions", "5"]
        wrong = subprocess.run(again, capture_output=True,
                               text=True, cwd=tmp_path, env={**os.environ, **hub_env(url, tmp_path), "HF_TOKEN": "other"},
                               timeout=300)
        assert wrong.returncode != 0 and "not authorized (HTTP 401)" in wrong.stderr
        assert "other" not in wrong.stdout + wrong.stderr
    finally:
        server.send_signal(signal.SIGINT)
        out, err = server.communicate(timeout=60)
    assert server.returncode == 130 and err.splitlines()[-1] == "stopped" and out == ""


def test_a_port_out_of_range_is_one_line_and_exit_2():
    done = subprocess.run([sys.executable, str(STANDIN), "--port", "70000"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr == "_hub_standin: --port must be 0 to 65535, got 70000\n"
