"""A file of another kind given where sessions go is refused in one line by every command that
reads sessions, through the one check (``interleave_bench.file_kinds.other_kind``): a predictions
file, a JSON document (a manifest, a score file), another command's results."""

from __future__ import annotations

import json

import pytest

from interleave_bench.cli import main

import _score_util as score_util
from _score_util import many_sessions, oracle_rows

PREDICTIONS = ("a predictions file (rows with session_id, i and pred), given as the data: the data is a sessions "
               "file (lines with turns and threads) or its folder")
DATA_FIRST = ("a predictions file (rows with session_id, i and pred), given as the data: the sessions file (or its "
              "folder) goes first, then the predictions")


def commands(data, tmp_path):
    """Every command reading sessions, given ``data`` where they go."""
    return {
        "route": ["route", data, "--mode", "closed", "--policy", "local", "--out", tmp_path / "out.jsonl"],
        "route --sweep-threshold": ["route", data, "--mode", "closed", "--policy", "hybrid", "--dry-run",
                                    "--sweep-threshold", "0.5"],
        "baselines": ["baselines", data, "--mode", "closed"],
        "stats": ["stats", data],
        "facts": ["facts", data, "--dry-run"],
        "export": ["export", "--v0", data, "--out", tmp_path / "export"],
    }


@pytest.fixture
def files(tmp_path):
    ss = many_sessions(2)
    pred = score_util.write_jsonl(tmp_path / "run" / "closed-x.jsonl", oracle_rows(ss, "closed"))
    score = tmp_path / "run" / "x.score.json"
    score.write_text(json.dumps({"format": "interleave-score-v1", "system": "x"}, indent=2) + "\n", encoding="utf-8")
    return pred, score


def one_error(capsys, argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("command", ["route", "route --sweep-threshold", "baselines", "stats", "facts", "export"])
def test_a_predictions_file_given_as_the_data_is_one_line(files, tmp_path, capsys, command):
    pred, _ = files
    given = tmp_path / "given"  # a data folder: what export takes, and every other command too
    given.mkdir()
    (given / "sessions.jsonl").write_bytes(pred.read_bytes())
    data = given if command == "export" else pred
    where = given / "sessions.jsonl" if command == "export" else pred
    code, out, err = one_error(capsys, commands(data, tmp_path)[command])
    assert (code, out, err) == (2, "", f"error: {where}: {PREDICTIONS}\n")


@pytest.mark.parametrize("command", ["route", "baselines", "stats", "facts"])
def test_a_json_document_given_as_the_data_is_one_line(files, tmp_path, capsys, command):
    _, score = files
    code, out, err = one_error(capsys, commands(score, tmp_path)[command])
    assert (code, out, err) == (2, "", f"error: {score}: a score document (interleave-score-v1), given as sessions: "
                                       "sessions are JSON Lines, one record a line\n")


def test_another_command_s_results_given_to_route_are_one_line(tmp_path, capsys):
    data = tmp_path / "results.jsonl"
    data.write_text('{"case_id": "c1", "label": "x"}\n' * 3, encoding="utf-8")
    code, out, err = one_error(capsys, commands(data, tmp_path)["route"])
    assert (code, err) == (2, f"error: {data}:1: not a sessions file: its first record has no turns and threads "
                              "(another command's output?)\n")



def test_the_first_record_is_named_at_its_own_line(tmp_path, capsys):
    """Blank lines before the first record: the line named is the record's, not line 1."""
    data = tmp_path / "results.jsonl"
    data.write_text('\n  \n{"case_id": "c1", "label": "x"}\n', encoding="utf-8")
    code, out, err = one_error(capsys, commands(data, tmp_path)["route"])
    assert (code, err) == (2, f"error: {data}:3: not a sessions file: its first record has no turns and threads "
                              "(another command's output?)\n")

def test_commands_taking_predictions_after_the_data_say_which_goes_first(files, tmp_path, capsys):
    pred, _ = files
    for argv in (["score", pred, pred], ["report", pred, pred, "--html", tmp_path / "r.html"]):
        code, out, err = one_error(capsys, argv)
        assert (code, err) == (2, f"error: {pred}: {DATA_FIRST}\n"), argv


@pytest.mark.parametrize("command", ["route", "baselines", "stats", "facts"])
@pytest.mark.parametrize("name", ["closed-x.parquet", "sessions.bin"])
def test_a_parquet_file_given_as_the_data_is_one_line_whatever_its_name(files, tmp_path, capsys, command, name):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pred, _ = files
    given = tmp_path / name
    rows = [json.loads(line) for line in pred.read_text(encoding="utf-8").splitlines()]
    pq.write_table(pa.Table.from_pylist([{k: r[k] for k in ("session_id", "i", "pred")} for r in rows]), given)
    code, out, err = one_error(capsys, commands(given, tmp_path)[command])
    assert (code, out, err) == (2, "", f"error: {given}: a Parquet file, given as sessions: sessions are JSON Lines, "
                                       "one record a line\n")


@pytest.mark.parametrize("command", ["route", "baselines", "stats"])
def test_a_data_folder_whose_sessions_file_is_a_folder_or_a_fifo_says_so(tmp_path, capsys, command):
    import os

    folder, fifo = tmp_path / "d1", tmp_path / "d2"
    (folder / "sessions.jsonl").mkdir(parents=True)
    fifo.mkdir()
    os.mkfifo(fifo / "sessions.jsonl")
    code, out, err = one_error(capsys, commands(folder, tmp_path)[command])
    assert (code, out, err) == (2, "", f"error: {folder / 'sessions.jsonl'}: is a folder, not a file\n")
    code, out, err = one_error(capsys, commands(fifo, tmp_path)[command])
    assert code == 2 and out == "" and err.startswith(f"error: {fifo / 'sessions.jsonl'}: is not a regular file")
    assert err.count("\n") == 1


AMBIGUOUS = ("ambiguous: its first record holds both a session's fields (session_id, turns, threads) and a prediction "
             "row's (session_id, i, pred), so it is neither a sessions file nor a predictions file: a record is one or "
             "the other")


def test_a_first_record_of_both_kinds_is_ambiguous_to_every_reader_and_to_validate(files, tmp_path, capsys):
    """A sessions record that also holds a prediction row's fields slipped past the check (read as
    sessions by the commands, as predictions by validate, and scored as either by score)."""
    pred, _ = files
    ss = many_sessions(2)
    both = score_util.write_jsonl(tmp_path / "both.jsonl", [{**ss[0], "i": 0, "pred": "x"}, *ss[1:]])
    data = score_util.write_jsonl(tmp_path / "sessions.jsonl", ss)
    for argv in (commands(both, tmp_path)["route"], commands(both, tmp_path)["stats"], ["validate", both],
                 ["score", both, pred, "--bootstrap", 0], ["score", data, both, "--bootstrap", 0],
                 ["compare", data, pred, both, "--bootstrap", 0], ["validate", data, both]):
        code, out, err = one_error(capsys, argv)
        assert code == 2 and f"{both}" not in out, argv  # (validate says the data file is ok)
        assert [x for x in err.splitlines() if x.startswith("error:")] == [f"error: {both}:1: {AMBIGUOUS}"], argv
    assert not (tmp_path / "both.score.json").exists()


def test_validate_tells_a_file_s_kind_as_the_readers_do(tmp_path, capsys):
    """A sessions record holding a ``pred`` (and no ``i``) is a sessions record to every reader;
    validate read it as predictions, with an error for every line."""
    ss = many_sessions(2)
    extra = score_util.write_jsonl(tmp_path / "extra.jsonl", [{**ss[0], "pred": "x"}, *ss[1:]])
    code, out, err = one_error(capsys, ["validate", extra])
    # (many_sessions calls every later message a 'switch', stays too: warnings of its labels, no error)
    assert code == 0 and all(x.startswith("warning: ") for x in err.splitlines())
    assert out.startswith(f"{extra}: ok: 2 sessions")
    assert one_error(capsys, commands(extra, tmp_path)["stats"])[0] == 0
