"""score and compare warn when a run record says its rows were routed on other data or in another mode."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

from interleave_bench.cli import main

from _route_util import random_session, standard_sessions, write_data


def cli(*args) -> int:
    return main([str(a) for a in args])


def routed(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A data folder, its closed and open bm25 runs (with their run records)."""
    data = write_data(tmp_path / "data")
    assert cli("route", data, "--mode", "closed", "--policy", "bm25") == 0
    assert cli("route", data, "--mode", "open", "--policy", "bm25") == 0
    return data, data / "predictions" / "closed-bm25.jsonl", data / "predictions" / "open-bm25.jsonl"


def warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("warning: ")]


def test_rows_routed_on_other_data_are_scored_with_a_warning(tmp_path, capsys):
    data, closed, _ = routed(tmp_path)
    rng = random.Random(7)  # other sessions under the same ids
    other = write_data(tmp_path / "other", [random_session(rng, s["session_id"], split=s["split"]) for s in standard_sessions()])
    capsys.readouterr()
    assert cli("score", other, closed, "--bootstrap", 0, "--json") == 0
    (line,) = warnings(capsys.readouterr().err)
    assert line.startswith(f"warning: {closed} was routed on other data than {other / 'sessions.jsonl'} (closed-bm25.run.json")
    assert cli("compare", other, closed, closed, "--bootstrap", 0) == 0
    assert len(warnings(capsys.readouterr().err)) == 2  # A and B
    # the data it was routed on: no warning
    assert cli("score", data, closed, "--bootstrap", 0, "--json") == 0
    assert warnings(capsys.readouterr().err) == []


def test_a_mode_other_than_the_routed_one_is_said(tmp_path, capsys):
    data, closed, open_ = routed(tmp_path)
    capsys.readouterr()
    assert cli("score", data, closed, "--mode", "open", "--bootstrap", 0, "--json") == 0
    assert warnings(capsys.readouterr().err) == [
        f"warning: {closed} was routed in closed mode (closed-bm25.run.json) and is scored in open mode, as --mode asks"]
    assert cli("score", data, closed, "--mode", "closed", "--bootstrap", 0, "--json") == 0
    assert warnings(capsys.readouterr().err) == []
    # open-mode labels none of which names a thread are no closed-mode run at all: refused
    assert cli("score", data, open_, "--mode", "closed", "--bootstrap", 0, "--json") == 2
    assert "none of the" in capsys.readouterr().err


def test_rows_without_a_run_record_get_no_warning(tmp_path, capsys):
    data, closed, _ = routed(tmp_path)
    alone = tmp_path / "alone.jsonl"
    shutil.copy(closed, alone)
    capsys.readouterr()
    assert cli("score", data, alone, "--mode", "open", "--bootstrap", 0, "--json") == 0
    assert warnings(capsys.readouterr().err) == []
