"""The conversation-disentanglement metrics of the field, for open-mode runs (docs/score.md).

Gold conversations and predicted topics are two clusterings of the same messages, compared as the
IRC disentanglement corpus's own evaluation compares them (Kummerfeld et al., 2019): one-to-one
overlap (Elsner and Charniak, 2008), 1 − VI / log2 N (variation of information in bits), the
adjusted Rand index, Shen F1 (Shen et al., 2006) and exact-match conversation precision, recall
and F1 (single-message conversations left out on both sides).

Scores pool every session into one clustering of session-qualified messages. A message with no
topic (``CLARIFY``, ``ERROR`` or no row) is a predicted conversation of its own, as is a gold
one-off. Every function is pure: cluster ids in, numbers out; the functions taking
``gold, pred`` sequences accept any hashable ids, one pair per message.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any, Hashable, Mapping, Sequence

import numpy as np

from ..schema import SPECIAL_LABELS, PredictionRow, Session
from .report import fmt, table
from .table import family, rounded

SPECIAL = frozenset(SPECIAL_LABELS)
#: where these metrics come from (BibTeX), for cards and citations
CITATION = """\
@inproceedings{kummerfeld2019large,
  title     = {A Large-Scale Corpus for Conversation Disentanglement},
  author    = {Kummerfeld, Jonathan K. and Gouravajhala, Sai R. and Peper, Joseph and Athreya, Vignesh and
               Gunasekara, Chulaka and Ganhotra, Jatin and Patel, Siva Sankalp and Polymenakos, Lazaros and
               Lasecki, Walter S.},
  booktitle = {Proceedings of the 57th Annual Meeting of the Association for Computational Linguistics},
  pages     = {3846--3856},
  year      = {2019}
}
@inproceedings{elsner2008you,
  title     = {You Talking to Me? A Corpus and Algorithm for Conversation Disentanglement},
  author    = {Elsner, Micha and Charniak, Eugene},
  booktitle = {Proceedings of ACL-08: HLT},
  pages     = {834--842},
  year      = {2008}
}
@inproceedings{shen2006thread,
  title     = {Thread Detection in Dynamic Text Message Streams},
  author    = {Shen, Dou and Yang, Qiang and Sun, Jian-Tao and Chen, Zheng},
  booktitle = {Proceedings of SIGIR 2006},
  pages     = {35--42},
  year      = {2006}
}
"""


@dataclass(frozen=True)
class Contingency:
    """How two clusterings of ``n`` messages overlap, as arrays over the non-empty cells.

    Cell ``k`` holds ``counts[k]`` messages of gold cluster ``rows[k]`` and predicted cluster
    ``cols[k]`` (clusters numbered in order of first message); ``gold_sizes`` and ``pred_sizes``
    are the clusters' sizes.
    """

    rows: np.ndarray
    cols: np.ndarray
    counts: np.ndarray
    gold_sizes: np.ndarray
    pred_sizes: np.ndarray
    n: int


def contingency(gold: Sequence[Hashable], pred: Sequence[Hashable]) -> Contingency:
    """The contingency of two clusterings given as one cluster id per message, in the same order.

    Raises ``ValueError`` when the sequences differ in length.
    """
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold cluster ids but {len(pred)} predicted ones")
    cells = Counter(zip(gold, pred))
    gold_index: dict[Hashable, int] = {}
    pred_index: dict[Hashable, int] = {}
    k = len(cells)
    rows = np.fromiter((gold_index.setdefault(g, len(gold_index)) for g, _ in cells), dtype=np.int64, count=k)
    cols = np.fromiter((pred_index.setdefault(p, len(pred_index)) for _, p in cells), dtype=np.int64, count=k)
    counts = np.fromiter(cells.values(), dtype=np.int64, count=k)
    gold_sizes = np.bincount(rows, weights=counts, minlength=len(gold_index)).astype(np.int64)
    pred_sizes = np.bincount(cols, weights=counts, minlength=len(pred_index)).astype(np.int64)
    return Contingency(rows, cols, counts, gold_sizes, pred_sizes, len(gold))


def one_to_one_overlap(c: Contingency) -> int:
    """Messages covered by the best one-to-one matching of gold to predicted clusters.

    Clusters that share no message gain nothing by being matched, so the optimum is the sum of
    the optima of the overlap graph's connected components (a session's clusters never meet
    another session's): each is solved with ``scipy.optimize.linear_sum_assignment``, which keeps
    the matrices as small as one session's clusters.
    """
    if not c.n:
        return 0
    from scipy.optimize import linear_sum_assignment  # here: scipy takes most of a second to import
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n_gold = len(c.gold_sizes)
    size = n_gold + len(c.pred_sizes)
    graph = coo_matrix((np.ones(len(c.counts)), (c.rows, n_gold + c.cols)), shape=(size, size))
    _, component = connected_components(graph, directed=False)
    of_cell = component[c.rows]
    order = np.argsort(of_cell, kind="stable")
    total = 0
    for cells in np.split(order, np.flatnonzero(np.diff(of_cell[order])) + 1):
        rows, cols, counts = c.rows[cells], c.cols[cells], c.counts[cells]
        gold_ids, r = np.unique(rows, return_inverse=True)
        pred_ids, k = np.unique(cols, return_inverse=True)
        if len(gold_ids) == 1 or len(pred_ids) == 1:
            total += int(counts.max())  # one cluster on a side: the best match is the largest cell
            continue
        weights = np.zeros((len(gold_ids), len(pred_ids)), dtype=np.int64)
        weights[r, k] = counts
        a, b = linear_sum_assignment(weights, maximize=True)
        total += int(weights[a, b].sum())
    return total


def one_to_one(gold: Sequence[Hashable], pred: Sequence[Hashable]) -> float | None:
    """1-1: the share of messages covered by the best one-to-one matching (``None`` for no messages).

    >>> round(one_to_one("aaabbc", "xxyyyz"), 4)
    0.8333
    """
    c = contingency(gold, pred)
    return one_to_one_overlap(c) / c.n if c.n else None


def variation_of_information(c: Contingency) -> float:
    """VI in bits: H(gold | pred) + H(pred | gold), summed cell by cell (exactly 0.0 for equal clusterings)."""
    if not c.n:
        return 0.0
    n = c.counts.astype(np.float64)
    terms = n * (np.log2(c.gold_sizes[c.rows] / n) + np.log2(c.pred_sizes[c.cols] / n))
    return float(terms.sum()) / c.n


def vi_scaled(gold: Sequence[Hashable], pred: Sequence[Hashable]) -> float | None:
    """1 − VI / log2 N; ``None`` for fewer than two messages (log2 N is then 0).

    >>> round(vi_scaled("aaabbc", "xxyyyz"), 4)
    0.6448
    """
    return _vi_scaled(contingency(gold, pred))


def _vi_scaled(c: Contingency) -> float | None:
    if c.n < 2:
        return None
    return 1.0 - variation_of_information(c) / math.log2(c.n)


def _pairs(n: np.ndarray | int) -> float:
    """Unordered pairs among ``n`` items, summed over an array of sizes."""
    x = np.asarray(n, dtype=np.float64)
    return float((x * (x - 1) / 2.0).sum())


def _ari(c: Contingency) -> float | None:
    if not c.n:
        return None
    index = _pairs(c.counts)
    gold_pairs, pred_pairs = _pairs(c.gold_sizes), _pairs(c.pred_sizes)
    all_pairs = _pairs(c.n)
    expected = gold_pairs * pred_pairs / all_pairs if all_pairs else 0.0
    most = 0.5 * (gold_pairs + pred_pairs)
    if most == expected:
        # only when both clusterings are one cluster, or both all singletons: they agree
        return 1.0
    return (index - expected) / (most - expected)


def adjusted_rand_index(gold: Sequence[Hashable], pred: Sequence[Hashable]) -> float | None:
    """The adjusted Rand index (Hubert and Arabie); ``None`` for no messages.

    Where the index is undefined (0 / 0: both clusterings a single cluster, or both all
    singletons) the clusterings agree and it is 1.0.

    >>> round(adjusted_rand_index("aaabbc", "xxyyyz"), 4)
    0.3182
    """
    return _ari(contingency(gold, pred))


def _shen(c: Contingency) -> float | None:
    if not c.n:
        return None
    f1 = 2.0 * c.counts / (c.gold_sizes[c.rows] + c.pred_sizes[c.cols])
    best = np.zeros(len(c.gold_sizes))
    np.maximum.at(best, c.rows, f1)
    return float((c.gold_sizes * best).sum()) / c.n


def shen_f1(gold: Sequence[Hashable], pred: Sequence[Hashable]) -> float | None:
    """Shen F1: each gold cluster's best F1 against any predicted one, weighted by its size.

    >>> round(shen_f1("aaabbc", "xxyyyz"), 4)
    0.8333
    """
    return _shen(contingency(gold, pred))


def _exact(c: Contingency) -> tuple[float | None, float | None, float | None]:
    gold_multi = int((c.gold_sizes > 1).sum())
    pred_multi = int((c.pred_sizes > 1).sum())
    whole = (c.counts > 1) & (c.counts == c.gold_sizes[c.rows]) & (c.counts == c.pred_sizes[c.cols])
    matched = int(whole.sum())
    precision = matched / pred_multi if pred_multi else None
    recall = matched / gold_multi if gold_multi else None
    if precision is None and recall is None:
        f1 = None
    elif not matched:
        f1 = 0.0
    else:
        f1 = 2 * precision * recall / (precision + recall)  # type: ignore[operator]
    return precision, recall, f1


def exact_match(gold: Sequence[Hashable], pred: Sequence[Hashable]) -> tuple[float | None, float | None, float | None]:
    """Exact-match ``(precision, recall, f1)`` over conversations of two or more messages.

    A predicted conversation counts when it equals a gold one. Precision is ``None`` without
    predicted multi-message conversations, recall ``None`` without gold ones; F1 is ``None`` when
    both are, 0.0 when nothing matched.

    >>> exact_match("aabbc", "xxyyy")
    (0.5, 0.5, 0.5)
    """
    return _exact(contingency(gold, pred))


def cluster_metrics(gold: Sequence[Hashable], pred: Sequence[Hashable]) -> dict[str, float | None]:
    """Every metric of the ``cluster`` family, keyed and rounded as the metric table says."""
    c = contingency(gold, pred)
    precision, recall, f1 = _exact(c)
    values = {
        "one_to_one": one_to_one_overlap(c) / c.n if c.n else None,
        "vi_scaled": _vi_scaled(c),
        "ari": _ari(c),
        "shen_f1": _shen(c),
        "exact_precision": precision,
        "exact_recall": recall,
        "exact_f1": f1,
    }
    return {m.key: rounded(m.key, values[m.key]) for m in family("cluster")}


def run_clusterings(
    sessions: Sequence[Session], by_session: Mapping[str, Mapping[int, PredictionRow]]
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Gold and predicted cluster ids of every message of ``sessions``, pooled, session-qualified.

    Gold: ``(session, "thread", id)``, or a cluster of its own for a one-off. Predicted:
    ``(session, "topic", label)``, or a cluster of its own for ``CLARIFY``, ``ERROR`` or no row.
    """
    gold: list[tuple[Any, ...]] = []
    pred: list[tuple[Any, ...]] = []
    for s in sessions:
        rows = by_session.get(s.session_id, {})
        for t in s.turns:
            alone = (s.session_id, "message", t.i)
            gold.append(alone if t.gold.thread is None else (s.session_id, "thread", t.gold.thread))
            row = rows.get(t.i)
            pred.append(alone if row is None or row.pred in SPECIAL else (s.session_id, "topic", row.pred))
    return gold, pred


def cluster_section(
    sessions: Sequence[Session], by_session: Mapping[str, Mapping[int, PredictionRow]]
) -> dict[str, Any]:
    """The ``cluster`` section of a score document: ``{"metrics": {...}, "counts": {...}}``."""
    gold, pred = run_clusterings(sessions, by_session)
    gold_sizes, pred_sizes = Counter(gold), Counter(pred)
    return {
        "metrics": cluster_metrics(gold, pred),
        "counts": {
            "messages": len(gold),
            "gold_conversations": len(gold_sizes),
            "predicted_conversations": len(pred_sizes),
            "gold_multi": sum(1 for n in gold_sizes.values() if n > 1),
            "predicted_multi": sum(1 for n in pred_sizes.values() if n > 1),
        },
    }


def cluster_table(results: Sequence[Mapping[str, Any]]) -> str | None:
    """A markdown table of the cluster metrics, one row per run that has them (``None`` if none does)."""
    metrics = family("cluster")
    rows = []
    for r in results:
        section = r.get("cluster")
        if section:
            rows.append([r["system"], *(fmt(section["metrics"].get(m.key)) for m in metrics),
                         f"{section['counts']['messages']:,}"])
    return table(rows, ["system", *(m.display for m in metrics), "messages"]) if rows else None
