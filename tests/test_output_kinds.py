"""An output path that already holds a file of another kind is refused before any work, in one line
(exit 2), and the file is left as it was: ``score --out``, ``report --html``, ``leaderboard show
--html``, ``route --out`` (with or without ``--fresh``), ``evaluate_router(out=)``, ``mid-reply --out``
and ``facts --out`` write over their own kind of file only, never over a data folder's manifest or
sessions, Parquet, another run's record or score file, or a page."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import interleave_bench
from interleave_bench.cli import main
from interleave_bench.errors import UsageError
from _score_util import many_sessions, write_jsonl


@pytest.fixture
def world(tmp_path, monkeypatch):
    """A data folder (sessions, a manifest) with a bm25 run, its run record and its score file, and a page."""
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "data"
    write_jsonl(data / "sessions.jsonl", many_sessions(3))
    (data / "manifest.json").write_text(json.dumps({"version": "interleave-v0", "writer": "hand"}, indent=2) + "\n",
                                        encoding="utf-8")
    assert main(["route", str(data), "--mode", "open", "--policy", "bm25"]) == 0
    pred = data / "predictions" / "open-bm25.jsonl"
    assert main(["score", str(data), str(pred), "--bootstrap", "0"]) == 0
    assert main(["report", str(data), str(pred), "--html", str(tmp_path / "page.html"), "--bootstrap", "0"]) == 0
    return {"data": data, "pred": pred, "record": pred.with_suffix(".run.json"),
            "score": pred.with_name("open-bm25.score.json"), "page": tmp_path / "page.html",
            "manifest": data / "manifest.json"}


def _refused(capsys, argv: list[str], target: Path, option: str, what: str) -> None:
    before = target.read_bytes()
    assert main([str(a) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err == (f"error: {option} {target} is already there and is not {what}: writing would replace it; "
                   "choose another path (or remove that file)\n"), err
    assert target.read_bytes() == before


@pytest.mark.parametrize("other", ["manifest", "record", "page"])
def test_score_out_refuses_a_file_of_another_kind(world, capsys, other):
    _refused(capsys, ["score", world["data"], world["pred"], "--bootstrap", "0", "--out", world[other]], world[other],
             "score: --out", "a score file")


@pytest.mark.parametrize("other", ["manifest", "record", "score"])
def test_report_html_refuses_a_file_of_another_kind(world, capsys, other):
    _refused(capsys, ["report", world["data"], world["pred"], "--html", world[other], "--bootstrap", "0"], world[other],
             "report: --html", "a page report wrote")


@pytest.mark.parametrize("fresh", [False, True], ids=["resume", "fresh"])
@pytest.mark.parametrize("other", ["manifest", "record", "score"])
def test_route_out_refuses_a_file_of_another_kind_with_or_without_fresh(world, capsys, other, fresh):
    argv = ["route", world["data"], "--mode", "open", "--policy", "bm25", "--out", world[other]] + (["--fresh"] if fresh else [])
    _refused(capsys, argv, world[other], "route: --out", "a predictions file")


@pytest.mark.parametrize("fresh", [False, True], ids=["resume", "fresh"])
def test_route_out_refuses_another_data_sets_sessions_file(world, tmp_path, capsys, fresh):
    """A sessions file is JSON Lines too, but no predictions file: route never writes over one."""
    other = tmp_path / "other-data" / "sessions.jsonl"
    write_jsonl(other, many_sessions(2))
    argv = ["route", world["data"], "--mode", "open", "--policy", "bm25", "--out", other] + (["--fresh"] if fresh else [])
    _refused(capsys, argv, other, "route: --out", "a predictions file")


@pytest.mark.parametrize("other", ["manifest", "record", "score", "sessions"])
def test_leaderboard_show_html_refuses_a_file_of_another_kind(world, capsys, other):
    """Refused before the board is read: no Hub is asked (the repository named does not exist)."""
    target = world["data"] / "sessions.jsonl" if other == "sessions" else world[other]
    _refused(capsys, ["leaderboard", "show", "--repo", "nobody/no-board", "--html", target], target,
             "leaderboard show: --html", "a page report wrote")


def test_evaluate_router_out_refuses_a_file_of_another_kind(world):
    class Stay:
        policy = "stay-here"

        def route(self, view):
            return {"kind": "topic", "label": view.current} if view.current else {"kind": "new", "title": "t"}

    before = world["manifest"].read_bytes()
    with pytest.raises(UsageError, match=r"evaluate_router: out= .* is already there and is not a predictions file"):
        interleave_bench.evaluate_router(Stay(), world["data"], mode="open", out=world["manifest"])
    assert world["manifest"].read_bytes() == before


def test_each_command_writes_over_its_own_kind_of_file(world, capsys):
    """The same outputs written again: a score file, a page and a predictions file are theirs to replace."""
    data, pred = world["data"], world["pred"]
    world["score"].write_text(world["score"].read_text(encoding="utf-8").replace('"open-bm25"', '"stale"', 1),
                              encoding="utf-8")
    assert main(["score", str(data), str(pred), "--bootstrap", "0", "--out", str(world["score"])]) == 0
    assert json.loads(world["score"].read_text(encoding="utf-8"))["system"] == "open-bm25"
    assert main(["report", str(data), str(pred), "--html", str(world["page"]), "--bootstrap", "0"]) == 0
    rows = pred.read_bytes()
    assert main(["route", str(data), "--mode", "open", "--policy", "bm25", "--fresh"]) == 0
    assert pred.read_bytes() == rows
    empty = data / "empty.jsonl"
    empty.write_bytes(b"")  # an empty file is no other kind's: route may write into it
    assert main(["route", str(data), "--mode", "open", "--policy", "bm25", "--out", str(empty)]) == 0
    assert empty.read_bytes() == rows
    capsys.readouterr()


def _kinds(world, tmp_path) -> dict[str, Path]:
    parquet = tmp_path / "dev-00000-of-00001.parquet"
    parquet.write_bytes(b"PAR1\x15\x04\x15\x10\x15\x14L\x15\x02" + b"\x00" * 20 + b"PAR1")  # no newline in it
    return {"sessions": world["data"] / "sessions.jsonl", "manifest": world["manifest"], "score": world["score"],
            "predictions": world["pred"], "parquet": parquet}


@pytest.mark.parametrize("other", ["sessions", "manifest", "score", "predictions", "parquet"])
def test_mid_reply_out_refuses_a_file_of_another_kind(world, tmp_path, capsys, other):
    """Before any work: a results file is resumed (its last partial line cut), so anything else
    there (Parquet has no line to cut back to) would be cut or replaced."""
    target = _kinds(world, tmp_path)[other]
    _refused(capsys, ["mid-reply", "--rule-only", "--out", target], target, "mid-reply: --out", "a mid-reply results file")


@pytest.mark.parametrize("other", ["sessions", "score", "parquet"])
def test_facts_out_refuses_a_file_of_another_kind(world, tmp_path, capsys, other):
    import _facts_util

    data = _facts_util.write_data(tmp_path / "v1")
    target = _kinds(world, tmp_path)[other]
    _refused(capsys, ["facts", data, "--dry-run", "--out", target], target, "facts: --out", "a facts results file")


# --- the files a command writes beside its output: run records, score files, summaries ------------


def test_a_score_file_beside_the_predictions_never_replaces_an_input_or_another_kind(world, tmp_path, capsys):
    """``score DATA x.jsonl`` writes ``x.score.json`` (``x.<split>.score.json``) beside it: the data's
    sessions file, or a manifest, at that path is refused before any work and left as it was."""
    t = tmp_path / "t"
    t.mkdir()
    sessions, pred = t / "p.all.score.json", t / "p.jsonl"
    sessions.write_bytes((world["data"] / "sessions.jsonl").read_bytes())
    pred.write_bytes(world["pred"].read_bytes())
    before = sessions.read_bytes()
    assert main(["score", str(sessions), str(pred), "--split", "all", "--bootstrap", "0"]) == 2
    assert capsys.readouterr().err == (f"error: score: {pred} has its score file beside it, and {sessions} is one of "
                                       "the inputs (the sessions file); choose another path\n")
    assert sessions.read_bytes() == before
    beside = t / "p.score.json"
    beside.write_bytes(world["manifest"].read_bytes())
    _refused(capsys, ["score", world["data"], pred, "--bootstrap", "0"], beside,
             f"score: {pred} has its score file beside it, and", "a score file")


def test_two_runs_that_would_write_one_score_file_are_refused(world, tmp_path, capsys):
    """``x.jsonl`` and ``x.parquet`` would both be scored into ``x.score.json``: the first run's
    figures would be lost and the table would hold two rows named ``x``."""
    import pyarrow.json as pj
    import pyarrow.parquet as pq

    t = tmp_path / "runs"
    t.mkdir()
    (t / "x.jsonl").write_bytes(world["pred"].read_bytes())
    pq.write_table(pj.read_json(str(world["pred"])), t / "x.parquet")
    assert main(["score", str(world["data"]), str(t), "--bootstrap", "0"]) == 2
    assert capsys.readouterr().err == (f"error: score: {t / 'x.jsonl'} and {t / 'x.parquet'} would both write their "
                                       f"score to {t / 'x.score.json'}: score them one at a time with --out, or rename one\n")
    assert not (t / "x.score.json").exists()
    # however the paths are spelled (one relative, one absolute), and one file given twice is said as such
    rel = Path(os.path.relpath(t / "x.parquet"))
    assert main(["score", str(world["data"]), str(t / "x.jsonl"), str(rel), "--bootstrap", "0"]) == 2
    assert "would both write their score to" in capsys.readouterr().err
    assert main(["score", str(world["data"]), str(t / "x.jsonl"), str(t / "x.jsonl"), "--bootstrap", "0"]) == 2
    assert capsys.readouterr().err == (f"error: score: {t / 'x.jsonl'} and {t / 'x.jsonl'} are one predictions file, "
                                       "given twice: give it once\n")
    assert not (t / "x.score.json").exists()


def test_route_never_writes_its_run_record_over_a_file_of_another_kind(world, tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    record = tmp_path / "r.run.json"
    record.write_bytes(world["manifest"].read_bytes())
    _refused(capsys, ["route", world["data"], "--mode", "open", "--policy", "bm25", "--out", out], record,
             f"route: --out {out} writes its run record beside it, and", "a run record")
    assert not out.exists()


def test_mid_reply_never_writes_its_summary_over_its_cases_or_another_kind(world, tmp_path, capsys):
    from interleave_bench.midreply.cases import packaged_cases_path

    with packaged_cases_path() as packaged:
        cases_text = packaged.read_bytes()
    cases, out = tmp_path / "m.score.json", tmp_path / "m.jsonl"
    cases.write_bytes(cases_text)
    assert main(["mid-reply", str(cases), "--rule-only", "--out", str(out)]) == 2
    assert capsys.readouterr().err == (f"error: mid-reply: --out {out} writes its summary beside it, and {cases} is "
                                       "one of the inputs (the case file); choose another path\n")
    assert cases.read_bytes() == cases_text and not out.exists()
    summary = tmp_path / "n.score.json"
    summary.write_bytes(world["manifest"].read_bytes())
    _refused(capsys, ["mid-reply", "--rule-only", "--out", tmp_path / "n.jsonl"], summary,
             f"mid-reply: --out {tmp_path / 'n.jsonl'} writes its summary beside it, and", "a mid-reply summary")


def test_facts_and_score_facts_never_write_a_summary_over_an_input_or_another_kind(world, tmp_path, capsys):
    import _facts_util

    data = _facts_util.write_data(tmp_path / "v1")
    summary = tmp_path / "f.score.json"
    summary.write_bytes(world["manifest"].read_bytes())
    _refused(capsys, ["facts", data, "--dry-run", "--out", tmp_path / "f.jsonl"], summary,
             f"facts: {tmp_path / 'f.jsonl'} has its summary beside it, and", "a facts summary")
    assert not (tmp_path / "f.jsonl").exists()
    # a results file named as another results file's summary is an input of score-facts
    results = tmp_path / "r.jsonl"
    results.write_text('{"kind": "session", "session_id": "s"}\n', encoding="utf-8")
    other = tmp_path / "r.score.json"
    other.write_bytes(results.read_bytes())
    assert main(["score-facts", str(results), str(other)]) == 2
    assert capsys.readouterr().err == (f"error: score-facts: {results} has its summary beside it, and {other} is one "
                                       "of the inputs (a results file); choose another path\n")
    assert other.read_bytes() == results.read_bytes()


def test_an_output_through_a_folder_not_made_yet_is_checked_where_it_will_be_written(world, tmp_path, capsys):
    """``new/../manifest.json``: the writer makes ``new`` and writes the manifest's own path, so the
    checks look there, not at a path that is not there yet."""
    manifest = world["manifest"]
    before = manifest.read_bytes()
    via = world["data"] / "new" / ".." / "manifest.json"
    assert main(["score", str(world["data"]), str(world["pred"]), "--bootstrap", "0", "--out", str(via)]) == 2
    assert "is already there and is not a score file" in capsys.readouterr().err
    via_rows = world["data"] / "new2" / ".." / "manifest.json"
    assert main(["route", str(world["data"]), "--mode", "open", "--policy", "bm25", "--out", str(via_rows)]) == 2
    assert "is already there and is not a predictions file" in capsys.readouterr().err
    assert manifest.read_bytes() == before
    assert not (world["data"] / "new").exists() and not (world["data"] / "new2").exists()


def test_an_output_through_a_symlink_then_a_folder_not_made_yet_is_checked_where_it_lands(world, tmp_path, capsys):
    """``lnk/new/../../manifest.json`` with ``lnk`` a symlink to ``data/predictions``: the system
    follows the link before the ``..`` steps, so the file written is the data's manifest."""
    link = tmp_path / "lnk"
    link.symlink_to(world["data"] / "predictions")
    before = world["manifest"].read_bytes()
    via = link / "new" / ".." / ".." / "manifest.json"
    assert main(["score", str(world["data"]), str(world["pred"]), "--bootstrap", "0", "--out", str(via)]) == 2
    assert capsys.readouterr().err == (f"error: score: --out {world['manifest']} is already there and is not a score "
                                       "file: writing would replace it; choose another path (or remove that file)\n")
    assert world["manifest"].read_bytes() == before and not (world["data"] / "predictions" / "new").exists()


def test_two_results_files_that_would_write_one_facts_summary_are_refused(tmp_path, capsys):
    results = tmp_path / "r.jsonl"
    results.write_text('{"kind": "session", "session_id": "s"}\n', encoding="utf-8")
    bare = tmp_path / "r"  # its summary is r.score.json too
    bare.write_bytes(results.read_bytes())
    assert main(["score-facts", str(results), str(bare)]) == 2
    assert capsys.readouterr().err == (f"error: score-facts: {results} and {bare} would both write their summary to "
                                       f"{tmp_path / 'r.score.json'}: rename one\n")
    assert not (tmp_path / "r.score.json").exists()
