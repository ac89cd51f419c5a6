"""The routing metrics of docs/score.md#the-metrics-exactly, exactly as defined there.

Two steps. :func:`score_session` replays one session message by message (what each chosen topic
held before the message decides its outcome) and returns a :class:`SessionScore`: per-message
results plus one vector of sufficient statistics (counts and sums, :data:`COLUMNS`). Every pooled
metric is a function of the column totals of those vectors (:func:`derive`), so the point estimate
and each bootstrap resample over sessions use the same formulas and the scorer never re-scores a
session to resample it.

Pure functions: sessions and rows in, numbers out.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ..schema import MODES, CLARIFY, ERROR, JUDGE_AMBIGUOUS, JUDGE_NONE, SPECIAL_LABELS, PredictionRow, Session
from .bcubed import bcubed_terms, prf, sequential_sum
from .matching import match_labels
from .table import RATE, Metric, family, rounded

SPECIAL = frozenset(SPECIAL_LABELS)
#: the mode of a prediction file that names none (the reference's default)
DEFAULT_MODE = "closed"

#: every outcome a message can have (7.2), in the order reports list them
OUTCOMES = (
    "correct",
    "wrong_existing",
    "merged_new",
    "spurious_new",
    "clarify",
    "error",
    "oneoff_isolated",
    "oneoff_into_topic",
)
#: what an outcome of a thread message costs the user (7.4): work sent into another topic's context
#: is the worst outcome (3); a needless topic, a question back or a failure costs one step (1)
OUTCOME_COST = {"correct": 0, "wrong_existing": 3, "merged_new": 3, "spurious_new": 1, "clarify": 1, "error": 1}
#: closed mode: what each catalog topic holds of its own thread before the first message, so that
#: its own thread stays its majority however many other messages are sent into it
CLOSED_TOPIC_SEED = 1_000_000
#: what the independent reading says when it names no single thread
UNDECIDED_JUDGE = frozenset({JUDGE_NONE, JUDGE_AMBIGUOUS})

#: the per-session sufficient statistics; every pooled metric is a function of their totals
#: (the counts the formulas of :mod:`.table` read), in the order :func:`score_session` lists them
COLUMNS = (
    "messages",  # every turn of the session
    "thread_messages",  # gold.thread not null
    "strict",  # thread messages not ambiguous
    "ambiguous",  # thread messages that are ambiguous
    "oneoffs",  # gold.thread null
    "rows",  # turns that have a prediction row
    "strict_correct",
    "lenient_correct",
    "strict_cost",  # summed OUTCOME_COST over strict messages
    "switch_tp",
    "switch_fp",
    "switch_fn",
    "thread_labels_sum",  # distinct labels per (thread) that got a topic label, summed
    "thread_labels_n",
    "label_threads_sum",  # distinct gold threads per label, summed
    "label_threads_n",
    "bcubed_p_sum",
    "bcubed_r_sum",
    "bcubed_n",
    "refs_n",  # thread messages with gold refs
    "refs_hit",
    "input_tokens",
    "output_tokens",
    "cached_tokens",
    "calls",  # rows with a usage
    *(f"outcome_{o}" for o in OUTCOMES),
    "burst_rows",
    "burst_waited",
    "alone_n",  # strict messages routed alone (burst = 1)
    "alone_correct",
    "in_burst_n",  # strict messages in a burst on one thread (burst > 1, not mixed)
    "in_burst_correct",
    "mixed_n",  # strict messages in a burst across threads (burst > 1, mixed)
    "mixed_correct",
)
COL = {name: k for k, name in enumerate(COLUMNS)}
#: the metrics of a score document's ``metrics`` object, in order: routing, then cost (the cost
#: in USD stands beside them, as it needs a price)
POOLED = tuple(m for m in (*family("routing"), *family("cost")) if m.formula is not None)
METRICS = tuple(m.key for m in (*family("routing"), *family("cost")) if m.key != "cost_usd_per_message")
#: what the breakdowns split strict messages by (7.11)
BREAKDOWN_DIMENSIONS = ("action", "tag", "lang", "style")


@dataclass(slots=True)
class SessionScore:
    """One session replayed: per-message results and its sufficient statistics.

    Lists run over the session's turns in order: ``labels`` holds the raw label (``ERROR`` where
    the row is missing), ``outcomes`` the outcome, ``correct`` whether a thread message reached
    its gold thread (after the mapping). ``stats`` follows :data:`COLUMNS`. ``breakdown`` maps
    ``(dimension, key)`` to ``[correct, n]`` over strict messages. ``bcubed_precision`` and
    ``bcubed_recall`` hold each clustered message's B-cubed terms in turn order (pooled in order
    over sessions for the point estimate, as the reference adds them).
    """

    session_id: str
    lang: str
    stats: list[float]
    outcomes: list[str]
    labels: list[str]
    correct: list[bool]
    mapping: dict[str, str]
    latencies: list[float]
    breakdown: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    bcubed_precision: list[float] = field(default_factory=list)
    bcubed_recall: list[float] = field(default_factory=list)


def mapping_for(session: Session, rows: Mapping[int, PredictionRow], mode: str) -> dict[str, str]:
    """Open mode: ``{label: thread}`` from :func:`match_labels` over the session's thread messages.

    Columns are every non-special label the session's turns received (one-offs' labels too);
    agreement counts thread messages only. Closed mode needs no matching and returns ``{}``.
    """
    if mode != "open":
        return {}
    labels: set[str] = set()
    agreement: Counter = Counter()
    for t in session.turns:
        row = rows.get(t.i)
        if row is None:
            continue
        label = row.pred
        if label not in SPECIAL:
            labels.add(label)
        if t.gold.thread is not None:
            agreement[(t.gold.thread, label)] += 1
    return match_labels(session.thread_ids(), labels, agreement)


def _usage_counts(rows_in_order: Sequence[PredictionRow | None]) -> tuple[int, int, int, int, int, list[float]]:
    """Cost accumulator (7.10): ``(rows, input, output, cached, calls, latencies)`` over a session's rows.

    A row made a model call when it carries a non-empty usage (``{}`` is none, as in the
    reference); latencies are those of rows routed by the model (no ``via`` counts as ``llm``).
    """
    n_rows = in_tok = out_tok = cached_tok = calls = 0
    latencies: list[float] = []
    for row in rows_in_order:
        if row is None:
            continue
        n_rows += 1
        u = row.usage
        if u is not None and (u.__pydantic_fields_set__ or u.__pydantic_extra__):
            in_tok += u.input
            out_tok += u.output
            cached_tok += u.cache_hit
            calls += 1
        if row.elapsed_ms is not None and (row.via is None or row.via == "llm"):
            latencies.append(row.elapsed_ms)
    return n_rows, in_tok, out_tok, cached_tok, calls, latencies


def _burst_counts(rows_in_order: Sequence[PredictionRow | None], strict: Sequence[bool],
                  correct: Sequence[bool]) -> tuple[int, ...]:
    """Burst accumulator (7.11): rows with ``burst``, replies held, and ``(n, correct)`` of three
    disjoint groups of strict messages: alone (``burst`` = 1), in a burst on one thread (``burst`` > 1,
    not ``mixed``), in a burst across threads (``burst`` > 1, ``mixed``).
    """
    burst_rows = waited = alone_n = alone_ok = one_n = one_ok = mixed_n = mixed_ok = 0
    for row, is_strict, ok in zip(rows_in_order, strict, correct):
        if row is None or row.burst is None:
            continue
        burst_rows += 1
        waited += bool(row.waited)
        if not is_strict:
            continue
        if row.burst == 1:
            alone_n += 1
            alone_ok += ok
        elif row.mixed:
            mixed_n += 1
            mixed_ok += ok
        else:
            one_n += 1
            one_ok += ok
    return burst_rows, waited, alone_n, alone_ok, one_n, one_ok, mixed_n, mixed_ok


def _switch_counts(golds: Sequence[str], labels: Sequence[str]) -> tuple[int, int, int]:
    """Switch accumulator (7.6): ``(tp, fp, fn)`` over thread messages in order.

    ``labels`` holds each thread message's raw label, or ``None`` for a special one (a question
    back or a failure is skipped over: the prediction's switch is from the last topic label).
    """
    tp = fp = fn = 0
    prev_gold: str | None = None
    prev_label: str | None = None
    for gold, label in zip(golds, labels):
        gold_switch = prev_gold is not None and gold != prev_gold
        pred_switch = label is not None and prev_label is not None and label != prev_label
        if gold_switch:
            if pred_switch:
                tp += 1
            else:
                fn += 1
        elif pred_switch:
            fp += 1
        prev_gold = gold
        if label is not None:
            prev_label = label
    return tp, fp, fn


def _cluster_counts(pairs: Sequence[tuple[str, str]]) -> tuple[int, int, int, int, list[float], list[float]]:
    """Clustering accumulator (7.7, 7.8) over ``(gold thread, label)`` pairs of thread messages with
    topic labels: ``(labels per thread summed, threads, threads per label summed, labels, B-cubed
    precision terms, recall terms)``.
    """
    labels_of_thread: dict[str, set[str]] = {}
    threads_of_label: dict[str, set[str]] = {}
    for gold, label in pairs:
        lt = labels_of_thread.get(gold)
        if lt is None:
            labels_of_thread[gold] = {label}
        else:
            lt.add(label)
        tl = threads_of_label.get(label)
        if tl is None:
            threads_of_label[label] = {gold}
        else:
            tl.add(gold)
    p_terms, r_terms = bcubed_terms(pairs)
    return (sum(len(v) for v in labels_of_thread.values()), len(labels_of_thread),
            sum(len(v) for v in threads_of_label.values()), len(threads_of_label), p_terms, r_terms)


def _breakdown_counts(session: Session, strict_turns: Sequence[int], correct: Sequence[bool]) -> dict[tuple[str, str], list[int]]:
    """Breakdown accumulator (7.11): ``{(dimension, key): [correct, n]}`` over strict messages."""
    by_action: dict[str, list[int]] = {}
    by_style: dict[str, list[int]] = {}
    by_tag: dict[str, list[int]] = {}
    turns = session.turns
    right = 0
    for k in strict_turns:
        t = turns[k]
        ok = correct[k]
        right += ok
        cell = by_action.get(t.gold.action)
        if cell is None:
            by_action[t.gold.action] = [int(ok), 1]
        else:
            cell[0] += ok
            cell[1] += 1
        cell = by_style.get(t.style)
        if cell is None:
            by_style[t.style] = [int(ok), 1]
        else:
            cell[0] += ok
            cell[1] += 1
        for tag in t.tags:
            cell = by_tag.get(tag)
            if cell is None:
                by_tag[tag] = [int(ok), 1]
            else:
                cell[0] += ok
                cell[1] += 1
    out: dict[tuple[str, str], list[int]] = {}
    if strict_turns:
        out[("lang", session.lang)] = [right, len(strict_turns)]
    for dim, cells in (("action", by_action), ("style", by_style), ("tag", by_tag)):
        for key, cell in cells.items():
            out[(dim, key)] = cell
    return out


def score_session(session: Session, rows: Mapping[int, PredictionRow], mode: str) -> SessionScore:
    """Replay one session under docs/score.md#the-metrics-exactly; ``rows`` maps turn index to its row.

    Assumes a validated session (turn ``i`` runs 0..n-1, gold threads name its threads) and that
    ``rows`` holds only rows of this session. A turn without a row counts as ``ERROR``. The replay
    decides each message's outcome (7.2) and counts accuracy, cost and refs; the named
    accumulators above count cost (7.10), switches, clusters, breakdowns and bursts from what it
    records. (Counters are plain local variables: this loop runs once per message of every run.)
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    is_open = mode == "open"
    thread_ids = session.thread_ids()
    known = frozenset(thread_ids)
    mapping = mapping_for(session, rows, mode)
    special_labels = SPECIAL
    undecided = UNDECIDED_JUDGE
    cost_of = OUTCOME_COST

    # what each topic has held so far: {label: {thread: count}}, insertion-ordered, so the first
    # thread a topic held wins a tie for its majority (as Counter.most_common(1) does)
    held: dict[str, dict[str, int]] = {}
    if not is_open:
        held = {tid: {tid: CLOSED_TOPIC_SEED} for tid in thread_ids}
    seen: set[str] = set()
    kinds = dict.fromkeys(OUTCOMES, 0)
    thread_n = strict_n = oneoff_n = strict_ok = lenient_ok = strict_cost = refs_n = refs_hit = 0

    rows_in_order = [rows.get(t.i) for t in session.turns]
    outcomes: list[str] = []
    labels: list[str] = []
    correct_list: list[bool] = []
    strict_list: list[bool] = []
    strict_turns: list[int] = []
    switch_golds: list[str] = []
    switch_labels: list[str | None] = []
    cluster_pairs: list[tuple[str, str]] = []

    for k, (t, row) in enumerate(zip(session.turns, rows_in_order)):
        g = t.gold
        gold = g.thread
        label = row.pred if row is not None else ERROR
        special = label in special_labels
        topic = None if special else held.get(label)
        fresh = not special and not topic
        if special:
            mapped = None
        elif is_open:
            mapped = mapping.get(label)
        else:
            mapped = label if label in known else None

        if gold is None:
            kind = "oneoff_isolated" if (fresh or special) else "oneoff_into_topic"
        elif label == CLARIFY:
            kind = "clarify"
        elif label == ERROR:
            kind = "error"
        elif fresh:
            kind = "correct" if (is_open and gold not in seen) else "spurious_new"
        else:
            majority = max(topic.items(), key=itemgetter(1))[0]
            if majority == gold:
                kind = "correct"
            elif gold not in seen:
                kind = "merged_new"
            else:
                kind = "wrong_existing"
        kinds[kind] += 1
        ok = gold is not None and mapped == gold
        outcomes.append(kind)
        labels.append(label)
        correct_list.append(ok)
        strict = gold is not None and not t.ambiguous
        strict_list.append(strict)

        if gold is None:
            oneoff_n += 1
            continue

        seen.add(gold)
        switch_golds.append(gold)
        if special:
            switch_labels.append(None)
        else:
            switch_labels.append(label)
            cluster_pairs.append((gold, label))
            if topic is None:
                topic = held[label] = {}
            topic[gold] = topic.get(gold, 0) + 1

        thread_n += 1
        if ok or (t.ambiguous and mapped is not None and mapped == t.judge.thread and t.judge.thread not in undecided):
            lenient_ok += 1
        if strict:
            strict_n += 1
            strict_ok += ok
            strict_cost += cost_of[kind]
            strict_turns.append(k)

        if g.refs:
            refs_n += 1
            predicted = row.refs if row is not None else None
            if predicted:
                gold_refs = g.refs
                for r in predicted:
                    m = mapping.get(r) if is_open else (r if r in known else None)
                    if m and m in gold_refs:
                        refs_hit += 1
                        break

    n_rows, in_tok, out_tok, cached_tok, calls, latencies = _usage_counts(rows_in_order)
    tp, fp, fn = _switch_counts(switch_golds, switch_labels)
    lt_sum, lt_n, tl_sum, tl_n, p_terms, r_terms = _cluster_counts(cluster_pairs)
    bursts = _burst_counts(rows_in_order, strict_list, correct_list)
    stats = [
        len(session.turns), thread_n, strict_n, thread_n - strict_n, oneoff_n, n_rows, strict_ok, lenient_ok,
        strict_cost, tp, fp, fn, lt_sum, lt_n, tl_sum, tl_n, sequential_sum(p_terms), sequential_sum(r_terms),
        len(cluster_pairs), refs_n, refs_hit, in_tok, out_tok, cached_tok, calls,
        *(kinds[o] for o in OUTCOMES), *bursts,
    ]
    return SessionScore(
        session_id=session.session_id,
        lang=session.lang,
        stats=stats,
        outcomes=outcomes,
        labels=labels,
        correct=correct_list,
        mapping=mapping,
        latencies=latencies,
        breakdown=_breakdown_counts(session, strict_turns, correct_list),
        bcubed_precision=p_terms,
        bcubed_recall=r_terms,
    )


# --- pooling --------------------------------------------------------------------------------------


def stats_matrix(scores: Sequence[SessionScore]) -> np.ndarray:
    """Sessions x :data:`COLUMNS` array of the sufficient statistics (what the bootstrap resamples)."""
    if not scores:
        return np.zeros((0, len(COLUMNS)), dtype=np.float64)
    return np.array([sc.stats for sc in scores], dtype=np.float64)


class _Columns(Mapping):
    """Column totals by name (what the table's formulas read), over the last axis of ``totals``."""

    __slots__ = ("_t",)

    def __init__(self, totals: np.ndarray):
        self._t = totals

    def __getitem__(self, name: str) -> np.ndarray:
        return self._t[..., COL[name]]

    def __iter__(self):
        return iter(COLUMNS)

    def __len__(self) -> int:
        return len(COLUMNS)


def derive(totals: np.ndarray, metrics: Sequence[Metric] = POOLED) -> dict[str, np.ndarray]:
    """The unrounded pooled metrics from column totals of shape ``(..., len(COLUMNS))``.

    Each value is its table entry's formula (:mod:`.table`) applied to the totals. NaN marks a
    metric with nothing to measure (accuracy without strict messages, one-off share without
    one-offs, switch figures without switches, B-cubed without clustered messages, ...): it prints
    as ``–``, never as 0.000. The latency percentiles are not pooled sums and are taken by
    :func:`latency_percentiles`.
    """
    cols = _Columns(np.asarray(totals, dtype=np.float64))
    return {m.key: m.formula(cols) for m in metrics}


def latency_percentiles(latencies: Iterable[float] | np.ndarray, *, reorder: bool = False) -> tuple[float | None, float | None]:
    """``(p50, p90)``: elements ``n // 2`` and ``int(0.9 * n)`` of the sorted latencies (None if none).

    A numpy array (integers or floats) is partitioned at those two places (the same elements as a
    sort), in place when ``reorder`` (the caller's array is then left reordered, without a copy
    of it); its elements come back as Python numbers.
    """
    if isinstance(latencies, np.ndarray):
        n = len(latencies)
        if not n:
            return None, None
        values = latencies if reorder else latencies.copy()
        values.partition(sorted({n // 2, int(n * 0.9)}))
        return values[n // 2].item(), values[int(n * 0.9)].item()
    values = sorted(latencies)
    n = len(values)
    if not n:
        return None, None
    return values[n // 2], values[int(n * 0.9)]


def pooled_bcubed(scores: Sequence[SessionScore]) -> tuple[float, float, float]:
    """B-cubed precision, recall, F1 over all sessions, adding the items' terms in order."""
    p = sequential_sum(x for sc in scores for x in sc.bcubed_precision)
    r = sequential_sum(x for sc in scores for x in sc.bcubed_recall)
    return pooled_prf(p, r, sum(len(sc.bcubed_precision) for sc in scores))


def pooled_prf(p_sum: float, r_sum: float, n: int) -> tuple[float, float, float]:
    """B-cubed precision, recall, F1 from the pooled sums of ``n`` items; NaN (undefined, not 0)
    for all three when nothing was clustered."""
    return prf(p_sum, r_sum, n) if n else (np.nan, np.nan, np.nan)


def chunked_latency_percentiles(chunks: Sequence[np.ndarray]) -> tuple[float | None, float | None]:
    """:func:`latency_percentiles` of the latencies held in ``chunks`` (arrays of non-negative
    numbers), the same elements as of ``np.concatenate(chunks)``, without joining them: each
    order statistic is found by a search over the values that counts, chunk by chunk, the
    latencies at or below a guess. Returns ``(p50, p90)``."""
    if not sum(len(c) for c in chunks):
        return None, None
    dtype = np.result_type(*chunks)  # as np.concatenate would widen them (empty ones too)
    chunks = [c for c in chunks if len(c)]
    if dtype.kind == "f" and any(np.signbit(c).any() for c in chunks):  # -0.0: not ordered by its bits
        return latency_percentiles(np.concatenate(chunks), reorder=True)
    n = sum(len(c) for c in chunks)
    return _kth(chunks, n // 2, dtype), _kth(chunks, int(n * 0.9), dtype)


def _kth(chunks: Sequence[np.ndarray], k: int, dtype: np.dtype) -> float:
    """The element ``k`` (from 0) of the sorted values of ``chunks``, as a Python number."""
    floats = dtype.kind == "f"

    def value(key: int) -> Any:  # non-negative floats order as their bits do
        return np.array([key], dtype=np.int64).view(np.float64)[0] if floats else np.int64(key)

    def key_of(x: Any) -> int:
        return int(np.array([x], dtype=np.float64).view(np.int64)[0]) if floats else int(x)

    lo = min(key_of(c.min()) for c in chunks)
    hi = max(key_of(c.max()) for c in chunks)
    while lo < hi:  # the least value with more than k values at or below it is element k
        mid = (lo + hi) // 2
        if sum(int(np.count_nonzero(c <= value(mid))) for c in chunks) > k:
            hi = mid
        else:
            lo = mid + 1
    return np.array([value(lo)]).astype(dtype)[0].item()


def point_metrics(
    totals: np.ndarray, latency: tuple[float | None, float | None], bcubed: tuple[float, float, float] | None = None,
) -> dict[str, float | None]:
    """Every metric of section 7, rounded as the JSON holds it, from column totals and the latency
    percentiles (:func:`latency_percentiles`).

    ``bcubed`` (from :func:`pooled_bcubed`) replaces the B-cubed figures derived from the totals,
    which add per-session sums and can differ in the last bit.
    """
    values = derive(totals)
    if bcubed is not None:
        values["bcubed_precision"], values["bcubed_recall"], values["bcubed_f1"] = bcubed
    out = {name: rounded(name, float(values[name])) for name in values}
    p50, p90 = latency
    out["latency_p50_ms"] = p50
    out["latency_p90_ms"] = p90
    return out


def share(correct: int, n: int) -> float | None:
    """A rate as the JSON holds it (the table's rate decimals), ``None`` over nothing."""
    return round(correct / n, RATE) if n else None


def pool_breakdowns(cells: Iterable[dict[tuple[str, str], list[int]]],
                    into: dict[tuple[str, str], list[int]] | None = None) -> dict[tuple[str, str], list[int]]:
    """``{(dimension, key): [correct, n]}`` summed over ``cells`` (per-session or per-block
    breakdowns), added to ``into`` when given."""
    pooled: dict[tuple[str, str], list[int]] = {} if into is None else into
    for breakdown in cells:
        for key, (k, n) in breakdown.items():
            cell = pooled.get(key)
            if cell is None:
                pooled[key] = [k, n]
            else:
                cell[0] += k
                cell[1] += n
    return pooled


def grouped_breakdowns(pooled: dict[tuple[str, str], list[int]]) -> dict[str, dict[str, list[int]]]:
    """Pooled cells as the document holds them: ``{dimension: {key: [correct, n]}}``, keys sorted."""
    out: dict[str, dict[str, list[int]]] = {dim: {} for dim in BREAKDOWN_DIMENSIONS}
    for (dim, key), cell in sorted(pooled.items()):
        out[dim][key] = cell
    return out


def merge_breakdowns(scores: Iterable[SessionScore]) -> dict[str, dict[str, list[int]]]:
    """``{dimension: {key: [correct, n]}}`` over strict messages of all sessions, keys sorted."""
    return grouped_breakdowns(pool_breakdowns(sc.breakdown for sc in scores))
