"""The routing metrics of docs/score.md#the-metrics-exactly: the outcomes and their costs, the
per-session counts every metric is computed from, and the pooling.

A block of sessions is scored by :func:`~.block.score_block` into one vector of sufficient
statistics per session (counts and sums, :data:`COLUMNS`). Every pooled metric is a function of
the column totals of those vectors (:func:`derive`, each metric's table entry naming the counts
its formula reads), so the point estimate and each bootstrap resample over sessions use the same
formulas and the scorer never re-scores a session to resample it. :func:`score_session` scores
one session and says what each of its messages came to.

Pure functions: sessions and rows in, numbers out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import numpy as np

from ..schema import MODES, SPECIAL_LABELS, PredictionRow, Session, Turn

from .table import RATE, Metric, family, metric, rounded

if TYPE_CHECKING:
    from .block import SessionScore

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

#: the per-session sufficient statistics; every pooled metric is a function of their totals
#: (the counts the formulas of :mod:`.table` read), in the order :func:`score_session` lists them
COLUMNS = (
    "messages",  # every turn of the session
    "thread_messages",  # gold.thread not null
    "strict",  # thread messages not ambiguous
    "ambiguous",  # thread messages that are ambiguous
    "oneoffs",  # gold.thread null
    "rows",  # turns that have a prediction row
    "error_rows",  # rows labelled ERROR: decisions the router failed to make
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
    "unreported",  # calls whose tokens the provider did not report (usage.unreported): cost unknown
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


def score_session(session: Session, rows: Mapping[int, PredictionRow], mode: str) -> "SessionScore":
    """One session scored (docs/score.md#the-metrics-exactly): what each of its messages came to;
    ``rows`` maps turn index to its row (a turn without one counts as ``ERROR``). The session is
    scored as a block of one by :func:`~.block.score_block`, as every run is."""
    from .block import score_block, session_scores
    from .columnar import record_columns
    from .datafile import columns_of

    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    data = columns_of([session])
    chosen = [row for i, row in rows.items() if 0 <= i < len(session.turns)]
    block = score_block(data, record_columns(chosen, data, [0] * len(chosen)), "all", mode, detail=True)
    scored = session_scores(data, block, [0])[0]
    if len(block.matrix):
        scored.counts = block.matrix[0].tolist()
        scored.p_terms, scored.r_terms = block.p_terms.tolist(), block.r_terms.tolist()
    return scored


# --- pooling --------------------------------------------------------------------------------------


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


def exact_metrics(totals: np.ndarray, bcubed: tuple[float, float, float] | None = None) -> dict[str, float]:
    """Every pooled metric of section 7, unrounded (NaN where undefined), from column totals.

    ``bcubed`` (the run's B-cubed sums added item by item, in message order) replaces the B-cubed
    figures derived from the totals, which add per-session sums and can differ in the last bit.
    """
    values = {name: float(v) for name, v in derive(totals).items()}
    if bcubed is not None:
        values["bcubed_precision"], values["bcubed_recall"], values["bcubed_f1"] = map(float, bcubed)
    return values


def point_metrics(
    totals: np.ndarray, latency: tuple[float | None, float | None], bcubed: tuple[float, float, float] | None = None,
) -> dict[str, float | None]:
    """Every metric of section 7, rounded as the JSON holds it, from column totals and the latency
    percentiles (:func:`latency_percentiles`), with ``bcubed`` as :func:`exact_metrics` takes it."""
    out = {name: rounded(name, value) for name, value in exact_metrics(totals, bcubed).items()}
    p50, p90 = latency
    out["latency_p50_ms"] = p50
    out["latency_p90_ms"] = p90
    return out


def share(correct: int, n: int) -> float | None:
    """A rate as the JSON holds it (the table's rate decimals), ``None`` over nothing."""
    return round(correct / n, RATE) if n else None


def ambiguity_counts(turns: Iterable[Turn]) -> tuple[int, int]:
    """``(ambiguous, thread_messages)`` of ``turns`` as a score document counts them: the
    messages with a gold thread (a one-off is none), and those of them the independent reading
    disputes (marked ``ambiguous``; the others are the strict messages)."""
    ambiguous = thread_messages = 0
    for turn in turns:
        if turn.gold.thread is not None:
            thread_messages += 1
            ambiguous += turn.ambiguous
    return ambiguous, thread_messages


def ambiguous_share(ambiguous: int, thread_messages: int) -> float | None:
    """The ``ambiguous_share`` metric of :func:`ambiguity_counts`' counts: its table entry's
    formula, rounded as a score file holds it; ``None`` without thread messages. The one figure
    ``validate``, ``stats`` and a score document give of a data set's ambiguity."""
    entry = metric("ambiguous_share")
    counts = {"strict": thread_messages - ambiguous, "thread_messages": thread_messages}
    return rounded(entry.key, float(entry.formula(counts)))


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


# --- a run's decisions -------------------------------------------------------------------------------


def routes_strict_as_gold(doc: Mapping[str, Any]) -> bool:
    """Whether a run's score document routes every one of its strict messages to its gold thread:
    accuracy exactly 1, counted, not rounded (each strict message is counted once in
    ``breakdowns.action``, under its gold action, with whether it reached its gold thread).

    The strict messages are all that ``accuracy`` and ``weighted_error`` count: a run right on every
    one of them has the oracle baseline's figures there, whatever it did with ambiguous messages,
    one-offs or refs."""
    strict = (doc.get("counts") or {}).get("strict") or 0
    by_action = ((doc.get("breakdowns") or {}).get("action") or {}).values()
    return strict > 0 and sum(cell["n"] for cell in by_action) == strict == sum(cell["correct"] for cell in by_action)


def decisions_fingerprint(rows: Iterable[PredictionRow], mode: str, sessions: Mapping[str, Session]) -> str:
    """The routing decisions of a run's rows for ``sessions`` (those scored, by id), ``sha256:<hex>``.

    A decision is what the scorer reads of a row to give the routing figures
    (docs/score.md#the-metrics-exactly), per session and turn, and nothing else of it:

    - the label the message is routed to, as the scorer reads it: a thread id in closed mode is
      that thread; any other label (an open-mode label, a closed-mode label that names no thread of
      its session) is only a name, whose messages are grouped, so a session's such labels are
      numbered in the order of first use (``CLARIFY`` and ``ERROR`` kept as they are);
    - whether its refs score: refs are read only on a thread message with gold refs
      (``refs_recall``), where what counts is whether one of them, mapped as the label is (the
      thread of that id in closed mode, open mode's matching of labels to threads), is one of its
      gold refs. A ref anywhere else (on a one-off, on a message without gold refs), a ref to no
      thread, a second ref where one already scores, any ref that misses: none of them changes a
      figure, so none of them makes other decisions.

    Nothing else of a row counts (``policy``, ``via``, ``model``, ``usage``, times, bursts,
    confidence): a run relabelled, or edited where the scorer does not read, is the same
    decisions. Lines sorted and hashed as :func:`~interleave_bench.fingerprints.sorted_lines_fingerprint` does.
    """
    import json
    from collections import defaultdict

    from ..fingerprints import sorted_lines_fingerprint

    by_session: dict[str, list[PredictionRow]] = defaultdict(list)
    for r in rows:
        if r.session_id in sessions:
            by_session[r.session_id].append(r)
    lines = []
    is_open = mode == "open"
    for sid, turns in by_session.items():
        session = sessions[sid]
        turns = sorted((r for r in turns if 0 <= r.i < len(session.turns)), key=lambda r: r.i)
        threads = {t.id for t in session.threads}
        names: dict[str, int] = {}
        for r in turns:
            if r.pred not in SPECIAL and (is_open or r.pred not in threads):
                names.setdefault(r.pred, len(names) + 1)
        # which refs score, as the scorer finds them (a session whose rows name no ref has none)
        hits = score_session(session, {r.i: r for r in turns}, mode).refs_hit if any(r.refs for r in turns) else ()
        for r in turns:
            # an open label's number is text, as it was first recorded; a closed one's a number, never a thread id
            label = str(names[r.pred]) if is_open and r.pred in names else names.get(r.pred, r.pred)
            decision = {"session_id": sid, "i": r.i, "pred": label, "refs_hit": True if hits and hits[r.i] else None}
            lines.append(json.dumps({k: v for k, v in decision.items() if v is not None}, sort_keys=True,
                                    separators=(",", ":"), ensure_ascii=False))
    return sorted_lines_fingerprint(sorted(lines))

