"""Fitting the ``local`` router across corpora: the penalty chosen on corpora left out, the
calibration cross-fitted by corpus, and the leave-one-corpus-out and in-domain tables.

Used by ``scripts/fit_local.py``; the pieces of one fit (examples, weights, calibration maps) are in
:mod:`.local_fit`. Everything here is deterministic: the same corpora give the same file.

- **Penalty.** Weights are drawn towards bm25's decisions (:func:`~.local_fit.bm25_prior`); how
  strongly is the one penalty of :data:`~.local_fit.L2_GRID` whose weights do best on a corpus
  left out of their fit (mean strict accuracy over every corpus and mode, each routed by weights
  fitted on the others): :func:`choose_penalty`.
- **Views.** A corpus that shows the assistant's replies is learnt from twice, as shown and with
  them hidden (:func:`_views`, :attr:`Corpus.plain`): plain chat of its writer, so the signals
  every kind of chat shares are fitted on more than the offline writer's plain chat. The two
  views share the corpus's weight in the fit and its session folds.
- **Calibration.** Each kind of chat's map from winning probability to being right is fitted on
  the runs that resemble how that kind will be met (:data:`CALIBRATE_BY`): a kind whose fit
  corpora include a public corpus (SGD brings "replies", IRC "multi") will be met on more of that
  corpus, so it is calibrated in domain, on runs cross-fitted by session folds (each session
  routed by weights fitted on the other folds); "plain" chat will come from a writer the fit never
  saw, so it is calibrated on the left-out-corpus runs (each corpus routed by weights that never
  saw it), and so is the overall map every kind without a map of its own falls back on. A mode
  with a single corpus has no left-out runs: session folds. Plain chat's runs hold every corpus
  that shows the assistant's replies routed once more with them hidden (:func:`replies_hidden`):
  that corpus's writer in plain chat, so the plain map is fitted on every writer the fit has, not
  on the offline writer's alone (one writer's map was 0.12 to 0.13 off on the other's,
  docs/local_history.md#one-plain-map-for-both-writers).
- **Background.** Every fit builds the background its overlaps are weighed by
  (:mod:`.local_background`) from the sessions it fits on (:class:`FitData`): a corpus or session
  fold a fit leaves out is left out of its background too.
- **Tables.** Each corpus left out in turn: penalty, weights, background and calibration chosen
  and fitted on the others exactly as above, the same rule included (so the reported corpus never
  chooses or fits anything), then measured on it. In domain: each corpus's sessions routed by
  weights fitted on the other session folds.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Optional, Sequence

import numpy as np
import scipy
from threadpoolctl import threadpool_info, threadpool_limits

from ..progress import progress
from ..schema import SPECIAL_LABELS, PredictionRow, Session, is_open_only
from ..score.calibration import calibration_error, reliability_table
from ..score.cluster import one_to_one
from ..score.routing import score_session
from .local import BACKGROUND_IN, Calibration, LocalRouter, LocalWeights, ModeWeights
from .local_background import EMPTY, MIN_MESSAGES, Background, build_background, session_texts
from .local_sample import FIT_SPLIT
from .local_fit import (
    FOLDS, L2_GRID, MODES, OPEN_L2_SHARE, OWN_HISTORY_IN, Examples, Judged, concat, fit_calibrations,
    confidence_by_fold, fit_weights, gold_examples, judge_run, held_features, own_examples, pooled,
)
from .runner import RouteOptions, route_session

#: per kind of chat (:data:`~.local.CHAT_KINDS`), the runs its calibration is fitted on: "session"
#: (cross-fitted by session folds: the kind's fit corpora include a public corpus, whose new chat
#: is more of the same) or "corpus" (each corpus routed by weights fitted without it: the kind's
#: new chat comes from a writer the fit never saw); ``None`` is the overall map (the fallback)
CALIBRATE_BY: dict[Optional[str], str] = {None: "corpus", "plain": "corpus", "replies": "session", "multi": "session"}

#: threads of every thread pool (BLAS, OpenMP) during a fit: one, so a refit is byte for byte
#: whatever the machine's or the caller's thread setting (on two shared cores it is no slower:
#: ``fit_local.py --sessions 30`` with the IRC dev logs took 15.7 s with one BLAS thread and
#: 32.7 s with two before this limit, 16.4 s with two under it)
FIT_THREADS = 1

#: the penalty of a fit with no two corpora to compare (nothing to choose it by): the grid's second
FALLBACK_L2 = L2_GRID[1]


@dataclass(frozen=True)
class Corpus:
    """Dev sessions of one corpus to fit on, and what they are (stored in the weights file)."""

    name: str
    sessions: Sequence[Session]
    source: dict[str, Any]

    def modes(self) -> tuple[str, ...]:
        """The modes its sessions can be routed in (real chat logs: open only)."""
        return ("open",) if any(is_open_only(s) for s in self.sessions) else MODES

    @cached_property
    def plain(self) -> Optional[list[Session]]:
        """Its sessions with the assistant's replies hidden (:func:`replies_hidden`): plain chat of
        its writer, learnt from (:func:`_views`) and routed for the plain map (:func:`_calibrated`);
        None when no turn shows a reply."""
        if not any(t.assistant for s in self.sessions for t in s.turns):
            return None
        return replies_hidden(self.sessions)


def replies_hidden(sessions: Sequence[Session]) -> list[Session]:
    """``sessions`` as plain chat: every turn without the assistant's reply, all else the same."""
    return [s.model_copy(update={"turns": [t.model_copy(update={"assistant": None}) for t in s.turns]})
            for s in sessions]


def blas_kernels() -> list[str]:
    """The BLAS libraries loaded, each as its name, version and the processor kernel it chose.

    L-BFGS's path rests on the numerical libraries, and the kernel an OpenBLAS picks for the
    processor orders a product's sums its own way: on the offline and SGD dev sessions the closed
    fit moved weights in the fourth decimal between OpenBLAS's SkylakeX and Sandybridge kernels
    (``OPENBLAS_CORETYPE``), with the same numpy and scipy. The same corpora give the same file
    with the same versions and kernels."""
    return sorted({f"{i['internal_api']} {i['version']} {i.get('architecture') or 'unknown'}"
                   for i in threadpool_info() if i["user_api"] == "blas"})


def l2_of(mode: str, penalty: float) -> float:
    """The L2 penalty of ``mode`` for a fit of ``penalty`` (closed mode's)."""
    return penalty if mode == "closed" else penalty * OPEN_L2_SHARE


def _one_to_one(sessions: Sequence[Session], rows: dict[str, dict[int, PredictionRow]]) -> Optional[float]:
    """1-1 pooled over ``sessions`` as the scorer pools it: clusters are session-qualified, a
    one-off is a gold cluster of its own, a ``CLARIFY``/``ERROR`` (or missing) row a predicted one."""
    gold: list[tuple] = []
    pred: list[tuple] = []
    for s in sessions:
        by_i = rows.get(s.session_id, {})
        for t in s.turns:
            gold.append((s.session_id, t.gold.thread) if t.gold.thread is not None else (s.session_id, "one-off", t.i))
            row = by_i.get(t.i)
            pred.append((s.session_id, row.pred) if row is not None and row.pred not in SPECIAL_LABELS
                        else (s.session_id, "alone", t.i))
    value = one_to_one(gold, pred)
    return None if value is None else round(value, 4)


def _raw_router(w: np.ndarray, background: Background = EMPTY) -> LocalRouter:
    return LocalRouter(LocalWeights({m: ModeWeights(w, Calibration()) for m in MODES}, {}, background))


def _measure(sessions: Sequence[Session], mode: str, judged: list[Judged], cal: ModeWeights, rows: dict) -> dict[str, Any]:
    conf = [cal.confidence(j.probability, j.kind) for j in judged]
    ok = [j.correct for j in judged]
    ece = calibration_error(conf, ok)
    out = {"strict_messages": len(judged),
           "accuracy": round(float(np.mean(ok)), 4) if judged else None,
           "ece": None if ece is None else round(ece, 4)}
    if mode == "open":
        out["one_to_one"] = _one_to_one(sessions, rows)
    return out


def router_scores(sessions: Sequence[Session], mode: str, router: Any) -> dict[str, Any]:
    """Strict accuracy of any router over ``sessions`` in ``mode`` (and 1-1 in open mode), as the
    scorer judges it: the comparison row of the held-out table."""
    opts = RouteOptions(mode=mode, policy=router.policy)
    rows: dict[str, dict[int, PredictionRow]] = {}
    ok: list[bool] = []

    async def main() -> None:
        for s in sessions:
            out, _ = await route_session(s, router, opts)
            by_i = rows[s.session_id] = {r["i"]: PredictionRow.model_validate(r) for r in out}
            scored = score_session(s, by_i, mode)
            ok.extend(bool(c) for t, c in zip(s.turns, scored.correct) if t.gold.thread is not None and not t.ambiguous)

    asyncio.run(main())
    out: dict[str, Any] = {"accuracy": round(float(np.mean(ok)), 4) if ok else None}
    if mode == "open":
        out["one_to_one"] = _one_to_one(sessions, rows)
    return out


def _folds(sessions: Sequence[Session]) -> list[Sequence[Session]]:
    return [sessions[k::FOLDS] for k in range(FOLDS)]


def _training(sessions: Sequence[Session], skip_fold: Optional[int]) -> list[Session]:
    """The ``sessions`` (a corpus's, in its order) a fit without fold ``skip_fold`` (None: none)
    draws on, fold by fold."""
    return [s for k, fold in enumerate(_folds(sessions)) if k != skip_fold for s in fold]


#: the names of what :func:`_views` gives, in its order (recorded per corpus in the fit block)
VIEWS = ("as given", "replies hidden")


def _views(c: Corpus) -> list[Sequence[Session]]:
    """What a fit learns from in ``c``: its sessions, and where it shows the assistant's replies
    the same sessions with them hidden (:attr:`Corpus.plain`, in the same order, so a session fold
    holds both views of the same sessions): plain chat of its writer, which a fit on the offline
    writer's plain chat alone learns from one writer only."""
    return [c.sessions] if c.plain is None else [c.sessions, c.plain]


class FitData:
    """The gold examples and the background of every fit made on some corpora, each worked out once.

    A fit is named by its scope (the corpora it may draw on, of any mode) and the session fold it
    leaves out (None: none). Its background is built from the sessions it fits on (every corpus
    of the scope, that fold left out), and where a mode weighs overlaps by it
    (:data:`~.local.BACKGROUND_IN`) its examples are built with it: nothing of a corpus or fold a
    fit leaves out reaches that fit, through the background either. Other modes' examples depend
    on the session fold alone and serve every fit."""

    def __init__(self, bar: Any = None) -> None:
        self._backgrounds: dict[tuple, Background] = {}
        self._examples: dict[tuple, Examples] = {}
        #: a progress bar counting the weights fitted (:func:`~interleave_bench.progress.progress`), or None
        self.bar = bar

    def fitted(self) -> None:
        """Count one set of weights fitted on the progress bar."""
        if self.bar is not None:
            self.bar.update()

    def stage(self, what: str) -> None:
        """Say on the progress bar what the fit is doing now."""
        if self.bar is not None:
            self.bar.set_postfix(stage=what)

    def background(self, scope: Sequence[Corpus], skip_fold: Optional[int] = None) -> Background:
        key = (tuple(c.name for c in scope), skip_fold)
        if key not in self._backgrounds:
            self._backgrounds[key] = build_background([session_texts(_training(c.sessions, skip_fold)) for c in scope])
        return self._backgrounds[key]

    def background_of(self, scope: Sequence[Corpus], mode: str, skip_fold: Optional[int] = None) -> Background:
        """The background a ``mode`` fit of ``scope`` without ``skip_fold`` weighs its overlaps by:
        :meth:`background` in the modes of :data:`~.local.BACKGROUND_IN`, else none (not built)."""
        return self.background(scope, skip_fold) if mode in BACKGROUND_IN else EMPTY

    def examples(self, scope: Sequence[Corpus], mode: str, c: Corpus, fold: int,
                 skip_fold: Optional[int] = None) -> Examples:
        """The gold examples of fold ``fold`` of ``c`` as the fit of ``scope`` without ``skip_fold`` sees them."""
        background = self.background_of(scope, mode, skip_fold)
        # keyed by the background they are built with (each built once and kept here, or EMPTY)
        key = (mode, c.name, fold, id(background))
        if key not in self._examples:
            self._examples[key] = concat([gold_examples(_folds(v)[fold], mode, background) for v in _views(c)])
        return self._examples[key]


@dataclass
class Runs:
    """Per corpus, its strict messages judged when routed by weights that never saw them (fitted
    without its session, or without the whole corpus), and the prediction rows of those runs."""

    judged: dict[str, list[Judged]] = field(default_factory=dict)
    rows: dict[str, dict[str, dict[int, PredictionRow]]] = field(default_factory=dict)
    #: the same, per corpus that shows replies, for its sessions routed with them hidden (:attr:`Corpus.plain`)
    plain: dict[str, list[Judged]] = field(default_factory=dict)
    plain_rows: dict[str, dict[str, dict[int, PredictionRow]]] = field(default_factory=dict)

    def pooled(self) -> list[Judged]:
        return [j for judged in self.judged.values() for j in judged]

    def pooled_plain(self) -> list[Judged]:
        return [j for judged in self.plain.values() for j in judged]

    def judge(self, c: Corpus, sessions: Sequence[Session], mode: str, router: LocalRouter,
              plain: Optional[Sequence[Session]]) -> None:
        """Route ``sessions`` of ``c`` with ``router`` and keep the judged messages and rows under
        ``c``'s name; ``plain`` (those sessions with replies hidden, or None) the same, apart."""
        self.judged.setdefault(c.name, []).extend(judge_run(sessions, mode, router, self.rows.setdefault(c.name, {})))
        if plain is not None:
            self.plain.setdefault(c.name, []).extend(
                judge_run(plain, mode, router, self.plain_rows.setdefault(c.name, {})))


def _fit(scope: Sequence[Corpus], mode: str, data: FitData, l2: float,
         skip_fold: Optional[int] = None) -> tuple[np.ndarray, Background]:
    """Weights fitted on the corpora of ``scope`` that ``mode`` can route (each weighing the same),
    without fold ``skip_fold``, and the background they were fitted with (:meth:`FitData.background_of`):
    on gold history, then in the modes of :data:`~.local_fit.OWN_HISTORY_IN` again on gold history
    and on the history those first weights make themselves, each message seen in both."""
    these = [c for c in scope if mode in c.modes()]
    background = data.background_of(scope, mode, skip_fold)
    gold = [concat([data.examples(scope, mode, c, k, skip_fold) for k in range(FOLDS) if k != skip_fold])
            for c in these]
    w = fit_weights(pooled(gold), l2, mode)
    data.fitted()
    if mode not in OWN_HISTORY_IN:
        return w, background
    own = [concat([own_examples(_training(v, skip_fold), mode, w, background) for v in _views(c)]) for c in these]
    w = fit_weights(pooled([concat([g, o]) for g, o in zip(gold, own)]), l2, mode)
    data.fitted()
    return w, background


def _cross_fitted(scope: Sequence[Corpus], mode: str, data: FitData, l2: float) -> Runs:
    """Every strict message of the corpora of ``scope`` that ``mode`` can route, routed by weights
    fitted without its session: the sessions of each corpus fall in :data:`~.local_fit.FOLDS`
    folds, and fold k of every corpus is routed by weights fitted on the other folds of all of them."""
    these = [c for c in scope if mode in c.modes()]
    out = Runs({c.name: [] for c in these}, {c.name: {} for c in these})
    for k in range(FOLDS):
        router = _raw_router(*_fit(scope, mode, data, l2, k))
        for c in these:
            out.judge(c, _folds(c.sessions)[k], mode, router, None if c.plain is None else _folds(c.plain)[k])
    return out


def _left_out(corpora: Sequence[Corpus], mode: str, data: FitData, penalty: float) -> Optional[Runs]:
    """Each corpus of ``mode`` routed by weights fitted on the others (None with fewer than two)."""
    these = [c for c in corpora if mode in c.modes()]
    if len(these) < 2:
        return None
    out = Runs()
    for c in these:
        router = _raw_router(*_fit([d for d in corpora if d is not c], mode, data, l2_of(mode, penalty)))
        out.judge(c, c.sessions, mode, router, c.plain)
    return out


@dataclass
class Search:
    """The penalty chosen for a fit, the mean left-out accuracy of each tried (None: nothing to
    compare), and per mode the left-out runs at the chosen one."""

    penalty: float
    scores: dict[float, Optional[float]]
    runs: dict[str, Runs]


def choose_penalty(corpora: Sequence[Corpus], data: FitData) -> Search:
    """The penalty of :data:`~.local_fit.L2_GRID` whose weights do best on the corpora of
    ``corpora`` left out of their fit: the mean, over every corpus and mode with another corpus to
    fit on, of its strict accuracy when routed by weights fitted on the others (the smallest
    penalty on a tie; :data:`FALLBACK_L2` when no mode has two corpora)."""
    best: Optional[tuple[float, float, dict[str, Runs]]] = None
    scores: dict[float, Optional[float]] = {}
    for penalty in L2_GRID:
        runs = {m: r for m in MODES if (r := _left_out(corpora, m, data, penalty)) is not None}
        accs = [float(np.mean([j.correct for j in js])) for r in runs.values() for js in r.judged.values() if js]
        if not accs:
            scores[penalty] = None
            continue
        mean = float(np.mean(accs))
        scores[penalty] = round(mean, 4)
        if best is None or mean > best[1]:
            best = (penalty, mean, runs)
    if best is None:
        return Search(FALLBACK_L2, scores, {})
    return Search(best[0], scores, best[2])


def _calibrated(corpora: Sequence[Corpus], mode: str, data: FitData, search: Search,
                w: np.ndarray, cross: Optional[Runs] = None,
                without: frozenset[str] = frozenset()) -> tuple[ModeWeights, list[Judged], dict[str, str], Runs]:
    """``w`` with its calibrations fitted as :data:`CALIBRATE_BY` says: each kind's on its
    messages of the left-out runs of ``search`` ("corpus") or of the session-fold runs
    ("session"; both when ``mode`` has a single corpus, which has no left-out runs); the plain
    map on those runs' plain messages and on the same runs of the corpora with replies hidden
    (:attr:`Corpus.plain`). Returns the weights, the judged messages each map was fitted on (each
    once per kind: its kind's runs; a corpus with replies gives its messages twice, shown and
    hidden), how
    each map was calibrated (``"overall"`` and per kind) and the session-fold runs (``cross`` when
    given, else computed). The messages of the sessions ``without`` names are left out of every
    map's fit."""
    if cross is None:
        cross = _cross_fitted(corpora, mode, data, l2_of(mode, search.penalty))
    left = search.runs.get(mode)
    by = {"corpus": left if left is not None else cross, "session": cross}
    runs = {how: [j for j in r.pooled() if j.session not in without] for how, r in by.items()}
    how = {k: (CALIBRATE_BY[k] if left is not None else "session") for k in CALIBRATE_BY}
    kind_runs = {k: runs[how[k]] for k in CALIBRATE_BY if k is not None}
    # plain chat: every writer of the fit, those shown with replies as well as without
    kind_runs["plain"] = kind_runs["plain"] + [j for j in by[how["plain"]].pooled_plain() if j.session not in without]
    judged = [j for k, js in kind_runs.items() for j in js if j.kind == k]
    named = {("overall" if k is None else k): v for k, v in how.items()}
    return fit_calibrations(runs[how[None]], w, kind_runs), judged, named, cross


def _fold_held_out_ece(corpora: Sequence[Corpus], mode: str, data: FitData, search: Search,
                       w: np.ndarray, cross: Runs) -> dict[str, Optional[float]]:
    """Per corpus of ``mode``, the calibration error of its session-fold runs when each fold's
    confidence comes from maps fitted, by the same rule (:func:`_calibrated`), without that fold's
    sessions of every corpus: the in-domain figure on messages no map saw."""
    these = [c for c in corpora if mode in c.modes()]
    folds = [frozenset(s.session_id for c in these for s in _folds(c.sessions)[k]) for k in range(FOLDS)]
    maps = [_calibrated(corpora, mode, data, search, w, cross, without=fold)[0] for fold in folds]
    out: dict[str, Optional[float]] = {}
    runs = [(c.name, cross.judged[c.name]) for c in these]
    runs += [(without_replies(c.name), cross.plain[c.name]) for c in these if c.name in cross.plain]
    for name, judged in runs:
        ece = calibration_error(confidence_by_fold(judged, folds, maps), [j.correct for j in judged])
        out[name] = None if ece is None else round(ece, 4)
    return out


def without_replies(name: str) -> str:
    """The name a corpus's rows go by in the tables when routed with its replies hidden."""
    return f"{name} without replies"


def _measure_runs(c: Corpus, mode: str, runs: Runs, cal: ModeWeights) -> dict[str, dict[str, Any]]:
    """:func:`_measure` of ``c``'s run in ``runs``, and of its run with replies hidden where it has one."""
    out = {c.name: _measure(c.sessions, mode, runs.judged[c.name], cal, runs.rows[c.name])}
    if c.name in runs.plain:
        out[without_replies(c.name)] = _measure(c.plain, mode, runs.plain[c.name], cal, runs.plain_rows[c.name])
    return out


def fit_corpora(corpora: Sequence[Corpus]) -> tuple[LocalWeights, dict[str, Any]]:
    """Weights and calibration for both modes, fitted across ``corpora`` (dev sessions only).

    The whole fit runs on one thread in every thread pool, BLAS included (:data:`FIT_THREADS`),
    whatever the caller's thread setting: a threaded product splits its sums, and on the IRC
    corpus L-BFGS then stopped at weights up to 0.06 apart between ``OMP_NUM_THREADS=1`` and the
    default, so the same corpora give the same file only with the thread count fixed here.

    Per mode, over the corpora that can be routed in it (real chat logs: open mode only): the
    weights are fitted on all of them pooled, each corpus weighing the same
    (:func:`~.local_fit.pooled`; a corpus with replies as shown and hidden, :func:`_views`), with the penalty :func:`choose_penalty` picks; the calibration
    of each kind is fitted on the runs :data:`CALIBRATE_BY` names: behind that choice (each
    corpus routed by weights fitted without it) or cross-fitted by session fold.

    The report's ``held_out`` table leaves each corpus out in turn: penalty, weights and
    calibration chosen and fitted on the others exactly as above (the same rule), then measured
    on it (accuracy,
    expected calibration error, 1-1 in open mode). Its ``in_domain`` table measures each corpus's
    sessions routed by weights fitted on the other session folds of every corpus, with the shipped
    calibration (``ece``, in sample where a map was fitted on those very runs) and with each fold's
    confidence from maps fitted without that fold's sessions (``ece_held_out``). Returns the
    weights and the report ``{"held_out": {corpus: {mode: {...}}}, "in_domain": {...}, "fit":
    {mode: {...}}, "penalty": {...}}``. Raises ValueError when a session is not from ``dev``, or
    when two corpora hold the same session id.
    """
    with threadpool_limits(FIT_THREADS), progress(desc="fit local", unit="fit") as bar:
        return _fit_corpora(corpora, FitData(bar))


def _fit_corpora(corpora: Sequence[Corpus], data: FitData) -> tuple[LocalWeights, dict[str, Any]]:
    """:func:`fit_corpora`, in the caller's thread setting, counting its fits on ``data``'s bar."""
    seen: dict[str, str] = {}
    for c in corpora:
        for s in c.sessions:
            if seen.setdefault(s.session_id, c.name) != c.name:
                raise ValueError(f"session {s.session_id} is in corpora {seen[s.session_id]} and {c.name}: a session "
                                 f"id names one session across the fit")
            if s.split != "dev":
                raise ValueError(f"{c.name}: session {s.session_id} is from split {s.split!r}: "
                                 f"the local router fits on dev only")
    for mode in MODES:
        if not any(mode in c.modes() for c in corpora):
            raise ValueError(f"no corpus can be routed in {mode} mode")
    rows: set[str] = set()  # every name a row of the tables goes by
    for name in (n for c in corpora for n in ((c.name,) if c.plain is None else (c.name, without_replies(c.name)))):
        if name in rows:
            raise ValueError(f"two corpora's rows would both be named {name!r}: name the corpora apart")
        rows.add(name)
    data.stage("penalty")
    search = choose_penalty(corpora, data)
    modes: dict[str, ModeWeights] = {}
    held_out: dict[str, dict[str, Any]] = {c.name: {} for c in corpora}
    in_domain: dict[str, dict[str, Any]] = {c.name: {} for c in corpora}
    per_mode: dict[str, Any] = {}
    for mode in MODES:
        data.stage(f"{mode} mode")
        these = [c for c in corpora if mode in c.modes()]
        l2 = l2_of(mode, search.penalty)
        modes[mode], runs, how, cross = _calibrated(corpora, mode, data, search, _fit(corpora, mode, data, l2)[0])
        held_ece = _fold_held_out_ece(corpora, mode, data, search, modes[mode].weights, cross)
        for c in these:
            for name, measured in _measure_runs(c, mode, cross, modes[mode]).items():
                in_domain.setdefault(name, {})[mode] = {**measured, "ece_held_out": held_ece[name]}
        calibrated = [modes[mode].confidence(j.probability, j.kind) for j in runs]
        ok = [j.correct for j in runs]
        ece = calibration_error(calibrated, ok)
        per_mode[mode] = {
            "corpora": [c.name for c in these],
            "examples": {c.name: sum(len(data.examples(corpora, mode, c, k).target) for k in range(FOLDS)) for c in these},
            "l2": l2, "calibrated_by": how,
            "ece": None if ece is None else round(ece, 4),
            "reliability": reliability_table(calibrated, ok),
        }
    for c in corpora if len(corpora) > 1 else ():
        rest = [d for d in corpora if d is not c]
        data.stage(f"{c.name} left out")
        inner = choose_penalty(rest, data)
        for mode in c.modes():
            if not any(mode in d.modes() for d in rest):
                continue
            w_c, background_c = _fit(rest, mode, data, l2_of(mode, inner.penalty))
            cal_c, _, how, _ = _calibrated(rest, mode, data, inner, w_c)
            run = Runs()
            run.judge(c, c.sessions, mode, _raw_router(w_c, background_c), c.plain)
            for name, measured in _measure_runs(c, mode, run, cal_c).items():
                held_out.setdefault(name, {})[mode] = {**measured, "penalty": inner.penalty, "calibrated_by": how}
    penalty = {"chosen": search.penalty, "left_out_accuracy": {str(p): v for p, v in search.scores.items()}}
    held = {m: list(held_features(m)) for m in MODES}
    libraries = {"numpy": np.__version__, "scipy": scipy.__version__, "blas": blas_kernels()}
    background = data.background(corpora)
    fit = {"split": FIT_SPLIT, "penalty": penalty, "folds": FOLDS, "held_at_bm25": held, "own_history": list(OWN_HISTORY_IN),
           "background": {"modes": list(BACKGROUND_IN), "messages": background.messages,
                          "tokens": len(background.weights), "min_messages": MIN_MESSAGES},
           "libraries": libraries,
           "corpora": {c.name: {"sessions": len(c.sessions), "views": VIEWS[:len(_views(c))], **c.source}
                       for c in corpora},
           "held_out": held_out, "in_domain": in_domain,
           "cross_fitted": {m: {"by": per_mode[m]["calibrated_by"], "ece": per_mode[m]["ece"],
                                "reliability": per_mode[m]["reliability"]} for m in MODES}}
    return LocalWeights(modes, fit, background), {"held_out": held_out, "in_domain": in_domain, "fit": per_mode, "penalty": penalty}


def fit_local(sessions: Sequence[Session], *, source: Optional[dict[str, Any]] = None) -> tuple[LocalWeights, dict[str, Any]]:
    """Fit on the ``dev`` sessions of one corpus (:func:`fit_corpora` with that corpus alone)."""
    return fit_corpora([Corpus("data", sessions, dict(source or {}))])
