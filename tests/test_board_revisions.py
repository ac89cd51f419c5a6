"""Runs on the board's data under another name: a revision that resolves to the commit the board ranks
(its commit id, given as ``hub:ORG/NAME@COMMIT`` or in a score file's provenance) is the same data
and joins under the board's revision name; any other revision is refused with a line that says
truly why (other data, or the same sessions under another revision)."""

from __future__ import annotations

import json

import pytest

import _board_util as b
import _hub_util as u
from _hub_util import hub  # noqa: F401  (the fixture)

BOARD = "org/ib-board"
DATA_REPO = "org/ib"


def _add(capsys, *args):
    return u.cli(["leaderboard", "add", *args, "--repo", BOARD], capsys)


def _push(capsys, exported, revision):
    code, _, err = u.cli(["push", str(exported), "--repo", DATA_REPO, "--revision", revision], capsys)
    assert code == 0, err


@pytest.fixture
def ranked(hub, tmp_path, capsys, monkeypatch):
    """A board ranking ``v0.1`` of DATA_REPO (one run on it); returns the runs and v0.1's commit."""
    monkeypatch.chdir(tmp_path)
    data, preds = b.baselines(tmp_path / "data", n=6)
    exported = tmp_path / "ex"
    assert u.cli(["export", "--v0", str(data), "--out", str(exported)], capsys)[0] == 0
    _push(capsys, exported, "v0.1")
    code, out, err = _add(capsys, str(preds["closed-stay"]), "--data", f"hub:{DATA_REPO}@v0.1")
    assert code == 0 and "on data revision v0.1" in out, err
    return data, preds, hub.tags(DATA_REPO)["v0.1"]


def _rows(hub) -> list[dict]:
    import io

    import pyarrow.parquet as pq

    return pq.read_table(io.BytesIO(hub.files(BOARD)["data/leaderboard.parquet"])).to_pylist()


def test_runs_on_the_boards_commit_named_by_its_id_join_under_the_boards_revision(ranked, hub, tmp_path, capsys):
    data, preds, commit = ranked
    code, out, err = _add(capsys, str(preds["closed-bm25"]), "--data", f"hub:{DATA_REPO}@{commit}")
    assert code == 0, err
    assert "added closed-bm25 (closed, bm25, no model, dev) on data revision v0.1" in out
    # a score file scored on the commit id, added alone: its provenance names the commit
    code, _, err = u.cli(["score", f"hub:{DATA_REPO}@{commit}", str(preds["open-bm25"]), "--bootstrap", "50",
                          "--out", str(tmp_path / "open-bm25.score.json")], capsys)
    assert code == 0, err
    assert json.loads((tmp_path / "open-bm25.score.json").read_text())["provenance"]["data_revision"] == commit
    code, out, err = _add(capsys, str(tmp_path / "open-bm25.score.json"))
    assert code == 0, err
    assert "on data revision v0.1" in out
    rows = _rows(hub)
    assert [(r["system"], r["data_revision"], r["data_commit"], r["data_config"]) for r in rows] == [
        ("closed-stay", "v0.1", commit, "v0"), ("closed-bm25", "v0.1", commit, "v0"), ("open-bm25", "v0.1", commit, "v0")]
    code, out, _ = u.cli(["leaderboard", "show", "--repo", BOARD], capsys)
    assert "data revision: `v0.1`; 3 runs ranked" in out
    # the same run again under the commit's name is the run already there
    code, _, err = _add(capsys, str(preds["closed-bm25"]), "--data", f"hub:{DATA_REPO}@{commit}")
    assert code == 2 and "duplicate: closed-bm25" in err and "on data revision v0.1" in err, err


def test_another_revision_is_refused_saying_truly_whether_its_data_is_other(ranked, hub, tmp_path, capsys):
    data, preds, commit = ranked
    # v0.2: the same v0 sessions, at another commit (the mid-reply cases added beside them)
    cases = u.write_json(tmp_path / "cases.json", u.case_file())
    assert u.cli(["export", "--v0", str(data), "--mid-reply", cases, "--out", str(tmp_path / "ex2")], capsys)[0] == 0
    _push(capsys, tmp_path / "ex2", "v0.2")
    assert hub.tags(DATA_REPO)["v0.2"] != commit
    pred = str(preds["closed-bm25"])
    code, _, err = _add(capsys, pred, "--data", f"hub:{DATA_REPO}@v0.2")
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith(f"error: {pred}: data_revision: scored on data revision v0.2 (commit "
                          f"{hub.tags(DATA_REPO)['v0.2'][:12]}), not on the board's v0.1 (commit {commit[:12]}), "
                          "though it holds the same sessions"), err
    assert "different data" not in err and "--new-board" in err
    # v0.3: other sessions
    other, other_preds = b.baselines(tmp_path / "other", n=5)
    assert u.cli(["export", "--v0", str(other), "--out", str(tmp_path / "ex3")], capsys)[0] == 0
    _push(capsys, tmp_path / "ex3", "v0.3")
    pred = str(other_preds["closed-bm25"])
    code, _, err = _add(capsys, pred, "--data", f"hub:{DATA_REPO}@v0.3")
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith(f"error: {pred}: data_revision: scored on data revision v0.3, but the board ranks v0.1: "
                          "runs on different data are never ranked together"), err
    assert [r["system"] for r in _rows(hub)] == ["closed-stay"]
