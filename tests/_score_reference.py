"""The routing metrics' definition read message by message (docs/score.md#the-metrics-exactly):
the reference the block scorer (``interleave_bench/score/block.py``) is held equal to.

Each session is replayed in turn order: what each chosen topic held before a message decides its
outcome; the counts follow the scorer's ``COLUMNS``. Slow and plain on purpose.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Iterable, Mapping, Sequence

import numpy as np
from scipy.optimize import linear_sum_assignment

from interleave_bench.schema import CLARIFY, ERROR, JUDGE_AMBIGUOUS, JUDGE_NONE, MODES, PredictionRow, Session
from interleave_bench.score.bcubed import bcubed_terms, sequential_sum
from interleave_bench.score.routing import CLOSED_TOPIC_SEED, OUTCOME_COST, OUTCOMES, SPECIAL

#: what the independent reading says when it names no single thread
UNDECIDED_JUDGE = frozenset({JUDGE_NONE, JUDGE_AMBIGUOUS})


def match_labels(
    thread_ids: Iterable[str], labels: Iterable[str], agreement: Mapping[tuple[str, str], int]
) -> dict[str, str]:
    """``{label: thread}`` maximising the summed agreement, one label per thread at most.

    ``agreement[(thread, label)]`` is the number of thread messages of ``thread`` that got
    ``label`` (missing pairs count zero). ``labels`` should hold only topic labels (no special
    ones). A matched pair with zero agreement maps nothing, so a label that never shared a message
    with any thread stays unmapped.
    """
    rows = sorted(set(thread_ids))
    cols = sorted(set(labels))
    if not rows or not cols:
        return {}
    weights = np.array([[agreement.get((t, lab), 0) for lab in cols] for t in rows], dtype=np.int64)
    r, c = linear_sum_assignment(-weights)
    return {cols[j]: rows[i] for i, j in zip(r.tolist(), c.tolist()) if weights[i, j] > 0}


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


def _usage_counts(rows_in_order: Sequence[PredictionRow | None]) -> tuple[int, int, int, int, int, int, list[float]]:
    """Cost accumulator (7.10): ``(rows, input, output, cached, calls, unreported, latencies)`` over a
    session's rows (``unreported``: the calls whose tokens the provider did not report).

    A row made a model call when it carries a non-empty usage (``{}`` is none, as in the
    reference); latencies are those of rows routed by the model (no ``via`` counts as ``llm``).
    """
    n_rows = in_tok = out_tok = cached_tok = calls = unreported = 0
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
            unreported += u.unreported
            calls += 1
        if row.elapsed_ms is not None and (row.via is None or row.via == "llm"):
            latencies.append(row.elapsed_ms)
    return n_rows, in_tok, out_tok, cached_tok, calls, unreported, latencies


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

    n_rows, in_tok, out_tok, cached_tok, calls, unreported, latencies = _usage_counts(rows_in_order)
    error_rows = sum(row is not None and row.pred == ERROR for row in rows_in_order)
    tp, fp, fn = _switch_counts(switch_golds, switch_labels)
    lt_sum, lt_n, tl_sum, tl_n, p_terms, r_terms = _cluster_counts(cluster_pairs)
    bursts = _burst_counts(rows_in_order, strict_list, correct_list)
    stats = [
        len(session.turns), thread_n, strict_n, thread_n - strict_n, oneoff_n, n_rows, error_rows, strict_ok, lenient_ok,
        strict_cost, tp, fp, fn, lt_sum, lt_n, tl_sum, tl_n, sequential_sum(p_terms), sequential_sum(r_terms),
        len(cluster_pairs), refs_n, refs_hit, in_tok, out_tok, cached_tok, calls, unreported,
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


def run_clusterings(
    sessions: Sequence[Session], by_session: Mapping[str, Mapping[int, PredictionRow]]
) -> tuple[np.ndarray, np.ndarray]:
    """Gold and predicted cluster codes of every message of ``sessions``, pooled over sessions.

    Clusters are session-qualified (a label in two sessions is two clusters). Gold: the message's
    thread, or a cluster of its own for a one-off. Predicted: the row's label, or a cluster of its
    own for ``CLARIFY``, ``ERROR`` or no row. Codes are dense, in order of first appearance.
    """
    gold: list[int] = []
    pred: list[int] = []
    n_gold = n_pred = 0
    for s in sessions:
        rows = by_session.get(s.session_id, {})
        threads: dict[str, int] = {}
        topics: dict[str, int] = {}
        for t in s.turns:
            thread = t.gold.thread
            if thread is None:
                gold.append(n_gold)
                n_gold += 1
            else:
                code = threads.get(thread)
                if code is None:
                    code = threads[thread] = n_gold
                    n_gold += 1
                gold.append(code)
            row = rows.get(t.i)
            if row is None or row.pred in SPECIAL:
                pred.append(n_pred)
                n_pred += 1
            else:
                code = topics.get(row.pred)
                if code is None:
                    code = topics[row.pred] = n_pred
                    n_pred += 1
                pred.append(code)
    return np.array(gold, dtype=np.int64), np.array(pred, dtype=np.int64)
