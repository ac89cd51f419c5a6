"""score and compare warn when a run record says its rows were routed on other data or in another mode."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

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


def test_another_mode_is_scored_into_its_own_file_and_the_routed_modes_file_is_kept(tmp_path, capsys):
    """``score --mode open`` of closed rows leaves ``closed-bm25.score.json`` as it was and writes
    ``closed-bm25.open.score.json``, the warning naming it before the ``wrote`` line; the board
    still takes the closed file and refuses the open one."""
    import contextlib
    import io
    import json

    from interleave_bench.errors import InputErrors
    from interleave_bench.hub.board_score import score_given

    data, closed, _ = routed(tmp_path)
    own, other = closed.with_name("closed-bm25.score.json"), closed.with_name("closed-bm25.open.score.json")
    assert cli("score", data, closed, "--bootstrap", 40) == 0
    before = own.read_bytes()
    assert json.loads(before)["mode"] == "closed"
    capsys.readouterr()
    both = io.StringIO()  # stdout and stderr in the order they were written
    with contextlib.redirect_stdout(both), contextlib.redirect_stderr(both):
        assert cli("score", data, closed, "--mode", "open", "--bootstrap", 40) == 0
    lines = both.getvalue().splitlines()
    assert own.read_bytes() == before
    assert json.loads(other.read_text(encoding="utf-8"))["mode"] == "open"
    warned = lines.index(f"warning: {closed} was routed in closed mode (closed-bm25.run.json) and is scored in open "
                         f"mode, as --mode asks: written to {other} (closed-bm25.score.json, its closed-mode score "
                         "file, is left as it is)")
    assert warned < lines.index(f"wrote {other}")
    assert not any(line == f"wrote {own}" for line in lines)
    # the test split likewise: the split, then the mode
    assert cli("score", data, closed, "--mode", "open", "--split", "test", "--bootstrap", 0) == 0
    assert f"wrote {closed.with_name('closed-bm25.test.open.score.json')}" in capsys.readouterr().out
    assert own.read_bytes() == before
    # the board ranks the closed file in its own mode, and refuses the open one as before
    assert [s.row["mode"] for s in score_given([str(own)])] == ["closed"]
    with pytest.raises(InputErrors) as refused:
        score_given([str(other)])
    assert [e.field for e in refused.value.errors] == ["mode"]


def test_the_routed_mode_asked_for_writes_the_same_file_as_no_mode(tmp_path, capsys):
    import json

    data, closed, _ = routed(tmp_path)
    own = closed.with_name("closed-bm25.score.json")
    assert cli("score", data, closed, "--bootstrap", 40) == 0
    plain = json.loads(own.read_text(encoding="utf-8"))
    own.unlink()
    assert cli("score", data, closed, "--mode", "closed", "--bootstrap", 40) == 0
    assert f"wrote {own}\n" in capsys.readouterr().out
    asked = json.loads(own.read_text(encoding="utf-8"))
    for doc in (plain, asked):
        doc["provenance"].pop("created")
    assert asked == plain
    assert sorted(p.name for p in closed.parent.glob("closed-bm25*.score.json")) == ["closed-bm25.score.json"]


def test_rows_that_name_no_mode_are_scored_into_the_plain_name_in_the_mode_asked(tmp_path, capsys):
    import json

    data, _, open_ = routed(tmp_path)
    bare = tmp_path / "bare.jsonl"
    bare.write_text("".join(json.dumps({k: v for k, v in json.loads(x).items() if k != "mode"}) + "\n"
                            for x in open_.read_text(encoding="utf-8").splitlines()), encoding="utf-8")
    assert cli("score", data, bare, "--mode", "open", "--bootstrap", 0) == 0
    assert f"wrote {tmp_path / 'bare.score.json'}\n" in capsys.readouterr().out
    assert json.loads((tmp_path / "bare.score.json").read_text(encoding="utf-8"))["mode"] == "open"
