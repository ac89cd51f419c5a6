"""Typed records of shared facts: the v1 session parts it reads (timeline, probes) and the rows a
facts run writes (``answer``, ``delivery``, ``route``, ``session``, ``error``).

Every record keeps unknown fields, so files from elsewhere (the reference's result files) read
unchanged. Field names follow DESIGN section 7a.
"""

from __future__ import annotations

from typing import Any, Literal, Optional, Union

from pydantic import AliasChoices, Field

from ..schema import Record, Session

# --- v1 session parts -------------------------------------------------------------------------------


class TimelineEvent(Record):
    """One step of a fact: ``status`` is ``confirmed``, ``proposed`` or ``retracted``."""

    thread: str
    key: str
    turn: int
    kind: str
    status: Literal["confirmed", "proposed", "retracted"]
    value: Optional[str] = None
    miss: bool = False


class Probe(Record):
    """A question asked by ``thread`` (B) after turn ``after`` about ``source``'s (A's) ``key``."""

    id: str = Field(min_length=1)
    after: int
    thread: str
    source: str
    key: str
    category: str
    gold: Optional[str] = None
    decoys: list[str] = Field(default_factory=list)
    question: str


def timeline_of(s: Session) -> list[TimelineEvent]:
    """The session's timeline events, typed (empty for a v0 session)."""
    return [TimelineEvent.model_validate(e) for e in (s.timeline or [])]


def probes_of(s: Session) -> list[Probe]:
    """The session's probes, typed, in ``after`` order (empty for a v0 session)."""
    return sorted((Probe.model_validate(p) for p in (s.probes or [])), key=lambda p: p.after)


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


def check_v1(s: Session) -> list[tuple[str, str]]:
    """Checks of a session's facts parts: typed timeline events and probes, naming known threads;
    returns ``(field, message)`` for each defect (a v0 session without them has none)."""
    from pydantic import ValidationError

    from ..schema import validation_problems

    problems: list[tuple[str, str]] = []
    known = set(s.thread_ids())
    for name, model, items in (("timeline", TimelineEvent, s.timeline or []), ("probes", Probe, s.probes or [])):
        if not isinstance(items, list):
            problems.append((name, f"expected a list, got {type(items).__name__}"))
            continue
        for k, obj in enumerate(items):
            try:
                rec = model.model_validate(obj)
            except ValidationError as exc:
                problems += [(f"{name}[{k}].{f}" if f else f"{name}[{k}]", m) for f, m in validation_problems(exc)]
                continue
            for attr in ("thread", "source"):
                v = getattr(rec, attr, None)
                if v is not None and v not in known:
                    problems.append((f"{name}[{k}].{attr}", f"{v!r} is not a thread of this session"))
            if isinstance(rec, Probe) and not 0 <= rec.after < len(s.turns):
                problems.append((f"{name}[{k}].after", f"{rec.after} is not a turn of this session"))
    return problems
