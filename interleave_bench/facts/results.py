"""Reading a facts results file and scoring it: rows -> judged items -> the figures and gates.

One implementation for ``interleave-bench score-facts``, the facts run's own summary and the
``interleave_shared_facts`` evaluate module. An answer row without a verdict is judged again from its
``answer`` and probe fields (``gold``, ``decoys``, ``confirmed``); no model is ever called.
"""

from __future__ import annotations

import json
import os
from typing import Any, Iterable, Optional

from pydantic import Field

from ..errors import InputError, InputErrors
from ..io import iter_json_lines, parse_record
from ..schema import Record
from ..score.facts import (
    VERDICTS,
    AnswerItem,
    DeliveryItem,
    RouteItem,
    SessionItem,
    decoy_said,
    judge,
    score_facts,
)
from .records import ROW_TYPES, AnswerRow, DeliveryRow, ErrorRow, RouteRow, SessionRow

#: version of the facts summary document; bumped when its layout changes
SUMMARY_FORMAT = 1


def parse_row(path: str, line: Optional[int], text_or_obj: Any) -> Record:
    """One result row, typed by its ``kind``; raises :class:`InputError` naming file, line and field."""
    obj = text_or_obj
    if isinstance(obj, str):
        try:
            obj = json.loads(obj)
        except json.JSONDecodeError as exc:
            raise InputError(path, line, None, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
    if not isinstance(obj, dict):
        raise InputError(path, line, None, f"expected a JSON object, got {type(obj).__name__}")
    kind = obj.get("kind")
    model = ROW_TYPES.get(kind) if isinstance(kind, str) else None
    if model is None:
        raise InputError(path, line, "kind", f"expected one of {', '.join(ROW_TYPES)}, got {kind!r}")
    return parse_record(path, line, obj, model)


def read_rows(path: str | os.PathLike) -> list[tuple[int, Record]]:
    """Every row of a results file with its line number; raises on the first bad line."""
    return [(line, parse_row(str(path), line, text)) for line, text in iter_json_lines(path)]


def parse_lines(lines: Iterable[Any], path: str = "<rows>") -> list[tuple[int, Record]]:
    """Rows given as JSON texts or objects (the evaluate module's input), numbered from 1."""
    return [(n, parse_row(path, n, x)) for n, x in enumerate(lines, start=1)]


def _answer_item(path: str, line: int, r: AnswerRow) -> AnswerItem:
    verdict = r.verdict
    if verdict is not None and verdict not in VERDICTS:
        raise InputError(path, line, "verdict", f"expected one of {', '.join(VERDICTS)}, got {verdict!r}")
    if verdict is None:
        if r.answer is None:
            raise InputError(path, line, "answer", "an answer row needs a verdict, or an answer to judge")
        if r.confirmed is None and decoy_said(r.answer, r.gold, r.decoys) is not None:
            raise InputError(path, line, "confirmed",
                             "the answer says a decoy: judging stale vs proposal needs the confirmed values (or a verdict)")
        verdict = judge(r.answer, r.gold, r.decoys, r.confirmed or []).verdict
    return AnswerItem(r.session_id, r.probe, r.strategy, r.category, r.lang, verdict, r.context_tokens, r.notes_chars)


def items_of(rows: Iterable[tuple[int, Record]], path: str = "<rows>") -> dict[str, list]:
    """The scorer's inputs from typed rows: ``answers``, ``deliveries``, ``routes``, ``sessions``, ``errors``.

    An error row counts only while its session has no session row (a later rerun finished it).
    """
    out: dict[str, list] = {"answers": [], "deliveries": [], "routes": [], "sessions": [], "errors": []}
    errors: list[tuple[str, str]] = []
    problems: list[InputError] = []
    for line, r in rows:
        try:
            if isinstance(r, AnswerRow):
                out["answers"].append(_answer_item(path, line, r))
            elif isinstance(r, DeliveryRow):
                out["deliveries"].append(DeliveryItem(r.session_id, r.probe, r.verdict))
            elif isinstance(r, RouteRow):
                out["routes"].append(RouteItem(r.session_id, r.turn, r.gold, r.without, r.with_, r.offered,
                                               len(r.imports), r.error is not None))
            elif isinstance(r, SessionRow):
                out["sessions"].append(SessionItem(r.session_id, tuple(r.probes), tuple(r.strategies), r.usage))
            elif isinstance(r, ErrorRow):
                errors.append((r.session_id, r.problem))
        except InputError as exc:
            problems.append(exc)
    if problems:
        raise InputErrors(problems)
    finished = {s.session_id for s in out["sessions"]}
    out["errors"] = [f"{sid}: {problem}" for sid, problem in errors if sid not in finished]
    return out


def score_rows(rows: Iterable[tuple[int, Record]], path: str = "<rows>") -> dict[str, Any]:
    """Every figure and gate of a facts run (see :func:`interleave_bench.score.facts.score_facts`)."""
    return score_facts(**items_of(rows, path))


def score_file(path: str | os.PathLike) -> dict[str, Any]:
    """:func:`score_rows` of a results file."""
    return score_rows(read_rows(path), str(path))


class FactsSummary(Record):
    """The ``.score.json`` of a facts run: figures, gates and where they came from."""

    format: int = SUMMARY_FORMAT
    kind: str = "facts"
    results: dict[str, Any] = Field(default_factory=dict)  # {path, sha256}
    data: Optional[dict[str, Any]] = None  # {path, sha256} when the run knows its data
    system: Optional[str] = None
    model: Optional[str] = None
    passed: bool = False
    metrics: dict[str, Any] = Field(default_factory=dict)
    provenance: dict[str, Any] = Field(default_factory=dict)
