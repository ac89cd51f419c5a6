"""The routing metrics of DESIGN.md section 7, exactly as defined there.

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
from typing import Iterable, Mapping, Sequence

import numpy as np

from ..schema import CLARIFY, ERROR, JUDGE_AMBIGUOUS, JUDGE_NONE, SPECIAL_LABELS, PredictionRow, Session
from .bcubed import bcubed_terms, prf, sequential_sum
from .matching import match_labels

SPECIAL = frozenset(SPECIAL_LABELS)
MODES = ("closed", "open")
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
COLUMNS = (
    "messages",  # every turn of the session
    "thread_messages",  # gold.thread not null
    "strict",  # thread messages not ambiguous
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
    "alone_n",
    "alone_correct",
    "in_burst_n",
    "in_burst_correct",
    "mixed_n",
    "mixed_correct",
)
COL = {name: k for k, name in enumerate(COLUMNS)}

#: decimals of each metric in the JSON, as the reference rounds them: rates 4, topics/thread and
#: threads/topic 3, tokens per message 1, the share of messages with a model call 3
METRIC_DECIMALS = {
    "accuracy": 4,
    "accuracy_lenient": 4,
    "ambiguous_share": 4,
    "weighted_error": 4,
    "oneoff_into_topic": 4,
    "switch_precision": 4,
    "switch_recall": 4,
    "switch_f1": 4,
    "topics_per_thread": 3,
    "threads_per_topic": 3,
    "bcubed_precision": 4,
    "bcubed_recall": 4,
    "bcubed_f1": 4,
    "refs_recall": 4,
    "input_tokens_per_message": 1,
    "output_tokens_per_message": 1,
    "cached_tokens_per_message": 1,
    "model_calls_share": 3,
}
#: the metrics of a score file, in order (the latency percentiles are taken as they are)
METRICS = (*METRIC_DECIMALS, "latency_p50_ms", "latency_p90_ms")
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


def score_session(session: Session, rows: Mapping[int, PredictionRow], mode: str) -> SessionScore:
    """Replay one session under DESIGN.md 7.1 to 7.11; ``rows`` maps turn index to its row.

    Assumes a validated session (turn ``i`` runs 0..n-1, gold threads name its threads) and that
    ``rows`` holds only rows of this session. A turn without a row counts as ``ERROR``. (Counters
    are plain local variables: this loop runs once per message of every run scored.)
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
    prev_gold: str | None = None
    prev_label: str | None = None
    labels_of_thread: dict[str, set[str]] = {}
    threads_of_label: dict[str, set[str]] = {}
    bcubed_pairs: list[tuple[str, str]] = []
    by_action: dict[str, list[int]] = {}
    by_style: dict[str, list[int]] = {}
    by_tag: dict[str, list[int]] = {}
    kinds = dict.fromkeys(OUTCOMES, 0)

    n_rows = thread_n = strict_n = oneoff_n = 0
    strict_ok = lenient_ok = strict_cost = 0
    tp = fp = fn = 0
    refs_n = refs_hit = 0
    in_tok = out_tok = cached_tok = calls = 0
    burst_rows = waited = alone_n = alone_ok = burst_n = burst_ok = mixed_n = mixed_ok = 0

    outcomes: list[str] = []
    labels: list[str] = []
    correct_list: list[bool] = []
    latencies: list[float] = []

    for t in session.turns:
        row = rows.get(t.i)
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

        if row is not None:
            n_rows += 1
            u = row.usage
            # a row made a model call when it carries a non-empty usage ({} is none, as in the reference)
            if u is not None and (u.__pydantic_fields_set__ or u.__pydantic_extra__):
                in_tok += u.input
                out_tok += u.output
                cached_tok += u.cache_hit
                calls += 1
            if row.elapsed_ms is not None and (row.via is None or row.via == "llm"):
                latencies.append(row.elapsed_ms)
            if row.burst is not None:
                burst_rows += 1
                waited += bool(row.waited)
                if strict:
                    if row.burst == 1:
                        alone_n += 1
                        alone_ok += ok
                    else:
                        burst_n += 1
                        burst_ok += ok
                    if row.mixed:
                        mixed_n += 1
                        mixed_ok += ok

        if gold is None:
            oneoff_n += 1
            continue

        seen.add(gold)
        if not special:
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
            key = g.action
            cell = by_action.get(key)
            if cell is None:
                by_action[key] = [int(ok), 1]
            else:
                cell[0] += ok
                cell[1] += 1
            key = t.style
            cell = by_style.get(key)
            if cell is None:
                by_style[key] = [int(ok), 1]
            else:
                cell[0] += ok
                cell[1] += 1
            for key in t.tags:
                cell = by_tag.get(key)
                if cell is None:
                    by_tag[key] = [int(ok), 1]
                else:
                    cell[0] += ok
                    cell[1] += 1

        # a switch is a change of thread between consecutive thread messages; the prediction's
        # is a change from the last topic label (questions and failures are skipped over)
        gold_switch = prev_gold is not None and gold != prev_gold
        pred_switch = prev_label is not None and label != prev_label and not special
        if gold_switch:
            if pred_switch:
                tp += 1
            else:
                fn += 1
        elif pred_switch:
            fp += 1
        prev_gold = gold
        if not special:
            prev_label = label
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
            bcubed_pairs.append((gold, label))

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

    p_terms, r_terms = bcubed_terms(bcubed_pairs)
    values = {
        "messages": len(session.turns),
        "thread_messages": thread_n,
        "strict": strict_n,
        "oneoffs": oneoff_n,
        "rows": n_rows,
        "strict_correct": strict_ok,
        "lenient_correct": lenient_ok,
        "strict_cost": strict_cost,
        "switch_tp": tp,
        "switch_fp": fp,
        "switch_fn": fn,
        "thread_labels_sum": sum(len(v) for v in labels_of_thread.values()),
        "thread_labels_n": len(labels_of_thread),
        "label_threads_sum": sum(len(v) for v in threads_of_label.values()),
        "label_threads_n": len(threads_of_label),
        "bcubed_p_sum": sequential_sum(p_terms),
        "bcubed_r_sum": sequential_sum(r_terms),
        "bcubed_n": len(bcubed_pairs),
        "refs_n": refs_n,
        "refs_hit": refs_hit,
        "input_tokens": in_tok,
        "output_tokens": out_tok,
        "cached_tokens": cached_tok,
        "calls": calls,
        **{"outcome_" + k: v for k, v in kinds.items()},
        "burst_rows": burst_rows,
        "burst_waited": waited,
        "alone_n": alone_n,
        "alone_correct": alone_ok,
        "in_burst_n": burst_n,
        "in_burst_correct": burst_ok,
        "mixed_n": mixed_n,
        "mixed_correct": mixed_ok,
    }
    breakdown: dict[tuple[str, str], list[int]] = {}
    if strict_n:
        breakdown[("lang", session.lang)] = [strict_ok, strict_n]
    for dim, cells in (("action", by_action), ("style", by_style), ("tag", by_tag)):
        for key, cell in cells.items():
            breakdown[(dim, key)] = cell
    return SessionScore(
        session_id=session.session_id,
        lang=session.lang,
        stats=[values[name] for name in COLUMNS],
        outcomes=outcomes,
        labels=labels,
        correct=correct_list,
        mapping=mapping,
        latencies=latencies,
        breakdown=breakdown,
        bcubed_precision=p_terms,
        bcubed_recall=r_terms,
    )


# --- pooling --------------------------------------------------------------------------------------


def stats_matrix(scores: Sequence[SessionScore]) -> np.ndarray:
    """Sessions x :data:`COLUMNS` array of the sufficient statistics (what the bootstrap resamples)."""
    if not scores:
        return np.zeros((0, len(COLUMNS)), dtype=np.float64)
    return np.array([sc.stats for sc in scores], dtype=np.float64)


def _div(num: np.ndarray, den: np.ndarray, empty: float = np.nan) -> np.ndarray:
    """``num / den`` elementwise, ``empty`` where ``den`` is 0."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = num / den
    return np.where(den > 0, out, empty)


def _f1(p: np.ndarray, r: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = 2 * p * r / (p + r)
    return np.where(p + r > 0, out, 0.0)


def derive(totals: np.ndarray) -> dict[str, np.ndarray]:
    """The unrounded pooled metrics from column totals of shape ``(..., len(COLUMNS))``.

    NaN marks a metric with nothing to measure (accuracy without strict messages, one-off share
    without one-offs, switch precision without predicted switches, switch F1 without any switch,
    B-cubed without clustered messages, ...): it prints as ``–``, never as 0.000. The latency percentiles are not pooled sums and are
    taken by :func:`latency_percentiles`.
    """
    T = np.asarray(totals, dtype=np.float64)

    def col(name: str) -> np.ndarray:
        return T[..., COL[name]]

    tp, fp, fn = col("switch_tp"), col("switch_fp"), col("switch_fn")
    sp, sr = _div(tp, tp + fp), _div(tp, tp + fn)
    switch_f1 = np.where(tp + fp + fn > 0, _f1(_div(tp, tp + fp, 0.0), _div(tp, tp + fn, 0.0)), np.nan)
    bp, br = _div(col("bcubed_p_sum"), col("bcubed_n")), _div(col("bcubed_r_sum"), col("bcubed_n"))
    bcubed_f1 = np.where(col("bcubed_n") > 0, _f1(np.nan_to_num(bp), np.nan_to_num(br)), np.nan)
    messages = col("messages")
    return {
        "accuracy": _div(col("strict_correct"), col("strict")),
        "accuracy_lenient": _div(col("lenient_correct"), col("thread_messages")),
        "ambiguous_share": 1 - _div(col("strict"), col("thread_messages")),
        "weighted_error": _div(col("strict_cost"), col("strict")),
        "oneoff_into_topic": _div(col("outcome_oneoff_into_topic"), col("oneoffs")),
        "switch_precision": sp,
        "switch_recall": sr,
        "switch_f1": switch_f1,
        "topics_per_thread": _div(col("thread_labels_sum"), col("thread_labels_n")),
        "threads_per_topic": _div(col("label_threads_sum"), col("label_threads_n")),
        "bcubed_precision": bp,
        "bcubed_recall": br,
        "bcubed_f1": bcubed_f1,
        "refs_recall": _div(col("refs_hit"), col("refs_n")),
        "input_tokens_per_message": _div(col("input_tokens"), messages),
        "output_tokens_per_message": _div(col("output_tokens"), messages),
        "cached_tokens_per_message": _div(col("cached_tokens"), messages),
        "model_calls_share": _div(col("calls"), messages),
    }


def rounded(name: str, value: float | None) -> float | None:
    """A metric value as the JSON holds it: rounded per :data:`METRIC_DECIMALS`, ``None`` if undefined."""
    if value is None or not np.isfinite(value):
        return None
    decimals = METRIC_DECIMALS.get(name)
    return round(float(value), decimals) if decimals is not None else float(value)


def latency_percentiles(latencies: Iterable[float]) -> tuple[float | None, float | None]:
    """``(p50, p90)``: elements ``n // 2`` and ``int(0.9 * n)`` of the sorted latencies (None if none)."""
    values = sorted(latencies)
    n = len(values)
    if not n:
        return None, None
    return values[n // 2], values[int(n * 0.9)]


def pooled_bcubed(scores: Sequence[SessionScore]) -> tuple[float, float, float]:
    """B-cubed precision, recall, F1 over all sessions, adding the items' terms in order."""
    p = sequential_sum(x for sc in scores for x in sc.bcubed_precision)
    r = sequential_sum(x for sc in scores for x in sc.bcubed_recall)
    n = sum(len(sc.bcubed_precision) for sc in scores)
    return prf(p, r, n) if n else (np.nan, np.nan, np.nan)  # nothing clustered: undefined, not 0


def point_metrics(
    totals: np.ndarray, latencies: Iterable[float], bcubed: tuple[float, float, float] | None = None
) -> dict[str, float | None]:
    """Every metric of section 7, rounded as the JSON holds it, from column totals and latencies.

    ``bcubed`` (from :func:`pooled_bcubed`) replaces the B-cubed figures derived from the totals,
    which add per-session sums and can differ in the last bit.
    """
    values = derive(totals)
    if bcubed is not None:
        values["bcubed_precision"], values["bcubed_recall"], values["bcubed_f1"] = bcubed
    out = {name: rounded(name, float(values[name])) for name in METRIC_DECIMALS}
    p50, p90 = latency_percentiles(latencies)
    out["latency_p50_ms"] = p50
    out["latency_p90_ms"] = p90
    return out


def share(correct: int, n: int) -> float | None:
    """A rate as the JSON holds it (4 decimals), ``None`` over nothing."""
    return round(correct / n, 4) if n else None


def merge_breakdowns(scores: Iterable[SessionScore]) -> dict[str, dict[str, list[int]]]:
    """``{dimension: {key: [correct, n]}}`` over strict messages of all sessions, keys sorted."""
    pooled: dict[tuple[str, str], list[int]] = {}
    for sc in scores:
        for key, (k, n) in sc.breakdown.items():
            cell = pooled.get(key)
            if cell is None:
                pooled[key] = [k, n]
            else:
                cell[0] += k
                cell[1] += n
    out: dict[str, dict[str, list[int]]] = {dim: {} for dim in BREAKDOWN_DIMENSIONS}
    for (dim, key), cell in sorted(pooled.items()):
        out[dim][key] = cell
    return out
