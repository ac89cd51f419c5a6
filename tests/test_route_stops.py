"""A route run that stops before its first row leaves nothing of its own behind, and nothing else
is touched: files that were there before stay (an output holding rows, stopped by Ctrl-C, keeps
them: tests/test_route_interrupt.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _cli_util import run_cli
from _lock_util import StoppedRoute
from _route_util import EN_THREADS, EN_TURNS, session_dict, write_data

FAILING = ("--mode", "closed", "--policy", "llm", "--model", "m1", "--max-retries", "0")
STAY = ("--mode", "closed", "--policy", "stay")


def listing(folder: Path) -> dict[str, bytes]:
    """Every file and folder under ``folder`` (lock files too), with a file's bytes."""
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else b"<dir>") for p in sorted(folder.rglob("*"))}


def visible(files: dict[str, bytes]) -> dict[str, bytes]:
    """``files`` but the hidden ones (lock files, a run's own scratch files)."""
    return {k: v for k, v in files.items() if not Path(k).name.startswith(".")}


def stop_early(capsys, data: Path, *extra: object) -> None:
    code, _, err = run_cli(capsys, "route", data, *FAILING, *extra)
    assert code == 2 and "the first 8 model calls all failed" in err, err


def test_a_run_stopped_before_its_first_row_leaves_no_new_file(openai_env, tmp_path, capsys):
    openai_env["server"].add_fault("500", times=1000)  # every call fails: the run stops before a row
    work = tmp_path / "work"  # (the response cache is beside it)
    data = write_data(work / "data", [session_dict("en-0001", EN_THREADS, EN_TURNS)])
    before = listing(work)
    stop_early(capsys, data, "--out", work / "x.jsonl")  # no x.jsonl, no x.run.json
    assert listing(work) == before
    stop_early(capsys, data)  # nor the predictions/ folder the default output would have made
    assert listing(work) == before
    stop_early(capsys, data, "--out", work / "new" / "deeper" / "x.jsonl")  # nor folders made for --out
    assert listing(work) == before


def test_files_that_were_there_before_are_kept(openai_env, tmp_path, capsys):
    openai_env["server"].add_fault("500", times=1000)
    data = write_data(tmp_path / "data", [session_dict("en-0001", EN_THREADS, EN_TURNS)])
    folder = data / "predictions"
    folder.mkdir()
    (folder / "closed-bm25.jsonl").write_text("")  # another run's file: the folder stays with it
    # an empty output a run stopped by an earlier version left: not this run's to remove
    (folder / "closed-llm-m1.jsonl").write_text("")
    before = listing(folder)
    stop_early(capsys, data)
    assert listing(folder) == before  # and no run record of the run beside it


def test_each_file_a_stopped_run_made_goes_and_each_it_found_stays_as_it_was(openai_env, tmp_path, capsys):
    openai_env["server"].add_fault("500", times=1000)
    work = tmp_path / "work"
    data = write_data(work / "data", [session_dict("en-0001", EN_THREADS, EN_TURNS)])
    o2, o9, o9t = work / "o2", work / "o9", work / "o9t"
    for folder in (o2, o9, o9t):
        folder.mkdir()
    (o2 / "out.jsonl").write_text("")  # an empty output that was there: kept, and no record made beside it
    # a run record that was there beside a new output (its predictions moved away): kept as it was
    assert run_cli(capsys, "route", data, *STAY, "--out", o2 / "moved.jsonl")[0] == 0
    (o2 / "moved.jsonl").unlink()
    # a symlink to a file not there yet: the link is kept, the target and the record made are not
    (o9 / "out.jsonl").symlink_to(o9t / "real.jsonl")
    # a symlink whose target's folders are not there either: the folders made for it go too
    (o9 / "far.jsonl").symlink_to(work / "gone" / "deeper" / "real.jsonl")
    before = listing(work)
    for out in (o2 / "out.jsonl", o2 / "moved.jsonl", o9 / "out.jsonl", o9 / "far.jsonl"):
        stop_early(capsys, data, "--out", out)
        assert listing(work) == before, out


# --- x and x.jsonl: two outputs, one run record x.run.json --------------------------------------------



def test_two_outputs_sharing_a_run_record_never_run_at_once(tmp_path, capsys):
    data = write_data(tmp_path / "data", [session_dict("en-0001", EN_THREADS, EN_TURNS)])
    out = tmp_path / "o"
    with StoppedRoute(data, out / "x"):  # a run of x, inside its first call: x.run.json is its record
        code, _, err = run_cli(capsys, "route", data, *STAY, "--out", out / "x.jsonl")
        assert code == 2 and len(err.splitlines()) == 1 and "another run is writing it" in err, err
    assert not out.exists()  # the run of x stopped before a row and took away all it made; x.jsonl never began
    assert run_cli(capsys, "route", data, *STAY, "--out", out / "x.jsonl")[0] == 0
    assert json.loads((out / "x.run.json").read_text())["predictions"] == "x.jsonl"


def test_a_run_record_of_another_output_is_never_written_over(tmp_path, capsys):
    data = write_data(tmp_path / "data", [session_dict("en-0001", EN_THREADS, EN_TURNS)])
    out = tmp_path / "o"
    assert run_cli(capsys, "route", data, *STAY, "--out", out / "x.jsonl")[0] == 0
    before = listing(out)
    for extra in ((), ("--fresh",)):
        code, _, err = run_cli(capsys, "route", data, *STAY, "--out", out / "x", *extra)
        assert code == 2 and len(err.splitlines()) == 1, err
        assert "x.run.json is the run record of x.jsonl" in err, err
        assert listing(out) == before  # x.jsonl's record as it was, and no x


# --- --fresh: the run it starts over from is kept until the new one holds a row ---------------------


def test_a_fresh_run_keeps_the_run_it_starts_over_from_until_its_first_row(openai_env, tmp_path, capsys):
    openai_env["server"].add_fault("500", times=1000)
    data = write_data(tmp_path / "data", [session_dict("en-0001", EN_THREADS, EN_TURNS)])
    out = tmp_path / "o" / "out.jsonl"
    assert run_cli(capsys, "route", data, *STAY, "--out", out)[0] == 0
    finished = listing(out.parent)
    stop_early(capsys, data, "--out", out, "--fresh")  # stopped before a row: the finished run stays
    assert listing(out.parent) == finished
    with StoppedRoute(data, out, fresh=True) as run:  # in its first call, then killed with -9
        assert visible(listing(out.parent)) == finished
        run.kill()
    assert visible(listing(out.parent)) == finished  # beside it only what the killed run hid
    # the next run of the output clears what the killed one left; this one finds the run all done
    assert run_cli(capsys, "route", data, *STAY, "--out", out)[0] == 0
    after = listing(out.parent)
    assert sorted(after) == sorted(finished) and after[out.name] == finished[out.name]
    # a fresh run that writes rows replaces the run it starts over from, and leaves nothing beside
    assert run_cli(capsys, "route", data, "--mode", "closed", "--policy", "single", "--out", out, "--fresh")[0] == 0
    assert sorted(listing(out.parent)) == sorted(finished)
    assert {json.loads(line)["policy"] for line in out.read_text().splitlines()} == {"single"}
    record = json.loads(out.with_suffix(".run.json").read_text())
    assert record["complete"] and record["options"]["policy"] == "single"


@pytest.mark.parametrize("written, article", [("open", "an"), ("closed", "a")])
def test_a_file_of_another_run_s_rows_is_named_with_the_right_article(tmp_path, capsys, written, article):
    from _route_util import standard_sessions

    data = write_data(tmp_path / "d", standard_sessions()[:2])
    out = tmp_path / "x.jsonl"
    policy = "single" if written == "open" else "stay"
    assert run_cli(capsys, "route", data, "--mode", written, "--policy", policy, "--split", "all", "--out", out)[0] == 0
    (tmp_path / "x.run.json").unlink()  # rows alone: the resume check reads them
    code, _, err = run_cli(capsys, "route", data, "--mode", "closed", "--policy", "local", "--split", "all", "--out", out)
    assert (code, err) == (2, f"error: {out}: line 1 is {article} {written}/{policy} row; it was written by a different "
                              "run (pass --fresh to start over, or --out FILE to write elsewhere)\n")
