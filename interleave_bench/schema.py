"""Typed records for every file format the project reads or writes (DESIGN.md section 3).

Readers validate once at the edge (``interleave_bench.io``) and the rest of the code trusts these
types. Every model keeps unknown fields (``extra="allow"``), so a file from elsewhere round-trips
without losing anything. Checks that span fields (turn numbering, thread references, unique ids)
live in the ``check_*`` functions, which return ``(field, message)`` pairs so one pass can report
every defect of a file.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_serializer

# --- vocabularies ---------------------------------------------------------------------------------

#: the session version of each published data config
CONFIG_VERSIONS = {"v0": "interleave-v0", "v1": "interleave-v1"}
VERSIONS = tuple(CONFIG_VERSIONS.values())
SPLITS = ("dev", "test")
#: what a run is scored or routed on: one split, or every session
SCORE_SPLITS = (*SPLITS, "all")
ACTIONS = ("new", "continue", "switch", "return", "oneoff")
STYLES = ("explicit", "cue", "pronoun", "implicit", "oneoff")
MODES = ("closed", "open")
#: labels that are not topics: the router asked, or failed. A missing row counts as ERROR.
CLARIFY = "CLARIFY"
ERROR = "ERROR"
SPECIAL_LABELS = (CLARIFY, ERROR)
#: what the independent reading may say besides a thread id
JUDGE_NONE = "none"
JUDGE_AMBIGUOUS = "ambiguous"
MID_REPLY_HOW = ("interjection", "queued")
#: where a mid-reply message may go besides a catalog topic id
MID_REPLY_RUNNING = "running"
MID_REPLY_NEW = "new"
#: the fixed list of mid-reply case tags, so results break down by kind of difficulty
MID_REPLY_TAGS = (
    "steer",  # changes how the running work is done
    "cancel",  # stops or drops the running work
    "correction",  # "no, the second one": fixes what the running work assumed
    "fragment",  # only makes sense with the running request
    "ack",  # a bare acknowledgement
    "btw-trap",  # "by the way" before a change to the running work
    "mention-trap",  # names another topic (its place, person, word) yet belongs elsewhere
    "pivot",  # leaves the running work for another catalog topic
    "other-topic",  # belongs to another topic of the catalog
    "new-matter",  # belongs to no topic yet
    "question",  # a question rather than an instruction
    "follow-up",  # a further request for the running topic, for after the running reply
)


class Record(BaseModel):
    """Base of every record: unknown fields are kept, never dropped."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    def dump(self) -> dict[str, Any]:
        """The record as plain JSON data, declared fields first, unknown fields kept.

        Fields never set (optional ones absent from the source) stay absent, so a file read and
        written back is unchanged.
        """
        return self.model_dump(mode="json", exclude_unset=True, by_alias=True)


# --- sessions ---------------------------------------------------------------------------------------


class Fact(Record):
    key: str
    value: str
    update: Optional[str] = None


class Thread(Record):
    id: str = Field(min_length=1)
    title: str
    domain: str
    goal: str = ""
    description: str = ""
    facts: list[Fact] = Field(default_factory=list)
    constraints: list[str] = Field(default_factory=list)
    twinOf: Optional[str] = None


class Gold(Record):
    thread: Optional[str]
    action: Literal["new", "continue", "switch", "return", "oneoff"]
    refs: list[str] = Field(default_factory=list)


class Judge(Record):
    thread: str
    candidates: Optional[list[str]] = None


class TurnFact(Record):
    key: str
    kind: str


#: numbers and flags are taken as written: "0", 1.0 or "yes" would be coerced silently otherwise
STRICT = {"strict": True}


class Turn(Record):
    i: int = Field(ge=0, **STRICT)
    text: str
    gold: Gold
    style: Literal["explicit", "cue", "pronoun", "implicit", "oneoff"]
    tags: list[str] = Field(default_factory=list)
    fact: Optional[TurnFact] = None
    judge: Judge
    ambiguous: bool = Field(**STRICT)
    reply: Optional[str] = None


class Session(Record):
    session_id: str = Field(min_length=1)
    version: Literal[VERSIONS]  # type: ignore[valid-type]
    split: Literal["dev", "test"]
    lang: str = Field(min_length=1)
    persona: str = ""
    threads: list[Thread] = Field(min_length=1)
    turns: list[Turn] = Field(min_length=1)
    timeline: Optional[Any] = None
    probes: Optional[list[Any]] = None

    def thread_ids(self) -> list[str]:
        return [t.id for t in self.threads]


def check_session(s: Session) -> list[tuple[str, str]]:
    """Checks across the fields of one session; returns ``(field, message)`` for each defect."""
    problems: list[tuple[str, str]] = []
    ids = s.thread_ids()
    known = set(ids)
    seen: set[str] = set()
    for k, t in enumerate(s.threads):
        if t.id in seen:
            problems.append((f"threads[{k}].id", f"duplicate thread id {t.id!r}"))
        seen.add(t.id)
        if t.id in SPECIAL_LABELS or t.id in (JUDGE_NONE, JUDGE_AMBIGUOUS):
            problems.append((f"threads[{k}].id", f"{t.id!r} is reserved and cannot be a thread id"))
        if t.twinOf is not None:
            if t.twinOf == t.id:
                problems.append((f"threads[{k}].twinOf", "a thread cannot be its own twin"))
            elif t.twinOf not in known:
                problems.append((f"threads[{k}].twinOf", f"{t.twinOf!r} is not a thread of this session"))
    numbering_ok = True
    for k, turn in enumerate(s.turns):
        where = f"turns[{k}]"
        if numbering_ok and turn.i != k:
            # one error for a gap or swap, not one for every turn after it
            problems.append((f"{where}.i", f"expected {k} (turns run 0..n-1 in order), got {turn.i}"))
            numbering_ok = False
        g = turn.gold
        if (g.action == "oneoff") != (turn.style == "oneoff"):
            problems.append((f"{where}.style", f"style 'oneoff' goes with action 'oneoff' and only with it, "
                                               f"got style {turn.style!r} with action {g.action!r}"))
        if g.action == "oneoff":
            if g.thread is not None:
                problems.append((f"{where}.gold.thread", f"a one-off has no thread, got {g.thread!r}"))
        elif g.thread is None:
            problems.append((f"{where}.gold.thread", f"null is only allowed for action 'oneoff', not {g.action!r}"))
        elif g.thread not in known:
            problems.append((f"{where}.gold.thread", f"{g.thread!r} is not a thread of this session"))
        for r, ref in enumerate(g.refs):
            if ref not in known:
                problems.append((f"{where}.gold.refs[{r}]", f"{ref!r} is not a thread of this session"))
        j = turn.judge
        if j.thread not in known and j.thread not in (JUDGE_NONE, JUDGE_AMBIGUOUS):
            problems.append(
                (f"{where}.judge.thread", f"{j.thread!r} is not a thread of this session, 'none' or 'ambiguous'")
            )
        for c, cand in enumerate(j.candidates or []):
            if cand not in known:
                problems.append((f"{where}.judge.candidates[{c}]", f"{cand!r} is not a thread of this session"))
    return problems


# --- predictions ---------------------------------------------------------------------------------


class RowUsage(Record):
    input: int = Field(default=0, ge=0, **STRICT)
    output: int = Field(default=0, ge=0, **STRICT)
    cache_hit: int = Field(default=0, ge=0, **STRICT)


class PredictionRow(Record):
    session_id: str
    i: int = Field(ge=0, **STRICT)
    #: open-mode systems elsewhere number their topics; a label is a label, so a number is read as
    #: its text (in the validator's core, not a Python hook: this runs for every row scored)
    pred: str = Field(coerce_numbers_to_str=True)
    mode: Optional[Literal[MODES]] = None  # type: ignore[valid-type]
    policy: Optional[str] = None
    refs: Optional[list[Annotated[str, Field(coerce_numbers_to_str=True)]]] = None
    usage: Optional[RowUsage] = None
    elapsed_ms: Optional[float] = Field(default=None, ge=0, **STRICT)
    via: Optional[str] = None
    burst: Optional[int] = Field(default=None, ge=1, **STRICT)
    mixed: Optional[bool] = Field(default=None, **STRICT)
    waited: Optional[bool] = Field(default=None, **STRICT)

    @field_serializer("elapsed_ms")
    def _whole_ms_as_int(self, v: Optional[float]) -> Any:
        # a whole number of milliseconds is written as one (212, not 212.0), as the runner measures it
        return int(v) if v is not None and v.is_integer() else v


# --- manifest --------------------------------------------------------------------------------------


class ManifestCounts(Record):
    sessions: int = 0
    messages: int = 0
    ambiguous: int = 0
    leaks: int = 0
    failed: int = 0


class ManifestUsage(Record):
    calls: int = 0
    cached: int = 0
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


class Manifest(Record):
    version: str
    writer: str
    model: Optional[str] = None
    seed: Optional[int] = None
    options: dict[str, Any] = Field(default_factory=dict)
    counts: ManifestCounts = Field(default_factory=ManifestCounts)
    failed: list[dict[str, Any]] = Field(default_factory=list)
    usage: ManifestUsage = Field(default_factory=ManifestUsage)
    provenance: dict[str, Any] = Field(default_factory=dict)


# --- mid-reply cases ------------------------------------------------------------------------------


class CatalogTopic(Record):
    id: str = Field(min_length=1)
    title: str
    summary: str = ""
    entities: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
    lastState: str = ""


class Running(Record):
    topicId: str
    request: str
    progress: str = ""


class MidReplyCase(Record):
    id: str = Field(min_length=1)
    lang: str = Field(min_length=1)
    running: Running
    how: Literal["interjection", "queued"]
    text: str
    expect: str = Field(min_length=1)
    tags: list[str] = Field(default_factory=list)


class MidReplyCaseFile(Record):
    about: str = ""
    catalogs: dict[str, list[CatalogTopic]]
    cases: list[MidReplyCase] = Field(min_length=1)


def check_case_file(f: MidReplyCaseFile, known_tags: tuple[str, ...] | None = None) -> list[tuple[str, str]]:
    """Checks across the fields of a mid-reply case file; fields name the case by id.

    ``known_tags`` restricts tags to a fixed list (the shipped cases use :data:`MID_REPLY_TAGS`);
    by default any tag is accepted, so other people's case sets run unchanged.
    """
    problems: list[tuple[str, str]] = []
    for lang, topics in f.catalogs.items():
        seen: set[str] = set()
        for k, t in enumerate(topics):
            if t.id in seen:
                problems.append((f"catalogs.{lang}[{k}].id", f"duplicate topic id {t.id!r}"))
            if t.id in (MID_REPLY_RUNNING, MID_REPLY_NEW):
                problems.append((f"catalogs.{lang}[{k}].id", f"{t.id!r} is reserved and cannot be a topic id"))
            seen.add(t.id)
    ids: set[str] = set()
    for k, c in enumerate(f.cases):
        where = f"cases[{k}] (id {c.id!r})"
        if c.id in ids:
            problems.append((f"{where}.id", f"duplicate case id {c.id!r}"))
        ids.add(c.id)
        catalog = f.catalogs.get(c.lang)
        if catalog is None:
            problems.append((f"{where}.lang", f"no catalog for language {c.lang!r}"))
            continue
        topic_ids = [t.id for t in catalog]
        if c.running.topicId not in topic_ids:
            problems.append((f"{where}.running.topicId", f"{c.running.topicId!r} is not a topic of the {c.lang!r} catalog"))
        if c.expect not in (MID_REPLY_RUNNING, MID_REPLY_NEW) and c.expect not in topic_ids:
            problems.append(
                (f"{where}.expect", f"{c.expect!r} is not 'running', 'new' or a topic of the {c.lang!r} catalog")
            )
        elif c.expect == c.running.topicId:
            problems.append((f"{where}.expect", f"{c.expect!r} is the running topic: write 'running'"))
        for t, tag in enumerate(c.tags):
            if known_tags is not None and tag not in known_tags:
                problems.append((f"{where}.tags[{t}]", f"{tag!r} is not one of {', '.join(known_tags)}"))
    return problems


# --- turning pydantic errors into one line each -----------------------------------------------------

_QUOTED = re.compile(r"'([^']*)'")


def loc_to_field(loc: tuple[Union[int, str], ...]) -> str:
    """``('turns', 3, 'gold', 'action')`` -> ``turns[3].gold.action``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(record)"


def describe_error(err: dict[str, Any]) -> str:
    """One short sentence for one pydantic error, showing the offending value."""
    kind = err.get("type", "")
    value = err.get("input")
    if kind == "missing":
        return "required field is missing"
    if kind == "literal_error":
        allowed = _QUOTED.findall(err.get("ctx", {}).get("expected", ""))
        return f"{value!r} is not one of {', '.join(allowed)}"
    if kind in ("string_type", "int_type", "bool_type", "float_type", "list_type", "dict_type", "model_type"):
        want = {
            "string_type": "a string",
            "int_type": "an integer",
            "bool_type": "true or false",
            "float_type": "a number",
            "list_type": "a list",
            "dict_type": "an object",
            "model_type": "an object",
        }[kind]
        return f"expected {want}, got {_short(value)}"
    if kind in ("int_parsing", "int_from_float", "bool_parsing", "float_parsing"):
        return f"{err.get('msg', 'invalid value')}, got {_short(value)}"
    return f"{err.get('msg', 'invalid value')} (got {_short(value)})"


def _short(value: Any) -> str:
    text = repr(value) if not isinstance(value, (dict, list)) else type(value).__name__
    if value is None:
        text = "null"
    return text if len(text) <= 60 else text[:57] + "..."


def validation_problems(exc: ValidationError) -> list[tuple[str, str]]:
    """``(field, message)`` for every error pydantic found in one record."""
    return [(loc_to_field(tuple(e["loc"])), describe_error(e)) for e in exc.errors()]
