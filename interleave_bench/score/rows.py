"""Matching prediction rows to the messages they route, and saying out loud what is left out.

A row belongs to one turn of one session. Rows for sessions the data does not hold, for turns a
session does not have, and second rows for the same turn are not silently folded into a number:
they are listed (:class:`LeftOut`) and reported on the ``not scored:`` line. Duplicate rows are an
error unless the caller allows them, in which case the last one counts (as the reference scorer
reads a file: a later row for the same turn replaces an earlier one).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

from ..errors import InputError, InputErrors, clip, shown
from ..io import iter_json_lines, parse_record
from ..json_text import find_bad_value
from ..schema import PredictionRow, Session, check_session
from .routing import DEFAULT_MODE, MODES

#: why something is left out of the numbers
NO_PREDICTIONS = "no predictions"
UNKNOWN_SESSION = "unknown session"
UNKNOWN_TURN = "unknown turn"
DUPLICATE = "duplicate"
#: how many examples the not-scored line names per reason before it says "..."
EXAMPLES_SHOWN = 5


@dataclass(frozen=True, slots=True)
class LeftOut:
    """A session or row the scorer did not use, and why (one of the reasons above)."""

    reason: str
    session_id: str
    i: int | None = None
    line: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"reason": self.reason, "session_id": self.session_id}
        if self.i is not None:
            out["i"] = self.i
        if self.line is not None:
            out["line"] = self.line
        return out


@dataclass(slots=True)
class PredictionIndex:
    """The rows of one run, by session and turn, with what describes the run and what was left out.

    ``mode``, ``policy`` and ``model`` come from the first row that names each (``None`` if none
    does). ``by_session`` holds only rows of known sessions and turns, one per turn.
    """

    by_session: dict[str, dict[int, PredictionRow]] = field(default_factory=dict)
    mode: str | None = None
    policy: str | None = None
    model: str | None = None
    rows: int = 0
    unknown_sessions: list[LeftOut] = field(default_factory=list)
    unknown_turns: list[LeftOut] = field(default_factory=list)
    duplicates: list[LeftOut] = field(default_factory=list)

    def resolved_mode(self, override: str | None = None) -> str:
        """The mode to score in: ``override``, else the rows' own, else the default (closed)."""
        if override is not None:
            if override not in MODES:
                raise ValueError(f"mode must be one of {', '.join(MODES)}, got {override!r}")
            return override
        return self.mode or DEFAULT_MODE


def other_modes(modes: Iterable[str | None], run_mode: str) -> list[int]:
    """Positions of the rows that name a mode other than the run's (a run is scored in one mode,
    the first its rows name: docs/score.md#interleave-bench-score-data-predjsonl)."""
    return [k for k, m in enumerate(modes) if m is not None and m != run_mode]


def mode_error(source: str, line: int, mode: str, run_mode: str) -> InputError:
    """The error of a row (on ``line``) naming ``mode`` in a run of ``run_mode``."""
    return InputError(source, line, "mode", f"{mode!r}, but the run's rows are {run_mode!r} (its first row that names "
                      "a mode says so); one run is one mode (pass --mode to score it in another)")


def mode_errors(rows: Sequence[PredictionRow], run_mode: str, source: str, lines: Sequence[int] | None) -> list[InputError]:
    """One error per row of ``rows`` naming a mode other than ``run_mode``."""
    return [mode_error(source, lines[k] if lines is not None else k + 1, rows[k].mode, run_mode)  # type: ignore[arg-type]
            for k in other_modes((r.mode for r in rows), run_mode)]


def as_rows(rows: Iterable[PredictionRow | Mapping[str, Any]], source: str) -> list[PredictionRow]:
    """Rows as :class:`PredictionRow`; plain dicts are validated (errors name ``source`` and the row number)."""
    out: list[PredictionRow] = []
    for k, row in enumerate(rows, start=1):
        out.append(row if isinstance(row, PredictionRow) else parse_record(source, k, row, PredictionRow))
    return out


def read_row(row: Mapping[str, Any], source: str = "<row>") -> PredictionRow:
    """``row`` as a predictions file's reader takes it; raises :class:`InputError` naming the first
    field it would refuse (a NaN or infinite number included, which JSON cannot hold)."""
    bad = find_bad_value(row)
    if bad is not None:
        raise InputError(source, None, bad[0], bad[1])
    return parse_record(source, None, dict(row), PredictionRow)


def as_sessions(sessions: Iterable[Session | Mapping[str, Any]], source: str = "<sessions>") -> list[Session]:
    """Sessions as :class:`Session`; plain dicts are validated (errors name ``source`` and the position)."""
    out: list[Session] = []
    for k, s in enumerate(sessions, start=1):
        out.append(s if isinstance(s, Session) else parse_record(source, k, s, Session, check_session))
    return out


def describe_run(idx: PredictionIndex, rows: Sequence[PredictionRow]) -> None:
    """Set ``idx.mode``, ``policy`` and ``model`` from the first row that names each."""
    for row in rows:
        if idx.mode is None and row.mode is not None:
            idx.mode = row.mode
        if idx.policy is None and row.policy is not None:
            idx.policy = row.policy
        if idx.model is None and row.model_extra:
            model = row.model_extra.get("model")
            if isinstance(model, str) and model:
                idx.model = model
        if idx.mode is not None and idx.policy is not None and idx.model is not None:
            return


def index_rows(
    rows: Sequence[PredictionRow],
    sessions: Mapping[str, Session],
    *,
    source: str = "<predictions>",
    lines: Sequence[int] | None = None,
    allow_duplicates: bool = False,
) -> PredictionIndex:
    """Index ``rows`` by session and turn against every session of the data (any split).

    ``lines`` gives each row's line in ``source`` for messages (default: its 1-based position).
    Raises :class:`InputErrors` naming every duplicate row unless ``allow_duplicates``; then the
    last row for a turn counts and the earlier ones are listed as left out. What is left out is
    listed by :class:`LeftOutRows`, as the file readers list it.
    """
    idx = PredictionIndex(rows=len(rows))
    describe_run(idx, rows)
    listing = LeftOutRows(source, allow_duplicates, lambda numbers: {
        n: lines[n] if lines is not None else n + 1 for n in numbers})
    first: dict[tuple[str, int], int] = {}
    last: dict[tuple[str, int], int] = {}
    for k, row in enumerate(rows):
        sid, i = row.session_id, row.i
        session = sessions.get(sid)
        if session is None or i >= len(session.turns):
            listing.stray(sid, i, k, known_session=session is not None)
            continue
        key = (sid, i)
        if key in last:
            listing.repeated(sid, i, k, last[key], first[key])
        else:
            first[key] = k
        last[key] = k
        idx.by_session.setdefault(sid, {})[i] = row  # the last counts
    lists = {UNKNOWN_SESSION: idx.unknown_sessions, UNKNOWN_TURN: idx.unknown_turns, DUPLICATE: idx.duplicates}
    for x in listing.listed():  # raises naming every duplicate unless they are allowed
        lists[x.reason].append(x)
    return idx


def row_lines(path: str | os.PathLike[str], numbers: set[int]) -> dict[int, int]:
    """The line (1-based) of each of the given rows of a JSONL file, by number (from 0), as the
    strict reader numbers its lines (:func:`~interleave_bench.io.iter_json_lines`: blank lines hold
    no row)."""
    return {number: line for number, (line, _) in enumerate(iter_json_lines(path)) if number in numbers}


class LeftOutRows:
    """What :func:`index_rows` lists, gathered from rows met a block at a time in any order: each
    row is told by its number in the file (from 0), which ``lines_of`` turns into lines when the
    rows are listed (only then: most files have none to list), and the lists come back in the
    file's order, as the index makes them (the same reasons, lines and errors)."""

    def __init__(self, source: str, allow_duplicates: bool, lines_of: Callable[[set[int]], dict[int, int]]) -> None:
        self.source = source
        self.allow_duplicates = allow_duplicates
        self.lines_of = lines_of
        self._stray: dict[tuple[str, int], int] = {}  # rows of unknown sessions or turns: first number by key
        self._last: dict[tuple[str, int], int] = {}  # the last number met of each stray key
        self._unknown: list[tuple[int, str, str, int]] = []  # (number, reason, session, turn)
        self._repeated: list[tuple[int, int, int, str, int]] = []  # (number, previous, first, session, turn)

    def stray(self, session_id: str, i: int, number: int, known_session: bool) -> None:
        """A row of a session the data does not hold, or of a turn its session does not have."""
        key = (session_id, i)
        if key in self._stray:
            self.repeated(session_id, i, number, self._last[key], self._stray[key])
            self._last[key] = number
            return
        self._stray[key] = self._last[key] = number
        self._unknown.append((number, UNKNOWN_TURN if known_session else UNKNOWN_SESSION, session_id, i))

    def repeated(self, session_id: str, i: int, number: int, previous: int, first: int) -> None:
        """A second (or later) row for a turn; ``previous`` and ``first``: the numbers of the row
        before it and of the first row for that turn."""
        self._repeated.append((number, previous, first, session_id, i))

    def listed(self) -> list[LeftOut]:
        """The rows left out, as :func:`index_rows` lists them (unknown sessions, unknown turns,
        duplicates, each in the file's order); raises :class:`InputErrors` naming every
        duplicate unless duplicates are allowed."""
        if not self._unknown and not self._repeated:
            return []
        line = self.lines_of({n for entry in self._unknown for n in entry[:1]}
                             | {n for entry in self._repeated for n in entry[:3]})
        repeated = sorted(self._repeated)
        if repeated and not self.allow_duplicates:
            raise InputErrors([InputError(
                self.source, line[n], "i",
                f"second row for session {shown(sid)} turn {i} (first on line {line[first]}); "
                "remove it (score, compare and report keep the last with --allow-duplicates)",
            ) for n, _, first, sid, i in repeated])
        unknown = sorted(self._unknown)
        return ([LeftOut(reason, sid, i, line[n]) for n, reason, sid, i in unknown if reason == UNKNOWN_SESSION]
                + [LeftOut(reason, sid, i, line[n]) for n, reason, sid, i in unknown if reason == UNKNOWN_TURN]
                + [LeftOut(DUPLICATE, sid, i, line[previous]) for _, previous, _, sid, i in repeated])


def _examples(items: Sequence[Mapping[str, Any]], with_turn: bool) -> str:
    """The first rows of ``items``; every session when they are whole sessions (a partial run names all)."""
    shown = []
    for x in (items[:EXAMPLES_SHOWN] if with_turn else items):
        if with_turn:
            where = f"{clip(x['session_id'])} i={x['i']}"
            if x.get("line") is not None:
                where += f" line {x['line']}"
            shown.append(where)
        else:
            shown.append(clip(x["session_id"]))
    more = ", ..." if with_turn and len(items) > EXAMPLES_SHOWN else ""
    return "(" + ", ".join(shown) + more + ")"


def not_scored_line(result: Mapping[str, Any]) -> str:
    """``not scored: <system>: ...`` naming what was left out and why, and the turns of scored sessions
    without a row (each scored as ``ERROR``); ``nothing`` when there is none of these (the score
    file's ``not_scored_line``)."""
    return _not_scored_text(result, _not_scored_parts(result))


def not_scored_notice(result: Mapping[str, Any]) -> Optional[str]:
    """:func:`not_scored_line` when the run left something out, else None: what a command prints
    after its table (a complete run says nothing)."""
    parts = _not_scored_parts(result)
    return _not_scored_text(result, parts) if parts else None


def _not_scored_text(result: Mapping[str, Any], parts: list[str]) -> str:
    return f"not scored: {result['system']}: " + ("; ".join(parts) or "nothing")


def _not_scored_parts(result: Mapping[str, Any]) -> list[str]:
    items = result.get("not_scored") or []
    parts = []
    for reason, singular, plural, with_turn in (
        (NO_PREDICTIONS, "session without predictions", "sessions without predictions", False),
        (UNKNOWN_SESSION, "row for an unknown session", "rows for unknown sessions", True),
        (UNKNOWN_TURN, "row for an unknown turn", "rows for unknown turns", True),
        (DUPLICATE, "duplicate row replaced by a later one", "duplicate rows replaced by later ones", True),
    ):
        group = [x for x in items if x["reason"] == reason]
        if group:
            label = singular if len(group) == 1 else plural
            parts.append(f"{len(group):,} {label} {_examples(group, with_turn)}")
    missing = (result.get("counts") or {}).get("missing_rows") or 0
    if missing:  # scored, as ERROR: said here too, as what --require-complete counts
        parts.append(f"{missing:,} turn{'' if missing == 1 else 's'} of scored sessions without a row, "
                     "each scored as ERROR")
    return parts


def error_rows_notice(result: Mapping[str, Any]) -> Optional[str]:
    """``ERROR rows: <system>: ...`` when the run holds rows labelled ``ERROR`` (decisions its
    router failed to make, scored as the routing metrics score them), else None."""
    counts = result.get("counts") or {}
    n = counts.get("error_rows") or 0
    if not n:
        return None
    return (f"ERROR rows: {result['system']}: {n:,} of {counts.get('rows_scored') or 0:,} rows scored are ERROR "
            "(decisions the router failed to make): wrong on a thread message (outcome error), right on a "
            "one-off (left alone)")


def scored_counts(results: Sequence[Mapping[str, Any]], split: str) -> dict[str, Any]:
    """The counts of ``score``'s summary line: the runs, the split, and what one run scored
    (sessions and messages: the same in every run over the whole split, else their range), never a
    sum over runs, which would read as the data's size."""
    def span(key: str) -> str:
        low, high = (f(r["counts"][key] for r in results) for f in (min, max))
        return f"{low:,}" if low == high else f"{low:,} to {high:,}"

    if len(results) == 1:
        counts = results[0]["counts"]
        return {"runs": 1, "split": split, "sessions scored": counts["sessions"], "messages": counts["messages"]}
    return {"runs": len(results), "split": split, "a run": f"{span('sessions')} sessions and {span('messages')} messages scored"}
