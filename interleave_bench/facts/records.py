"""Typed records of shared facts: the v1 session parts it reads (timeline, probes) and the rows a
facts run writes (``answer``, ``delivery``, ``route``, ``session``, ``error``).

Every record keeps unknown fields, so files from elsewhere (the reference's result files) read
unchanged, and takes the reference's own names and shapes beside the project's (``at`` for a turn,
counts for ``offered``, ``imports`` and ``probes``, ``tokens`` for ``usage``, ``error`` for an error
row's text: docs/facts.md#results-file). Field names follow
docs/generate.md#v1-replies-fact-episodes-timeline-and-probes. Rows are checked as strictly as
prediction rows: known strategies, categories and verdicts only, whole non-negative numbers that
are numbers (``"6"`` is not 6), ids without control characters.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import AfterValidator, AliasChoices, Field

from ..errors import jsonl_head_of
from ..schema import Probe, Record, Session, TimelineEvent
from .metrics import CATEGORIES, DELIVERY_VERDICTS, STRATEGIES, VERDICTS

#: a count or a number of tokens: a whole number (never a string or a bool), not negative
Count = Annotated[int, Field(ge=0, strict=True)]
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _no_control(v: str) -> str:
    if _CONTROL.search(v):
        raise ValueError("holds a control character (a newline or the like), which would forge a line of the report")
    return v


#: an id or a name printed in reports: no control characters (a newline would forge a line)
Name = Annotated[str, Field(min_length=1), AfterValidator(_no_control)]


def _is_count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _text_flag_or_null(v: Any) -> Any:
    if v is None or isinstance(v, (str, bool)):
        return v
    raise ValueError("expected text, true/false or null")


def _probe_ref(v: Any) -> Any:
    if v is None or _is_count(v) or (isinstance(v, str) and not _CONTROL.search(v)):
        return v
    raise ValueError("expected a probe id, a number or null")


def _ids_or_count(v: Any) -> Any:
    if _is_count(v) or (isinstance(v, list) and all(isinstance(x, str) and x and not _CONTROL.search(x) for x in v)):
        return v
    raise ValueError("expected a list of ids or a count (a whole number, not negative)")


def _refs_or_count(v: Any) -> Any:
    if _is_count(v) or (isinstance(v, list) and all(isinstance(x, str) for x in v)):
        return v
    raise ValueError("expected a list of 'source/key' texts or a count (a whole number, not negative)")


def _usage(v: Any) -> Any:
    if not isinstance(v, dict):
        raise ValueError("expected an object {purpose: count or {name: count}}")
    for purpose, u in v.items():
        if not (_is_count(u) or (isinstance(u, dict) and all(_is_count(x) for x in u.values()))):
            raise ValueError(f"{purpose}: expected a count or an object of counts (whole numbers, not negative)")
    return v

# --- v1 session parts (the records are schema.TimelineEvent and schema.Probe) ---------------------


def timeline_of(s: Session) -> list[TimelineEvent]:
    """The session's timeline events, typed (empty for a v0 session)."""
    return list(s.timeline or [])


def fact_histories(s: Session, after: int) -> dict[str, dict[str, list[tuple[str, Optional[str]]]]]:
    """thread -> key -> the fact's ``(status, value)`` events up to turn ``after``, misses left out:
    what a delivered line is judged against (:func:`~.metrics.delivery_verdict`), by a facts run
    and when its rows are judged again."""
    out: dict[str, dict[str, list]] = {t.id: {} for t in s.threads}
    for e in timeline_of(s):
        if e.turn <= after and not e.miss:
            out.setdefault(e.thread, {}).setdefault(e.key, []).append((e.status, e.value))
    return out


def probes_of(s: Session) -> list[Probe]:
    """The session's probes, typed, in ``after`` order (empty for a v0 session)."""
    return sorted(s.probes or [], key=lambda p: p.after)


# --- result rows ------------------------------------------------------------------------------------

ROW_KINDS = ("answer", "delivery", "route", "session", "error")


#: whether a file's first bytes are a facts results file's (what ``facts --out`` may resume)
RESULTS_HEAD = jsonl_head_of(("kind", "session_id"))


class AnswerRow(Record):
    """A probe answered by one strategy, with the probe's fields needed to judge it again."""

    kind: Literal["answer"] = "answer"
    session_id: Name
    probe: Name = Field(validation_alias=AliasChoices("probe", "id"))
    strategy: Literal[STRATEGIES]  # type: ignore[valid-type]
    category: Literal[CATEGORIES]  # type: ignore[valid-type]
    lang: str = Field(default="", pattern=r"^[^\x00-\x1f\x7f-\x9f]*$")
    thread: Optional[str] = None
    source: Optional[str] = None
    key: Optional[str] = None
    after: Optional[Count] = Field(default=None, validation_alias=AliasChoices("after", "at"))
    gold: Optional[str] = None
    decoys: list[str] = Field(default_factory=list)
    confirmed: Optional[list[str]] = None  # values of this fact confirmed at or before ``after``
    answer: Optional[str] = None
    verdict: Optional[Literal[VERDICTS]] = None  # type: ignore[valid-type]
    context_tokens: Count = 0
    notes_chars: Count = 0


class DeliveryRow(Record):
    """One fact line the facts strategy delivered to the asking topic, with its verdict."""

    kind: Literal["delivery"] = "delivery"
    session_id: Name
    probe: Name = Field(validation_alias=AliasChoices("probe", "id"))
    strategy: Literal[STRATEGIES] = "facts"  # type: ignore[valid-type]
    thread: Optional[str] = Field(default=None, validation_alias=AliasChoices("thread", "reader"))
    source: Optional[str] = None
    key: Optional[str] = None
    value: Optional[str] = None
    notice: Annotated[Any, AfterValidator(_text_flag_or_null)] = None  # the reference: a flag
    verdict: Literal[DELIVERY_VERDICTS]  # type: ignore[valid-type]


class RouteRow(Record):
    """One request routed twice: ``without`` and ``with`` facts offered (topic ids, null on failure)."""

    kind: Literal["route"] = "route"
    session_id: Name
    turn: Count = Field(validation_alias=AliasChoices("turn", "at"))
    probe: Annotated[Any, AfterValidator(_probe_ref)] = Field(default=None, validation_alias=AliasChoices("probe", "item"))
    gold: Optional[str] = None
    without: Optional[str] = None
    with_: Optional[str] = Field(default=None, alias="with")
    offered: Count = 0
    #: ``source/key`` of each fact brought in, or (the reference) how many
    imports: Annotated[Any, AfterValidator(_refs_or_count)] = Field(default_factory=list)
    error: Annotated[Any, AfterValidator(_text_flag_or_null)] = None

    @property
    def failed(self) -> bool:
        """Whether either routing failed (an error text, or the reference's ``true``)."""
        return self.error is not None and self.error is not False and self.error != ""

    @property
    def import_count(self) -> int:
        return self.imports if isinstance(self.imports, int) else len(self.imports)


class SessionRow(Record):
    """A finished session: its probes and strategies (what must be answered) and tokens spent."""

    kind: Literal["session"] = "session"
    session_id: Name
    lang: str = ""
    #: the probe ids, or (the reference) how many probes the session has
    probes: Annotated[Any, AfterValidator(_ids_or_count)] = Field(default_factory=list)
    strategies: list[Literal[STRATEGIES]] = Field(default_factory=list)  # type: ignore[valid-type]
    system: Optional[str] = None
    model: Optional[str] = None
    #: tokens spent per purpose: ``{purpose: {calls, input, cached_input, output}}``, or (the
    #: reference's ``tokens``) ``{purpose: tokens}``
    usage: Annotated[Any, AfterValidator(_usage)] = Field(default_factory=dict, validation_alias=AliasChoices("usage", "tokens"))
    fingerprint: Optional[str] = None


class ErrorRow(Record):
    """A session the run could not finish (a rerun tries it again)."""

    kind: Literal["error"] = "error"
    session_id: Name
    problem: str = Field(default="", validation_alias=AliasChoices("problem", "error"))
    step: Optional[str] = None  # the reference: the step that failed


def row_identity(row: Record) -> Optional[tuple[str, str]]:
    """What a row is the one row of, for the kinds a file holds at most one row of each: the field
    that says it and the words naming it (an answer: its session, probe and strategy; a route: its
    session and probe, or for a sampled turn (no probe) its session and turn; a session row: its
    session). None for a delivery or an error row: a system may deliver a line twice, and every
    error stays said. A second row of one identity would count twice in every figure."""
    if isinstance(row, AnswerRow):
        return "probe", f"answer row for session {row.session_id!r} probe {row.probe!r} strategy {row.strategy!r}"
    if isinstance(row, RouteRow):
        if row.probe is None:
            return "turn", f"route row for session {row.session_id!r} turn {row.turn} with no probe"
        return "probe", f"route row for session {row.session_id!r} probe {row.probe!r}"
    if isinstance(row, SessionRow):
        return "session_id", f"session row for session {row.session_id!r}"
    return None


ResultRow = Union[AnswerRow, DeliveryRow, RouteRow, SessionRow, ErrorRow]
ROW_TYPES: dict[str, type[Record]] = {
    "answer": AnswerRow, "delivery": DeliveryRow, "route": RouteRow, "session": SessionRow, "error": ErrorRow,
}


def row_dict(row: Record) -> dict[str, Any]:
    """A row as written: every field, ``with`` under its JSON name."""
    return row.model_dump(mode="json", by_alias=True)
