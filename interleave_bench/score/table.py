"""The metric table: every metric the project reports, declared once.

Each :class:`Metric` entry carries its JSON key, display name, meaning, family, rounding, interval
kind, ranking direction and the doc anchor that defines it; reports, documents and docs read the
entry instead of repeating it. Pure: imports only the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal, Mapping

Interval = Literal["bootstrap", "wilson", "none"]


@dataclass(frozen=True)
class Metric:
    key: str                      # the JSON key, e.g. "switch_f1"
    display: str                  # column header / display name, e.g. "switch F1"
    meaning: str                  # one line
    family: str                   # "routing" | "burst" | "cost" | "mid_reply" | "facts" | "cluster"
    decimals: int | None          # rounding in JSON documents (None: taken as it is)
    interval: Interval            # what kind of 95% interval accompanies it
    higher_is_better: bool | None # ranking direction (None: not ranked)
    doc: str                      # "docs/score.md#switch-f1" (file + anchor documenting it)
    formula: Callable[[Mapping[str, float]], float | None] | None = None  # from named counts


#: rates in JSON documents keep 4 decimals, as the reference writes them
RATE_DECIMALS = 4
#: means of token and character counts keep 1 decimal: finer says nothing about a prompt's size
MEAN_DECIMALS = 1


def _share(num: str, den: str) -> Callable[[Mapping[str, float]], float | None]:
    """``counts[num] / counts[den]``, None over nothing."""

    def f(counts: Mapping[str, float]) -> float | None:
        d = counts.get(den, 0)
        return counts.get(num, 0) / d if d else None

    return f


FACTS_METRICS: tuple[Metric, ...] = (
    Metric("answer_accuracy", "accuracy", "share of probes a strategy answered correctly (current value, or undecided when unsettled)",
           "facts", RATE_DECIMALS, "wilson", True, "docs/facts.md#answer-accuracy", _share("correct", "n")),
    Metric("stale_answers", "stale", "share of stale probes answered with a superseded value",
           "facts", RATE_DECIMALS, "wilson", False, "docs/facts.md#stale-answers", _share("stale_on_stale", "stale_probes")),
    Metric("proposal_answers", "proposal", "share of probes answered with a value that was only proposed",
           "facts", RATE_DECIMALS, "wilson", False, "docs/facts.md#proposal-answers", _share("proposal", "n")),
    Metric("context_tokens", "context tokens", "mean input tokens of a strategy's answer call",
           "facts", MEAN_DECIMALS, "none", None, "docs/facts.md#context-tokens", _share("context_tokens_sum", "n")),
    Metric("notes_chars", "notes chars", "mean characters of the notes a strategy added before the question",
           "facts", MEAN_DECIMALS, "none", None, "docs/facts.md#notes-chars", _share("notes_chars_sum", "n")),
    Metric("facts_only_right", "facts-only right", "probes both answered where facts was right and summary wrong",
           "facts", None, "none", True, "docs/facts.md#facts-only-right"),
    Metric("summary_only_right", "summary-only right", "probes both answered where summary was right and facts wrong",
           "facts", None, "none", False, "docs/facts.md#summary-only-right"),
    Metric("delivered_proposal", "delivered proposals", "share of delivered fact lines whose value was only ever proposed",
           "facts", RATE_DECIMALS, "wilson", False, "docs/facts.md#delivered-proposal", _share("proposal", "lines")),
    Metric("delivered_current", "delivered current", "share of delivered fact lines whose value is current",
           "facts", RATE_DECIMALS, "wilson", True, "docs/facts.md#delivered-current", _share("current", "lines")),
    Metric("route_accuracy_without", "routing acc. without", "routing accuracy with no facts offered",
           "facts", RATE_DECIMALS, "wilson", True, "docs/facts.md#route-accuracy", _share("right_without", "requests")),
    Metric("route_accuracy_with", "routing acc. with", "routing accuracy with facts offered",
           "facts", RATE_DECIMALS, "wilson", True, "docs/facts.md#route-accuracy", _share("right_with", "requests")),
    Metric("route_changed", "changed", "share of requests offered facts whose topic changed when offered",
           "facts", RATE_DECIMALS, "wilson", False, "docs/facts.md#route-changed", _share("changed", "offered")),
    Metric("route_error_rate", "routing errors", "share of routing requests with a failed decision",
           "facts", RATE_DECIMALS, "wilson", False, "docs/facts.md#route-error-rate", _share("errors", "requests")),
    Metric("imports_per_request", "imports/request", "facts the router brought in, per routing request",
           "facts", 3, "none", None, "docs/facts.md#imports-per-request", _share("imports", "requests")),
)

#: the field's conversation-disentanglement metrics, pooled over sessions (score/cluster.py);
#: rates have 4 decimals like every rate of the project
CLUSTER_METRICS = (
    Metric("one_to_one", "1-1", "share of messages covered by the best one-to-one matching of predicted to gold conversations",
           "cluster", 4, "none", True, "docs/score.md#one-to-one"),
    Metric("vi_scaled", "1−VI/log₂N", "1 minus the variation of information in bits over log2 of the number of messages",
           "cluster", 4, "none", True, "docs/score.md#vi-scaled"),
    Metric("ari", "ARI", "adjusted Rand index of the predicted against the gold conversations",
           "cluster", 4, "none", True, "docs/score.md#ari"),
    Metric("shen_f1", "Shen F1", "each gold conversation's best F1 against a predicted one, weighted by its size",
           "cluster", 4, "none", True, "docs/score.md#shen-f1"),
    Metric("exact_precision", "exact P", "share of predicted multi-message conversations equal to a gold one",
           "cluster", 4, "none", True, "docs/score.md#exact-match"),
    Metric("exact_recall", "exact R", "share of gold multi-message conversations equal to a predicted one",
           "cluster", 4, "none", True, "docs/score.md#exact-match"),
    Metric("exact_f1", "exact F1", "harmonic mean of exact-match precision and recall",
           "cluster", 4, "none", True, "docs/score.md#exact-match"),
)

#: every metric of the project, in display order
METRICS: dict[str, Metric] = {m.key: m for m in (*CLUSTER_METRICS, *FACTS_METRICS)}


def metric(key: str) -> Metric:
    """The table entry of ``key``; raises ValueError naming the known keys when there is none."""
    try:
        return METRICS[key]
    except KeyError:
        raise ValueError(f"unknown metric {key!r}; known: {', '.join(METRICS)}") from None


def rounded(key: str, value: float | None) -> float | None:
    """``value`` rounded per the entry's decimals (None stays None; no decimals: as it is)."""
    if value is None:
        return None
    d = metric(key).decimals
    return value if d is None else round(float(value), d)


def family(name: str) -> tuple[Metric, ...]:
    """The entries of one family, in display order."""
    return tuple(m for m in METRICS.values() if m.family == name)
