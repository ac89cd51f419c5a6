"""score and compare refuse a run whose record says its rows were routed on other sessions, and refuse to
score a run in another mode than its record states (rows without a record: a warning)."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest


from _cli_util import cli
from _route_util import random_session, standard_sessions, twin, write_data


def routed(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A data folder, its closed and open bm25 runs (with their run records)."""
    data = write_data(tmp_path / "data")
    assert cli("route", data, "--mode", "closed", "--policy", "bm25") == 0
    assert cli("route", data, "--mode", "open", "--policy", "bm25") == 0
    return data, data / "predictions" / "closed-bm25.jsonl", data / "predictions" / "open-bm25.jsonl"


def warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("warning: ")]


def test_rows_routed_on_other_sessions_are_refused(tmp_path, capsys):
    """Other sessions under the same ids were scored with a warning (and the score file written):
    now one line naming the run record and the first differing session, exit 2, nothing written."""
    data, closed, _ = routed(tmp_path)
    rng = random.Random(7)  # other sessions under the same ids
    other = write_data(tmp_path / "other", [random_session(rng, s["session_id"], split=s["split"]) for s in standard_sessions()])
    capsys.readouterr()
    record = closed.with_suffix(".run.json")
    for extra in (("--json",), ()):
        assert cli("score", other, closed, "--bootstrap", 0, *extra) == 2
        out, err = capsys.readouterr()
        (line,) = errors(err)
        assert line.startswith(f"error: {record}: conversation_digests: {closed} was routed on other sessions than "
                               f"{other / 'sessions.jsonl'}: ")
        assert "Traceback" not in err and warnings(err) == [] and out == ""
    assert list(closed.parent.glob("closed-bm25*.score.json")) == []
    assert cli("compare", other, closed, closed, "--bootstrap", 0) == 2
    out, err = capsys.readouterr()
    assert len(errors(err)) == 1 and out == ""
    # the data it was routed on: no warning
    assert cli("score", data, closed, "--bootstrap", 0, "--json") == 0
    assert warnings(capsys.readouterr().err) == []


def errors(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("error: ")]


def shipped_runs(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The shipped example data (threads t1, t2, ...) and its closed and open ``local`` runs: the
    open-mode router numbers its topics t1, t2, ... too, so its labels spell thread ids."""
    import interleave_bench

    data = tmp_path / "v0"
    data.mkdir()
    shutil.copy(Path(interleave_bench.data_path("examples/v0")) / "sessions.jsonl", data / "sessions.jsonl")
    for mode in ("closed", "open"):
        assert cli("route", data, "--mode", mode, "--policy", "local", "--split", "all") == 0
    return data, data / "predictions" / "closed-local.jsonl", data / "predictions" / "open-local.jsonl"


def test_a_mode_other_than_the_one_the_run_record_states_is_refused(tmp_path, capsys):
    """An open-mode run scored with --mode closed gave a plausible number (its topic labels read as
    the thread ids they spell) with a warning: now one line, exit 2, and no score file."""
    data, closed, open_ = shipped_runs(tmp_path)
    capsys.readouterr()
    for run, routed, asked in ((open_, "open", "closed"), (closed, "closed", "open")):
        for extra in ((), ("--json",)):
            assert cli("score", data, run, "--mode", asked, "--split", "all", "--bootstrap", 0, *extra) == 2
            err = capsys.readouterr().err
            assert errors(err) == [
                f"error: {run.with_suffix('.run.json')}: options.mode: {run} was routed in {routed} mode, and --mode "
                f"asks to score it in {asked} mode: a run is scored in the mode it was routed in (leave out --mode, "
                f"or route it again with --mode {asked})"]
            assert "Traceback" not in err
        assert list(run.parent.glob(f"{run.stem}*.score.json")) == []
        # report reads the runs as score does
        assert cli("report", data, run, "--mode", asked, "--split", "all", "--html", tmp_path / "r.html") == 2
        assert len(errors(capsys.readouterr().err)) == 1
        # the mode it was routed in, given or not, is scored
        assert cli("score", data, run, "--mode", routed, "--split", "all", "--bootstrap", 0, "--json") == 0
        assert cli("score", data, run, "--split", "all", "--bootstrap", 0, "--json") == 0
    capsys.readouterr()
    assert cli("compare", data, closed, closed, "--mode", "open", "--split", "all", "--bootstrap", 0) == 2
    assert errors(capsys.readouterr().err)[0].startswith(f"error: {closed.with_suffix('.run.json')}: options.mode: ")



@pytest.mark.parametrize("stated", ["open", "CLOSED", None, 5, ["closed"], "closed\n"])
def test_a_record_whose_mode_is_none_or_not_its_rows_is_refused(tmp_path, capsys, stated):
    """A record edited to state another mode than the rows (or none at all) let closed-mode rows be
    scored in open mode, or passed unchecked: one line naming the record's field, exit 2."""
    import json

    data, closed, _ = routed(tmp_path)
    record = closed.with_suffix(".run.json")
    doc = json.loads(record.read_text(encoding="utf-8"))
    doc["options"]["mode"] = stated
    record.write_text(json.dumps(doc), encoding="utf-8")
    capsys.readouterr()
    for argv in (("score", data, closed, "--bootstrap", 0), ("score", data, closed, "--mode", "open", "--json"),
                 ("compare", data, closed, closed, "--bootstrap", 0)):
        assert cli(*argv) == 2, argv
        (line,) = errors(capsys.readouterr().err)
        assert line.startswith(f"error: {record}: options.mode: "), line
        assert ("its rows say closed mode" if stated == "open" else "expected 'closed' or 'open', got ") in line

def test_runs_of_two_modes_are_not_compared(tmp_path, capsys):
    """compare of a closed-mode and an open-mode run only warned: now one line naming both, exit 2."""
    data, closed, open_ = shipped_runs(tmp_path)
    capsys.readouterr()
    for a, b, ma, mb in ((closed, open_, "a closed", "an open"), (open_, closed, "an open", "a closed")):
        for extra in ((), ("--json",), ("--fail-on-regression",)):
            assert cli("compare", data, a, b, "--split", "all", "--bootstrap", 0, *extra) == 2
            out, err = capsys.readouterr()
            assert errors(err) == [
                f"error: {b}:1: mode: B is {mb}-mode run and A ({a}) {ma}-mode one: a closed-mode router is shown "
                "the threads and an open-mode one is not, so a paired comparison is of two runs of one mode"]
            assert out == ""
    assert cli("report", data, closed, open_, "--split", "all", "--bootstrap", 0, "--html", tmp_path / "r.html",
               "--compare", "closed-local", "open-local") == 2
    assert len(errors(capsys.readouterr().err)) == 1
    assert cli("compare", data, open_, twin(open_), "--split", "all", "--bootstrap", 0) == 0


def test_rows_without_a_run_record_are_scored_in_the_mode_asked_with_a_warning(tmp_path, capsys):
    """Without a record the rows' mode is all there is to go by, and rows written elsewhere may name
    the wrong one: --mode scores them in the mode asked, into a score file of that mode, and says so."""
    data, closed, _ = routed(tmp_path)
    alone = tmp_path / "alone.jsonl"
    shutil.copy(closed, alone)
    capsys.readouterr()
    assert cli("score", data, alone, "--mode", "open", "--bootstrap", 0, "--json") == 0
    assert warnings(capsys.readouterr().err) == [
        f"warning: {alone}'s rows say they were routed in closed mode (it has no run record stating its mode) and it "
        "is scored in open mode, as --mode asks"]
    assert cli("score", data, alone, "--mode", "closed", "--bootstrap", 0, "--json") == 0
    assert warnings(capsys.readouterr().err) == []


def test_another_mode_is_scored_into_its_own_file_and_the_routed_modes_file_is_kept(tmp_path, capsys):
    """``score --mode open`` of rows that say closed (no run record) leaves ``mine.score.json`` as
    it was and writes ``mine.open.score.json``, the warning naming it before the ``wrote`` line;
    the board still takes the closed file and refuses the open one."""
    import contextlib
    import io
    import json

    from interleave_bench.errors import InputErrors
    from interleave_bench.hub.board_score import score_given

    data, routed_closed, _ = routed(tmp_path)
    closed = tmp_path / "mine" / "mine.jsonl"
    closed.parent.mkdir()
    shutil.copy(routed_closed, closed)
    own, other = closed.with_name("mine.score.json"), closed.with_name("mine.open.score.json")
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
    warned = lines.index(f"warning: {closed}'s rows say they were routed in closed mode (it has no run record stating "
                         f"its mode) and it is scored in open mode, as --mode asks: written to {other} (mine.score.json, "
                         "its closed-mode score file, is left as it is)")
    assert warned < lines.index(f"wrote {other}")
    assert not any(line == f"wrote {own}" for line in lines)
    # the test split likewise: the split, then the mode
    assert cli("score", data, closed, "--mode", "open", "--split", "test", "--bootstrap", 0) == 0
    assert f"wrote {closed.with_name('mine.test.open.score.json')}" in capsys.readouterr().out
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
