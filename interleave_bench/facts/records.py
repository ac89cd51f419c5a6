"""Typed records of shared facts: the v1 session parts it reads (timeline, probes) and the rows a
facts run writes (``answer``, ``delivery``, ``route``, ``session``, ``error``).

Every record keeps unknown fields, so files from elsewhere (the reference's result files) read
unchanged. Field names follow docs/generate.md#v1-replies-fact-episodes-timeline-and-probes.
"""

from __future__ import annotations

from typing import Any, Literal, Optional, Union

from pydantic import AliasChoices, Field

from ..schema import Probe, Record, Session, TimelineEvent

# --- v1 session parts (the records are schema.TimelineEvent and schema.Probe) ---------------------


def timeline_of(s: Session) -> list[TimelineEvent]:
    """The session's timeline events, typed (empty for a v0 session)."""
    return list(s.timeline or [])


def probes_of(s: Session) -> list[Probe]:
    """The session's probes, typed, in ``after`` order (empty for a v0 session)."""
    return sorted(s.probes or [], key=lambda p: p.after)


# --- result rows ------------------------------------------------------------------------------------

ROW_KINDS = ("answer", "delivery", "route", "session", "error")


class AnswerRow(Record):
    """A probe answered by one strategy, with the probe's fields needed to judge it again."""

    kind: Literal["answer"] = "answer"
    session_id: str
    probe: str = Field(validation_alias=AliasChoices("probe", "id"))
    strategy: str
    category: str
    lang: str = ""
    thread: Optional[str] = None
    source: Optional[str] = None
    key: Optional[str] = None
    after: Optional[int] = None
    gold: Optional[str] = None
    decoys: list[str] = Field(default_factory=list)
    confirmed: Optional[list[str]] = None  # values of this fact confirmed at or before ``after``
    answer: Optional[str] = None
    verdict: Optional[str] = None
    context_tokens: int = 0
    notes_chars: int = 0


class DeliveryRow(Record):
    """One fact line the facts strategy delivered to the asking topic, with its verdict."""

    kind: Literal["delivery"] = "delivery"
    session_id: str
    probe: str = Field(validation_alias=AliasChoices("probe", "id"))
    strategy: str = "facts"
    thread: Optional[str] = None
    source: Optional[str] = None
    key: Optional[str] = None
    value: Optional[str] = None
    notice: Optional[str] = None
    verdict: str


class RouteRow(Record):
    """One request routed twice: ``without`` and ``with`` facts offered (topic ids, null on failure)."""

    kind: Literal["route"] = "route"
    session_id: str
    turn: int
    probe: Optional[str] = None
    gold: Optional[str] = None
    without: Optional[str] = None
    with_: Optional[str] = Field(default=None, alias="with")
    offered: int = 0
    imports: list[str] = Field(default_factory=list)
    error: Optional[str] = None


class SessionRow(Record):
    """A finished session: its probes and strategies (what must be answered) and tokens spent."""

    kind: Literal["session"] = "session"
    session_id: str
    lang: str = ""
    probes: list[str] = Field(default_factory=list)
    strategies: list[str] = Field(default_factory=list)
    system: Optional[str] = None
    model: Optional[str] = None
    usage: dict[str, dict[str, int]] = Field(default_factory=dict)
    fingerprint: Optional[str] = None


class ErrorRow(Record):
    """A session the run could not finish (a rerun tries it again)."""

    kind: Literal["error"] = "error"
    session_id: str
    problem: str = ""


ResultRow = Union[AnswerRow, DeliveryRow, RouteRow, SessionRow, ErrorRow]
ROW_TYPES: dict[str, type[Record]] = {
    "answer": AnswerRow, "delivery": DeliveryRow, "route": RouteRow, "session": SessionRow, "error": ErrorRow,
}


def row_dict(row: Record) -> dict[str, Any]:
    """A row as written: every field, ``with`` under its JSON name."""
    return row.model_dump(mode="json", by_alias=True)
