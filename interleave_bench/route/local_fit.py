"""Fitting the ``local`` router: its weights, its confidence calibration, its reliability table.

Used by :mod:`.local_corpora` (the fit across corpora behind ``scripts/fit_local.py``, which writes
``interleave_bench/data/local/weights.json``) and by the tests. Everything here is deterministic:
the same sessions give the same file.

1. **Weights.** Every message of the ``dev`` sessions is replayed with its gold history (each
   topic holds exactly its thread's earlier messages; one-offs sit in topics of their own) and
   the target is the candidate gold names (a topic, a new topic in open mode, or a one-off). The
   weights maximise the conditional log-likelihood of the targets (a multinomial logit over each
   message's candidates) with an L2 penalty on their distance from :func:`bm25_prior` (trusting
   bm25's choice), by L-BFGS from that prior. In open mode (:data:`OWN_HISTORY_IN`) the fit is
   done again with every message seen twice: in its gold history and in the history the first
   weights make by routing each message themselves (:func:`own_examples`), where the target is
   the topic that has held the message's thread most.
2. **Calibration.** The router routes sessions itself (its own history, its own mistakes) with
   weights that never saw them, and each strict message's decision is marked right or wrong
   exactly as the scorer marks it (:func:`~interleave_bench.score.routing.score_session`, which in
   open mode maps labels to threads first). An isotonic fit (pool adjacent violators) of
   right-or-wrong on the winning probability gives the monotone map from probability to confidence.
3. **Reliability table.** Confidence bins against the observed accuracy in each, and the expected
   calibration error, as every run's score document gives them (:mod:`interleave_bench.score.calibration`).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Optional, Sequence

import numpy as np
from scipy.optimize import minimize

from ..schema import PredictionRow, Session
from ..score.routing import score_session
from .base import conversation_of
from .local import (
    BM25_CHOICE_FEATURES,
    FEATURES,
    KIND_FEATURES,
    NEW,
    ONEOFF,
    ONEOFF_TITLE_PREFIX,
    CHAT_KINDS,
    Calibration,
    LocalRouter,
    ModeWeights,
    ProfileCache,
    best_of,
    candidates,
    chat_kind,
    split_weights,
)
from .local_background import EMPTY, Background
from .runner import RouteOptions, route_session
from .topic_state import TopicState
from .text import short_title

MODES = ("closed", "open")
#: the L2 penalties tried (the loss is summed over messages): the one whose weights do best on
#: corpora left out of their fit is used (``local_corpora.choose_penalty``). Weak, a fit learns
#: its corpora's habits; strong, it stays near bm25's decisions (:func:`bm25_prior`)
L2_GRID = (3.0, 10.0, 30.0, 100.0)
#: open mode's penalty as a share of closed mode's: an open-mode message has fewer candidates
#: (the topics made so far), so its likelihood says less and a smaller penalty weighs as much
OPEN_L2_SHARE = 1 / 3
#: the weight of bm25's choice in the prior: a decision bm25 makes is e^3 (about 20) times as
#: likely as any other candidate before the fit moves anything
BM25_PRIOR = 3.0
#: the share of the penalty on a feature of one kind of chat (:data:`~.local.KIND_FEATURES`): it
#: is learnt from that kind's corpus alone and cannot move a chat of another kind, so it may follow
#: its corpus closely
KIND_PENALTY_SHARE = 0.02
#: session folds of the cross-fitted calibration: each session is routed by weights fitted on the
#: other folds, so its confidence is judged on sessions the weights never saw
FOLDS = 3
#: L-BFGS iterations: the problem is small and smooth; it converges well before this
MAX_ITER = 500
#: steps kept in the calibration map: enough for a smooth curve, small enough to read
MAX_KNOTS = 24
#: smallest distance between two calibration knots (probabilities tied at a block edge)
KNOT_GAP = 1e-9
#: messages a calibration step needs: fewer, and its accuracy is too noisy to hold on other data
MIN_STEP_MESSAGES = 300
#: a bin needs this many messages before its gap between confidence and accuracy means something
RELIABILITY_MIN_N = 100
#: largest gap between confidence and observed accuracy allowed in such a bin
RELIABILITY_TOLERANCE = 0.05


@dataclass(frozen=True)
class Examples:
    """Training examples: stacked candidate rows, which message each row belongs to, the targets.

    ``rows`` has one feature row per candidate; ``group`` the message index of each row (rows of
    one message are contiguous); ``target`` the row index of each message's gold candidate.
    """

    rows: np.ndarray
    group: np.ndarray
    target: np.ndarray
    #: per message: its weight in the loss (1 unless corpora are balanced, see :func:`pooled`)
    weight: Optional[np.ndarray] = None

    def weighted(self, w: float) -> "Examples":
        """The same examples, each message weighing ``w``."""
        return Examples(self.rows, self.group, self.target, np.full(len(self.target), w))


def concat(parts: Sequence[Examples]) -> Examples:
    """The examples of ``parts`` as one set (weights dropped: one corpus's pieces weigh alike)."""
    parts = [p for p in parts if len(p.target)]
    if not parts:
        return Examples(np.zeros((0, len(FEATURES))), np.zeros(0, dtype=int), np.zeros(0, dtype=int))
    groups, targets, offset, msgs = [], [], 0, 0
    for p in parts:
        groups.append(p.group + msgs)
        targets.append(p.target + offset)
        offset += len(p.rows)
        msgs += len(p.target)
    return Examples(np.vstack([p.rows for p in parts]), np.concatenate(groups), np.concatenate(targets))


def pooled(parts: Sequence[Examples]) -> Examples:
    """The examples of several corpora as one set, each corpus weighing the same in total (so a
    large corpus does not drown a small one) and the whole weighing as many messages as it has."""
    parts = [p for p in parts if len(p.target)]
    if not parts:
        return concat(parts)
    total = sum(len(p.target) for p in parts)
    rows, group, target, weight = [], [], [], []
    offset = msgs = 0
    for p in parts:
        rows.append(p.rows)
        group.append(p.group + msgs)
        target.append(p.target + offset)
        weight.append(np.full(len(p.target), total / (len(parts) * len(p.target))))
        offset += len(p.rows)
        msgs += len(p.target)
    return Examples(np.vstack(rows), np.concatenate(group), np.concatenate(target), np.concatenate(weight))


def gold_examples(sessions: Iterable[Session], mode: str, background: Background = EMPTY) -> Examples:
    """The examples of ``mode`` from ``sessions``, each message seen with its gold history (and
    its overlaps weighed by ``background``)."""
    return history_examples(sessions, mode, background=background)


def own_examples(sessions: Iterable[Session], mode: str, weights: np.ndarray, background: Background = EMPTY) -> Examples:
    """The examples of ``mode`` from ``sessions``, each message seen in the history the router
    with ``weights`` (and ``background``) makes itself (its own topics, its own mistakes), as it
    is met in a run."""
    return history_examples(sessions, mode, weights, background)


def _target(held: dict[str, Counter], labels: Sequence[str], thread: Optional[str], mode: str) -> str:
    """The candidate a message of gold ``thread`` should go to, given what each topic has held
    (``held``: label -> thread counts, in the order each thread came): a one-off's own; in closed
    mode the thread's card; in open mode, among the topics whose most-held thread (the first held
    on a tie) is ``thread``, the one holding most of it (the earliest on a tie), as the scorer
    counts a message right (docs/score.md#the-metrics-exactly), else a new topic."""
    if thread is None:
        return ONEOFF
    if mode == "closed":
        return thread
    best, most = NEW, 0
    for label in labels:
        counts = held.get(label)
        if counts and counts[thread] > most and max(counts, key=counts.__getitem__) == thread:
            best, most = label, counts[thread]
    return best


def history_examples(sessions: Iterable[Session], mode: str, weights: Optional[np.ndarray] = None,
                     background: Background = EMPTY) -> Examples:
    """The examples of ``mode`` from ``sessions``: each message's candidates, with the one it
    should go to (:func:`_target`) as the target. The history each message is seen in is the gold
    one (``weights`` None: each topic holds exactly its thread's earlier messages, one-offs sit in
    topics of their own), or the one the router with ``weights`` makes by routing every message
    itself."""
    rows: list[np.ndarray] = []
    group: list[int] = []
    target: list[int] = []
    cache = ProfileCache()
    decide = None if weights is None else split_weights(weights)
    offset = 0
    msg = 0
    for s in sessions:
        conv = conversation_of(s)
        state = TopicState(conv, mode)
        held: dict[str, Counter] = {}  # label -> the gold threads its messages are of
        for turn, m in zip(s.turns, conv.messages):
            view = state.view([m])
            cands = candidates(view, cache, background)
            thread = turn.gold.thread
            want = _target(held, cands.labels, thread, mode)
            if want in cands.labels:  # (a one-off the router would not consider teaches nothing)
                rows.append(np.asarray(cands.features, dtype=float))
                group.extend([msg] * len(cands.labels))
                target.append(offset + cands.labels.index(want))
                offset += len(cands.labels)
                msg += 1
            choice = want if decide is None else cands.labels[best_of(cands, decide)[0]]
            if choice == ONEOFF:
                label = state.open_topic(ONEOFF_TITLE_PREFIX + short_title(m.text))
            elif choice == NEW:
                label = state.open_topic(short_title(m.text))
            else:
                label = choice
            if thread is not None:
                held.setdefault(label, Counter())[thread] += 1
            state.record(m, label)
    if not rows:
        return Examples(np.zeros((0, len(FEATURES))), np.zeros(0, dtype=int), np.zeros(0, dtype=int))
    return Examples(np.vstack(rows), np.asarray(group), np.asarray(target))


def bm25_prior() -> np.ndarray:
    """The weights a fit starts from and is drawn back to: bm25's choice (a topic, or a new topic in
    open mode) weighs :data:`BM25_PRIOR`, a one-off (which bm25 never makes) as much against, the
    rest nothing. Near it the router decides as bm25 does."""
    w = np.zeros(len(FEATURES))
    for name in BM25_CHOICE_FEATURES:
        w[FEATURES.index(name)] = BM25_PRIOR
    w[FEATURES.index("oneoff.bias")] = -BM25_PRIOR
    return w


#: the features that say only how often a chat stays on its topic or comes back to one, whatever
#: the message says: one writer's habit, which another writer's chat does not share (each kind's
#: own recency features, :data:`~.local.KIND_FEATURES`, still learn their corpus's)
HABIT_FEATURES = ("topic.current", "topic.previous", "topic.gap", "topic.rank", "topic.unseen")
#: the share of the penalty on a held feature (:func:`held_features`): so large that it stays at
#: bm25's level (0). With the habit features held there, every corpus left out and every corpus
#: in domain did as well or better on the dev corpora (``scripts/fit_local.py``: offline left
#: out, closed 0.699 -> 0.711, ECE 0.086 -> 0.076; in domain offline closed 0.802 -> 0.822, IRC
#: 1-1 0.756 -> 0.768)
HABIT_PENALTY_SHARE = 1000.0
#: closed mode's features that the two corpora of one person, each fitted alone, weigh with
#: opposite signs (the offline writer's data and SGD, ``scripts/fit_local.py``), and the other
#: dialogue-act and words-only-here features of the same make: what they weigh is how one writer
#: puts things (how a switch is led in, whether a request stays on its topic, whether a new value
#: is named). Closed mode has only those two corpora, so each learnt the other's opposite; held at
#: bm25's level as the habit features are, both did better left out (fitted on the other one, dev
#: sessions: the offline writer's data 0.711 -> 0.763, SGD 0.576 -> 0.620); in domain the offline
#: writer's own data lost (0.822 -> 0.781) and SGD gained (0.715 -> 0.721). Open mode leaves them
#: free: IRC, a third kind of chat, learns its conversations through them (held in open mode too,
#: the offline writer's data left out fell from 0.448 to 0.439, IRC in domain from 0.764 to 0.753
#: on one session fold, and only IRC left out gained, half a point)
PHRASING_FEATURES = (
    "topic.head_best", "topic.head_only_here", "topic.ref_title", "topic.ref_only_here",
    "topic.rest_only_here", "topic.current_lead", "topic.current_other", "topic.current_unnamed",
    "topic.current_request", "topic.previous_other", "topic.gap_other", "topic.bm25_share",
)
#: the modes whose fit holds :data:`PHRASING_FEATURES` at bm25's level
PHRASING_HELD_IN = ("closed",)


#: the modes whose fit sees every message twice: in its gold history and in the history the router
#: makes itself (:func:`own_examples`, routed by the weights fitted on gold history alone), so the
#: weights learn what its own topics look like in a run. An open-mode run builds its topics as it
#: goes, and a topic that took a wrong message, or a thread split over two topics, is unlike any
#: topic of a gold history. Fitted on both, every corpus left out did better in open mode (dev
#: sessions, penalty 3: the offline writer's data 0.448 -> 0.468, SGD 0.643 -> 0.660, IRC 0.192 ->
#: 0.196); in closed mode the topics are the cards whatever the history, and there the offline
#: writer's data left out fell (0.763 -> 0.725) while SGD rose (0.620 -> 0.636), so closed mode
#: fits on gold history alone
OWN_HISTORY_IN = ("open",)


def held_features(mode: str) -> tuple[str, ...]:
    """The features ``mode``'s fit holds at bm25's level: the habit features, and in the modes of
    :data:`PHRASING_HELD_IN` the phrasing features."""
    return HABIT_FEATURES + (PHRASING_FEATURES if mode in PHRASING_HELD_IN else ())


def penalty_share(mode: str) -> np.ndarray:
    """Per feature of ``mode``'s fit, its share of the penalty: :data:`KIND_PENALTY_SHARE` for the
    features of one kind of chat, :data:`HABIT_PENALTY_SHARE` for those :func:`held_features`
    names, 1 for the rest."""
    held = set(held_features(mode))
    return np.array([KIND_PENALTY_SHARE if f in KIND_FEATURES else HABIT_PENALTY_SHARE if f in held else 1.0
                     for f in FEATURES])


def _loss_and_grad(w: np.ndarray, ex: Examples, starts: np.ndarray, pen: np.ndarray, prior: np.ndarray) -> tuple[float, np.ndarray]:
    """Negative log-likelihood of the targets plus the L2 penalty ``pen`` (per feature) on the
    distance from ``prior``, and its gradient."""
    scores = ex.rows @ w
    peak = np.maximum.reduceat(scores, starts)
    z = np.exp(scores - peak[ex.group])
    norm = np.add.reduceat(z, starts)
    p = z / norm[ex.group]
    mw = np.ones(len(ex.target)) if ex.weight is None else ex.weight
    d = w - prior
    loss = float(mw @ (np.log(norm) + peak) - mw @ scores[ex.target]) + float(pen @ (d * d))
    grad = ex.rows.T @ (p * mw[ex.group]) - mw @ ex.rows[ex.target] + 2 * pen * d
    return loss, grad


def fit_weights(ex: Examples, l2: float, mode: str) -> np.ndarray:
    """The weights (one per :data:`~.local.FEATURES` entry) that best predict ``ex``'s targets of
    ``mode``, drawn towards :func:`bm25_prior` with penalty ``l2`` (each feature's share of it:
    :func:`penalty_share`; the prior itself when there is nothing to learn from)."""
    prior = bm25_prior()
    if not len(ex.target):
        return prior
    starts = np.flatnonzero(np.r_[True, ex.group[1:] != ex.group[:-1]])
    pen = l2 * penalty_share(mode)
    res = minimize(_loss_and_grad, prior.copy(), args=(ex, starts, pen, prior), jac=True, method="L-BFGS-B",
                   options={"maxiter": MAX_ITER})
    return res.x


def pav(x: Sequence[float], y: Sequence[float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Isotonic regression of ``y`` on ``x`` by pooling adjacent violators.

    Returns the blocks as three arrays in increasing order: the mean ``x`` of each block, its
    mean ``y`` (non-decreasing) and its number of points.
    """
    order = np.argsort(np.asarray(x, dtype=float), kind="stable")
    xs = np.asarray(x, dtype=float)[order]
    ys = np.asarray(y, dtype=float)[order]
    bx: list[float] = []
    by: list[float] = []
    bn: list[int] = []
    for xv, yv in zip(xs, ys):
        bx.append(xv)
        by.append(yv)
        bn.append(1)
        while len(by) > 1 and by[-2] >= by[-1]:
            n = bn[-2] + bn[-1]
            by[-2] = (by[-2] * bn[-2] + by[-1] * bn[-1]) / n
            bx[-2] = (bx[-2] * bn[-2] + bx[-1] * bn[-1]) / n
            bn[-2] = n
            del bx[-1], by[-1], bn[-1]
    return np.asarray(bx), np.asarray(by), np.asarray(bn)


def fit_calibration(probability: Sequence[float], correct: Sequence[bool]) -> Calibration:
    """The monotone map from winning probability to observed accuracy: isotonic, then smoothed.

    Each knot is a block of the isotonic fit: its mean probability (for the first block its
    largest, for the last its smallest, so the ends are flat over their whole block) and its
    accuracy; between knots the map is linear, so confidences vary smoothly and a threshold can be
    set anywhere.
    Neighbouring blocks are merged (accuracies pooled, so the map stays monotone): the
    smallest block into its smaller neighbour while one holds fewer than
    :data:`MIN_STEP_MESSAGES` messages, then the smallest pair until at most :data:`MAX_KNOTS`
    remain.
    """
    if not probability:
        return Calibration()
    bx, by, bn = pav(probability, [float(c) for c in correct])
    while len(bx) > 1 and (bn.min() < MIN_STEP_MESSAGES or len(bx) > MAX_KNOTS):
        if bn.min() < MIN_STEP_MESSAGES:
            j = int(np.argmin(bn))
            k = j - 1 if j == len(bn) - 1 or (j > 0 and bn[j - 1] <= bn[j + 1]) else j
        else:
            k = int(np.argmin(bn[:-1] + bn[1:]))  # merge the smallest neighbouring pair
        n = bn[k] + bn[k + 1]
        bx[k] = (bx[k] * bn[k] + bx[k + 1] * bn[k + 1]) / n
        by[k] = (by[k] * bn[k] + by[k + 1] * bn[k + 1]) / n
        bn[k] = n
        bx, by, bn = np.delete(bx, k + 1), np.delete(by, k + 1), np.delete(bn, k + 1)
    if len(bx) > 1:
        xs = np.sort(np.asarray(probability, dtype=float))
        ends = np.cumsum(bn)
        bx[0] = xs[ends[0] - 1]
        bx[-1] = max(xs[ends[-2]], bx[-2] + KNOT_GAP) if len(bx) > 2 else xs[ends[0]]
        for k in range(1, len(bx)):  # ties at a block edge: keep the knots strictly increasing
            bx[k] = max(bx[k], bx[k - 1] + KNOT_GAP)
    return Calibration(tuple(float(v) for v in bx), tuple(float(v) for v in by))


def fit_calibrations(judged: Sequence["Judged"], w: np.ndarray,
                     kind_runs: Optional[dict[str, Sequence["Judged"]]] = None) -> ModeWeights:
    """``w`` with the calibrations fitted on ``judged``: one over all of them, and one per kind of
    chat with at least :data:`MIN_STEP_MESSAGES` messages, each fitted on that kind's messages of
    ``kind_runs[kind]`` (of ``judged`` for a kind it does not name)."""
    def fit(js: Sequence[Judged]) -> Calibration:
        return fit_calibration([j.probability for j in js], [j.correct for j in js])

    runs = kind_runs or {}
    by_kind = {k: [j for j in runs.get(k, judged) if j.kind == k] for k in CHAT_KINDS}
    return ModeWeights(w, fit(judged), {k: fit(js) for k, js in by_kind.items() if len(js) >= MIN_STEP_MESSAGES})


@dataclass(frozen=True)
class Judged:
    """A strict message routed by ``local``: its winning probability, confidence and whether the
    scorer counts it right; plus its session's language and the message's style."""

    probability: float
    confidence: float
    correct: bool
    lang: str
    style: str
    #: the kind of chat it was routed in (:data:`~.local.CHAT_KINDS`)
    kind: str = "plain"
    #: its session's id
    session: str = ""


def confidence_by_fold(judged: Sequence[Judged], folds: Sequence[frozenset[str]], maps: Sequence[ModeWeights]) -> list[float]:
    """Each message's confidence from the map of its session's fold (``maps[k]`` fitted without
    the sessions of ``folds[k]``), so that no message is judged by a map fitted on it."""
    fold_of = {sid: k for k, fold in enumerate(folds) for sid in fold}
    return [maps[fold_of[j.session]].confidence(j.probability, j.kind) for j in judged]


def judge_run(sessions: Sequence[Session], mode: str, router: LocalRouter,
              rows_out: Optional[dict[str, dict[int, PredictionRow]]] = None) -> list[Judged]:
    """Route ``sessions`` in ``mode`` with ``router`` and judge every strict message's decision
    (and keep each session's prediction rows in ``rows_out``, when given)."""
    opts = RouteOptions(mode=mode, policy="local")
    probability: dict[tuple[str, int], float] = {}
    kind: dict[tuple[str, int], str] = {}

    class Recording:
        policy = router.policy
        uses_model = False

        async def route(self, view):  # noqa: ANN001 - the Router protocol
            decision, scored = router.decide_scored(view)
            probability[(view.session_id, view.pending[0].i)] = scored.probability
            kind[(view.session_id, view.pending[0].i)] = chat_kind(view)
            return decision

    rec = Recording()
    out: list[Judged] = []

    async def main() -> None:
        for s in sessions:
            rows, _ = await route_session(s, rec, opts)
            by_i = {r["i"]: PredictionRow.model_validate(r) for r in rows}
            if rows_out is not None:
                rows_out[s.session_id] = by_i
            scored = score_session(s, by_i, mode)
            conf = {r["i"]: r["confidence"] for r in rows}
            for t, ok in zip(s.turns, scored.correct):
                if t.gold.thread is None or t.ambiguous:
                    continue
                key = (s.session_id, t.i)
                out.append(Judged(probability[key], conf[t.i], bool(ok), s.lang, t.style, kind[key], s.session_id))

    asyncio.run(main())
    return out


def reliability_holds(table: Sequence[dict[str, Any]], *, min_n: int = RELIABILITY_MIN_N,
                      tolerance: float = RELIABILITY_TOLERANCE) -> bool:
    """True when every bin of at least ``min_n`` messages has a gap of at most ``tolerance``."""
    return all(row["gap"] <= tolerance for row in table if row["n"] >= min_n)
