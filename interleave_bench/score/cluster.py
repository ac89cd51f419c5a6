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

import functools
import itertools
import math
from dataclasses import dataclass
from typing import Any, Hashable, Mapping, Sequence

import numpy as np

from .matching import linear_sum_assignment
from .table import family, rounded

#: where these metrics come from (BibTeX), for cards and citations
#: the IRC disentanglement corpus and its evaluation (Kummerfeld et al., 2019), BibTeX
KUMMERFELD_2019 = """\
@inproceedings{kummerfeld2019large,
  title     = {A Large-Scale Corpus for Conversation Disentanglement},
  author    = {Kummerfeld, Jonathan K. and Gouravajhala, Sai R. and Peper, Joseph and Athreya, Vignesh and
               Gunasekara, Chulaka and Ganhotra, Jatin and Patel, Siva Sankalp and Polymenakos, Lazaros and
               Lasecki, Walter S.},
  booktitle = {Proceedings of the 57th Annual Meeting of the Association for Computational Linguistics},
  pages     = {3846--3856},
  year      = {2019},
  doi       = {10.18653/v1/P19-1374}
}
"""
CITATION = KUMMERFELD_2019 + """\
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


def cluster_codes(ids: Sequence[Hashable]) -> np.ndarray:
    """Cluster ids as dense integer codes ``0..k-1``, numbered in order of first appearance."""
    index: dict[Hashable, int] = {}
    return np.fromiter((index.setdefault(x, len(index)) for x in ids), dtype=np.int64, count=len(ids))


def contingency(gold: Sequence[Hashable], pred: Sequence[Hashable]) -> Contingency:
    """The contingency of two clusterings given as one cluster id per message, in the same order.

    Raises ``ValueError`` when the sequences differ in length.
    """
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold cluster ids but {len(pred)} predicted ones")
    return contingency_of_codes(cluster_codes(gold), cluster_codes(pred))


def contingency_of_codes(gold: np.ndarray, pred: np.ndarray) -> Contingency:
    """The contingency of two clusterings given as dense integer codes (see :func:`cluster_codes`)."""
    if not len(gold):
        empty = np.zeros(0, dtype=np.int64)
        return Contingency(empty, empty, empty, empty, empty, 0)
    n_pred = int(pred.max()) + 1
    cells, counts = np.unique(gold * n_pred + pred, return_counts=True)
    return Contingency(cells // n_pred, cells % n_pred, counts, np.bincount(gold), np.bincount(pred), len(gold))


def one_to_one_overlap(c: Contingency) -> int:
    """Messages covered by the best one-to-one matching of gold to predicted clusters.

    Clusters that share no message gain nothing by being matched, so the optimum is the sum of
    the optima of the overlap graph's connected components (a session's clusters never meet
    another session's): each is solved with ``scipy.optimize.linear_sum_assignment``, which keeps
    the matrices as small as one session's clusters.
    """
    if not c.n:
        return 0
    n_gold = len(c.gold_sizes)
    gold_comp, pred_comp, n_comp = _components(c.rows, c.cols, n_gold, len(c.pred_sizes))
    of_cell = gold_comp[c.rows]
    # a component with one cluster on a side: its best match is its largest cell
    simple = (np.bincount(gold_comp, minlength=n_comp) == 1) | (np.bincount(pred_comp, minlength=n_comp) == 1)
    largest = np.zeros(n_comp, dtype=np.int64)
    np.maximum.at(largest, of_cell, c.counts)
    total = int(largest[simple].sum())
    # the others: one small matching each, clusters numbered inside their component
    gold_local, pred_local = _local_numbers(gold_comp), _local_numbers(pred_comp)
    hard = np.flatnonzero(~simple[of_cell])
    order = hard[np.argsort(of_cell[hard], kind="stable")]
    if not len(order):
        return total
    comp = of_cell[order]
    new = np.concatenate(([True], comp[1:] != comp[:-1]))
    group = np.cumsum(new) - 1  # each cell's component among the hard ones, in order
    starts = np.flatnonzero(new)
    row, col = gold_local[c.rows[order]], pred_local[c.cols[order]]
    # each component's matrix padded to a square of its larger side: the small ones (a session's
    # threads and topics) all solved at once, by every assignment of their size
    side = np.maximum(np.maximum.reduceat(row, starts), np.maximum.reduceat(col, starts)) + 1
    cell_side = side[group]
    solve = None
    for size in np.unique(side).tolist():
        which = np.flatnonzero(side == size)
        mine = cell_side == size
        batch = np.searchsorted(which, group[mine])
        weights = np.zeros((len(which), size, size), dtype=np.int64)
        weights[batch, row[mine], col[mine]] = c.counts[order[mine]]
        if size <= MAX_ENUMERATED:
            perms, rows = _assignments(int(size)), np.arange(size)
            for at in range(0, len(weights), ENUMERATED_AT_ONCE):  # (at most 2.4 MB of sums at a time)
                total += int(weights[at:at + ENUMERATED_AT_ONCE, rows, perms].sum(axis=2).max(axis=1).sum())
            continue
        solve = solve or linear_sum_assignment()
        for w in weights:
            a, b = solve(w, maximize=True)
            total += int(w[a, b].sum())
    return total


#: the largest component solved by trying every assignment (120 of them) rather than by scipy's
#: ``linear_sum_assignment`` one component at a time, and how many components are tried at once
MAX_ENUMERATED, ENUMERATED_AT_ONCE = 5, 512


@functools.lru_cache(maxsize=None)
def _assignments(size: int) -> np.ndarray:
    """Every assignment of ``size`` rows to ``size`` columns, one a row (``size!`` by ``size``)."""
    return np.array(list(itertools.permutations(range(size))), dtype=np.int64)


def _components(rows: np.ndarray, cols: np.ndarray, n_gold: int, n_pred: int) -> tuple[np.ndarray, np.ndarray, int]:
    """The connected components of the overlap graph (an edge per non-empty cell): each gold and
    predicted cluster's component number (``0..n-1``) and ``n``. Each cluster takes the least
    gold cluster number reachable from it, spread along the cells until nothing changes (as
    many rounds as the widest component is long)."""
    gold = np.arange(n_gold, dtype=np.int64)
    while True:
        pred = np.full(n_pred, n_gold, dtype=np.int64)
        np.minimum.at(pred, cols, gold[rows])
        spread = gold.copy()
        np.minimum.at(spread, rows, pred[cols])
        if np.array_equal(spread, gold):
            break
        gold = spread
    roots, number = np.unique(gold, return_inverse=True)
    return number.reshape(-1), np.searchsorted(roots, pred), len(roots)


def _local_numbers(component: np.ndarray) -> np.ndarray:
    """Each cluster's number among the clusters of its component (``0..size-1``)."""
    order = np.argsort(component, kind="stable")
    ranks = np.empty(len(component), dtype=np.int64)
    sorted_comp = component[order]
    starts = np.searchsorted(sorted_comp, sorted_comp, side="left")
    ranks[order] = np.arange(len(component)) - starts
    return ranks


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
    return values_of_sums(contingency_sums(contingency(gold, pred)))["vi_scaled"]


def _pairs(n: np.ndarray | int) -> float:
    """Unordered pairs among ``n`` items, summed over an array of sizes."""
    x = np.asarray(n, dtype=np.float64)
    return float((x * (x - 1) / 2.0).sum())


def adjusted_rand_index(gold: Sequence[Hashable], pred: Sequence[Hashable]) -> float | None:
    """The adjusted Rand index (Hubert and Arabie); ``None`` for no messages.

    Where the index is undefined (0 / 0: both clusterings a single cluster, or both all
    singletons) the clusterings agree and it is 1.0.

    >>> round(adjusted_rand_index("aaabbc", "xxyyyz"), 4)
    0.3182
    """
    return values_of_sums(contingency_sums(contingency(gold, pred)))["ari"]


def shen_f1(gold: Sequence[Hashable], pred: Sequence[Hashable]) -> float | None:
    """Shen F1: each gold cluster's best F1 against any predicted one, weighted by its size.

    >>> round(shen_f1("aaabbc", "xxyyyz"), 4)
    0.8333
    """
    return values_of_sums(contingency_sums(contingency(gold, pred)))["shen_f1"]


def exact_match(gold: Sequence[Hashable], pred: Sequence[Hashable]) -> tuple[float | None, float | None, float | None]:
    """Exact-match ``(precision, recall, f1)`` over conversations of two or more messages.

    A predicted conversation counts when it equals a gold one. Precision is ``None`` without
    predicted multi-message conversations, recall ``None`` without gold ones; F1 is ``None`` when
    both are, 0.0 when nothing matched.

    >>> exact_match("aabbc", "xxyyy")
    (0.5, 0.5, 0.5)
    """
    v = values_of_sums(contingency_sums(contingency(gold, pred)))
    return v["exact_precision"], v["exact_recall"], v["exact_f1"]


def cluster_metrics(gold: Sequence[Hashable], pred: Sequence[Hashable]) -> dict[str, float | None]:
    """Every metric of the ``cluster`` family, keyed and rounded as the metric table says."""
    return metrics_of(contingency(gold, pred))


def contingency_sums(c: Contingency) -> dict[str, float]:
    """What every conversation metric is taken from, summed over one contingency's cells and
    clusters: the messages, the VI terms, the pairs (ARI), the size-weighted best F1s (Shen), the
    one-to-one overlap, the exact matches and the conversations. The sums of contingencies of
    disjoint messages whose conversations never meet (a run's blocks of sessions) are the
    run's, so a run holds these numbers, not its cells, however many messages it has."""
    if not c.n:
        return dict.fromkeys(SUMS, 0.0)
    n = c.counts.astype(np.float64)
    f1 = 2.0 * c.counts / (c.gold_sizes[c.rows] + c.pred_sizes[c.cols])
    best = np.zeros(len(c.gold_sizes))
    np.maximum.at(best, c.rows, f1)
    whole = (c.counts > 1) & (c.counts == c.gold_sizes[c.rows]) & (c.counts == c.pred_sizes[c.cols])
    return {"messages": float(c.n),
            "vi": float((n * (np.log2(c.gold_sizes[c.rows] / n) + np.log2(c.pred_sizes[c.cols] / n))).sum()),
            "index": _pairs(c.counts), "gold_pairs": _pairs(c.gold_sizes), "pred_pairs": _pairs(c.pred_sizes),
            "shen": float((c.gold_sizes * best).sum()), "one_to_one": float(one_to_one_overlap(c)),
            "matched": float(whole.sum()), "gold_multi": float((c.gold_sizes > 1).sum()),
            "pred_multi": float((c.pred_sizes > 1).sum()), "gold_conversations": float(len(c.gold_sizes)),
            "predicted_conversations": float(len(c.pred_sizes))}


#: the sums :func:`contingency_sums` takes
SUMS = ("messages", "vi", "index", "gold_pairs", "pred_pairs", "shen", "one_to_one", "matched", "gold_multi",
        "pred_multi", "gold_conversations", "predicted_conversations")


def values_of_sums(s: Mapping[str, float]) -> dict[str, float | None]:
    """Every metric of the ``cluster`` family, unrounded, from :func:`contingency_sums`
    (docs/score.md#conversation-metrics-open-mode)."""
    total = s["messages"]
    if not total:
        return {m.key: None for m in family("cluster")}
    all_pairs = _pairs(total)
    expected = s["gold_pairs"] * s["pred_pairs"] / all_pairs if all_pairs else 0.0
    most = 0.5 * (s["gold_pairs"] + s["pred_pairs"])
    # ARI's 0 / 0 (both clusterings one cluster, or both all singletons): they agree
    ari = 1.0 if most == expected else (s["index"] - expected) / (most - expected)
    precision = s["matched"] / s["pred_multi"] if s["pred_multi"] else None
    recall = s["matched"] / s["gold_multi"] if s["gold_multi"] else None
    if precision is None and recall is None:
        f1 = None
    elif not s["matched"]:
        f1 = 0.0
    else:
        f1 = 2 * precision * recall / (precision + recall)  # type: ignore[operator]
    return {"one_to_one": s["one_to_one"] / total, "vi_scaled": None if total < 2 else
            1.0 - (s["vi"] / total) / math.log2(total), "ari": ari, "shen_f1": s["shen"] / total,
            "exact_precision": precision, "exact_recall": recall, "exact_f1": f1}


def metrics_of(c: Contingency) -> dict[str, float | None]:
    """Every metric of the ``cluster`` family for one contingency, keyed and rounded as the table says."""
    return _rounded(values_of_sums(contingency_sums(c)))


def _rounded(values: Mapping[str, float | None]) -> dict[str, float | None]:
    return {m.key: rounded(m.key, values[m.key]) for m in family("cluster")}


def section_of_sums(s: Mapping[str, float]) -> dict[str, Any]:
    """The ``cluster`` section of a score document from the run's :func:`contingency_sums`:
    ``{"metrics": {...}, "counts": {...}}``."""
    return {
        "metrics": _rounded(values_of_sums(s)),
        "counts": {"messages": int(s["messages"]), "gold_conversations": int(s["gold_conversations"]),
                   "predicted_conversations": int(s["predicted_conversations"]),
                   "gold_multi": int(s["gold_multi"]), "predicted_multi": int(s["pred_multi"])},
    }
