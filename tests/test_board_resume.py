"""``leaderboard add`` interrupted with Ctrl-C mid-publication, then run again: the board ends as an
uninterrupted add leaves it (one commit, its tag), whichever request the interruption cut short."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys

import pytest

import _board_util as b
import _hub_util as u
from _hub_util import hub  # noqa: F401  (the fixture)

BOARD = "org/interleavebench-leaderboard"
#: what differs between two publications of the same runs: when each was scored and published
STAMPS = ("date", "scored", "created")


@pytest.fixture
def runs(tmp_path):
    return b.baselines(tmp_path / "data")


def _add_argv(pred, data, repo=BOARD):
    return ["leaderboard", "add", str(pred), "--data", str(data), "--repo", repo]


def _interrupted_add(hub, argv, op, applied):
    """Run ``interleave-bench`` with ``argv`` in a subprocess, hold its ``op`` request at the stand-in and
    send SIGINT while it waits for the answer; returns the process's exit code and stderr."""
    hold = hub.hold_next(op, applied=applied)
    env = {**os.environ, **hub.env}
    proc = subprocess.Popen([sys.executable, "-c", u.LOOPBACK_GUARD + "import sys\nfrom interleave_bench.cli import main\n"
                             "sys.exit(main(sys.argv[1:]))", *argv], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert hold.arrived.wait(120), "the held request never arrived"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        hold.release.set()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, err


def _published(hub, repo):
    """The board as published: its tags (name -> how many rows that commit holds) and the rows at the last
    tag, without the time stamps."""
    import pyarrow.parquet as pq

    tags = hub.tags(repo)

    def rows_at(rev):
        table = pq.read_table(io.BytesIO(hub.files(repo, rev)["data/leaderboard.parquet"]))
        return [{**{k: v for k, v in r.items() if k not in STAMPS},
                 "provenance": {k: v for k, v in json.loads(r["provenance"]).items() if k not in STAMPS}}
                for r in table.to_pylist()]
    last = max(tags, key=lambda t: int(t.split("-")[1]))
    return {t: len(rows_at(t)) for t in tags}, rows_at(last), len(hub.commits(repo))


@pytest.mark.parametrize("op,applied", [("tag", False), ("commit", True), ("commit", False)],
                         ids=["tag-lost", "commit-made-answer-lost", "commit-lost"])
def test_an_add_interrupted_mid_publication_resumes_to_the_uninterrupted_result(hub, runs, capsys, op, applied):
    data, preds = runs
    # the uninterrupted publication of the same two runs, on a board of its own
    for name in ("closed-stay", "closed-bm25"):
        assert u.cli(_add_argv(preds[name], data, "org/reference"), capsys)[0] == 0
    assert u.cli(_add_argv(preds["closed-stay"], data), capsys)[0] == 0

    code, err = _interrupted_add(hub, _add_argv(preds["closed-bm25"], data), op, applied)
    assert code == 130 and "interrupted" in err and "Traceback" not in err, err

    code, out, err = u.cli(_add_argv(preds["closed-bm25"], data), capsys)
    assert code == 0, err
    assert "added closed-bm25 (closed, bm25, no model, dev)" in out and ", tag board-2" in out
    assert _published(hub, BOARD) == _published(hub, "org/reference")
    # done: the same add a third time is the duplicate it is
    code, _, err = u.cli(_add_argv(preds["closed-bm25"], data), capsys)
    assert code == 2 and "duplicate" in err


def test_another_add_after_an_interrupted_one_completes_it_first(hub, runs, capsys):
    data, preds = runs
    assert u.cli(_add_argv(preds["closed-stay"], data), capsys)[0] == 0
    code, _ = _interrupted_add(hub, _add_argv(preds["closed-bm25"], data), "tag", applied=False)
    assert code == 130 and sorted(hub.tags(BOARD)) == ["board-1"]

    code, out, err = u.cli(_add_argv(preds["open-bm25"], data), capsys)
    assert code == 0, err
    tags = hub.tags(BOARD)
    assert sorted(tags) == ["board-1", "board-2", "board-3"] and ", tag board-3" in out
    assert "board-2 (closed-bm25" in err  # says which interrupted publication it completed
    tagged = _published(hub, BOARD)[0]
    assert tagged == {"board-1": 1, "board-2": 2, "board-3": 3}
