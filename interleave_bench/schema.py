"""Typed records for every file format the project reads or writes (README.md#file-formats).

Readers validate once at the edge (``interleave_bench.io``) and the rest of the code trusts these
types. Every model keeps unknown fields (``extra="allow"``), so a file from elsewhere round-trips
without losing anything. Checks that span fields (turn numbering, thread references, unique ids)
live in the ``check_*`` functions, which return ``(field, message)`` pairs so one pass can report
every defect of a file.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_serializer, field_validator
from pydantic_core import PydanticCustomError

from .json_text import INT64_MAX
from .record_errors import ID_PATTERN, describe_error, loc_to_field, validation_problems  # noqa: F401 - read from here too

# --- vocabularies ---------------------------------------------------------------------------------

#: the session version of each published data config
CONFIG_VERSIONS = {"v0": "interleave-v0", "v1": "interleave-v1", "irc_ubuntu": "interleave-v0", "sgd": "interleave-v0"}
VERSIONS = tuple(dict.fromkeys(CONFIG_VERSIONS.values()))
SPLITS = ("dev", "test")
#: what a run is scored or routed on: one split, or every session
SCORE_SPLITS = (*SPLITS, "all")
ACTIONS = ("new", "continue", "switch", "return", "oneoff")
#: the move each action of a thread message makes, by where the message stands among the gold threads
#: before it (one-offs passed over): ``new``, a thread's first message; ``continue``, on the thread of the
#: message before; ``move``, to another thread that has had messages: a ``switch``, or a ``return`` after
#: a long gap (which the generator's plan tells apart by its ``return_gap``; data from elsewhere may not)
THREAD_MOVES = {"new": "new", "continue": "continue", "switch": "move", "return": "move"}
STYLES = ("explicit", "cue", "pronoun", "implicit", "oneoff")
MODES = ("closed", "open")
#: labels that are not topics: the router asked, or failed. A missing row counts as ERROR.
CLARIFY = "CLARIFY"
ERROR = "ERROR"
SPECIAL_LABELS = (CLARIFY, ERROR)
#: labels of topics a run opens: open mode ``t1, t2, ...``; closed mode ``x1, ...`` (side topics
#: such as one-offs), so they never read as thread ids (:func:`opened_label`)
NEW_LABEL_PREFIX = {"open": "t", "closed": "x"}


def opened_label(mode: str, n: int) -> str:
    """The label of the ``n``-th topic (from 1) a session's run opens in ``mode``: ``t3``, ``x1``."""
    return f"{NEW_LABEL_PREFIX[mode]}{n}"


#: what a model router answers to open a new topic, read in any case: ``new``, or ``new:<n>`` for
#: the topic message n of the same burst opened (docs/route.md); no thread id may read as it
NEW_TOPIC = "new"
NEW_TOPIC_REF = re.compile(rf"^{NEW_TOPIC}:(\d+)$")


def reads_as_new_topic(label: str) -> bool:
    """Whether a model router's answer naming ``label`` opens a new topic instead (its trimmed,
    lower-case text is :data:`NEW_TOPIC`, or ``new:<n>``)."""
    word = label.strip().lower()
    return word == NEW_TOPIC or NEW_TOPIC_REF.match(word) is not None


#: what the independent reading may say besides a thread id
JUDGE_NONE = "none"
JUDGE_AMBIGUOUS = "ambiguous"
#: the fewest distinct thread ids an ``ambiguous`` reading names as its ``candidates``
MIN_CANDIDATES = 2


def agreeing_judge(gold_thread: Optional[str]) -> str:
    """What the independent reading (``judge.thread``) says of a message where it agrees with the gold
    label: the gold thread, :data:`JUDGE_NONE` for a one-off. A message is ``ambiguous`` exactly where
    the reading says anything else."""
    return gold_thread if gold_thread is not None else JUDGE_NONE


MID_REPLY_HOW = ("interjection", "queued")
#: a session field: true when the session's conversations are not known up front (real chat
#: logs), so only open-mode routing applies; ``route`` and ``baselines`` refuse closed mode on it
OPEN_ONLY_FIELD = "open_only"
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

    model_config = ConfigDict(extra="allow", populate_by_name=True, defer_build=True)

    def dump(self) -> dict[str, Any]:
        """The record as plain JSON data, declared fields first, unknown fields kept.

        Fields never set (optional ones absent from the source) stay absent, so a file read and
        written back is unchanged.
        """
        return self.model_dump(mode="json", exclude_unset=True, by_alias=True)


# --- sessions ---------------------------------------------------------------------------------------

#: numbers and flags are taken as written: "0", 1.0 or "yes" would be coerced silently otherwise
STRICT = {"strict": True}
#: a count or position: taken as written, never negative, and held to 64 bits as every file the
#: project writes holds it (docs/score.md#the-score-file-interleave-score-v1)
COUNT = {"ge": 0, "le": INT64_MAX, **STRICT}
#: an id printed on one line of a report or an error: no control characters (a line break in a
#: session id would print a line of its own, which could pass for an ``error:`` line)
ID = {"pattern": ID_PATTERN}
#: the longest a single routing decision may take: a week; more is a unit slip or a forged value
MAX_ELAPSED_MS = 7 * 24 * 3600 * 1000


# --- v1 vocabularies (docs/generate.md#v1-replies-fact-episodes-timeline-and-probes; names fixed by the reference format) ---------------------

#: what a fact's lifecycle is: stated (and maybe updated), proposed then accepted or rejected, or
#: stated then withdrawn
FACT_TYPES = ("stated", "accepted", "rejected", "withdrawn")
#: the steps a turn's ``fact.kind`` may be in v1 (v0 writes ``state`` and ``update``)
FACT_STEPS = ("intro", "update", "propose", "accept", "reject", "retract")
#: the status a timeline event gets from its step: a proposal changes nothing, a retraction
#: clears the value, every other step confirms its value
STATUS_PROPOSED = "proposed"
STATUS_RETRACTED = "retracted"
STATUS_CONFIRMED = "confirmed"
FACT_STATUSES = (STATUS_PROPOSED, STATUS_RETRACTED, STATUS_CONFIRMED)
STEP_STATUS = {
    "propose": STATUS_PROPOSED,
    "retract": STATUS_RETRACTED,
    "intro": STATUS_CONFIRMED,
    "update": STATUS_CONFIRMED,
    "accept": STATUS_CONFIRMED,
    "reject": STATUS_CONFIRMED,
}
#: probe categories, in the order probes are selected (section 7a)
PROBE_CATEGORIES = ("stale", "proposal", "rejected", "accepted", "cross")
#: the word a probe asks for when a value is not settled, per language (the judge reads it as undecided)
UNDECIDED_WORDS = {"en": "undecided", "zh": "未定"}
#: a probe's question per language (section 7a), the one definition the generator writes and a reader
#: parses: ``{thread}`` is the asking topic's title, ``{source}`` the source topic's, ``{key}`` the fact's
#: label in that language, ``{undecided}`` the language's word of :data:`UNDECIDED_WORDS`
PROBE_QUESTIONS = {
    "en": 'For "{thread}", I need the {key} from "{source}": what is it now? Answer with just the value, '
          'or "{undecided}" if it is not settled.',
    "zh": "为了“{thread}”，我需要“{source}”里的{key}：现在是什么？只回答这个值；如果还没定下来，就回答“{undecided}”。",
}
#: the language whose question a language without its own text gets
PROBE_QUESTION_FALLBACK = "en"
#: the tag of a turn whose fact step the writer could not get right; its fact leaves the probes
FACT_MISS_TAG = "fact-miss"


class Fact(Record):
    key: str
    value: str
    update: Optional[str] = None
    #: v1: a plausible other value (the one an assistant proposes and the user turns down)
    alternative: Optional[str] = None


class Thread(Record):
    id: str = Field(min_length=1, **ID)
    title: str
    domain: str
    goal: str = ""
    description: str = ""
    facts: list[Fact] = Field(default_factory=list)
    constraints: list[str] = Field(default_factory=list)
    twinOf: Optional[str] = None


class Gold(Record):
    thread: Optional[str] = Field(description="a thread id, or null for a one-off")
    action: Literal["new", "continue", "switch", "return", "oneoff"]
    refs: list[str] = Field(default_factory=list)


class Judge(Record):
    thread: str = Field(description=f"a thread id, {JUDGE_NONE!r} for a one-off or {JUDGE_AMBIGUOUS!r}")
    candidates: Optional[list[str]] = None


class TurnFact(Record):
    key: str
    kind: str
    #: v1: the value the step carries (null for a retraction)
    value: Optional[str] = None




class Turn(Record):
    i: int = Field(**COUNT)
    text: str
    gold: Gold
    style: Literal["explicit", "cue", "pronoun", "implicit", "oneoff"]
    tags: list[str] = Field(default_factory=list)
    fact: Optional[TurnFact] = None
    judge: Judge
    ambiguous: bool = Field(**STRICT)
    #: v1: the assistant's reply to this message
    assistant: Optional[str] = None
    #: multi-party chat (``import irc``): who wrote the message
    speaker: Optional[str] = None


class TimelineEvent(Record):
    """One step of a fact's lifecycle (v1): which turn did what to ``thread``'s fact ``key``."""

    thread: str
    key: str
    turn: int = Field(**COUNT)
    kind: Literal[FACT_STEPS]
    status: Literal[FACT_STATUSES]
    value: Optional[str] = None
    #: the writer could not get this fact's steps right: the event counts for nothing
    miss: Optional[bool] = Field(default=None, **STRICT)


class Probe(Record):
    """A question asked in topic ``thread`` after turn ``after`` about ``source``'s fact ``key`` (v1)."""

    id: str = Field(min_length=1, **ID)
    after: int = Field(**COUNT)
    thread: str
    source: str
    key: str
    category: Literal[PROBE_CATEGORIES]
    gold: Optional[str] = None
    decoys: list[str] = Field(default_factory=list)
    question: str


class Session(Record):
    session_id: str = Field(min_length=1, **ID)
    version: Literal[VERSIONS]  # type: ignore[valid-type]
    split: Literal["dev", "test"]
    lang: str = Field(min_length=1, **ID)
    persona: str = ""
    threads: list[Thread] = Field(min_length=1)
    turns: list[Turn] = Field(min_length=1)
    fact_types: Optional[dict[str, dict[str, Literal[FACT_TYPES]]]] = None
    timeline: Optional[list[TimelineEvent]] = None
    probes: Optional[list[Probe]] = None

    def thread_ids(self) -> list[str]:
        return [t.id for t in self.threads]


def is_open_only(s: Session) -> bool:
    """True when the session says only open mode applies to it (its ``open_only`` field)."""
    return (s.model_extra or {}).get(OPEN_ONLY_FIELD) is True


def fact_state(timeline: list[TimelineEvent], thread: str, key: str, after: int) -> Optional[str]:
    """The value of ``thread``'s fact ``key`` after turn ``after`` (section 7a), None when undecided.

    Walks the events of that fact with ``turn <= after`` that are not a ``miss``, in order: a
    confirmation sets the value, a retraction clears it, a proposal changes nothing.
    """
    value: Optional[str] = None
    for e in timeline:
        if e.thread != thread or e.key != key or e.turn > after or e.miss:
            continue
        if e.status == STATUS_CONFIRMED:
            value = e.value
        elif e.status == STATUS_RETRACTED:
            value = None
    return value


def probe_question(lang: str, thread: str, source: str, label: str) -> str:
    """The question of a probe in ``lang`` (English for a language without its own text): asked in
    the topic titled ``thread`` about the fact ``label`` of the topic titled ``source``."""
    code = lang if lang in PROBE_QUESTIONS else PROBE_QUESTION_FALLBACK
    return PROBE_QUESTIONS[code].format(thread=thread, source=source, key=label, undecided=UNDECIDED_WORDS[code])


class ProbeQuestion(BaseModel):
    """What a probe's question says: its language, the asking and source titles, the fact's label."""

    model_config = ConfigDict(frozen=True)
    lang: str
    thread: str
    source: str
    label: str


def _question_pattern(lang: str) -> "re.Pattern[str]":
    parts = re.split(r"\{(\w+)\}", PROBE_QUESTIONS[lang])
    out = []
    for k, part in enumerate(parts):
        if k % 2 == 0:
            out.append(re.escape(part))
        elif part == "undecided":
            out.append(re.escape(UNDECIDED_WORDS[lang]))
        else:
            out.append(f"(?P<{part}>.+?)")
    return re.compile("".join(out), re.DOTALL)


_QUESTION_PATTERNS = {lang: _question_pattern(lang) for lang in PROBE_QUESTIONS}


def read_probe_question(text: str) -> Optional[ProbeQuestion]:
    """What a question written by :func:`probe_question` asks (its language, titles and label), or
    None when ``text`` is no such question. A question at the end of a longer text counts."""
    t = text.strip()
    for lang, pattern in _QUESTION_PATTERNS.items():
        m = pattern.fullmatch(t) or pattern.fullmatch(t.rpartition("\n")[2].strip())
        if m:
            return ProbeQuestion(lang=lang, thread=m.group("thread"), source=m.group("source"), label=m.group("key"))
    return None


def check_v1(s: Session) -> list[tuple[str, str]]:
    """Checks of a session's v1 fields (facts, timeline, probes); ``(field, message)`` per defect.

    Timeline events name real threads, keys and turns and agree with the turns' ``fact`` fields
    both ways; a probe's ``gold`` is the timeline's state at ``after``, its decoys differ from
    it, its asking thread differs from its source and has started by ``after``; ids are unique.
    """
    problems: list[tuple[str, str]] = []
    keys = {t.id: {f.key for f in t.facts} for t in s.threads}
    first_turn: dict[str, int] = {}
    for turn in s.turns:
        if turn.gold.thread is not None:
            first_turn.setdefault(turn.gold.thread, turn.i)
    for tid, types in (s.fact_types or {}).items():
        if tid not in keys:
            problems.append((f"fact_types.{tid}", f"{tid!r} is not a thread of this session"))
            continue
        for key in types:
            if key not in keys[tid]:
                problems.append((f"fact_types.{tid}.{key}", f"{key!r} is not a fact of thread {tid!r}"))
    timeline = s.timeline or []
    events_at: dict[int, TimelineEvent] = {}
    for k, e in enumerate(timeline):
        where = f"timeline[{k}]"
        if e.thread not in keys:
            problems.append((f"{where}.thread", f"{e.thread!r} is not a thread of this session"))
            continue
        if e.key not in keys[e.thread]:
            problems.append((f"{where}.key", f"{e.key!r} is not a fact of thread {e.thread!r}"))
        if STEP_STATUS[e.kind] != e.status:
            problems.append((f"{where}.status", f"a {e.kind!r} event has status {STEP_STATUS[e.kind]!r}, got {e.status!r}"))
        if e.turn >= len(s.turns):
            problems.append((f"{where}.turn", f"{e.turn} is not a turn of this session (0..{len(s.turns) - 1})"))
            continue
        if e.turn in events_at:
            problems.append((f"{where}.turn", f"turn {e.turn} already has a timeline event (one step a turn)"))
            continue
        events_at[e.turn] = e
        turn = s.turns[e.turn]
        f = turn.fact
        if turn.gold.thread != e.thread:
            problems.append((f"{where}.thread", f"turn {e.turn} belongs to {turn.gold.thread!r}, not {e.thread!r}"))
        elif f is None or (f.key, f.kind) != (e.key, e.kind) or ("value" in f.model_fields_set and f.value != e.value):
            got = "no fact" if f is None else f"fact {f.key!r} {f.kind!r} {f.value!r}"
            problems.append((f"{where}", f"turn {e.turn} has {got}, the event says {e.key!r} {e.kind!r} {e.value!r}"))
    if s.timeline is not None:
        for turn in s.turns:
            if turn.fact is not None and turn.i not in events_at:
                problems.append((f"turns[{turn.i}].fact", "a fact step with no timeline event"))
    ids: set[str] = set()
    for k, p in enumerate(s.probes or []):
        where = f"probes[{k}]"
        if p.id in ids:
            problems.append((f"{where}.id", f"duplicate probe id {p.id!r}"))
        ids.add(p.id)
        bad = False
        for name in ("thread", "source"):
            if getattr(p, name) not in keys:
                problems.append((f"{where}.{name}", f"{getattr(p, name)!r} is not a thread of this session"))
                bad = True
        if bad:
            continue
        if p.key not in keys[p.source]:
            problems.append((f"{where}.key", f"{p.key!r} is not a fact of thread {p.source!r}"))
        if p.thread == p.source:
            problems.append((f"{where}.thread", "the asking thread must differ from the source"))
        if p.after >= len(s.turns):
            problems.append((f"{where}.after", f"{p.after} is not a turn of this session (0..{len(s.turns) - 1})"))
        elif first_turn.get(p.thread, len(s.turns)) > p.after:
            problems.append((f"{where}.thread", f"{p.thread!r} has not started by turn {p.after}"))
        gold = fact_state(timeline, p.source, p.key, p.after)
        if p.gold != gold:
            problems.append((f"{where}.gold", f"the timeline says {gold!r} after turn {p.after}, got {p.gold!r}"))
        for d, decoy in enumerate(p.decoys):
            if decoy == p.gold:
                problems.append((f"{where}.decoys[{d}]", f"a decoy must differ from gold {p.gold!r}"))
    return problems


def check_session(s: Session) -> list[tuple[str, str]]:
    """Checks across the fields of one session; returns ``(field, message)`` for each defect: those
    of :mod:`.session_checks` (threads, turn numbering, styles, gold, judge), written once for
    this and for the scorer's blocks of sessions, then :func:`check_v1`'s."""
    from .session_checks import defects, problems_of, session_arrays  # (it reads this module's vocabularies)

    arrays = session_arrays([s])
    (problems,) = problems_of(arrays, defects(arrays))
    if s.version == "interleave-v1" or s.timeline is not None or s.probes is not None:
        problems += check_v1(s)
    return problems


# --- predictions ---------------------------------------------------------------------------------


def more_cached_than_sent(sent: Any, cached: Any) -> Any:
    """Whether a usage counts more prompt tokens served from the provider's prompt cache than it
    sent (cached ones are part of those sent), which no provider counts: of two counts, or of two
    arrays of them, row by row. The one rule the model layer (``client.usage_of``), a prediction
    row's usage (:class:`RowUsage`), the scorer's arrays and ``llm.prices.Price.cost`` read."""
    return cached > sent


class RowUsage(Record):
    input: int = Field(default=0, **COUNT)
    output: int = Field(default=0, **COUNT)
    cache_hit: int = Field(default=0, **COUNT)
    #: calls of the row's request whose answer reported no token counts: their tokens are not in
    #: the counts above, and the run's cost is unknown
    unreported: int = Field(default=0, **COUNT)

    @field_validator("cache_hit")
    @classmethod
    def _cached_of_sent(cls, cache_hit: int, info: ValidationInfo) -> int:
        # cached tokens are part of those sent: the rule the model layer reads too
        sent = info.data.get("input")
        if sent is not None and more_cached_than_sent(sent, cache_hit):
            raise PydanticCustomError("cached_beyond_sent", "more cached tokens than the {sent} input tokens sent",
                                      {"sent": sent})
        return cache_hit


class PredictionRow(Record):
    session_id: str = Field(min_length=1, **ID)
    i: int = Field(**COUNT)
    #: open-mode systems elsewhere number their topics; a label is a label, so a number is read as
    #: its text (in the validator's core, not a Python hook: this runs for every row scored)
    pred: str = Field(min_length=1, coerce_numbers_to_str=True, **ID)
    mode: Optional[Literal[MODES]] = None  # type: ignore[valid-type]
    policy: Optional[str] = None
    refs: Optional[list[Annotated[str, Field(coerce_numbers_to_str=True)]]] = None
    usage: Optional[RowUsage] = None
    elapsed_ms: Optional[float] = Field(default=None, ge=0, le=MAX_ELAPSED_MS, **STRICT)
    via: Optional[str] = None
    #: the router's calibrated chance that its decision is right
    confidence: Optional[float] = Field(default=None, ge=0, le=1, **STRICT)
    burst: Optional[int] = Field(default=None, ge=1, le=INT64_MAX, **STRICT)
    mixed: Optional[bool] = Field(default=None, **STRICT)
    waited: Optional[bool] = Field(default=None, **STRICT)

    @field_serializer("elapsed_ms")
    def _whole_ms_as_int(self, v: Optional[float]) -> Any:
        # a whole number of milliseconds is written as one (212, not 212.0), as the runner measures it
        return int(v) if v is not None and v.is_integer() else v


# --- manifest --------------------------------------------------------------------------------------


class ManifestCounts(Record):
    sessions: int = Field(default=0, **COUNT)
    messages: int = Field(default=0, **COUNT)
    ambiguous: int = Field(default=0, **COUNT)
    leaks: int = Field(default=0, **COUNT)
    failed: int = Field(default=0, **COUNT)


class ManifestUsage(Record):
    calls: int = Field(default=0, **COUNT)
    cached: int = Field(default=0, **COUNT)
    input_tokens: int = Field(default=0, **COUNT)
    cached_input_tokens: int = Field(default=0, **COUNT)
    output_tokens: int = Field(default=0, **COUNT)
    #: USD at the price recorded beside it (``price``); ``None`` when that price is unknown
    cost_usd: Optional[float] = Field(default=0.0, ge=0, allow_inf_nan=False)


class Manifest(Record):
    version: str
    #: the generator version that wrote the data (``generate.runner.GENERATOR_VERSION``)
    generator: Optional[int] = None
    writer: str
    model: Optional[str] = None
    seed: Optional[int] = Field(default=None, **STRICT)
    options: dict[str, Any] = Field(default_factory=dict)
    counts: ManifestCounts = Field(default_factory=ManifestCounts)
    failed: list[dict[str, Any]] = Field(default_factory=list)
    usage: ManifestUsage = Field(default_factory=ManifestUsage)
    provenance: dict[str, Any] = Field(default_factory=dict)


# --- mid-reply cases ------------------------------------------------------------------------------

#: a case's expected destination as any one value can be checked: text, not empty (that it is
#: ``running``, ``new`` or a topic of the case's catalog, :func:`check_case_file` checks with the
#: catalog at hand); the case file's ``expect`` and the evaluate module's references both are one
MidReplyExpect = Annotated[str, Field(min_length=1)]


class CatalogTopic(Record):
    id: str = Field(min_length=1, **ID)
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
    id: str = Field(min_length=1, **ID)
    lang: str = Field(min_length=1, **ID)
    running: Running
    how: Literal["interjection", "queued"]
    text: str = Field(min_length=1)
    expect: MidReplyExpect
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
