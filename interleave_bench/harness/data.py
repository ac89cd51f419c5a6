"""The sessions a harness task evaluates, from any of the project's data sources.

``DATA`` is what every command takes: a data folder (or its ``sessions.jsonl``), a folder written
by ``interleave-bench export`` (its ``v0`` config's Parquet files; ``#CONFIG`` picks another), or a
Hub revision ``hub:ORG/NAME@REV``. Each is read by the project's own readers, so bad data stops
with their one-line errors; the split is selected and the mode checked as ``route`` does.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..io import read_sessions, sessions_file
from ..fingerprints import records_fingerprint
from ..route.selection import check_mode_applies, select_sessions
from ..errors import InputErrors, InterleaveError, error_line
from ..schema import Session
from ..score.defaults import check_split
from .names import INSPECT_OPEN_MODE

def problem_lines(exc: InterleaveError) -> list[str]:
    """The project's one line per problem of bad data or options (``error: FILE:LINE: field: ...``),
    as a harness shows them in place of a traceback."""
    problems = [e.format() for e in exc.errors] if isinstance(exc, InputErrors) else [str(exc)]
    return [error_line(p) for p in problems]


@dataclass(frozen=True)
class HarnessData:
    """The sessions of one split, where they came from, and their fingerprint (on the records)."""

    source: str
    split: str
    sessions: list[Session]
    fingerprint: str


def read_all(data: str | os.PathLike) -> list[Session]:
    """Every session of ``data`` (all splits, in file order), validated."""
    text = str(data)
    from ..hub.source import export_spec, is_hub, local_data, read_exported

    if is_hub(text):
        folder, _ = local_data(text)
        return read_sessions(sessions_file(folder))
    spec = export_spec(text)  # DIR#CONFIG picks an exported folder's config
    if spec is not None:
        return read_exported(*spec)
    return read_sessions(sessions_file(Path(text)))


def load(data: str | os.PathLike, split: str, mode: Optional[str] = None, *,
         open_option: str = INSPECT_OPEN_MODE) -> HarnessData:
    """The sessions of ``split`` in ``data``; with ``mode``, refuses closed mode on open-only data,
    telling to use ``open_option`` (the harness's own way to ask for open mode).

    Raises the project's :class:`~interleave_bench.errors.UsageError` / ``InputError`` on bad input.
    """
    check_split(split, "split")
    every = read_all(data)
    where = Path(str(data))
    sessions = select_sessions(where, split, every)
    if mode is not None:
        check_mode_applies(where, sessions, mode, open_option)
    return HarnessData(str(data), split, sessions, records_fingerprint(sessions))
