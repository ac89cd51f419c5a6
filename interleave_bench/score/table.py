"""The metric table: every metric of the project, declared once.

Each :class:`Metric` carries what the rest of the code needs to know about a number: its JSON key,
display name, one-line meaning, family, decimals in JSON documents, the kind of 95% interval that
accompanies it, its ranking direction, the doc section that defines it, and (for the pooled
routing, burst and cost figures) its formula as a function of named counts. ``derive`` in
:mod:`.routing`, the intervals in :mod:`.run`, the reports, ``compare``, the leaderboard ranking,
the evaluate modules and ``docs/score.md`` all read this table; a test holds the docs and the table
to each other both ways.

A formula takes a mapping from count name to value and works elementwise on numpy arrays as well
as on floats, so the point estimate and every bootstrap resample use the same formula.

Pure: imports only the standard library and numpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal, Mapping

import numpy as np

Interval = Literal["bootstrap", "wilson", "none"]
#: every family of metrics, in display order
FAMILIES = ("routing", "cost", "burst", "mid_reply", "facts", "cluster", "calibration")
#: what a formula reads: count name -> count (a float or an array of resampled counts)
Counts = Mapping[str, "float | np.ndarray"]


@dataclass(frozen=True)
class Metric:
    key: str  # the JSON key, unique over the table, e.g. "switch_f1"
    display: str  # column header / display name, e.g. "switch F1"
    meaning: str  # one line
    family: str  # one of FAMILIES
    decimals: int | None  # rounding in JSON documents (None: taken as it is)
    interval: Interval  # what kind of 95% interval accompanies it
    higher_is_better: bool | None  # ranking direction (None: not ranked)
    doc: str  # "docs/score.md#switch-f1" (file + anchor documenting it)
    formula: Callable[[Counts], float | np.ndarray | None] | None = None  # from named counts
    #: Wilson intervals: the names of the (successes, trials) counts
    wilson_counts: tuple[str, str] | None = None
    #: the key inside its family's document when it differs from ``key`` (mid-reply rates)
    field: str | None = None
    #: decimals shown in markdown tables (None: the document's own, so that a table shows the very
    #: number its document holds, never that number rounded again; a count taken as it is: none)
    shown: int | None = None
    #: the range every defined value lies in (checked by property tests)
    lo: float = 0.0
    hi: float = 1.0
    #: the function of ``interleave_bench/score/block.py`` (or, for the conversation metrics, of
    #: ``interleave_bench/score/cluster.py``) that computes what its value is taken from
    counts: str | None = None

    def __post_init__(self) -> None:
        if self.shown is None:  # a value taken as it is: a count, shown whole
            object.__setattr__(self, "shown", 0 if self.decimals is None else self.decimals)

    @property
    def json_key(self) -> str:
        """The key of this metric inside its family's document."""
        return self.field or self.key

    @property
    def doc_file(self) -> str:
        return self.doc.split("#", 1)[0]

    @property
    def anchor(self) -> str:
        return self.doc.split("#", 1)[1]


# --- formula helpers (elementwise on floats and arrays) --------------------------------------------


def ratio(num, den, empty: float = np.nan):
    """``num / den`` elementwise, ``empty`` where ``den`` is 0."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = num / den
    return np.where(den > 0, out, empty)


def harmonic(p, r):
    """F1 of precision ``p`` and recall ``r`` elementwise; 0.0 where both are 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = 2 * p * r / (p + r)
    return np.where(p + r > 0, out, 0.0)


def _share(k: str, n: str) -> Callable[[Counts], np.ndarray]:
    return lambda c: ratio(c[k], c[n])


def _tokens(k: str) -> Callable[[Counts], np.ndarray]:
    """Tokens ``k`` per message; undefined (NaN, printed ``–``, JSON ``null``) where a call's
    tokens went unreported (``usage.unreported``): they are unknown, never 0."""
    return lambda c: np.where(c["unreported"] > 0, np.nan, ratio(c[k], c["messages"]))


def _switch_p(c: Counts):
    """Undefined (NaN) without predicted switches."""
    return ratio(c["switch_tp"], c["switch_tp"] + c["switch_fp"])


def _switch_r(c: Counts):
    """Undefined (NaN) without gold switches."""
    return ratio(c["switch_tp"], c["switch_tp"] + c["switch_fn"])


def _switch_f1(c: Counts):
    """Undefined (NaN) when neither side switches; else F1 with an undefined side counted as 0."""
    tp, fp, fn = c["switch_tp"], c["switch_fp"], c["switch_fn"]
    f1 = harmonic(ratio(tp, tp + fp, 0.0), ratio(tp, tp + fn, 0.0))
    return np.where(np.asarray(tp + fp + fn) > 0, f1, np.nan)


def _bcubed_p(c: Counts):
    """Undefined (NaN) without clustered messages."""
    return ratio(c["bcubed_p_sum"], c["bcubed_n"])


def _bcubed_r(c: Counts):
    return ratio(c["bcubed_r_sum"], c["bcubed_n"])


def _bcubed_f1(c: Counts):
    f1 = harmonic(np.nan_to_num(_bcubed_p(c)), np.nan_to_num(_bcubed_r(c)))
    return np.where(np.asarray(c["bcubed_n"]) > 0, f1, np.nan)


SCORE_DOC = "docs/score.md"
MID_REPLY_DOC = "docs/mid_reply.md"


def _doc(key: str, file: str = SCORE_DOC) -> str:
    return f"{file}#{key.replace('_', '-')}"


def _m(key: str, display: str, meaning: str, family: str, decimals: int | None, interval: Interval,
       higher: bool | None, formula=None, *, doc_file: str = SCORE_DOC, **kw) -> Metric:
    return Metric(key, display, meaning, family, decimals, interval, higher, _doc(key, doc_file), formula, **kw)


#: rates as the reference rounds them
RATE = 4
#: topics/thread and threads/topic as the reference rounds them
MEAN_COUNT = 3
#: tokens per message (a tenth of a token is noise already)
TOKENS = 1
#: USD per message (routing costs fractions of a cent per message)
USD = 8

INF = float("inf")

ROUTING_METRICS = (
    _m("accuracy", "accuracy", "strict messages whose mapped label is the gold thread", "routing", RATE,
       "bootstrap", True, _share("strict_correct", "strict"), counts="message_counts"),
    _m("accuracy_lenient", "lenient acc.", "thread messages right, or ambiguous and matching the independent reading",
       "routing", RATE, "bootstrap", True, _share("lenient_correct", "thread_messages"), counts="message_counts"),
    _m("ambiguous_share", "ambiguous share", "thread messages the independent reading disputes", "routing", RATE,
       "wilson", None, lambda c: 1 - ratio(c["strict"], c["thread_messages"]),
       wilson_counts=("ambiguous", "thread_messages"), counts="message_counts"),
    _m("weighted_error", "weighted error", "mean outcome cost over strict messages (pollution costs 3)", "routing",
       RATE, "bootstrap", False, _share("strict_cost", "strict"), hi=3.0, counts="message_counts"),
    _m("oneoff_into_topic", "one-off into topic", "one-off questions sent into a topic that holds work", "routing",
       RATE, "wilson", False, _share("outcome_oneoff_into_topic", "oneoffs"),
       wilson_counts=("outcome_oneoff_into_topic", "oneoffs"), counts="message_counts"),
    _m("switch_precision", "switch precision", "predicted topic switches that are real switches", "routing", RATE,
       "none", True, _switch_p, counts="switch_counts"),
    _m("switch_recall", "switch recall", "real switches the prediction also switches on", "routing", RATE, "none",
       True, _switch_r, counts="switch_counts"),
    _m("switch_f1", "switch F1", "harmonic mean of switch precision and recall", "routing", RATE, "bootstrap", True,
       _switch_f1, counts="switch_counts"),
    _m("topics_per_thread", "topics/thread", "distinct labels a thread received (1.0 is ideal)", "routing",
       MEAN_COUNT, "bootstrap", False, _share("thread_labels_sum", "thread_labels_n"), lo=1.0, hi=INF, counts="cluster_counts"),
    _m("threads_per_topic", "threads/topic", "distinct gold threads a label received (1.0 is ideal)", "routing",
       MEAN_COUNT, "bootstrap", False, _share("label_threads_sum", "label_threads_n"), lo=1.0, hi=INF, counts="cluster_counts"),
    _m("bcubed_precision", "B-cubed precision", "B-cubed precision of labels against gold threads", "routing", RATE,
       "none", True, _bcubed_p, counts="cluster_counts"),
    _m("bcubed_recall", "B-cubed recall", "B-cubed recall of labels against gold threads", "routing", RATE, "none",
       True, _bcubed_r, counts="cluster_counts"),
    _m("bcubed_f1", "B-cubed F1", "harmonic mean of B-cubed precision and recall", "routing", RATE, "bootstrap", True,
       _bcubed_f1, counts="cluster_counts"),
    _m("refs_recall", "refs recall", "messages with gold refs where a predicted ref is one of them", "routing", RATE,
       "wilson", True, _share("refs_hit", "refs_n"), wilson_counts=("refs_hit", "refs_n"), counts="refs_counts"),
)

COST_METRICS = (
    _m("input_tokens_per_message", "input tok/msg",
       "input tokens per message (a row without a call counts zero; unknown where a call's went unreported)",
       "cost", TOKENS, "none", False, _tokens("input_tokens"), hi=INF, counts="cost_counts"),
    _m("output_tokens_per_message", "output tok/msg", "output tokens per message", "cost", TOKENS, "none", False,
       _tokens("output_tokens"), hi=INF, counts="cost_counts"),
    _m("cached_tokens_per_message", "cached tok/msg", "cached input tokens per message", "cost", TOKENS, "none",
       None, _tokens("cached_tokens"), hi=INF, counts="cost_counts"),
    _m("model_calls_share", "model calls share", "messages whose row made a model call", "cost", 3, "none", False,
       _share("calls", "messages"), counts="cost_counts"),
    _m("latency_p50_ms", "latency p50 (ms)", "median latency of model-routed rows", "cost", None, "none", False,
       shown=1, hi=INF, counts="score_block"),
    _m("latency_p90_ms", "latency p90 (ms)", "90th percentile latency of model-routed rows", "cost", None, "none",
       False, shown=1, hi=INF, counts="score_block"),
    _m("cost_usd_per_message", "cost / msg", "USD per message at the recorded price", "cost", USD, "none", False,
       hi=INF, counts="cost_counts"),
)

#: the burst table: three disjoint groups of strict messages, replies held, calls per message
BURST_METRICS = (
    _m("burst_alone", "alone", "accuracy of strict messages routed alone (burst = 1)", "burst", RATE, "wilson", True,
       _share("alone_correct", "alone_n"), wilson_counts=("alone_correct", "alone_n"), field="alone", counts="burst_counts"),
    _m("burst_one_thread", "in a burst", "accuracy in a burst that stayed on one thread (burst > 1, not mixed)",
       "burst", RATE, "wilson", True, _share("in_burst_correct", "in_burst_n"),
       wilson_counts=("in_burst_correct", "in_burst_n"), field="in_burst", counts="burst_counts"),
    _m("burst_mixed", "in a burst across threads", "accuracy in a burst across threads (burst > 1, mixed)", "burst",
       RATE, "wilson", True, _share("mixed_correct", "mixed_n"), wilson_counts=("mixed_correct", "mixed_n"),
       field="mixed", counts="burst_counts"),
    _m("burst_waited_share", "replies held", "rows with burst whose reply waited for more messages", "burst", RATE,
       "none", None, _share("burst_waited", "burst_rows"), field="waited_share", counts="burst_counts"),
    _m("burst_model_calls_per_message", "model calls/msg", "model calls per message of a burst run", "burst", 3,
       "none", False, _share("calls", "messages"), hi=INF, field="model_calls_per_message", counts="cost_counts"),
)


def _mid(name: str, display: str, meaning: str, higher: bool, k: str, n: str) -> Metric:
    return _m(f"mid_reply_{name}", display, meaning, "mid_reply", RATE, "wilson", higher, _share(k, n),
              doc_file=MID_REPLY_DOC, field=name, wilson_counts=(k, n))


#: the mid-reply rates over the counts of :func:`interleave_bench.midreply.metrics.counts`
MID_REPLY_METRICS = (
    _mid("accuracy", "accuracy", "cases sent to their expected destination", True, "correct", "n"),
    _mid("right_side", "right side", "cases kept exactly when they belong with the running work", True,
         "same_side", "n"),
    _mid("mixed_in", "mixed in", "cases that belong elsewhere but were kept with the running work", False,
         "mixed", "n_elsewhere"),
    _mid("split_off", "split off", "changes to the running work sent elsewhere", False, "split", "n_running"),
    _mid("wrong_elsewhere", "wrong elsewhere", "cases sent elsewhere but not to the expected place", False,
         "wrong_elsewhere", "n_elsewhere"),
)

#: means of token and character counts keep 1 decimal: finer says nothing about a prompt's size
MEAN_DECIMALS = 1


def _count_share(num: str, den: str) -> Callable[[Mapping[str, float]], float | None]:
    """``counts[num] / counts[den]`` for plain count dicts (facts summaries), None over nothing."""

    def f(counts: Mapping[str, float]) -> float | None:
        d = counts.get(den, 0)
        return counts.get(num, 0) / d if d else None

    return f


def _rate(num: str, den: str) -> dict:
    """A facts rate's formula and the (successes, trials) counts of its Wilson interval."""
    return {"formula": _count_share(num, den), "wilson_counts": (num, den)}


FACTS_METRICS: tuple[Metric, ...] = (
    Metric("answer_accuracy", "accuracy", "share of probes a strategy answered correctly (current value, or undecided when unsettled)",
           "facts", RATE, "wilson", True, "docs/facts.md#answer-accuracy", **_rate("correct", "n")),
    Metric("stale_answers", "stale", "share of stale probes answered with a superseded value",
           "facts", RATE, "wilson", False, "docs/facts.md#stale-answers", **_rate("stale_on_stale", "stale_probes")),
    Metric("proposal_answers", "proposal", "share of probes answered with a value that was only proposed",
           "facts", RATE, "wilson", False, "docs/facts.md#proposal-answers", **_rate("proposal", "n")),
    Metric("context_tokens", "context tokens", "mean input tokens of a strategy's answer call",
           "facts", MEAN_DECIMALS, "none", None, "docs/facts.md#context-tokens", _count_share("context_tokens_sum", "n"), hi=INF),
    Metric("notes_chars", "notes chars", "mean characters of the notes a strategy added before the question",
           "facts", MEAN_DECIMALS, "none", None, "docs/facts.md#notes-chars", _count_share("notes_chars_sum", "n"), hi=INF),
    Metric("facts_only_right", "facts-only right", "probes both answered where facts was right and summary wrong",
           "facts", None, "none", True, "docs/facts.md#facts-only-right", hi=INF),
    Metric("summary_only_right", "summary-only right", "probes both answered where summary was right and facts wrong",
           "facts", None, "none", False, "docs/facts.md#summary-only-right", hi=INF),
    Metric("delivered_proposal", "delivered proposals", "share of delivered fact lines whose value was only ever proposed",
           "facts", RATE, "wilson", False, "docs/facts.md#delivered-proposal", **_rate("proposal", "lines")),
    Metric("delivered_current", "delivered current", "share of delivered fact lines whose value is current",
           "facts", RATE, "wilson", True, "docs/facts.md#delivered-current", **_rate("current", "lines")),
    Metric("route_accuracy_without", "routing acc. without", "routing accuracy with no facts offered",
           "facts", RATE, "wilson", True, "docs/facts.md#route-accuracy-without", **_rate("right_without", "requests")),
    Metric("route_accuracy_with", "routing acc. with", "routing accuracy with facts offered",
           "facts", RATE, "wilson", True, "docs/facts.md#route-accuracy-with", **_rate("right_with", "requests")),
    Metric("route_changed", "changed", "share of requests offered facts whose topic changed when offered",
           "facts", RATE, "wilson", False, "docs/facts.md#route-changed", **_rate("changed", "offered")),
    Metric("route_error_rate", "routing errors", "share of routing requests with a failed decision",
           "facts", RATE, "wilson", False, "docs/facts.md#route-error-rate", **_rate("errors", "requests")),
    Metric("imports_per_request", "imports/request", "facts the router brought in, per routing request",
           "facts", 3, "none", None, "docs/facts.md#imports-per-request", _count_share("imports", "requests")),
)

#: the field's conversation-disentanglement metrics, pooled over sessions (score/cluster.py, hi=INF);
#: rates have RATE decimals like every rate of the project
CLUSTER_METRICS = (
    Metric("one_to_one", "1-1", "share of messages covered by the best one-to-one matching of predicted to gold conversations",
           "cluster", RATE, "none", True, "docs/score.md#one-to-one", counts="contingency_sums"),
    Metric("vi_scaled", "1−VI/log₂N", "1 minus the variation of information in bits over log2 of the number of messages",
           "cluster", RATE, "none", True, "docs/score.md#vi-scaled", counts="contingency_sums"),
    Metric("ari", "ARI", "adjusted Rand index of the predicted against the gold conversations",
           "cluster", RATE, "none", True, "docs/score.md#ari", lo=-1.0, counts="contingency_sums"),
    Metric("shen_f1", "Shen F1", "each gold conversation's best F1 against a predicted one, weighted by its size",
           "cluster", RATE, "none", True, "docs/score.md#shen-f1", counts="contingency_sums"),
    Metric("exact_precision", "exact P", "share of predicted multi-message conversations equal to a gold one",
           "cluster", RATE, "none", True, "docs/score.md#exact-precision", counts="contingency_sums"),
    Metric("exact_recall", "exact R", "share of gold multi-message conversations equal to a predicted one",
           "cluster", RATE, "none", True, "docs/score.md#exact-recall", counts="contingency_sums"),
    Metric("exact_f1", "exact F1", "harmonic mean of exact-match precision and recall",
           "cluster", RATE, "none", True, "docs/score.md#exact-f1", counts="contingency_sums"),
)

#: the calibration of the rows' ``confidence`` (the score file's ``calibration`` object, score/calibration.py)
CALIBRATION_METRICS = (
    _m("ece", "ECE", "expected calibration error of the rows' confidence over 10 equal-width bins (strict messages)",
       "calibration", RATE, "none", False, counts="calibration_pairs"),
)

#: every metric of the project, in display order
METRICS: dict[str, Metric] = {m.key: m for m in (*ROUTING_METRICS, *COST_METRICS, *BURST_METRICS, *MID_REPLY_METRICS,
                                                 *FACTS_METRICS, *CLUSTER_METRICS, *CALIBRATION_METRICS)}


#: the headline routing metrics: the columns of the comparison table and of a leaderboard row
HEADLINE = ("accuracy", "accuracy_lenient", "weighted_error", "oneoff_into_topic", "topics_per_thread",
            "threads_per_topic", "refs_recall", "switch_f1", "bcubed_f1")


def metric(key: str) -> Metric:
    """The table entry of ``key``; a ValueError naming the known keys when there is none."""
    try:
        return METRICS[key]
    except KeyError:
        raise ValueError(f"unknown metric {key!r}; the metric table (interleave_bench/score/table.py) has "
                         f"{', '.join(METRICS)}") from None


def rounded(key: str, value: float | None) -> float | None:
    """``value`` as JSON documents hold it: rounded per the entry's decimals; ``None`` if undefined (None/NaN/inf)."""
    if value is None or not np.isfinite(value):
        return None
    decimals = metric(key).decimals
    return round(float(value), decimals) if decimals is not None else float(value)


def rounded_interval(key: str, interval: tuple[float, float] | None) -> list[float] | None:
    """An interval as JSON documents hold it: both ends rounded like the metric (4 places if taken as is)."""
    if interval is None:
        return None
    decimals = metric(key).decimals
    decimals = RATE if decimals is None else decimals
    return [round(float(interval[0]), decimals), round(float(interval[1]), decimals)]


def family(name: str) -> tuple[Metric, ...]:
    """The metrics of family ``name``, in display order (ValueError for an unknown family)."""
    if name not in FAMILIES:
        raise ValueError(f"unknown metric family {name!r}; expected one of {', '.join(FAMILIES)}")
    return tuple(m for m in METRICS.values() if m.family == name)


def with_interval(kind: Interval, name: str | None = None) -> tuple[Metric, ...]:
    """The metrics (of family ``name``, if given) whose interval is of ``kind``."""
    return tuple(m for m in METRICS.values() if m.interval == kind and (name is None or m.family == name))


def rank_key(key: str, value: float | None) -> tuple[bool, float]:
    """A sort key putting better values of ``key`` first and missing ones last."""
    higher = metric(key).higher_is_better
    if higher is None:
        raise ValueError(f"metric {key!r} is not ranked (its direction is not declared)")
    if value is None:
        return (True, 0.0)
    return (False, -value if higher else value)
