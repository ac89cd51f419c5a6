"""One scoring function for a block of sessions, both modes: docs/score.md#the-metrics-exactly on arrays.

:func:`score_block` takes a block of sessions as arrays (:class:`~.datafile.DataColumns`) and the
rows of those sessions as arrays (:class:`~.columnar.PredictionColumns`, one row per turn at most)
and returns the per-session counts of :data:`~.routing.COLUMNS` (a :class:`Block`), in closed and
in open mode alike:

- the **mapping** of labels to threads: closed mode, a label names the thread of the same id; open
  mode, each session's (gold thread, label) contingency is matched one to one
  (:func:`~.mapping.open_mapping`, ``scipy.optimize.linear_sum_assignment`` where the matching is not
  plain from the table);
- the **outcome** of a message, from what its topic held before it: a closed-mode catalog topic
  holds its own thread overwhelmingly (``CLOSED_TOPIC_SEED``), so its majority is that thread;
  every other topic (each open-mode label, a closed-mode label that names no thread) is followed
  message by message (:func:`topic_history`);
- every other count (switches, clusters and B-cubed, refs, cost, bursts, breakdowns) as grouped
  array counts over the block.

Pure: arrays in, arrays out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..schema import ACTIONS, CLARIFY, ERROR, STYLES
from .datafile import DataColumns, codes_in, distinct
from .mapping import open_mapping
from .routing import CLOSED_TOPIC_SEED, COLUMNS, OUTCOME_COST, OUTCOMES

#: more cells than this in the per-session B-cubed sum grid and the sums are taken session by session
GRID_CELLS = 20_000_000
#: at most this many (session, gold thread, label) cells and the contingency is counted in a dense grid
DENSE_CELLS = 1 << 22
_KIND = {o: k for k, o in enumerate(OUTCOMES)}
_COST = np.array([OUTCOME_COST.get(o, 0) for o in OUTCOMES], dtype=np.float64)


@dataclass
class Block:
    """One block of sessions scored: what :class:`~.columnar.PooledRun` pools.

    ``clusters`` holds, in open mode, the gold and predicted conversation codes of every message
    of the scored sessions (docs/score.md#conversation-metrics-open-mode), numbered from 0 in
    order of first message.
    """

    session_ids: list[str]
    langs: list[str]
    matrix: np.ndarray
    latencies: np.ndarray
    p_terms: np.ndarray
    r_terms: np.ndarray
    breakdown: dict[tuple[str, str], list[int]]
    unscored: list[str]
    outside: int
    clusters: tuple[np.ndarray, np.ndarray] | None = None
    #: the confidence of each strict message of the scored sessions whose row carries one, and
    #: whether it reached its gold thread (:func:`calibration_pairs`; None: no row has one)
    calibration: tuple[np.ndarray, np.ndarray] | None = None
    #: with ``detail``, every turn of the block: its outcome (a position in ``OUTCOMES``), whether
    #: it reached its gold thread, its label's vocab code (-1: no row), whether a ref of it scores
    #: (:func:`refs_turns`), and open mode's mapping
    #: (keys ``session * width + label code``, thread numbers; ``width`` last)
    detail: dict[str, Any] | None = None


@dataclass(slots=True)
class SessionScore:
    """One session's messages scored: ``outcomes``, ``labels`` (the raw label, ``ERROR`` where the
    row is missing) and ``correct`` (the message reached its gold thread, after the mapping), in
    turn order; ``refs_hit`` whether a ref of the message scores in ``refs_recall`` (a thread
    message with gold refs, one of which a predicted ref maps to); ``mapping`` is open mode's ``{label: thread}``. ``counts`` is the session's row of
    :data:`~.routing.COLUMNS` and ``p_terms``/``r_terms`` its B-cubed terms in message order, what
    a caller pooling sessions one at a time adds up (empty for a session with no rows)."""

    session_id: str
    lang: str
    outcomes: list[str]
    labels: list[str]
    correct: list[bool]
    refs_hit: list[bool]
    mapping: dict[str, str]
    counts: list[float] = field(default_factory=list)
    p_terms: list[float] = field(default_factory=list)
    r_terms: list[float] = field(default_factory=list)


def session_scores(data: DataColumns, block: Block, sessions: Sequence[int]) -> list[SessionScore]:
    """The :class:`SessionScore` of each of ``sessions`` (positions in ``data``) from a block
    scored with ``detail``."""
    d = block.detail
    assert d is not None
    words = data.vocab.words()
    labels = [ERROR if c < 0 else words[c] for c in d["label"].tolist()]
    outcomes = [OUTCOMES[k] for k in d["kind"].tolist()]
    correct = d["ok"].tolist()
    refs_hit = d["refs_hit"].tolist()
    keys, threads, width = d["mapping"]
    thread_ids = _thread_ids(data)
    out = []
    for k in sessions:
        a, b = int(data.turn_start[k]), int(data.turn_start[k + 1])
        lo, hi = np.searchsorted(keys, [k * width, (k + 1) * width])
        mapping = {words[int(key % width)]: thread_ids[k][int(t)] for key, t in zip(keys[lo:hi], threads[lo:hi])}
        out.append(SessionScore(data.session_ids[k], data.langs[k], outcomes[a:b], labels[a:b], correct[a:b],
                                refs_hit[a:b], mapping))
    return out


def _thread_ids(data: DataColumns) -> list[list[str]]:
    """Each session's thread ids by thread number."""
    words = data.vocab.words()
    out = [[""] * int(m) for m in np.bincount(data.thread_key // data.width, minlength=len(data))]
    for key, pos in zip(data.thread_key.tolist(), data.thread_pos.tolist()):
        out[key // data.width][pos] = words[key % data.width]
    return out


def by_session(sess: np.ndarray, n: int, weights: np.ndarray | None = None) -> np.ndarray:
    """Per-session counts (or sums of ``weights``) of items whose session is ``sess``."""
    return np.bincount(sess, weights=weights, minlength=n).astype(np.float64, copy=False)


def sequential_sums(sess: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Per-session left-to-right sums of ``values`` (grouped by ``sess``, non-decreasing), from
    0.0: the order the B-cubed terms are added in (docs/score.md#bcubed-f1)."""
    out = np.zeros(n, dtype=np.float64)
    if not len(values):
        return out
    starts = np.searchsorted(sess, np.arange(n))
    pos = np.arange(len(values)) - starts[sess]
    width = int(pos.max()) + 1
    if n * width <= GRID_CELLS:
        grid = np.zeros((n, width), dtype=np.float64)
        grid[sess, pos] = values
        for k in range(width):  # column by column: each session's terms added in order
            out += grid[:, k]
        return out
    from functools import reduce
    from operator import add

    ends = np.append(starts[1:], len(values))
    vals = values.tolist()
    for k in np.flatnonzero(ends > starts):
        out[k] = reduce(add, vals[starts[k]:ends[k]], 0.0)
    return out


def _contingency(ps: np.ndarray, pg: np.ndarray, pl: np.ndarray, w: int, n: int) -> tuple[np.ndarray, ...]:
    """The (gold thread, label) contingency of the items of ``n`` sessions (``ps`` the session of
    each item, ``pg`` and ``pl`` its thread and label, both in ``[0, w)``): each item's B-cubed
    precision and recall terms, and per session the non-empty cells, the threads and the labels."""
    pred_key = ps * w + pl
    ref_key = ps * w + pg
    cell_key = ref_key * w + pl
    if n * w * w <= DENSE_CELLS:
        cell_count = np.bincount(cell_key, minlength=n * w * w)
        pred_count = np.bincount(pred_key, minlength=n * w)
        ref_count = np.bincount(ref_key, minlength=n * w)
        per_cell = cell_count[cell_key]
        return (per_cell / pred_count[pred_key], per_cell / ref_count[ref_key],
                np.count_nonzero(cell_count.reshape(n, w * w), axis=1).astype(np.float64),
                np.count_nonzero(ref_count.reshape(n, w), axis=1).astype(np.float64),
                np.count_nonzero(pred_count.reshape(n, w), axis=1).astype(np.float64))
    cells, cell_inv, cell_n = np.unique(cell_key, return_inverse=True, return_counts=True)
    preds, pred_inv, pred_n = np.unique(pred_key, return_inverse=True, return_counts=True)
    refs, ref_inv, ref_n = np.unique(ref_key, return_inverse=True, return_counts=True)
    per_cell = cell_n[cell_inv]
    return (per_cell / pred_n[pred_inv], per_cell / ref_n[ref_inv], by_session(cells // (w * w), n),
            by_session(refs // w, n), by_session(preds // w, n))


def _lookup(keys: np.ndarray, values: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """``values`` at each of ``wanted`` in ``keys`` (ascending, unique), -1 where absent."""
    if not len(keys):
        return np.full(len(wanted), -1, dtype=np.int64)
    at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    return np.where(keys[at] == wanted, values[at], -1)


def topic_history(topic_key: np.ndarray, gold: np.ndarray, seed_thread: np.ndarray,
                  seed: int) -> tuple[np.ndarray, np.ndarray]:
    """What each message's topic held before it: whether it was fresh (no thread message yet)
    and, if not, its majority thread (the thread it held most; a tie goes to the one it held
    first), as docs/score.md#the-metrics-exactly defines the outcome.

    Messages are given in turn order with their topic's key, gold thread number (-1 for a
    one-off, which adds nothing) and the thread the topic starts out holding ``seed`` of (-1:
    none). Returns ``(fresh, majority)`` per message, majority -1 where fresh.

    A thread's standing in its topic, (messages held, earliness), only grows, and only one
    thread's grows at a message: so the majority after a message is the thread of the greatest
    standing any message of the topic has reached so far, a running maximum over the topic's
    messages (one ``np.maximum.accumulate`` for every topic at once).
    """
    n = len(topic_key)
    if not n:
        return np.zeros(0, dtype=bool), np.zeros(0, dtype=np.int64)
    order = np.argsort(topic_key, kind="stable")
    key, g, start = topic_key[order], gold[order], seed_thread[order]
    new_topic = np.ones(n, dtype=bool)
    new_topic[1:] = key[1:] != key[:-1]
    tid = np.cumsum(new_topic) - 1
    n_topics = int(tid[-1]) + 1
    topic_seed = start[new_topic]  # the thread each topic starts out holding, -1 for none
    # each message's (topic, thread) pair: how many of its thread the topic holds after it
    event = np.flatnonzero(g >= 0)
    tw = int(g.max(initial=0)) + 2
    pair = tid[event] * tw + g[event]
    by_pair = np.argsort(pair, kind="stable")
    pair_sorted = pair[by_pair]
    pair_start = np.ones(len(event), dtype=bool)
    pair_start[1:] = pair_sorted[1:] != pair_sorted[:-1]
    group = np.cumsum(pair_start) - 1
    starts = np.flatnonzero(pair_start)
    held = np.empty(len(event), dtype=np.int64)
    held[by_pair] = np.arange(len(event)) - starts[group] + 1
    seeded = g[event] == topic_seed[tid[event]]
    held += np.where(seeded, seed, 0)
    # how early each pair's thread came: the seed first, then by first message
    pair_first = np.where(seeded[by_pair][starts], -1, event[by_pair][starts])
    pair_topic = pair_sorted[starts] // tw
    pair_thread = pair_sorted[starts] % tw
    by_first = np.lexsort((pair_first, pair_topic))
    topic_sorted = pair_topic[by_first]
    rank = np.arange(len(starts)) - np.searchsorted(topic_sorted, topic_sorted)
    has_seed = topic_seed >= 0
    seed_held = np.zeros(n_topics, dtype=bool)
    seed_held[pair_topic[pair_first < 0]] = True
    rank += (has_seed & ~seed_held)[topic_sorted]  # the seed came first even before it got a message
    early = np.empty(len(starts), dtype=np.int64)
    early[by_first] = rank
    event_early = np.empty(len(event), dtype=np.int64)
    event_early[by_pair] = early[group]
    r = int(early.max(initial=0)) + 1
    # a standing as one number, greater for more messages and, at equal messages, the earlier thread
    stand = held * r + (r - 1 - event_early) + 1
    base = np.where(has_seed, seed * r + (r - 1) + 1, 0)  # the seed thread's standing (earliest)
    top = int(max(stand.max(initial=0), base.max(initial=0))) + 1
    value = base[tid].copy()
    value[event] = np.maximum(stand, value[event])
    best = np.maximum.accumulate(tid * top + value)
    before = np.empty(n, dtype=np.int64)
    before[1:] = best[:-1]
    before[new_topic] = tid[new_topic] * top + base[tid[new_topic]]
    low = before - tid * top
    fresh_sorted = low == 0
    lead_early = r - 1 - (low - 1) % r
    # the thread of each (topic, earliness): the pairs, and each seeded topic's seed at 0
    alone = has_seed & ~seed_held
    table_key = np.concatenate([pair_topic * r + early, np.flatnonzero(alone) * r])
    table_thread = np.concatenate([pair_thread, topic_seed[alone]])
    table_order = np.argsort(table_key, kind="stable")
    major_sorted = np.where(fresh_sorted, -1, _lookup(table_key[table_order], table_thread[table_order],
                                                        tid * r + lead_early))
    fresh = np.empty(n, dtype=bool)
    major = np.empty(n, dtype=np.int64)
    fresh[order] = fresh_sorted
    major[order] = major_sorted
    return fresh, major


def _first_seen_codes(keys: np.ndarray) -> np.ndarray:
    """Dense cluster codes of ``keys`` (one per message, in message order), numbered in order of
    first appearance."""
    if not len(keys):
        return np.zeros(0, dtype=np.int64)
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[inverse.reshape(-1)]


def conversation_codes(sess: np.ndarray, g: np.ndarray, topic: np.ndarray, v: int) -> tuple[np.ndarray, np.ndarray]:
    """The gold and predicted conversation of each message given (docs/score.md#conversation-metrics-open-mode):
    a gold thread, or a conversation of its own for a one-off; a topic label, or one of its own
    for a special label or no row. Session-qualified, numbered in order of first message."""
    own = -1 - np.arange(len(sess), dtype=np.int64)  # a conversation of one message
    tw = int(g.max(initial=0)) + 1
    gold = _first_seen_codes(np.where(g >= 0, sess * tw + g, own))
    pred = _first_seen_codes(np.where(topic >= 0, sess * v + topic, own))
    return gold, pred


@dataclass
class Messages:
    """A block's messages as scored, what every count function reads: per turn its session, gold
    thread number (-1: one-off), strictness, topic label (-1: special or no row), outcome (a
    position in ``OUTCOMES``), whether it reached its thread, leniently or strictly; per row its
    session and turn; open mode's mapping (keys ``session * v + label code``)."""

    data: DataColumns
    preds: Any
    sess: np.ndarray
    g: np.ndarray
    strict: np.ndarray
    topic: np.ndarray
    kind: np.ndarray
    ok: np.ndarray
    lenient: np.ndarray
    row_sess: np.ndarray
    row_turn: np.ndarray
    map_keys: np.ndarray
    map_threads: np.ndarray
    v: int
    is_open: bool

    @property
    def n(self) -> int:
        return len(self.data)


def message_counts(m: Messages) -> dict[str, np.ndarray]:
    """Per session: messages, thread messages, strict and ambiguous ones, one-offs, rows (and those
    labelled ERROR), strict and lenient correct, the strict messages' summed cost, each outcome's count
    (docs/score.md#accuracy, #weighted-error, #oneoff-into-topic)."""
    sess, n, thread = m.sess, m.n, m.g >= 0
    cols = {
        "messages": np.diff(m.data.turn_start).astype(np.float64),
        "thread_messages": by_session(sess, n, thread),
        "strict": by_session(sess, n, m.strict),
        "oneoffs": by_session(sess, n, ~thread),
        "rows": by_session(m.row_sess, n),
        "error_rows": by_session(m.row_sess, n, m.preds.label == m.data.vocab.code.get(ERROR, -9)),
        "strict_correct": by_session(sess, n, m.strict & m.ok),
        "lenient_correct": by_session(sess, n, m.lenient),
        "strict_cost": by_session(sess, n, np.where(m.strict, _COST[m.kind], 0.0)),
    }
    cols["ambiguous"] = cols["thread_messages"] - cols["strict"]
    for k, o in enumerate(OUTCOMES):
        cols["outcome_" + o] = by_session(sess, n, m.kind == k)
    return cols


def switch_counts(m: Messages) -> dict[str, np.ndarray]:
    """Per session: true, false and missed switches over thread messages; a special label keeps
    the last topic label (docs/score.md#switch-f1)."""
    tt = np.flatnonzero(m.g >= 0)
    s_t, g_t, l_t = m.sess[tt], m.g[tt], m.topic[tt]
    same = np.zeros(len(tt), dtype=bool)
    same[1:] = s_t[1:] == s_t[:-1]
    gold_switch = same.copy()
    gold_switch[1:] &= g_t[1:] != g_t[:-1]
    valid = l_t >= 0
    last = np.maximum.accumulate(np.where(valid, np.arange(len(tt)), -1)) if len(tt) else np.zeros(0, dtype=np.int64)
    prev = np.full(len(tt), -1, dtype=np.int64)
    prev[1:] = last[:-1]
    has_prev = prev >= 0
    has_prev[has_prev] = s_t[prev[has_prev]] == s_t[has_prev]
    pred_switch = valid & has_prev
    pred_switch[pred_switch] = l_t[pred_switch] != l_t[prev[pred_switch]]
    return {"switch_tp": by_session(s_t, m.n, gold_switch & pred_switch),
            "switch_fp": by_session(s_t, m.n, ~gold_switch & pred_switch),
            "switch_fn": by_session(s_t, m.n, gold_switch & ~pred_switch)}


def cluster_counts(m: Messages) -> tuple[dict[str, np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per session: distinct labels per thread and threads per label, and the B-cubed sums, over
    the (gold thread, label) pairs of thread messages with topic labels
    (docs/score.md#topics-per-thread, #bcubed-f1); and each pair's session and B-cubed precision
    and recall terms, in message order. Labels are numbered within their session, so that the
    contingency's grid stays as small as a session's."""
    pt = np.flatnonzero((m.g >= 0) & (m.topic >= 0))
    ps, pg, pk = m.sess[pt], m.g[pt], m.sess[pt] * m.v + m.topic[pt]
    label_keys, label_of = np.unique(pk, return_inverse=True)
    pl = label_of.reshape(-1) - np.searchsorted(label_keys, ps * m.v)
    w = int(max(m.g.max(initial=0), pl.max(initial=0))) + 2
    p_terms, r_terms, cells_n, threads_n, labels_n = _contingency(ps, pg, pl, w, m.n)
    return ({"thread_labels_sum": cells_n, "label_threads_sum": cells_n, "thread_labels_n": threads_n,
             "label_threads_n": labels_n, "bcubed_p_sum": sequential_sums(ps, p_terms, m.n),
             "bcubed_r_sum": sequential_sums(ps, r_terms, m.n), "bcubed_n": by_session(ps, m.n)},
            (ps, p_terms, r_terms))


def refs_turns(m: Messages) -> tuple[np.ndarray, np.ndarray]:
    """Per message: whether it is a thread message with gold refs, and whether a predicted ref of
    it maps to one of them (docs/score.md#refs-recall)."""
    data, preds = m.data, m.preds
    total = int(data.turn_start[-1])
    ref_turns = np.zeros(total, dtype=bool)
    ref_turns[data.ref_turn] = True
    with_refs = (m.g >= 0) & ref_turns
    hit = np.zeros(total, dtype=bool)
    if len(preds.ref_row):
        r_turn = m.row_turn[preds.ref_row]
        r_sess = m.row_sess[preds.ref_row]
        if m.is_open:
            r_num = _lookup(m.map_keys, m.map_threads, r_sess * m.v + preds.ref_code)
        else:
            r_num = data.thread_number(r_sess, preds.ref_code)
        named = r_num >= 0
        wr = int(max(data.ref_thread.max(initial=0), r_num.max(initial=0))) + 2
        gold_keys = distinct(data.ref_turn * wr + data.ref_thread)
        found = codes_in(r_turn[named] * wr + r_num[named], gold_keys) >= 0
        hit[r_turn[named][found]] = True
    return with_refs, with_refs & hit


def refs_counts(m: Messages, with_refs: np.ndarray, hit: np.ndarray) -> dict[str, np.ndarray]:
    """Per session: thread messages with gold refs, and those where a predicted ref maps to one of
    them (:func:`refs_turns`' ``with_refs`` and ``hit``)."""
    return {"refs_n": by_session(m.sess, m.n, with_refs), "refs_hit": by_session(m.sess, m.n, hit)}


def cost_counts(m: Messages) -> dict[str, np.ndarray]:
    """Per session: input, output and cached tokens, and rows that made a model call
    (docs/score.md#input-tokens-per-message)."""
    preds, rs, n = m.preds, m.row_sess, m.n
    return {"input_tokens": by_session(rs, n, preds.input_tokens.astype(np.float64)),
            "output_tokens": by_session(rs, n, preds.output_tokens.astype(np.float64)),
            "cached_tokens": by_session(rs, n, preds.cached_tokens.astype(np.float64)),
            "calls": by_session(rs, n, preds.call),
            # calls whose tokens were not reported (cost unknown); a Parquet block holds none
            "unreported": np.zeros(n) if preds.unreported is None else by_session(rs, n, preds.unreported.astype(np.float64))}


def burst_counts(m: Messages) -> dict[str, np.ndarray]:
    """Per session: rows with ``burst``, replies held, and three disjoint groups of strict
    messages, alone, in a burst on one thread, in a burst across threads, with those right."""
    preds, rs, n = m.preds, m.row_sess, m.n
    b = preds.burst
    in_b = b > 0
    r_strict = m.strict[m.row_turn] & in_b
    r_ok = m.ok[m.row_turn]
    groups = {"alone": r_strict & (b == 1), "mixed": r_strict & (b > 1) & preds.mixed,
              "in_burst": r_strict & (b > 1) & ~preds.mixed}
    cols = {"burst_rows": by_session(rs, n, in_b), "burst_waited": by_session(rs, n, in_b & preds.waited)}
    for name, mask in groups.items():
        cols[f"{name}_n"] = by_session(rs, n, mask)
        cols[f"{name}_correct"] = by_session(rs, n, mask & r_ok)
    return cols


def calibration_pairs(m: Messages, scored: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The ``confidence`` of each strict message of the ``scored`` turns whose row carries one,
    and whether it reached its gold thread, exactly as ``accuracy`` counts it (``strict & ok``),
    in message order (docs/score.md#calibration); ``None`` when no row of the block has one."""
    conf = m.preds.confidence
    if conf is None:
        return None
    at = np.full(len(m.sess), np.nan)
    at[m.row_turn] = conf
    chosen = m.strict & scored & ~np.isnan(at)
    return at[chosen], m.ok[chosen]


def score_block(data: DataColumns, preds: Any, split: str, mode: str, detail: bool = False) -> Block:
    """Score a block of sessions of a run in ``mode`` (docs/score.md#the-metrics-exactly).

    ``preds`` (:class:`~.columnar.PredictionColumns`) holds rows of the block's sessions only, for
    turns they have, one per turn at most (:mod:`.rows` decides what is left out). A turn without
    a row counts as ``ERROR``. Each label is mapped and each message's outcome decided here; the
    per-session counts of :data:`~.routing.COLUMNS` come from the count functions above (each
    metric's table entry names its own), for the sessions of ``split`` that have rows, in data
    order; ``detail`` keeps what each message came to (:class:`Block`).
    """
    is_open = mode == "open"
    turn_start = data.turn_start
    n_turns = np.diff(turn_start)
    row_sess = preds.session
    row_turn = turn_start[row_sess] + preds.i
    total = int(turn_start[-1])
    sess = data.turn_session
    words = data.vocab.code
    v = len(words) + 1  # vocab codes run below this
    lab = np.full(total, -1, dtype=np.int64)  # each turn's label, -1 without a row
    lab[row_turn] = preds.label
    is_clarify = lab == words.get(CLARIFY, -9)
    is_error = (lab < 0) | (lab == words.get(ERROR, -9))
    special = is_clarify | is_error
    topic = np.where(special, -1, lab)  # the topic label, -1 for a special one
    g = data.gold.astype(np.int64)
    amb = data.ambiguous
    thread = g >= 0
    strict = thread & ~amb

    # the mapping of labels to threads, and of predicted refs
    if is_open:
        map_keys, map_threads = open_mapping(data, sess, g, topic, v)
        mapped = np.where(topic >= 0, _lookup(map_keys, map_threads, sess * v + topic), -1)
    else:
        mapped = data.thread_number(sess, topic)
        map_keys = map_threads = np.zeros(0, dtype=np.int64)

    # outcomes (docs/score.md#the-metrics-exactly): what the topic held before the message
    fresh = np.zeros(total, dtype=bool)
    major = mapped.copy()  # a closed-mode catalog topic's majority is its own thread
    big = not is_open and len(n_turns) and int(n_turns.max()) >= CLOSED_TOPIC_SEED
    followed = (topic >= 0) & (True if is_open or big else mapped < 0)
    if followed.any():
        at = np.flatnonzero(followed)
        seed_thread = np.full(len(at), -1, dtype=np.int64) if is_open else mapped[at]
        fresh[at], major[at] = topic_history(sess[at] * v + topic[at], g[at], seed_thread, CLOSED_TOPIC_SEED)
    first = data.first_of_thread
    kind = np.select(
        [~thread & (fresh | special), ~thread, is_clarify, is_error, fresh & is_open & first, fresh,
         major == g, first],
        [_KIND["oneoff_isolated"], _KIND["oneoff_into_topic"], _KIND["clarify"], _KIND["error"], _KIND["correct"],
         _KIND["spurious_new"], _KIND["correct"], _KIND["merged_new"]],
        _KIND["wrong_existing"],
    )
    ok = thread & (mapped == g)
    judge = data.judge.astype(np.int64)
    m = Messages(data=data, preds=preds, sess=sess, g=g, strict=strict, topic=topic, kind=kind, ok=ok,
                 lenient=thread & (ok | (amb & (mapped >= 0) & (judge >= 0) & (mapped == judge))),
                 row_sess=row_sess, row_turn=row_turn, map_keys=map_keys, map_threads=map_threads, v=v,
                 is_open=is_open)
    with_refs, refs_hit = refs_turns(m)
    cols = {**message_counts(m), **switch_counts(m), **refs_counts(m, with_refs, refs_hit), **cost_counts(m),
            **burst_counts(m)}
    clustered, (ps, p_terms, r_terms) = cluster_counts(m)
    cols.update(clustered)

    # which sessions count: the split's sessions that have rows, in data order
    in_split = np.array([split == "all" or x == split for x in data.splits], dtype=bool)
    scored_mask = in_split & (cols["rows"] > 0)
    scored = np.flatnonzero(scored_mask)
    matrix = np.stack([cols[c] for c in COLUMNS], axis=1)[scored]
    scored_turns = scored_mask[sess]
    clusters = None
    if is_open:
        at = np.flatnonzero(scored_turns)
        clusters = conversation_codes(sess[at], g[at], topic[at], v)
    scored_pairs = scored_mask[ps]
    lat_rows = scored_mask[row_sess] & ~np.isnan(preds.latency)
    return Block(
        session_ids=[data.session_ids[k] for k in scored],
        langs=[data.langs[k] for k in scored],
        matrix=matrix,
        latencies=preds.latency[lat_rows],
        p_terms=p_terms[scored_pairs],
        r_terms=r_terms[scored_pairs],
        breakdown=_breakdown(data, strict & scored_turns, ok),
        unscored=[data.session_ids[k] for k in np.flatnonzero(in_split & ~scored_mask)],
        outside=int((~in_split[row_sess]).sum()),
        clusters=clusters,
        calibration=calibration_pairs(m, scored_turns),
        detail={"kind": kind, "ok": ok, "label": lab, "refs_hit": refs_hit, "mapping": (map_keys, map_threads, v)}
        if detail else None,
    )


def _breakdown(data: DataColumns, strict: np.ndarray, ok: np.ndarray) -> dict[tuple[str, str], list[int]]:
    """``{(dimension, key): [correct, n]}`` over the strict messages of a block."""
    pooled: dict[tuple[str, str], list[int]] = {}

    def add(dim: str, codes: np.ndarray, names: Sequence[str], mask: np.ndarray, good: np.ndarray) -> None:
        n = np.bincount(codes[mask], minlength=len(names))
        k = np.bincount(codes[mask], weights=good[mask], minlength=len(names))
        for c in np.flatnonzero(n):
            pooled[(dim, names[c])] = [int(k[c]), int(n[c])]

    add("action", data.action.astype(np.int64), ACTIONS, strict, ok)
    add("style", data.style.astype(np.int64), STYLES, strict, ok)
    tag_turn = data.tag_turn
    add("tag", data.tag_codes, data.vocab.words(), strict[tag_turn], ok[tag_turn])
    add("lang", data.turn_lang, data.lang_names, strict, ok)
    return pooled
