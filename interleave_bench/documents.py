"""Typed result documents: what the project writes after a run, one pydantic model per format.

- :class:`ScoreDocument` (``<run>.score.json``, format ``interleave-score-v1``), and
  :class:`TracedScore`, the same with the data and predictions fingerprints the leaderboard needs;
- :class:`RunRecord` (``<run>.run.json`` beside a predictions file, ``interleave-run-v1``);
- :class:`LeaderboardRow` (one row of the leaderboard dataset, ``interleave-board-row-v1``);
- :class:`MidReplySummary` (the mid-reply ``.score.json``, ``interleave-mid-reply-v1``).

Writers build these models and dump them; readers ``model_validate`` what they read, and
:func:`document_problem` turns a validation error into one line naming the file and field. The
metric objects are maps from metric key to number: which keys there are is the metric table's
business (``interleave_bench.score.table``), which sits above this layer. Every model keeps
unknown fields (a newer writer's additions survive a read and write).

This is the schema layer: it imports only ``schema`` and ``errors``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .errors import InputError, clip
from .redaction import redact_secrets
from .schema import SCORE_SPLITS, MODES, validation_problems

SCORE_FORMAT = "interleave-score-v1"
RUN_FORMAT = "interleave-run-v1"
BOARD_ROW_FORMAT = "interleave-board-row-v1"
MID_REPLY_FORMAT = "interleave-mid-reply-v1"
#: the ``kind`` of a facts summary (the ``.score.json`` beside a facts results file): its ``format``
#: is a number (``facts.results.SUMMARY_FORMAT``), so its kind names it
FACTS_SUMMARY_KIND = "facts"


def document_head_of(value: str, field: str = "format") -> "Callable[[bytes], bool]":
    """A test of a file's first bytes (:func:`~interleave_bench.errors.require_replaceable`'s
    ``is_kind``) for a JSON document whose ``field`` (its ``format``, or what else names its kind)
    is the string ``value``: what a command writing such a document may write over."""
    pattern = re.compile(rb'"' + re.escape(field.encode()) + rb'"\s*:\s*"' + re.escape(value.encode()) + rb'"')

    def is_kind(head: bytes) -> bool:
        return head.lstrip().startswith(b"{") and pattern.search(head) is not None

    return is_kind


#: a score document (``score --out``, and the score file beside each predictions file)
is_score_head = document_head_of(SCORE_FORMAT)
#: a run record (``<run>.run.json`` beside the predictions ``route`` writes)
is_run_head = document_head_of(RUN_FORMAT)
#: a mid-reply summary (the ``.score.json`` beside a mid-reply results file)
is_mid_reply_head = document_head_of(MID_REPLY_FORMAT)


class Document(BaseModel):
    """Base of every result document: unknown fields are kept; :meth:`dump` gives plain JSON data."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    def dump(self) -> dict[str, Any]:
        """The document as plain JSON data, fields in declaration order, unknown fields last."""
        return self.model_dump(mode="json")


def document_problem(path: str, exc: ValidationError, what: str) -> InputError:
    """One line for everything wrong with a document: the first field and problem, and how many more."""
    problems = validation_problems(exc)
    fld, msg = problems[0]
    if len(problems) > 1:
        others = ", ".join(f for f, _ in problems[1:4]) + (", ..." if len(problems) > 4 else "")
        msg += f" (and {len(problems) - 1} more problem{'s' if len(problems) > 2 else ''}: {others})"
    return InputError(path, None, fld, f"{msg}; not {what}")


def validate_document(model: type[BaseModel], data: Any, path: str, what: str) -> Any:
    """``model.model_validate(data)``; raises one :class:`InputError` naming ``path`` and the field."""
    if not isinstance(data, dict):
        raise InputError(path, None, None, f"expected a JSON object: {what}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise document_problem(path, exc, what) from None


# --- the score document ---------------------------------------------------------------------------

Number = Optional[float]
Interval = Optional[list[float]]

#: a document's metric values by key (null where a metric is undefined)
Metrics = dict[str, Number]


class ScoreCounts(Document):
    sessions: int
    messages: int
    thread_messages: int
    strict: int
    ambiguous: int
    oneoffs: int
    refs_messages: int
    rows: int
    rows_scored: int
    missing_rows: int
    #: rows labelled ``ERROR`` (the router's failed decisions); None in a file written before it was counted
    error_rows: Optional[int] = None
    model_calls: int
    latency_rows: int
    rows_outside_split: int
    sessions_without_rows: int
    unknown_session_rows: int
    unknown_turn_rows: int
    duplicate_rows: int


class Bucket(Document):
    """An accuracy over a group of strict messages, with its Wilson interval."""

    accuracy: Number
    correct: int
    n: int
    interval: Interval


class BurstSummary(Document):
    rows: int
    alone: Bucket
    in_burst: Bucket
    mixed: Bucket
    waited_share: Number
    model_calls_per_message: Number


class ReliabilityBin(Document):
    """One equal-width bin of confidence: its range, messages, mean confidence and accuracy (None when empty)."""

    lo: float = Field(ge=0, le=1)
    hi: float = Field(ge=0, le=1)
    n: int = Field(ge=0)
    confidence: Number = Field(ge=0, le=1)
    accuracy: Number = Field(ge=0, le=1)
    gap: Number = Field(ge=0, le=1)


class CalibrationSummary(Document):
    """How well the rows' ``confidence`` says how often they are right (docs/score.md#calibration):
    over the ``messages`` strict messages whose row carries one, of ``strict``."""

    ece: float = Field(ge=0, le=1)
    bins: int = Field(ge=1)
    messages: int = Field(ge=1)
    strict: int = Field(ge=0)
    confidence: float = Field(ge=0, le=1)
    accuracy: float = Field(ge=0, le=1)
    reliability: list[ReliabilityBin]

    @model_validator(mode="after")
    def _bins_add_up(self) -> "CalibrationSummary":
        if len(self.reliability) != self.bins:
            raise ValueError(f"reliability has {len(self.reliability)} bins, not the {self.bins} bins says")
        if sum(b.n for b in self.reliability) != self.messages:
            raise ValueError("the reliability bins' messages do not add up to messages")
        if self.messages > self.strict:
            raise ValueError("more messages with a confidence than strict messages")
        return self


class SessionLine(Document):
    session_id: str
    lang: str
    messages: int
    strict: int
    accuracy: Number
    weighted_error: Number
    polluting: int
    errors: int
    missing_rows: int


class Price(Document):
    """The price a cost figure was computed with (USD per million tokens) and where it came from."""

    model: Optional[str]
    input: float = Field(ge=0, allow_inf_nan=False)
    cached_input: float = Field(ge=0, allow_inf_nan=False)
    output: float = Field(ge=0, allow_inf_nan=False)
    source: str


class ScoreProvenance(Document):
    bootstrap: int
    seed: int
    package_version: Optional[str] = None
    git_commit: Optional[str] = None
    data_sha256: Optional[str] = None
    predictions_sha256: Optional[str] = None
    price: Optional[Price] = None


#: why a score document's ``cost_usd_per_message`` is null (its ``cost_null_reason``), with what a
#: table says in its place (docs/score.md)
COST_NULL_REASONS = {
    "no_messages": "no message scored",
    "no_price": "no price for the model (set EVAL_PRICES)",
    "unreported": "the provider reported no token counts for some calls",
    "too_large": "too large a number for the tokens at that price",
}


class InSample(Document):
    """Data the fit of the weights that routed a run read: the fit's name for the corpus, its
    split, the offline writer's seed (generated data), the weights' fingerprint."""

    corpus: str = Field(min_length=1)
    split: str = Field(min_length=1)
    seed: Optional[int] = None
    weights: str = Field(min_length=1)


class ScoreDocument(Document):
    """``<run>.score.json``: every routing metric, intervals, counts, breakdowns and provenance."""

    format: Literal["interleave-score-v1"] = SCORE_FORMAT
    system: str = Field(min_length=1)
    mode: Literal[MODES]  # type: ignore[valid-type]
    policy: Optional[str]
    model: Optional[str]
    split: Literal[SCORE_SPLITS]  # type: ignore[valid-type]
    metrics: Metrics
    intervals: dict[str, Interval]
    counts: ScoreCounts
    outcomes: dict[str, int]
    breakdowns: dict[str, dict[str, Bucket]]
    burst: Optional[BurstSummary]
    cost_usd_per_message: Number
    #: why ``cost_usd_per_message`` is null (a key of :data:`COST_NULL_REASONS`); null beside a
    #: cost, and in files written before it existed
    cost_null_reason: Optional[Literal[tuple(COST_NULL_REASONS)]] = None  # type: ignore[valid-type]
    #: open mode: the conversation-disentanglement metrics (:mod:`interleave_bench.score.cluster`)
    cluster: Optional[dict[str, Any]] = None
    #: the calibration of the rows' ``confidence`` (null: no strict message has one; absent in
    #: files written before it existed)
    calibration: Optional[CalibrationSummary] = None
    #: the fit's data the run is scored on, for a run of the ``local`` weights (docs/score.md#in-sample);
    #: null: not recognised as such (absent in files written before it existed)
    in_sample: Optional[InSample] = None
    not_scored: list[dict[str, Any]]
    #: the ``not scored:`` line printed after the table, naming every session and row left out
    not_scored_line: Optional[str] = None  # absent in files written before it existed
    per_session: list[SessionLine]
    provenance: ScoreProvenance


class TracedProvenance(ScoreProvenance):
    """Provenance the leaderboard can trace: both fingerprints present."""

    data_sha256: str = Field(min_length=1)
    predictions_sha256: str = Field(min_length=1)


class TracedScore(ScoreDocument):
    """A score document the leaderboard accepts: one scored from files (``interleave-bench score``)."""

    provenance: TracedProvenance


def read_score_document(path: str, data: Any, *, traced: bool = False) -> ScoreDocument:
    """A score file's content as a :class:`ScoreDocument` (:class:`TracedScore` when ``traced``).

    Raises one :class:`InputError` naming the file and the first bad field.
    """
    model = TracedScore if traced else ScoreDocument
    what = ("a traceable score file (score it with `interleave-bench score` so its provenance holds the data "
            "and predictions fingerprints)" if traced else "a score file of this package")
    return validate_document(model, data, path, what)


# --- the run record -------------------------------------------------------------------------------


class RunCounts(Document):
    sessions: int
    resumed_sessions: int
    messages: int
    errors: int
    clarify: int
    fallback: int
    rules: int


class RunUsage(Document):
    """A run record's model usage: calls and paid tokens of every run that wrote its file, their
    cost at ``price`` (the figures and where they came from), ``None`` when calls were paid at a
    price that is unknown (``llm.client.usage_record``). ``fake_answers``: answers, paid or from
    the cache, the project's fake model gave under the run's model name (its server marks each one;
    ``llm.client.RunStats.fake_answers``), 0 in records written before it was counted."""

    calls: int = Field(default=0, ge=0)
    cached: int = Field(default=0, ge=0)
    failed: int = Field(default=0, ge=0)
    input_tokens: int = Field(default=0, ge=0)
    cached_input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    fake_answers: int = Field(default=0, ge=0)
    cost_usd: Optional[float] = Field(default=None, ge=0, allow_inf_nan=False)
    price: Optional[Price] = None  # absent in records written before it existed
    #: the counts leave out calls paid for the file that no record kept (a run stopped by ``kill -9``
    #: after its first row, or one resumed from a record holding no usage): they are a floor, and
    #: ``cost_usd`` is unknown (``None``), never what the counted calls alone cost
    uncounted: bool = False
    #: paid calls whose answer reported no token counts (``llm.client.Usage.unreported``): their
    #: tokens are not in the counts, and ``cost_usd`` is unknown (``None``)
    unreported: int = Field(default=0, ge=0)


def run_record_path(predictions: Path) -> Path:
    """``x.jsonl`` -> ``x.run.json``: the :class:`RunRecord` beside a predictions file."""
    if predictions.suffix == ".jsonl":
        return predictions.with_suffix(".run.json")
    return predictions.with_name(predictions.name + ".run.json")


class RunRecord(Document):
    """``<run>.run.json``: what made a predictions file (options, data fingerprint) and, once
    complete, its counts, usage and provenance. A record written before ``format`` existed reads
    as this version.
    """

    format: Literal["interleave-run-v1"] = RUN_FORMAT
    predictions: str
    data: str
    data_sha256: str
    options: dict[str, Any]
    complete: bool = False
    counts: Optional[RunCounts] = None
    usage: Optional[RunUsage] = None
    provenance: Optional[dict[str, Any]] = None
    #: ``{session_id: digest}`` of what the router saw of each session it routed
    #: (:func:`~interleave_bench.route.digest.conversation_digest`); absent in older records
    conversation_digests: Optional[dict[str, str]] = None

    def same_run(self, other: "RunRecord") -> Optional[str]:
        """``None`` when ``other`` made its file from the same data and options, else what differs."""
        if self.data_sha256 != other.data_sha256:
            return "data"
        mine = _as_written(self.options)  # ``other`` was read from its file: compare like with like
        if mine != other.options:
            for key, what in _NAMED_OPTIONS:
                if _without(mine, key) == _without(other.options, key):
                    return what
            return f"options ({_option_changes(other.options, mine)})"
        return None


#: the run record's option holding the SHA-256 of a plug-in router's source file
ROUTER_CODE = "router_code"
#: the run record's option holding the SHA-256 of the settings of a router handed in from Python
ROUTER_STATE = "router_state"
#: the run record's option holding the fingerprint of the ``local`` router's weights (``local``, and
#: ``hybrid`` with its ``local`` fast path): a resume after a refit is another run
LOCAL_WEIGHTS = "local_weights"
#: the options a refused resume names when they alone differ, with what that difference means
_NAMED_OPTIONS = (
    (ROUTER_CODE, "router code (its class's file or a module it imports changed)"),
    (ROUTER_STATE, "router settings (its attributes hold other values)"),
    (LOCAL_WEIGHTS, "weights of the local router (a refit, or another release's)"),
)


def _without(options: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in options.items() if k != key}


def _as_written(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` as a run record's file holds them: every text written is redacted
    (:func:`~interleave_bench.io.atomic_write_parts`), so a secret of the environment in a router
    argument is ``[redacted]`` there, and the same options must compare equal to it."""
    text = json.dumps(options, ensure_ascii=False)
    redacted = redact_secrets(text)
    return options if redacted == text else json.loads(redacted)


#: options a refused resume names with their values, and the longest value it shows
_CHANGES_SHOWN, _VALUE_SHOWN = 3, 40
_ABSENT = object()


def _option_changes(before: dict[str, Any], now: dict[str, Any]) -> str:
    """The options that differ, as ``key: old now new`` (a fingerprint by its key alone; an option
    one side lacks as ``missing``). Values are redacted whole before they are cut short, so no part
    of a secret is shown."""
    def shown(value: Any) -> str:
        return "missing" if value is _ABSENT else clip(repr(value), _VALUE_SHOWN)

    keys = [k for k in sorted(set(before) | set(now)) if before.get(k, _ABSENT) != now.get(k, _ABSENT)]
    named = dict(_NAMED_OPTIONS)
    parts = [k if k in named else f"{k}: {shown(before.get(k, _ABSENT))} now {shown(now.get(k, _ABSENT))}"
             for k in keys]
    return "; ".join(parts[:_CHANGES_SHOWN]) + ("; ..." if len(parts) > _CHANGES_SHOWN else "")


# --- the leaderboard row --------------------------------------------------------------------------


class LeaderboardRow(Document):
    """One row of the leaderboard dataset: the run's identity and provenance, declared here, and
    one column per headline metric (``<m>``, ``<m>_lo``, ``<m>_hi``) and cost figure, numbers or
    null (which columns there are is the leaderboard's list, from the metric table).
    """

    format: str = BOARD_ROW_FORMAT
    #: ``routing`` (a score file), ``mid_reply`` or ``shared_facts`` (a summary)
    kind: str = "routing"
    system: str = Field(min_length=1)
    policy: Optional[str]
    model: Optional[str]
    mode: str
    split: str
    data_repo: Optional[str]
    data_revision: str
    #: the commit the claimed data revision resolved to (filled in by ``leaderboard add``)
    data_commit: Optional[str] = None
    #: the config of the data revision the run was scored on (v0, v1, ...), when known: rows of
    #: different configs of one revision are ranked apart
    data_config: Optional[str] = None
    data_sha256: str
    predictions_sha256: str
    #: the run's rows, in any order or layout: SHA-256 over each row's canonical JSON, sorted (set
    #: by ``leaderboard add``; one run is one row however its file is written)
    rows_sha256: Optional[str] = None
    #: a routing run's decisions, whatever else its rows say: SHA-256 over each turn's label and
    #: refs (set by ``leaderboard add``; null on rows published before it was recorded, and on summaries)
    decisions_sha256: Optional[str] = None
    sessions: Optional[int]
    messages: Optional[int]
    package_version: Optional[str]
    git_commit: Optional[str]
    scored: Optional[str]
    provenance: str
    date: Optional[str] = None
    publication: Optional[str] = None

    @model_validator(mode="after")
    def _metric_columns_are_numbers(self) -> "LeaderboardRow":
        for name, value in (self.__pydantic_extra__ or {}).items():
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                raise ValueError(f"{name}: expected a number or null, got {value!r}")
        return self


# --- the mid-reply summary ------------------------------------------------------------------------


class MidReplyRate(Document):
    value: Number
    k: int
    n: int
    ci95: Interval


class MidReplyHeadline(Document):
    """Counts and one rate per mid-reply metric (the rates are the metric table's mid-reply family)."""

    n: int
    n_running: int
    n_elsewhere: int

    @model_validator(mode="after")
    def _rates(self) -> "MidReplyHeadline":
        extra = self.__pydantic_extra__ or {}
        for name, value in list(extra.items()):
            if not name.startswith("by_"):
                extra[name] = MidReplyRate.model_validate(value)
        return self


class MidReplyMetrics(MidReplyHeadline):
    by_lang: dict[str, MidReplyHeadline]
    by_how: dict[str, MidReplyHeadline]
    by_expect: dict[str, MidReplyHeadline]
    by_tag: dict[str, MidReplyHeadline]


class MidReplySummary(Document):
    """The mid-reply ``.score.json`` beside a results file."""

    format: Literal["interleave-mid-reply-v1"] = MID_REPLY_FORMAT
    kind: Literal["mid-reply"] = "mid-reply"
    policy: str
    model: Optional[str]
    dry_run: bool
    versions: dict[str, Optional[str]]
    cases: dict[str, Any]
    results: dict[str, Any]
    decisions: dict[str, int]
    metrics: MidReplyMetrics
    usage: dict[str, Any]
    provenance: dict[str, Any]
