"""Reading data and prediction files fast enough to score half a million messages in seconds.

Same records, same checks, same errors as ``interleave_bench.io``; only faster on good files.
Each line is validated straight from its JSON text (pydantic parses it in Rust instead of
``json.loads`` building Python objects first), with the cyclic garbage collector paused while
hundreds of thousands of small records are built when the command that reads them pauses it
(:func:`~interleave_bench.heap.paused_gc`: none of them forms a cycle, and the collector's repeated passes over a growing
heap otherwise cost more than the parsing), and frozen afterwards so that later collections leave
them alone. Only commands (the process edge) pause the collector; library functions never touch
it. When
anything is wrong with a file, it is read again by the ``io`` readers, which name every bad
line, field and value, so a user sees exactly the errors ``interleave-bench validate`` shows.
"""

from __future__ import annotations

import os

from pydantic import ValidationError

from ..errors import InputError, InputErrors
from ..io import (
    iter_json_lines, needs_strict_parse, parse_record, read_records_with_lines, read_sessions,
)
from ..progress import progress
from ..schema import PredictionRow, Session, check_session


def _validate_all(path: str | os.PathLike, model: type) -> tuple[list[int], list] | None:
    """``(line numbers, records)`` of a JSONL file, each line validated from its JSON text;
    ``None`` when any line is bad (the caller then reads it again for the error messages)."""
    numbers: list[int] = []
    records: list = []
    parse = model.model_validate_json
    try:
        for n, text in progress(iter_json_lines(path), desc=f"read {os.path.basename(path)}", unit="line"):
            if needs_strict_parse(text):
                return None
            records.append(parse(text))
            numbers.append(n)
    except ValidationError:
        return None
    return numbers, records


def nothing_to_score(path: str | os.PathLike, what: str) -> InputError:
    """The error for a file that holds no ``what`` (no sessions, no prediction rows)."""
    return InputError(str(path), None, None, f"no {what} in this file: nothing to score")


def read_sessions_fast(path: str | os.PathLike) -> list[Session]:
    """All sessions of a file, validated and checked as :func:`interleave_bench.io.read_sessions` does;
    raises :class:`InputError` for a file without sessions (there is nothing to score)."""
    sessions = _read_sessions_fast(path)
    if not sessions:
        raise nothing_to_score(path, "sessions")
    return sessions


def _read_sessions_fast(path: str | os.PathLike) -> list[Session]:
    got = _validate_all(path, Session)
    if got is not None:
        _, sessions = got
        ids = [s.session_id for s in sessions]
        if len(set(ids)) == len(ids) and not any(check_session(s) for s in sessions):
            return sessions
    return read_sessions(path)  # raises, naming every defect


def _present(obj: dict) -> dict:
    """A Parquet row without its nulls: a column holds every field in every row, so a field a row
    does not have reads as null (inside a struct as well)."""
    return {k: (_present(v) if isinstance(v, dict) else v) for k, v in obj.items() if v is not None}


def read_parquet_rows(path: str | os.PathLike) -> tuple[list[PredictionRow], list[int]]:
    """All rows of a Parquet predictions file and the number of each (1-based, as a line number);
    every bad row is reported at once, naming its number and field."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    name = str(path)
    try:
        table = pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(name, None, None, f"not a Parquet file ({exc})") from None
    rows: list[PredictionRow] = []
    errors: list[InputError] = []
    for n, obj in enumerate(table.to_pylist(), start=1):
        obj = _present(obj)
        try:
            rows.append(parse_record(name, n, obj, PredictionRow))
        except InputErrors as exc:
            errors.extend(exc.errors)
    if errors:
        raise InputErrors(errors)
    return rows, list(range(1, len(rows) + 1))


def read_predictions_fast(path: str | os.PathLike) -> tuple[list[PredictionRow], list[int]]:
    """All rows of a predictions file (JSONL, or Parquet by its ``.parquet`` name) and the line
    of each; every bad line is reported at once, and a file without rows raises
    :class:`InputError` (there is nothing to score)."""
    if str(path).endswith(".parquet"):
        rows, numbers = read_parquet_rows(path)
    else:
        rows, numbers = _read_predictions_fast(path)
    if not rows:
        raise nothing_to_score(path, "prediction rows")
    return rows, numbers


def _read_predictions_fast(path: str | os.PathLike) -> tuple[list[PredictionRow], list[int]]:
    got = _validate_all(path, PredictionRow)
    if got is not None:
        numbers, rows = got
        return rows, numbers
    numbers, rows = [], []
    for line, row in read_records_with_lines(path, PredictionRow, collect=True):
        numbers.append(line)
        rows.append(row)
    return rows, numbers  # only reached if the slow reader found nothing wrong after all

