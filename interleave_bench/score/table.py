"""The metric table: one entry per metric, which reports, leaderboards, comparisons and docs read.

Pure: imports only the standard library. Each :class:`Metric` names its JSON key, display name,
meaning, family, rounding, kind of interval, ranking direction and the doc anchor defining it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal, Mapping

Interval = Literal["bootstrap", "wilson", "none"]


@dataclass(frozen=True)
class Metric:
    key: str  # the JSON key, e.g. "switch_f1"
    display: str  # column header / display name, e.g. "switch F1"
    meaning: str  # one line
    family: str  # "routing" | "burst" | "cost" | "mid_reply" | "facts" | "cluster"
    decimals: int | None  # rounding in JSON documents (None: taken as it is)
    interval: Interval  # what kind of 95% interval accompanies it
    higher_is_better: bool | None  # ranking direction (None: not ranked)
    doc: str  # "docs/score.md#switch-f1" (file + anchor documenting it)
    formula: Callable[[Mapping[str, float]], float | None] | None = None  # from named counts


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

METRICS: dict[str, Metric] = {m.key: m for m in CLUSTER_METRICS}


def metric(key: str) -> Metric:
    """The entry of ``key``; raises ``ValueError`` naming the known keys when there is none."""
    try:
        return METRICS[key]
    except KeyError:
        raise ValueError(f"unknown metric {key!r}; known: {', '.join(METRICS)}") from None


def rounded(key: str, value: float | None) -> float | None:
    """``value`` rounded to the entry's decimals (``None`` stays ``None``)."""
    if value is None:
        return None
    decimals = metric(key).decimals
    return value if decimals is None else round(value, decimals)


def family(name: str) -> tuple[Metric, ...]:
    """The entries of family ``name``, in display order."""
    return tuple(m for m in METRICS.values() if m.family == name)
