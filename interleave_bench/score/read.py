"""Whole data and prediction files as records, for what only the record-by-record scorer lists
(rows left out, duplicates): the strict readers of ``interleave_bench.io`` (every bad line, field
and value named, as ``interleave-bench validate`` names them), Parquet prediction files by
pyarrow, and the error for a file with nothing to score."""

from __future__ import annotations

import os
from typing import NoReturn, Optional

import numpy as np

from ..errors import InputError, InputErrors, exc_text
from ..file_kinds import DATA_FIRST, KIND_FIELDS, other_kind  # noqa: F401 - read from here too
from ..io import parse_record, read_records_with_lines, read_sessions, sessions_file
from ..json_text import find_bad_value
from ..progress import progress
from ..schema import PredictionRow, Session


def nothing_to_score(path: str | os.PathLike, what: str) -> InputError:
    """The error for a file that holds no ``what`` (no sessions, no prediction rows)."""
    return InputError(str(path), None, None, f"no {what} in this file: nothing to score")


def refused(path: str | os.PathLike, what: str) -> NoReturn:
    """Raise the strict reader's errors for a file the array readers met a defect in (or no
    rows): ``what`` is ``sessions`` or ``predictions``. The strict reader names every bad line,
    field and value, as ``interleave-bench validate`` does; nothing is scored from it."""
    if what == "sessions":
        read_sessions_fast(path, DATA_FIRST)
    else:
        read_predictions_fast(path)
    raise AssertionError(f"{path}: the array reader refused what the strict reader takes")


def read_sessions_fast(path: str | os.PathLike, data_goes: Optional[str] = None) -> list[Session]:
    """All sessions of a file, validated and checked as :func:`interleave_bench.io.read_sessions` does;
    raises :class:`InputError` for a file without sessions (there is nothing to score), and in one
    line for a predictions file (:func:`~interleave_bench.file_kinds.other_kind`, saying
    ``data_goes``: :data:`~interleave_bench.file_kinds.DATA_FIRST` for a command taking both)."""
    sessions = read_sessions(path, data_goes=data_goes)  # raises, naming every defect
    if not sessions:
        raise nothing_to_score(path, "sessions")
    return sessions



def data_inputs(data: str | os.PathLike) -> list[tuple[os.PathLike, str]]:
    """What a command reads of ``DATA`` (a sessions file or the folder holding it), as ``(path,
    what it is)`` pairs: the inputs an output must not be
    (:func:`~interleave_bench.errors.require_not_input`)."""
    return [(sessions_file(data), "the sessions file")]


def present(obj: dict) -> dict:
    """A Parquet row without its nulls: a column holds every field in every row, so a field a row
    does not have reads as null (inside a struct as well)."""
    return {k: (present(v) if isinstance(v, dict) else v) for k, v in obj.items() if v is not None}


def parquet_record(source: str, number: int, obj: dict) -> PredictionRow:
    """Row ``number`` (from 1) of a Parquet predictions file as the record type reads it: its nulls
    left out (:func:`present`), and a NaN or infinite number in a declared field refused as the
    JSONL reader refuses one (:func:`~interleave_bench.json_text.find_bad_value`): a label column
    of floats would otherwise read NaN as the label ``nan``. Raises :class:`InputError` or
    :class:`InputErrors` naming the row and field."""
    obj = present(obj)
    bad = find_bad_value({k: v for k, v in obj.items() if k in PredictionRow.model_fields})
    if bad is not None:
        raise InputError(source, number, bad[0], bad[1])
    return parse_record(source, number, obj, PredictionRow)


def read_parquet_rows(path: str | os.PathLike) -> tuple[list[PredictionRow], list[int]]:
    """All rows of a Parquet predictions file and the number of each (1-based, as a line number);
    every bad row is reported at once, naming its number and field."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    name = str(path)
    try:
        table = pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(name, None, None, f"not a Parquet file ({exc_text(exc)})") from None
    rows: list[PredictionRow] = []
    errors: list[InputError] = []
    for n, obj in enumerate(table.to_pylist(), start=1):
        try:
            rows.append(parquet_record(name, n, obj))
        except InputErrors as exc:
            errors.extend(exc.errors)
        except InputError as exc:
            errors.append(exc)
    if errors:
        raise InputErrors(by_column(table, errors))
    return rows, list(range(1, len(rows) + 1))


def by_column(table, errors: list[InputError]) -> list[InputError]:
    """``errors`` with those of a column every row of which is refused, or every row that gives
    it a value (a missing column, an all-null one, or one of a type the field never takes), said
    once, for the column: a column holds one type, so its every row would otherwise be an error of
    its own. Rows are numbered from 1, as the errors number them."""
    rows_of: dict[str, set[int]] = {}
    for e in errors:
        rows_of.setdefault(_top(e.field), set()).add(e.line or 0)
    every = set(range(1, table.num_rows + 1))
    whole: dict[str, str] = {}  # column -> the rows its errors cover
    for col, rows in rows_of.items():
        if len(rows) < 2:
            continue
        if rows == every:
            whole[col] = f"{table.num_rows:,} rows"
        elif col in table.column_names and rows == _given(table.column(col)):
            whole[col] = f"{len(rows):,} rows that give it"
    out: list[InputError] = []
    said: set[str] = set()
    for e in errors:
        col = _top(e.field)
        if col not in whole:
            out.append(e)
        elif col not in said:
            said.add(col)
            kind = f"column of {table.schema.field(col).type}" if col in table.column_names else "no such column"
            out.append(InputError(e.path, None, col, f"{kind}: {e.message} (row {e.line}), and so in all {whole[col]}"))
    return out


def _given(column) -> set[int]:
    """The rows (from 1) in which a Parquet column holds a value (is not null)."""
    valid = column.is_valid().to_numpy(zero_copy_only=False)
    return set((np.flatnonzero(valid) + 1).tolist())


def _top(field: str | None) -> str:
    """The column a row's field is in: ``usage.input`` and ``refs[0]`` are in ``usage`` and ``refs``."""
    return (field or "").split(".")[0].split("[")[0]


def read_predictions_fast(path: str | os.PathLike) -> tuple[list[PredictionRow], list[int]]:
    """All rows of a predictions file (JSONL, or Parquet by its ``.parquet`` name) and the line
    of each; every bad line is reported at once, and a file without rows raises
    :class:`InputError` (there is nothing to score), and so does a sessions file, in one line
    (:func:`other_kind`)."""
    other_kind(path, "predictions")
    if str(path).endswith(".parquet"):
        rows, numbers = read_parquet_rows(path)
    else:
        rows, numbers = _read_predictions_fast(path)
    if not rows:
        raise nothing_to_score(path, "prediction rows")
    return rows, numbers


def _read_predictions_fast(path: str | os.PathLike) -> tuple[list[PredictionRow], list[int]]:
    numbers, rows = [], []
    for line, row in progress(read_records_with_lines(path, PredictionRow, collect=True),
                              desc=f"read {os.path.basename(path)}", unit="row"):
        numbers.append(line)
        rows.append(row)
    return rows, numbers

