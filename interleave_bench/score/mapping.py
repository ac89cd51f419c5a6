"""Open mode's mapping of each session's labels to its threads (docs/score.md#the-metrics-exactly):
a one-to-one matching of the (gold thread, label) agreement table, plain where the table leaves
one choice and solved by :func:`~.matching.linear_sum_assignment` elsewhere, rows and columns
sorted as strings exactly as the reference scorer sorts them. The block scorer
(:func:`~.block.score_block`) maps open-mode labels through it.
"""

from __future__ import annotations

import numpy as np

from .datafile import DataColumns, distinct
from .matching import linear_sum_assignment


def string_ranks(data: DataColumns) -> np.ndarray:
    """Each vocab code's place among the block's strings sorted as strings (the order the
    matching's rows and columns follow, docs/score.md#the-metrics-exactly)."""
    words = data.vocab.words()
    rank = np.empty(len(words), dtype=np.int64)
    rank[sorted(range(len(words)), key=words.__getitem__)] = np.arange(len(words))
    return rank


def open_mapping(data: DataColumns, sess: np.ndarray, g: np.ndarray, topic: np.ndarray,
                 v: int) -> tuple[np.ndarray, np.ndarray]:
    """Open mode's one-to-one matching of each session's labels to its threads, as sorted keys
    ``session * v + label code`` and the thread number each maps to.

    Rows are a session's threads, columns every topic label its turns received, both sorted as
    strings; weights the thread messages they agree on. Where every thread agrees with one label
    at most and every label with one thread at most, those pairs are the only optimum; elsewhere
    ``linear_sum_assignment`` on the negated weights decides. A matched pair with zero agreement maps nothing.
    """
    labelled = topic >= 0
    label_keys = distinct(sess[labelled] * v + topic[labelled])
    agree = labelled & (g >= 0)
    tw = int(g.max(initial=0)) + 1  # thread numbers run below this
    cells, counts = np.unique((sess[agree] * tw + g[agree]) * v + topic[agree], return_counts=True)
    c_sess, c_thread, c_label = cells // (tw * v), (cells // v) % tw, cells % v
    c_label_key = c_sess * v + c_label
    thread_key = c_sess * tw + c_thread
    tangled = np.zeros(len(data), dtype=bool)
    for each, width in ((thread_key, tw), (c_label_key, v)):  # a thread with two labels, a label with two threads
        seen, count = np.unique(each, return_counts=True)
        tangled[seen[count > 1] // width] = True
    plain = ~tangled[c_sess]
    keys, threads = [c_label_key[plain]], [c_thread[plain]]
    hard = np.flatnonzero(tangled)
    if len(hard):
        # every session's threads and labels sorted as strings at once; each cell's row and column
        rank = string_ranks(data)
        n = len(data)
        t_sess, t_code = data.thread_key // data.width, data.thread_key % data.width
        t_order = np.lexsort((rank[t_code], t_sess))
        t_bounds = np.searchsorted(t_sess[t_order], np.arange(n + 1))
        t_sorted = data.thread_pos[t_order]
        tp = int(data.thread_pos.max(initial=0)) + 1
        row_of = np.empty(n * tp, dtype=np.int64)
        row_of[t_sess[t_order] * tp + t_sorted] = np.arange(len(t_order)) - t_bounds[t_sess[t_order]]
        l_sess, l_code = label_keys // v, label_keys % v
        l_order = np.lexsort((rank[l_code], l_sess))
        l_bounds = np.searchsorted(l_sess[l_order], np.arange(n + 1))
        l_sorted = l_code[l_order]
        col_of = np.empty(len(label_keys), dtype=np.int64)
        col_of[l_order] = np.arange(len(label_keys)) - l_bounds[l_sess[l_order]]
        c_row, c_col = row_of[c_sess * tp + c_thread], col_of[np.searchsorted(label_keys, c_label_key)]
        # every hard session's negated weights in one buffer, each matrix a view of its part
        n_rows, n_cols = np.diff(t_bounds), np.diff(l_bounds)
        at = np.concatenate(([0], np.cumsum(np.where(tangled, n_rows * n_cols, 0))))
        weights = np.zeros(int(at[-1]), dtype=np.int64)
        h = ~plain
        weights[at[c_sess[h]] + c_row[h] * n_cols[c_sess[h]] + c_col[h]] = -counts[h]
        solve = linear_sum_assignment()
        found = [solve(weights[a:a + r_n * c_n].reshape(r_n, c_n))
                 for a, r_n, c_n in zip(at[hard].tolist(), n_rows[hard].tolist(), n_cols[hard].tolist())]
        fs = np.repeat(hard, [len(r) for r, _ in found])
        fr, fc = (np.concatenate(x) for x in zip(*found))
        good = weights[at[fs] + fr * n_cols[fs] + fc] < 0  # a matched pair that agrees on nothing maps nothing
        fs, fr, fc = fs[good], fr[good], fc[good]
        keys.append(fs * v + l_sorted[l_bounds[fs] + fc])
        threads.append(t_sorted[t_bounds[fs] + fr])
    key = np.concatenate(keys)
    order = np.argsort(key, kind="stable")
    return key[order], np.concatenate(threads)[order]
