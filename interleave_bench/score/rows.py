"""Matching prediction rows to the messages they route, and saying out loud what is left out.

A row belongs to one turn of one session. Rows for sessions the data does not hold, for turns a
session does not have, and second rows for the same turn are not silently folded into a number:
they are listed (:class:`LeftOut`) and reported on the ``not scored:`` line. Duplicate rows are an
error unless the caller allows them, in which case the last one counts (as the reference scorer
reads a file: a later row for the same turn replaces an earlier one).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from ..errors import InputError, InputErrors
from ..io import parse_record
from ..schema import PredictionRow, Session, check_session
from .routing import DEFAULT_MODE, MODES

#: why something is left out of the numbers
NO_PREDICTIONS = "no predictions"
UNKNOWN_SESSION = "unknown session"
UNKNOWN_TURN = "unknown turn"
DUPLICATE = "duplicate"


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
    last row for a turn counts and the earlier ones are listed as left out.
    """
    idx = PredictionIndex(rows=len(rows))
    describe_run(idx, rows)

    def line_of(k: int) -> int:
        return lines[k] if lines is not None else k + 1

    by_session = idx.by_session
    n_turns: dict[str, int] = {}
    stray: dict[tuple[str, int], int] = {}  # rows of unknown sessions or turns, by key, for duplicates
    repeated: list[int] = []  # positions of rows whose turn already had one
    for k, row in enumerate(rows):
        sid, i = row.session_id, row.i
        by_i = by_session.get(sid)
        if by_i is None:
            session = sessions.get(sid)
            if session is not None:
                by_i = by_session[sid] = {}
                n_turns[sid] = len(session.turns)
        if by_i is None or i >= n_turns[sid]:
            if (sid, i) in stray:
                repeated.append(k)
                continue
            stray[(sid, i)] = k
            reason = UNKNOWN_SESSION if by_i is None else UNKNOWN_TURN
            (idx.unknown_sessions if by_i is None else idx.unknown_turns).append(LeftOut(reason, sid, i, line_of(k)))
            continue
        if i in by_i:
            repeated.append(k)
            if not allow_duplicates:
                continue
        by_i[i] = row

    dup_errors: list[InputError] = []
    if repeated:
        # a second pass over the rows, only when there are duplicates, to name the lines involved
        dup_keys = {(rows[k].session_id, rows[k].i) for k in repeated}
        first: dict[tuple[str, int], int] = {}
        previous: dict[tuple[str, int], int] = {}
        for k, row in enumerate(rows):
            key = (row.session_id, row.i)
            if key not in dup_keys:
                continue
            if key in previous:
                if allow_duplicates:
                    idx.duplicates.append(LeftOut(DUPLICATE, key[0], key[1], line_of(previous[key])))
                else:
                    dup_errors.append(InputError(
                        source, line_of(k), "i",
                        f"second row for session {key[0]!r} turn {key[1]} (first on line {line_of(first[key])}); "
                        "remove it or pass --allow-duplicates to keep the last",
                    ))
            else:
                first[key] = k
            previous[key] = k
    if dup_errors:
        raise InputErrors(dup_errors)
    return idx


class LeftOutRows:
    """What :func:`index_rows` lists, gathered from rows met a block at a time in any order: each
    row is told with its line, and the lists come back in the file's order, as the index makes
    them (the same reasons, lines and errors)."""

    def __init__(self, source: str, allow_duplicates: bool) -> None:
        self.source = source
        self.allow_duplicates = allow_duplicates
        self._stray: dict[tuple[str, int], int] = {}  # rows of unknown sessions or turns: first line by key
        self._last: dict[tuple[str, int], int] = {}  # the last line met of each stray key
        self._unknown: list[LeftOut] = []
        self._duplicates: list[tuple[int, LeftOut]] = []  # (line of the later row, the earlier one left out)
        self._errors: list[InputError] = []

    def stray(self, session_id: str, i: int, line: int, known_session: bool) -> None:
        """A row of a session the data does not hold, or of a turn its session does not have."""
        key = (session_id, i)
        if key in self._stray:
            self.repeated(session_id, i, line, self._last[key], self._stray[key])
            self._last[key] = line
            return
        self._stray[key] = self._last[key] = line
        self._unknown.append(LeftOut(UNKNOWN_TURN if known_session else UNKNOWN_SESSION, session_id, i, line))

    def repeated(self, session_id: str, i: int, line: int, previous: int, first: int) -> None:
        """A second (or later) row for a turn, on ``line``; ``previous`` and ``first``: the lines
        of the row before it and of the first row for that turn."""
        if self.allow_duplicates:
            self._duplicates.append((line, LeftOut(DUPLICATE, session_id, i, previous)))
        else:
            self._errors.append(InputError(
                self.source, line, "i",
                f"second row for session {session_id!r} turn {i} (first on line {first}); "
                "remove it or pass --allow-duplicates to keep the last",
            ))

    def listed(self) -> list[LeftOut]:
        """The rows left out, as :func:`index_rows` lists them (unknown sessions, unknown turns,
        duplicates, each in the file's order); raises :class:`InputErrors` naming every
        duplicate unless duplicates are allowed."""
        if self._errors:
            raise InputErrors(sorted(self._errors, key=lambda e: e.line or 0))
        unknown = sorted(self._unknown, key=lambda x: x.line or 0)
        return ([x for x in unknown if x.reason == UNKNOWN_SESSION] + [x for x in unknown if x.reason == UNKNOWN_TURN]
                + [x for _, x in sorted(self._duplicates, key=lambda d: d[0])])
