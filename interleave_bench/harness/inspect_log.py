"""An inspect log of ``interleavebench/routing`` back as a predictions file (``import inspect``).

The solver keeps each session's prediction rows in its sample's store (:data:`~.names.PREDICTIONS_KEY`),
exactly as ``route`` writes them; this reads them out in the data's session order, checks each
against the prediction record, and writes them as one JSONL file that ``score``, ``compare`` and
the leaderboard take.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io import parse_record, write_jsonl
from ..schema import PredictionRow
from .names import POSITION_KEY, PREDICTIONS_KEY, TASK



@dataclass(frozen=True)
class ImportedLog:
    """What :func:`import_log` wrote: the file, its rows and sessions, and the run's options."""

    out: Path
    rows: int
    sessions: int
    mode: str
    model: str


def _read(path: str) -> Any:
    from inspect_ai.log import read_eval_log

    if not Path(path).is_file():
        raise InputError(path, None, None, "no such file")
    try:
        return read_eval_log(path)
    except Exception as exc:  # noqa: BLE001 - whatever inspect raises, the file is not a log it can read
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise InputError(path, None, None, f"not an inspect log: {first}") from None


def log_rows(path: str | os.PathLike) -> tuple[list[dict[str, Any]], Any]:
    """The prediction rows of the log at ``path`` (session order, then turn order) and the log.

    Raises :class:`InputError` naming the log and the sample for a log of another task, a sample
    that failed or holds no rows, and a row that is not a prediction row.
    """
    name = str(path)
    log = _read(name)
    if log.eval.task != TASK:
        raise InputError(name, None, "eval.task", f"a log of {log.eval.task!r}, not of {TASK}")
    if not log.samples:
        raise InputError(name, None, "samples", f"no samples (log status {log.status})")
    rows: list[dict[str, Any]] = []
    for sample in sorted(log.samples, key=lambda s: ((s.metadata or {}).get(POSITION_KEY, 0), s.epoch)):
        if sample.epoch != 1:
            continue  # one prediction per message: the first epoch's
        where = f"samples[{sample.id}]"
        if sample.error is not None:
            first = (sample.error.message.strip().splitlines() or ["error"])[0]
            raise InputError(name, None, where, f"the sample failed: {first}")
        got = (sample.store or {}).get(PREDICTIONS_KEY)
        if not isinstance(got, list):
            raise InputError(name, None, f"{where}.store", f"no {PREDICTIONS_KEY!r} rows")
        for k, row in enumerate(got):
            rows.append(parse_record(f"{name} {where}.store.{PREDICTIONS_KEY}[{k}]", None, row, PredictionRow).dump())
    return rows, log


def import_log(path: str | os.PathLike, out: str | os.PathLike) -> ImportedLog:
    """Write the predictions of the inspect log at ``path`` to ``out``; returns what was written."""
    rows, log = log_rows(path)
    write_jsonl(out, rows)
    args = log.eval.task_args or {}
    return ImportedLog(Path(out), len(rows), len({r["session_id"] for r in rows}), str(args.get("mode", "")),
                       str(log.eval.model))
