"""Hostile routing inputs (docs/score.md#interleave-bench-score-data-predjsonl): every reader of
``score`` and ``validate`` refuses a value no later step can hold with the one-line error (file,
line, field; exit 2): integers beyond 64 bits, numbers beyond the finite range, keys named twice,
control characters in ids, numbers out of their range, a row of another mode, an empty label,
nesting too deep for Python; and ``validate DATA p.parquet`` reads what ``score`` reads."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from interleave_bench.cli import main
from interleave_bench.io import read_sessions
from interleave_bench.fingerprints import records_fingerprint
from interleave_bench.schema import Session

from _score_util import session, turn, write_jsonl

GOOD_ROW = '{"session_id": "s0", "i": 0, "pred": "t1", "mode": "closed"}'
#: (name, a second row of a predictions file, the field named, words of the message)
BAD_ROWS = [
    ("5,000-digit turn", '{"session_id": "s0", "i": %s, "pred": "t1"}' % ("9" * 5000), "i", "outside 64 bits"),
    ("turn past 64 bits", '{"session_id": "s0", "i": 9223372036854775808, "pred": "t1"}', "i", "outside 64 bits"),
    ("token count past 64 bits", '{"session_id": "s0", "i": 1, "pred": "t1", "usage": {"input": 99999999999999999999}}',
     "usage.input", "outside 64 bits"),
    ("big number in an unknown field", '{"session_id": "s0", "i": 1, "pred": "t1", "note": %s}' % ("7" * 400), "note",
     "outside 64 bits"),
    ("1e400 latency", '{"session_id": "s0", "i": 1, "pred": "t1", "elapsed_ms": 1e400}', "elapsed_ms", "finite"),
    ("1e400 in an unknown field", '{"session_id": "s0", "i": 1, "pred": "t1", "score": [1e400]}', "score[0]", "finite"),
    ("1e300 latency", '{"session_id": "s0", "i": 1, "pred": "t1", "elapsed_ms": 1e300}', "elapsed_ms", "less than or equal"),
    ("label twice", '{"session_id": "s0", "i": 1, "pred": "t1", "pred": "t2"}', "pred", "appears twice"),
    ("input twice", '{"session_id": "s0", "i": 1, "pred": "t1", "usage": {"input": 1, "input": 9}}', "usage.input", "appears twice"),
    ("line break in a session id", '{"session_id": "s0\\nerror: forged", "i": 1, "pred": "t1"}', "session_id",
     "control character"),
    ("tab in a label", '{"session_id": "s0", "i": 1, "pred": "t\\t1"}', "pred", "control character"),
    ("confidence 1.5", '{"session_id": "s0", "i": 1, "pred": "t1", "confidence": 1.5}', "confidence", "less than or equal to 1"),
    ("negative confidence", '{"session_id": "s0", "i": 1, "pred": "t1", "confidence": -0.1}', "confidence", "greater than"),
    ("negative tokens", '{"session_id": "s0", "i": 1, "pred": "t1", "usage": {"output": -1}}', "usage.output", "greater than"),
    ("empty label", '{"session_id": "s0", "i": 1, "pred": ""}', "pred", "at least 1 character"),
    ("open row in a closed run", '{"session_id": "s0", "i": 1, "pred": "t1", "mode": "open"}', "mode", "one run is one mode"),
    ("100,000-deep nesting", '{"session_id": "s0", "i": 1, "pred": "t1", "x": %s}' % ("[" * 100_000 + "]" * 100_000), None,
     "nested too deeply"),
]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "sessions.jsonl", [session("s0", ["t1", "t2"], [turn(0, "t1"), turn(1, "t2")])])


def one_line_error(capsys, code: int, path: Path, line: int, field: str | None, words: str) -> None:
    assert code == 2
    err = [x for x in capsys.readouterr().err.splitlines() if x.startswith("error:")]
    where = f"error: {path}:{line}: " + (f"{field}: " if field else "")
    assert err and err[0].startswith(where) and words in err[0], err
    assert not any(x.startswith("error: forged") for x in err)  # an id never prints a line of its own


@pytest.mark.parametrize("name, row, field, words", BAD_ROWS, ids=[b[0] for b in BAD_ROWS])
@pytest.mark.parametrize("command", ["score", "validate"])
def test_a_hostile_prediction_row_is_the_one_line_error(tmp_path, capsys, data, command, name, row, field, words):
    pred = tmp_path / "run.jsonl"
    pred.write_text(GOOD_ROW + "\n" + row + "\n", encoding="utf-8")
    argv = [command, str(data), str(pred)] + (["--bootstrap", "0"] if command == "score" else [])
    one_line_error(capsys, main(argv), pred, 2, field, words)
    assert not (tmp_path / "run.score.json").exists()


def session_line(**change) -> str:
    s = session("s0", ["t1", "t2"], [turn(0, "t1"), turn(1, "t2")])
    s.update(change)
    return json.dumps(s)


BAD_SESSIONS = [
    ("5,000-digit number in an unknown field", session_line()[:-1] + ', "x": %s}' % ("9" * 5000), "x", "outside 64 bits"),
    ("1e400 in an unknown field", session_line()[:-1] + ', "x": 1e400}', "x", "finite"),
    ("split twice", session_line()[:-1] + ', "split": "test"}', "split", "appears twice"),
    ("text twice", session_line().replace('"text": "message 0"', '"text": "message 0", "text": "other"'), "turns[0].text",
     "appears twice"),
    ("line break in a session id", session_line(session_id="s0\nerror: forged"), "session_id", "control character"),
    ("turn past 64 bits", session_line().replace('"i": 1', '"i": 18446744073709551616'), "turns[1].i", "outside 64 bits"),
    ("100,000-deep nesting", session_line()[:-1] + ', "x": %s}' % ("[" * 100_000 + "]" * 100_000), None, "nested too deeply"),
]


@pytest.mark.parametrize("name, line, field, words", BAD_SESSIONS, ids=[b[0] for b in BAD_SESSIONS])
@pytest.mark.parametrize("command", ["score", "validate"])
def test_a_hostile_session_is_the_one_line_error(tmp_path, capsys, command, name, line, field, words):
    data = tmp_path / "sessions.jsonl"
    data.write_text(line + "\n", encoding="utf-8")
    pred = tmp_path / "run.jsonl"
    pred.write_text(GOOD_ROW + "\n", encoding="utf-8")
    argv = [command, str(data)] + ([str(pred), "--bootstrap", "0"] if command == "score" else [])
    one_line_error(capsys, main(argv), data, 1, field, words)


def canonical_line(**change) -> str:
    """A session's line as its fingerprint line (``model_dump_json``: every field, compact)."""
    return Session.model_validate(json.loads(session_line(**change))).model_dump_json()


def escaped_quotes(line: str) -> str:
    """``line`` with each quote mark inside a text written ``\\u0022`` (no quote byte)."""
    return line.replace('\\"', "\\u0022")


#: (name, a session line naming a key twice, the field named): the data pass reads fingerprint
#: lines, other lines, lines escaping a quote mark and nested objects alike
SESSIONS_TWICE = [
    ("a fingerprint line naming its split again", canonical_line()[:-1] + ',"split":"test"}', "split"),
    ("a fingerprint line naming a thread's title twice",
     canonical_line().replace('"title":"Thread t1"', '"title":"Thread t1","title":"x"', 1), "threads[0].title"),
    ("a judge's thread twice", session_line().replace('"judge": {"thread": "t1"', '"judge": {"thread": "t2", "thread": "t1"', 1),
     "turns[0].judge.thread"),
    ("a repeated key beside an escaped quote mark",
     escaped_quotes(session_line(persona='say "hi"').replace('"lang": "en"', '"lang": "xx", "lang": "en"')), "lang"),
    ("a fact type named twice", session_line()[:-1] + ', "fact_types": {"t1": {"a": "value", "a": "value"}}}',
     "fact_types.t1.a"),
]


@pytest.mark.parametrize("name, line, field", SESSIONS_TWICE, ids=[b[0] for b in SESSIONS_TWICE])
def test_score_refuses_a_session_naming_a_key_twice(tmp_path, capsys, name, line, field):
    """The data pass names the line, as ``validate`` does, however the line is written and
    wherever it stands (here the second of three)."""
    good = [canonical_line(session_id="s-a"), session_line(session_id="s-c")]
    data = tmp_path / "sessions.jsonl"
    data.write_text("\n".join([good[0], line.replace('"s0"', '"s-b"', 1), good[1]]) + "\n", encoding="utf-8")
    pred = tmp_path / "run.jsonl"
    pred.write_text(GOOD_ROW.replace('"s0"', '"s-a"') + "\n", encoding="utf-8")
    one_line_error(capsys, main(["score", str(data), str(pred), "--bootstrap", "0"]), data, 2, field, "appears twice")


def test_score_reads_sessions_however_written(tmp_path, capsys):
    """Fingerprint lines, spaced lines and lines escaping a quote mark, none naming a key twice:
    scored, with the fingerprint of their records."""
    lines = [canonical_line(session_id="s-a"), session_line(session_id="s-b"),
             escaped_quotes(session_line(session_id="s-c", persona='a "b"'))]
    data = tmp_path / "sessions.jsonl"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    pred = tmp_path / "run.jsonl"
    pred.write_text(GOOD_ROW.replace('"s0"', '"s-a"') + "\n", encoding="utf-8")
    assert main(["score", str(data), str(pred), "--bootstrap", "0", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["counts"]["sessions_without_rows"] == 2
    assert document["provenance"]["data_sha256"] == records_fingerprint(read_sessions(data))


PARQUET_ROWS = [
    ("line break in a session id", {"session_id": "s0\nerror: forged"}, "session_id", "control character"),
    ("empty label", {"pred": ""}, "pred", "at least 1 character"),
    ("confidence 1.5", {"confidence": 1.5}, "confidence", "less than or equal to 1"),
    ("infinite latency", {"elapsed_ms": float("inf")}, "elapsed_ms", "NaN and Infinity are refused"),
    ("open row in a closed run", {"mode": "open"}, "mode", "one run is one mode"),
]


@pytest.mark.parametrize("name, change, field, words", PARQUET_ROWS, ids=[b[0] for b in PARQUET_ROWS])
@pytest.mark.parametrize("command", ["score", "validate"])
def test_a_hostile_parquet_row_is_the_one_line_error(tmp_path, capsys, data, command, name, change, field, words):
    rows = [{"session_id": "s0", "i": 0, "pred": "t1", "mode": "closed", "confidence": 0.5, "elapsed_ms": 10.0},
            {"session_id": "s0", "i": 1, "pred": "t2", "mode": "closed", "confidence": 0.5, "elapsed_ms": 10.0, **change}]
    pred = tmp_path / "run.parquet"
    pq.write_table(pa.Table.from_pylist(rows), pred)
    argv = [command, str(data), str(pred)] + (["--bootstrap", "0"] if command == "score" else [])
    one_line_error(capsys, main(argv), pred, 2, field, words)


def test_validate_reads_the_parquet_predictions_score_reads(tmp_path, capsys, data):
    pred = tmp_path / "run.parquet"
    pq.write_table(pa.Table.from_pylist([{"session_id": "s0", "i": 0, "pred": "t1", "mode": "closed"},
                                         {"session_id": "s0", "i": 1, "pred": "t2", "usage": {"input": 5}}]), pred)
    assert main(["validate", str(data), str(pred)]) == 0
    assert f"{pred}: ok: 2 prediction rows over 1 sessions" in capsys.readouterr().out
    assert main(["score", str(data), str(pred), "--bootstrap", "0"]) == 0


def test_a_mode_asked_for_scores_rows_of_either_mode(tmp_path, capsys, data):
    """One run is one mode unless the user asks for one: then the rows' own modes are not checked."""
    pred = tmp_path / "run.jsonl"
    pred.write_text(GOOD_ROW + "\n" + '{"session_id": "s0", "i": 1, "pred": "t2", "mode": "open"}\n', encoding="utf-8")
    assert main(["score", str(data), str(pred), "--bootstrap", "0", "--mode", "closed", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["metrics"]["accuracy"] == 1.0


@pytest.mark.parametrize("row", [
    '{"session_id": "s0", "i": 1, "pred": null, "pred": "t2"}',
    '{"session_id": "s0", "i": 1, "pred": "t2", "mode": null, "mode": "closed"}',
    '{"session_id": "s0", "i": 1, "pred": "t2", "usage": {"input": 0, "input": 3}}',
])
def test_a_key_named_twice_beside_a_null_is_still_refused(tmp_path, capsys, data, row):
    pred = tmp_path / "run.jsonl"
    pred.write_text(GOOD_ROW + "\n" + row + "\n", encoding="utf-8")
    assert main(["score", str(data), str(pred), "--bootstrap", "0"]) == 2
    assert "appears twice" in capsys.readouterr().err


ENTRIES = {  # a folder's entry named as a predictions file that is no readable file, and what is said of it
    "dangling link": (lambda p: p.symlink_to(p.parent / "nowhere"), "no such file"),
    "link loop": (lambda p: p.symlink_to(p), "too many levels of symbolic links"),
    "FIFO": (lambda p: __import__("os").mkfifo(p), "is not a regular file (a FIFO, socket or device)"),
}


@pytest.mark.parametrize("kind", ENTRIES)
@pytest.mark.parametrize("command", ["score", "validate", "report"])
def test_a_folder_s_entry_that_is_no_readable_file_is_refused_as_if_named_alone(tmp_path, capsys, kind, command):
    make, words = ENTRIES[kind]
    data = write_jsonl(tmp_path / "sessions.jsonl", [session("s0", ["t1", "t2"], [turn(0, "t1"), turn(1, "t2")])])
    folder = tmp_path / "preds"
    write_jsonl(folder / "closed-a.jsonl", [json.loads(GOOD_ROW)])
    make(folder / "closed-b.jsonl")
    (folder / "closed-a.run.json").write_text("{}", encoding="utf-8")  # (no predictions: not read as some)
    extra = ["--html", tmp_path / "r.html"] if command == "report" else []
    alone = main([command, str(data), str(folder / "closed-b.jsonl"), *map(str, extra)])
    said_alone = capsys.readouterr().err
    assert alone == 2 and f"error: {folder / 'closed-b.jsonl'}: {words}" in said_alone
    assert main([command, str(data), str(folder), *map(str, extra)]) == 2
    said = capsys.readouterr().err
    assert f"error: {folder / 'closed-b.jsonl'}: {words}" in said  # the line the path alone gets


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="needs Linux's /proc")
def test_a_predictions_file_whose_folder_cannot_hold_its_score_file_is_named(capsys, data):
    # /proc/<pid>/ takes no new file: the line names the predictions given, not the lock file refused
    assert main(["score", str(data), "/proc/self/status", "--split", "all"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("error: /proc/self/status: its folder cannot hold its score file status.all.score.json"), err
    assert ".lock" not in err[0] and "--out" in err[0]


def test_a_device_as_predictions_is_refused_before_its_score_file_is_locked(tmp_path, capsys, data):
    assert main(["score", str(data), "/dev/null", "--bootstrap", "0"]) == 2
    assert capsys.readouterr().err.startswith("error: /dev/null: is not a regular file")


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_validate_says_how_many_rows_are_error_rows(tmp_path, capsys, data, suffix):
    rows = [{"session_id": "s0", "i": 0, "pred": "t1", "mode": "closed"},
            {"session_id": "s0", "i": 1, "pred": "ERROR", "mode": "closed", "error": "router failed"}]
    pred = tmp_path / f"run{suffix}"
    if suffix == ".parquet":
        pq.write_table(pa.Table.from_pylist(rows), pred)
    else:
        pred.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main(["validate", str(data), str(pred)]) == 0
    out = capsys.readouterr().out
    assert f"{pred}: ok: 2 prediction rows over 1 sessions" in out
    assert out.rstrip().endswith(", 1 of them ERROR (decisions the router could not give)")
    rows[1] = {"session_id": "s0", "i": 1, "pred": "t2", "mode": "closed"}  # none: the line as before
    pred.unlink()
    if suffix == ".parquet":
        pq.write_table(pa.Table.from_pylist(rows), pred)
    else:
        pred.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main(["validate", str(data), str(pred)]) == 0
    assert "ERROR" not in capsys.readouterr().out
