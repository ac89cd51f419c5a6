"""A fresh start (``route --fresh``, ``evaluate_router(fresh=True)``) takes away the score files of
the run it replaces, as its rows take that run's place, and nothing else."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import interleave_bench
from interleave_bench.score.paths import score_paths

from _cli_util import run_cli
from _route_util import module_at, write_data

#: a router of one setting (``min_score``, which a fresh run changes), that stops at its first
#: message as Ctrl-C would when ``stop`` is set
ROUTER = '''
from interleave_bench.route.base import Decision


class Overlap:
    policy = "overlap"

    def __init__(self, min_score=1, stop=False):
        self.min_score = min_score
        self.stop = stop

    def route(self, view):
        if self.stop:
            raise KeyboardInterrupt
        return Decision.to_topic(view.topics[(len(view.pending_text()) + self.min_score) % len(view.topics)].label)
'''

ROUTE = ("--mode", "closed", "--router", "my_router:Overlap")


@pytest.fixture
def data(tmp_path) -> Path:
    return write_data(tmp_path / "data")


@pytest.fixture
def router(tmp_path, monkeypatch):
    with module_at(tmp_path / "mods", "my_router", ROUTER, monkeypatch) as module:
        yield module


def scored(capsys, data: Path, pred: Path, *splits: str) -> list[Path]:
    """Score ``pred`` on each split; the score files written."""
    for split in splits:
        assert run_cli(capsys, "score", data, pred, "--split", split, "--bootstrap", "0")[0] == 0
    return [p for p in score_paths(pred) if p.exists()]


def removed_line(paths: list[Path]) -> str:
    return f"removed {len(paths)} stale score file(s) of the earlier run: {', '.join(map(str, paths))}"


def test_a_fresh_route_leaves_no_score_file_of_the_run_it_replaced(data, router, capsys):
    pred = data / "predictions" / "closed-overlap.jsonl"
    assert run_cli(capsys, "route", data, *ROUTE, "--router-arg", "min_score=2")[0] == 0
    old = scored(capsys, data, pred, "dev", "test", "all")
    assert [p.name for p in old] == ["closed-overlap.score.json", "closed-overlap.test.score.json",
                                     "closed-overlap.all.score.json"]
    old_sha = json.loads(old[0].read_text(encoding="utf-8"))["provenance"]["predictions_sha256"]
    code, _, err = run_cli(capsys, "route", data, *ROUTE, "--router-arg", "min_score=3", "--fresh")
    assert code == 0, err
    assert removed_line(old) in err.splitlines()
    assert not any(p.exists() for p in old)
    # what score writes now is of the new rows
    new = scored(capsys, data, pred, "dev")
    assert json.loads(new[0].read_text(encoding="utf-8"))["provenance"]["predictions_sha256"] != old_sha


def test_a_fresh_evaluate_router_leaves_no_score_file_of_the_run_it_replaced(data, router, capsys):
    out = data / "predictions" / "ev-a.jsonl"
    interleave_bench.evaluate_router(router.Overlap(min_score=2), data, out=out, split="test", bootstrap=0)
    interleave_bench.evaluate_router(router.Overlap(min_score=2), data, out=out, split="all", bootstrap=0)
    old = [data / "predictions" / "ev-a.test.score.json", data / "predictions" / "ev-a.all.score.json"]
    assert all(p.exists() for p in old)
    capsys.readouterr()
    doc = interleave_bench.evaluate_router(router.Overlap(min_score=3), data, out=out, fresh=True, bootstrap=0)
    assert capsys.readouterr().err.splitlines() == [removed_line(old)]
    # the dev score it returns is the one file beside the new rows
    assert [p for p in score_paths(out) if p.exists()] == [data / "predictions" / "ev-a.score.json"]
    assert json.loads((data / "predictions" / "ev-a.score.json").read_text(encoding="utf-8")) == doc


def test_a_fresh_run_keeps_every_file_not_scored_from_the_rows_it_replaces(data, router, capsys):
    folder = data / "predictions"
    pred = folder / "closed-overlap.jsonl"
    assert run_cli(capsys, "route", data, *ROUTE)[0] == 0
    [own] = scored(capsys, data, pred, "dev")
    # another run and its score file
    other = folder / "closed-stay.jsonl"
    assert run_cli(capsys, "route", data, "--mode", "closed", "--policy", "stay")[0] == 0
    [other_score] = scored(capsys, data, other, "dev")
    # a score of that other run written under one of this run's names (score --out)
    assert run_cli(capsys, "score", data, other, "--split", "test", "--bootstrap", "0",
                   "--out", folder / "closed-overlap.test.score.json")[0] == 0
    kept = {
        other: other.read_bytes(),
        other_score: other_score.read_bytes(),
        folder / "closed-overlap.test.score.json": (folder / "closed-overlap.test.score.json").read_bytes(),
        # a file of the user's by another of this run's names, and files merely near them
        folder / "closed-overlap.all.score.json": b'{"my": "notes"}\n',
        folder / "closed-overlap.score.json.bak": own.read_bytes(),
        folder / "closed-overlap.notes.txt": b"keep me\n",
    }
    for path, content in kept.items():
        path.write_bytes(content)
    code, _, err = run_cli(capsys, "route", data, *ROUTE, "--router-arg", "min_score=3", "--fresh")
    assert code == 0, err
    assert removed_line([own]) in err.splitlines() and not own.exists()
    assert {p: p.read_bytes() for p in kept} == kept


def test_a_fresh_run_stopped_before_its_first_row_keeps_the_earlier_run_and_its_scores(data, router, capsys):
    pred = data / "predictions" / "closed-overlap.jsonl"
    assert run_cli(capsys, "route", data, *ROUTE)[0] == 0
    old = scored(capsys, data, pred, "dev", "all")
    before = {p: p.read_bytes() for p in (pred, *old)}
    code, _, err = run_cli(capsys, "route", data, *ROUTE, "--router-arg", "stop=true", "--fresh")
    assert code == 130 and "stale" not in err, err
    # the earlier run is still the file's, so its figures are still its own
    assert {p: p.read_bytes() for p in before} == before


def test_a_fresh_run_keeps_a_score_of_another_run_by_the_same_name(data, capsys):
    """A/x.score.json holds B/x.jsonl's figures (``score --out``): the same file name, other rows."""
    mine, theirs = data / "A" / "x.jsonl", data / "B" / "x.jsonl"
    assert run_cli(capsys, "route", data, "--mode", "closed", "--policy", "bm25", "--out", mine)[0] == 0
    assert run_cli(capsys, "route", data, "--mode", "closed", "--policy", "stay", "--out", theirs)[0] == 0
    placed = data / "A" / "x.score.json"
    assert run_cli(capsys, "score", data, theirs, "--bootstrap", "0", "--out", placed)[0] == 0
    before = placed.read_bytes()
    code, _, err = run_cli(capsys, "route", data, "--mode", "closed", "--policy", "bm25", "--out", mine, "--fresh")
    assert code == 0, err
    assert "stale" not in err and placed.read_bytes() == before


def test_a_score_recording_no_sha256_is_the_replaced_runs_when_it_names_that_very_file(data, capsys):
    """Without ``predictions_sha256`` the score's ``predictions_file`` decides: the file replaced
    (as another spelling of its path) goes, another file of the same name stays."""
    mine, theirs = data / "A" / "x.jsonl", data / "B" / "x.jsonl"
    for out in (mine, theirs):
        assert run_cli(capsys, "route", data, "--mode", "closed", "--policy", "bm25", "--out", out)[0] == 0
    own, other = data / "A" / "x.score.json", data / "A" / "x.test.score.json"
    for pred, score, split in ((mine, own, "dev"), (theirs, other, "test")):
        assert run_cli(capsys, "score", data, pred, "--split", split, "--bootstrap", "0", "--out", score)[0] == 0
        doc = json.loads(score.read_text(encoding="utf-8"))
        del doc["provenance"]["predictions_sha256"]  # a score that records none (the rows are alike)
        doc["provenance"]["predictions_file"] = str(data / "B" / ".." / "A" / "x.jsonl") if pred == mine else str(pred)
        score.write_text(json.dumps(doc), encoding="utf-8")
    kept = other.read_bytes()
    code, _, err = run_cli(capsys, "route", data, "--mode", "closed", "--policy", "bm25", "--out", mine, "--fresh")
    assert code == 0, err
    assert removed_line([own]) in err.splitlines() and not own.exists()
    assert other.read_bytes() == kept
