"""Files wrong as a whole are refused in one line: a predictions file none of whose rows is for a
session of the split, a Parquet column of a type its field never takes (or no such column). A label
column of numbers is read as their text, by every reader. A file wrong in a few rows still names each."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from interleave_bench.cli import main

import _score_util as score_util
from _score_util import many_sessions, oracle_rows


@pytest.fixture
def run(tmp_path):
    ss = many_sessions(3)
    data = score_util.write_jsonl(tmp_path / "sessions.jsonl", ss)
    return data, oracle_rows(ss, "closed")


def errors_of(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("error:")]


def test_rows_for_no_session_of_the_data_are_nothing_to_score(run, tmp_path, capsys):
    data, rows = run
    pred = score_util.write_jsonl(tmp_path / "p.jsonl", [{**r, "session_id": r["session_id"].upper()} for r in rows])
    for argv in (["score", str(data), str(pred), "--bootstrap", "0"], ["report", str(data), str(pred), "--html", str(tmp_path / "r.html")]):
        assert main(argv) == 2
        assert errors_of(capsys.readouterr().err) == [
            f"error: {pred}:1: session_id: no row is for a session of the dev split of {data}: {len(rows):,} rows for "
            f"sessions or turns it does not hold (the first for session 'S-000'): nothing to score"]
    assert not (tmp_path / "p.score.json").exists()
    # one row of a session of the data is something to score
    score_util.write_jsonl(pred, [rows[0], *({**r, "session_id": "zz-" + r["session_id"]} for r in rows[1:])])
    assert main(["score", str(data), str(pred), "--bootstrap", "0"]) == 0


def test_rows_of_another_split_alone_are_nothing_to_score(run, tmp_path, capsys):
    data, rows = run
    pred = score_util.write_jsonl(tmp_path / "p.jsonl", rows)
    assert main(["score", str(data), str(pred), "--bootstrap", "0", "--split", "test"]) == 2
    assert errors_of(capsys.readouterr().err) == [
        f"error: {pred}: no row is for a session of the test split of {data}: {len(rows):,} rows for sessions of "
        f"other splits (--split): nothing to score"]


def parquet_with(tmp_path, rows, name, change):
    table = pa.Table.from_pylist(rows)
    path = tmp_path / f"{name}.parquet"
    pq.write_table(change(table), path)
    return path


@pytest.mark.parametrize("name,change,expected", [
    ("i-text", lambda t: t.set_column(t.column_names.index("i"), "i", pa.array([str(v) for v in t.column("i").to_pylist()])),
     "i: column of string: expected an integer, got '0' (row 1), and so in all {n} rows"),
    ("i-double", lambda t: t.set_column(t.column_names.index("i"), "i", pa.array([float(v) for v in t.column("i").to_pylist()])),
     "i: column of double: expected an integer, got 0.0 (row 1), and so in all {n} rows"),
    ("no-pred", lambda t: t.drop_columns(["pred"]), "pred: no such column: required field is missing (row 1), and so in all {n} rows"),
])
def test_a_parquet_column_no_row_of_which_is_taken_is_one_line(run, tmp_path, capsys, name, change, expected):
    data, rows = run
    path = parquet_with(tmp_path, rows, name, change)
    for argv in (["score", str(data), str(path), "--bootstrap", "0"], ["validate", str(path)]):
        assert main(argv) == 2
        assert errors_of(capsys.readouterr().err) == [f"error: {path}: " + expected.format(n=f"{len(rows):,}")]


def test_a_parquet_column_with_a_few_bad_rows_names_each(run, tmp_path, capsys):
    data, rows = run
    bad = [{**r, "i": -1} if k in (2, 5) else r for k, r in enumerate(rows)]
    path = parquet_with(tmp_path, bad, "two-bad", lambda t: t)
    assert main(["validate", str(path)]) == 2
    errors = errors_of(capsys.readouterr().err)
    assert len(errors) == 2 and errors[0].startswith(f"error: {path}:3: i: ") and errors[1].startswith(f"error: {path}:6: i: ")


def test_a_number_label_is_read_as_its_text_by_every_reader(run, tmp_path, capsys):
    # README: a number is read as its text; validate reads a file as score does (docs/score.md)
    data, rows = run
    number = {label: k for k, label in enumerate(sorted({r["pred"] for r in rows}), start=1)}
    texts = [str(number[r["pred"]]) for r in rows]
    numbered = [{**r, "mode": "open", "pred": number[r["pred"]]} for r in rows]
    jsonl = score_util.write_jsonl(tmp_path / "jsonl.jsonl", numbered)
    text = score_util.write_jsonl(tmp_path / "text.jsonl", [{**r, "pred": t} for r, t in zip(numbered, texts)])

    def column(name, values):
        return parquet_with(tmp_path, numbered, name, lambda t: t.set_column(t.column_names.index("pred"), "pred", values))

    files = [jsonl, column("int64", pa.array([number[r["pred"]] for r in rows])),
             column("binary", pa.array([t.encode() for t in texts], pa.binary())),
             column("dictionary", pa.array(texts).dictionary_encode())]
    assert pq.read_schema(files[3]).field("pred").type == pa.dictionary(pa.int32(), pa.string())
    metrics = []
    for f in (text, *files):
        assert main(["validate", str(data), str(f)]) == 0, capsys.readouterr().err
        assert main(["score", str(data), str(f), "--bootstrap", "0"]) == 0, capsys.readouterr().err
        metrics.append(json.loads(f.with_suffix(".score.json").read_text(encoding="utf-8"))["metrics"])
    assert all(m == metrics[0] for m in metrics) and metrics[0]["accuracy"] == 1  # the oracle, its labels numbered
    # closed mode: no number names a thread, so every reader refuses the run alike, at its first row
    closed = score_util.write_jsonl(tmp_path / "closed.jsonl", [{**r, "mode": "closed"} for r in numbered])
    said = []
    for argv in (["validate", str(data), str(closed)], ["score", str(data), str(closed), "--bootstrap", "0"]):
        assert main(argv) == 2
        said.append(errors_of(capsys.readouterr().err))
    assert said[0] == said[1] and said[0][0].startswith(f"error: {closed}:1: pred: ")


def test_a_binary_label_column_not_utf8_is_refused_alike_by_every_reader(run, tmp_path, capsys):
    data, rows = run
    labels = [r["pred"].encode() for r in rows]
    labels[2] = b"t\xff"
    path = parquet_with(tmp_path, rows, "latin", lambda t: t.set_column(
        t.column_names.index("pred"), "pred", pa.array(labels, pa.binary())))
    said = []
    for argv in (["validate", str(data), str(path)], ["score", str(data), str(path), "--bootstrap", "0"]):
        assert main(argv) == 2
        said.append(errors_of(capsys.readouterr().err))
    assert said[0] == said[1] and said[0][0].startswith(f"error: {path}:3: pred: "), said


def test_nan_and_infinity_in_a_parquet_label_column_are_refused_by_every_reader(run, tmp_path, capsys):
    data, rows = run
    jsonl = score_util.write_jsonl(tmp_path / "a.jsonl", rows)
    labels = [float(k % 3) for k in range(len(rows))]
    labels[0], labels[1] = float("nan"), float("inf")
    path = parquet_with(tmp_path, rows, "nan", lambda t: t.set_column(t.column_names.index("pred"), "pred", pa.array(labels)))
    expected = [f"error: {path}:1: pred: nan is not a JSON number (NaN and Infinity are refused)",
                f"error: {path}:2: pred: inf is not a JSON number (NaN and Infinity are refused)"]
    for argv in (["score", str(data), str(path), "--bootstrap", "0"], ["compare", str(data), str(jsonl), str(path)],
                 ["report", str(data), str(jsonl), str(path), "--html", str(tmp_path / "r.html")],
                 ["validate", str(data), str(path)]):
        assert main(argv) == 2
        assert errors_of(capsys.readouterr().err) == expected
    assert not (tmp_path / "nan.score.json").exists()
    # a column of NaN alone is one line, in either mode, as a JSONL NaN is refused
    path = parquet_with(tmp_path, rows, "all-nan", lambda t: t.set_column(
        t.column_names.index("pred"), "pred", pa.array([float("nan")] * t.num_rows)))
    for mode in ("closed", "open"):
        assert main(["score", str(data), str(path), "--bootstrap", "0", "--mode", mode]) == 2
        assert errors_of(capsys.readouterr().err) == [
            f"error: {path}: pred: column of double: nan is not a JSON number (NaN and Infinity are refused) (row 1), "
            f"and so in all {len(rows):,} rows"]


def test_a_parquet_column_given_by_some_rows_only_counts_those(run, tmp_path, capsys):
    data, rows = run
    # text in every other row, null in the rest (a column holds every field in every row)
    given = [{**r, "elapsed_ms": None if k % 2 else str(100 + k)} for k, r in enumerate(rows)]
    path = parquet_with(tmp_path, given, "half", lambda t: t)
    assert main(["score", str(data), str(path), "--bootstrap", "0"]) == 2
    texts = sum(r["elapsed_ms"] is not None for r in given)
    [line] = errors_of(capsys.readouterr().err)
    assert line.startswith(f"error: {path}: elapsed_ms: column of string: ")
    assert line.endswith(f"(row 1), and so in all {texts:,} rows that give it") and texts < len(rows)


@pytest.mark.parametrize("typed", [True, False])
def test_an_all_null_parquet_column_of_a_required_field_is_one_line(run, tmp_path, capsys, typed):
    data, rows = run
    # a column of text holding only nulls, or pyarrow's column of type null
    nulls = pa.array([None] * len(rows), pa.string() if typed else pa.null())
    path = parquet_with(tmp_path, rows, "null-pred", lambda t: t.set_column(t.column_names.index("pred"), "pred", nulls))
    for argv in (["score", str(data), str(path), "--bootstrap", "0"], ["validate", str(path)]):
        assert main(argv) == 2
        assert errors_of(capsys.readouterr().err) == [
            f"error: {path}: pred: column of {'string' if typed else 'null'}: required field is missing (row 1), "
            f"and so in all {len(rows):,} rows"]


def test_a_half_null_required_column_names_its_null_rows_not_the_rows_that_give_it(run, tmp_path, capsys):
    data, rows = run
    # as many nulls as values: the refused rows are the null ones, which give the column nothing
    half = [{**r, "session_id": None if k % 2 else r["session_id"]} for k, r in enumerate(rows[:6])]
    path = parquet_with(tmp_path, half, "half-sid", lambda t: t)
    assert main(["validate", str(path)]) == 2
    assert errors_of(capsys.readouterr().err) == [
        f"error: {path}:{k}: session_id: required field is missing" for k in (2, 4, 6)]
