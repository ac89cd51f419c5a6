"""Scoring runs: from sessions and prediction rows to the score document (``interleave-score-v1``).

:func:`score_predictions` scores one run in memory and returns a :class:`RunScore` (the document
plus the per-session results a comparison needs); :func:`score_runs` scores several and returns
their documents; :func:`score_files` is the file edge the ``score`` command, the demo and the
leaderboard share (reads, fingerprints, writes ``<pred>.score.json``).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
from pydantic import TypeAdapter

from ..errors import InputError, InputErrors, UsageError, require_file, shown
from ..file_kinds import DATA_FIRST, other_kind
from ..io import sessions_file
from ..documents import SCORE_FORMAT, ScoreDocument, SessionLine
from ..llm.prices import Price, PriceArgument, price_of_run
from ..schema import PredictionRow, Session
from ..progress import progress
from .block import SessionScore, score_block, session_scores
from .columnar import ColumnarRun, PooledRun, record_columns
from .labels import ThreadLabels
from .routing import COL, OUTCOMES, derive, exact_metrics, point_metrics, share
from .rows import (DUPLICATE, NO_PREDICTIONS, UNKNOWN_SESSION, UNKNOWN_TURN, LeftOut, PredictionIndex, as_rows, as_sessions,
                   index_rows, mode_errors, not_scored_line)
from .datafile import data_fingerprint
from .in_sample import FitSample, in_sample_of
from .paths import (PREDICTION_SUFFIXES, prediction_files, require_recorded_mode, score_path,  # noqa: F401 - read from here too
                    system_name)
from .defaults import DEFAULT_BOOTSTRAP, DEFAULT_SEED, DEFAULT_SPLIT, check_bootstrap, check_seed, check_split
from .stats import bootstrap_sums, percentile_interval, wilson
from .table import RATE, family, metric, rounded, rounded_interval, with_interval



@dataclass
class RunScore:
    """One scored run: the score document (``result``) and what produced it."""

    system: str
    mode: str
    split: str
    sessions: list[Session]
    scores: list[SessionScore]
    index: PredictionIndex
    not_scored: list[LeftOut]
    result: dict[str, Any]
    #: where :func:`score_files` wrote the document (``None`` when not written)
    score_file: Path | None = None
    #: the pooled metrics unrounded (NaN where undefined): a difference of two runs' figures is
    #: taken on these and rounded once
    exact: dict[str, float] = field(default_factory=dict)

    def scores_by_id(self) -> dict[str, SessionScore]:
        return {sc.session_id: sc for sc in self.scores}


def select_split(sessions: Iterable[Session], split: str) -> list[Session]:
    """The sessions of ``split`` (``all`` keeps every one), in file order."""
    check_split(split)
    return [s for s in sessions if split == "all" or s.split == split]


def _wilson_json(k: int, n: int) -> list[float] | None:
    return [round(x, RATE) for x in wilson(k, n)] if n else None


def intervals_for(
    matrix: np.ndarray, totals: np.ndarray, metrics: Mapping[str, float | None], bootstrap: int, seed: int
) -> dict[str, list[float] | None]:
    """95% intervals of the routing metrics, of the kind the metric table names for each.

    Bootstrap over sessions (the resampled column sums through the same formulas) or Wilson over
    the entry's two counts. An interval is ``None`` where its metric is undefined or
    ``bootstrap`` is 0.
    """
    out: dict[str, list[float] | None] = {}
    boot = with_interval("bootstrap", "routing")
    resampled = derive(bootstrap_sums(matrix, bootstrap, seed), boot) if bootstrap > 0 and len(matrix) else None
    for m in boot:
        if resampled is None or metrics.get(m.key) is None:
            out[m.key] = None
        else:
            out[m.key] = rounded_interval(m.key, percentile_interval(resampled[m.key]))
    for m in with_interval("wilson", "routing"):
        k_col, n_col = m.wilson_counts
        out[m.key] = _wilson_json(int(totals[COL[k_col]]), int(totals[COL[n_col]]))
    return out


def _bucket(k: int, n: int) -> dict[str, Any]:
    return {"accuracy": share(k, n), "correct": k, "n": n, "interval": _wilson_json(k, n)}


def burst_summary(totals: np.ndarray) -> dict[str, Any] | None:
    """The burst family of the metric table: accuracy over three disjoint groups of strict
    messages (alone, in a burst on one thread, in a burst across threads) with Wilson intervals,
    replies held, calls per message. ``None`` for a run with no ``burst`` rows.
    """
    if not int(totals[COL["burst_rows"]]):
        return None
    values = derive(totals, family("burst"))
    out: dict[str, Any] = {"rows": int(totals[COL["burst_rows"]])}
    for m in family("burst"):
        if m.wilson_counts is not None:
            k_col, n_col = m.wilson_counts
            out[m.json_key] = _bucket(int(totals[COL[k_col]]), int(totals[COL[n_col]]))
        else:
            out[m.json_key] = rounded(m.key, float(values[m.key]))
    return out


def message_cost(totals: np.ndarray, price: Price | None) -> tuple[float | None, str | None]:
    """USD per message at ``price`` (0.0 when no row made a model call) and, when that is ``None``,
    why (a key of :data:`~interleave_bench.documents.COST_NULL_REASONS`)."""
    messages = int(totals[COL["messages"]])
    if not messages:
        return None, "no_messages"
    if not int(totals[COL["calls"]]):
        return 0.0, None
    if int(totals[COL["unreported"]]):  # a call's tokens unknown: so is the cost, at any price
        return None, "unreported"
    if price is None:
        return None, "no_price"
    usd = price.cost(int(totals[COL["input_tokens"]]), int(totals[COL["cached_tokens"]]), int(totals[COL["output_tokens"]]))
    return (None, "too_large") if usd is None else (rounded("cost_usd_per_message", usd / messages), None)


#: per-session rows built from the matrix, and checked against their record type, at a time
PER_SESSION_SLICE = 10_000
_SESSION_LINES = TypeAdapter(list[SessionLine])


def per_session_rows(session_ids: Sequence[str], langs: Sequence[str], matrix: np.ndarray) -> list[dict[str, Any]]:
    """One small record per scored session (the per-session table), from its row of ``matrix``;
    built a column at a time (the same values as :func:`~.routing.share` and
    :func:`~.table.rounded` give each session), a slice of sessions at a time."""
    out: list[dict[str, Any]] = []
    decimals = metric("weighted_error").decimals
    for at in range(0, len(matrix), PER_SESSION_SLICE):
        part = matrix[at:at + PER_SESSION_SLICE]

        def col(name: str) -> np.ndarray:
            return part[:, COL[name]]

        strict = col("strict").astype(np.int64)
        has = strict > 0
        safe = np.where(has, strict, 1)
        accuracy = [round(x, RATE) if h else None for x, h in zip((col("strict_correct").astype(np.int64) / safe).tolist(), has.tolist())]
        error = (col("strict_cost") / safe).tolist()
        weighted = [None if not h or not math.isfinite(x) else (round(x, decimals) if decimals is not None else x)
                    for x, h in zip(error, has.tolist())]
        columns = zip(
            session_ids[at:at + PER_SESSION_SLICE], langs[at:at + PER_SESSION_SLICE],
            col("messages").astype(np.int64).tolist(), strict.tolist(), accuracy, weighted,
            (col("outcome_wrong_existing") + col("outcome_merged_new")).astype(np.int64).tolist(),
            col("outcome_error").astype(np.int64).tolist(), (col("messages") - col("rows")).astype(np.int64).tolist(),
        )
        out += [{"session_id": sid, "lang": lang, "messages": m, "strict": n, "accuracy": acc, "weighted_error": w,
                 "polluting": pol, "errors": err, "missing_rows": miss}
                for sid, lang, m, n, acc, w, pol, err, miss in columns]
    return out


def score_document(
    *,
    system: str,
    mode: str,
    split: str,
    policy: str | None,
    model: str | None,
    matrix: np.ndarray,
    latency: tuple[float | None, float | None],
    latency_rows: int,
    bcubed: tuple[float, float, float],
    breakdown: Mapping[str, Mapping[str, Sequence[int]]],
    rows: int,
    outside: int,
    left_out: Sequence[LeftOut],
    session_ids: Sequence[str],
    langs: Sequence[str],
    bootstrap: int,
    seed: int,
    price: Price | None,
    provenance: Mapping[str, Any] | None,
    cluster: Mapping[str, Any] | None = None,
    calibration: Mapping[str, Any] | None = None,
    in_sample: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The score document (as JSON data) of a run, from its per-session counts and pooled extras.

    ``matrix`` holds a row of :data:`~.routing.COLUMNS` per scored session (named by
    ``session_ids``, in ``langs``), ``bcubed`` the B-cubed figures pooled in message order,
    ``breakdown`` the pooled breakdown cells; files (:mod:`.columnar`) and records (:func:`score_predictions`)
    build their documents here. ``latency`` holds the latency percentiles
    (:func:`~.routing.latency_percentiles`) of the ``latency_rows`` latencies that count. The
    intervals are drawn before the per-session rows are built, and the rows (the one part that
    grows with the sessions) are checked a slice at a time and put in the dumped document as
    built, so that no second copy of them is held.
    """
    totals = matrix.sum(axis=0)
    metrics = point_metrics(totals, latency, bcubed)
    intervals = intervals_for(matrix, totals, metrics, bootstrap, seed)

    def t(name: str) -> int:
        return int(totals[COL[name]])

    reasons = [x.reason for x in left_out]
    not_scored = [x.to_json() for x in left_out]
    price_used = None if price is None else price.record(model)
    cost, cost_null_reason = message_cost(totals, price)
    payload = {
        "format": SCORE_FORMAT,
        "system": system,
        "mode": mode,
        "policy": policy,
        "model": model,
        "split": split,
        "metrics": metrics,
        "intervals": intervals,
        "counts": {
            "sessions": len(matrix),
            "messages": t("messages"),
            "thread_messages": t("thread_messages"),
            "strict": t("strict"),
            "ambiguous": t("thread_messages") - t("strict"),
            "oneoffs": t("oneoffs"),
            "refs_messages": t("refs_n"),
            "rows": rows,
            "rows_scored": t("rows"),
            "missing_rows": t("messages") - t("rows"),
            "error_rows": t("error_rows"),
            "model_calls": t("calls"),
            "latency_rows": latency_rows,
            "rows_outside_split": outside,
            "sessions_without_rows": reasons.count(NO_PREDICTIONS),
            "unknown_session_rows": reasons.count(UNKNOWN_SESSION),
            "unknown_turn_rows": reasons.count(UNKNOWN_TURN),
            "duplicate_rows": reasons.count(DUPLICATE),
        },
        "outcomes": {o: t("outcome_" + o) for o in OUTCOMES},
        "breakdowns": {dim: {key: _bucket(k, n) for key, (k, n) in cells.items()} for dim, cells in breakdown.items()},
        "burst": burst_summary(totals),
        "cost_usd_per_message": cost,
        "cost_null_reason": cost_null_reason,
        "cluster": cluster,
        "calibration": calibration,
        "in_sample": in_sample,
        "not_scored": not_scored,
        "not_scored_line": not_scored_line({"system": system, "not_scored": not_scored,
                                            "counts": {"missing_rows": t("messages") - t("rows")}}),
        "per_session": [],
        "provenance": {**(provenance or {}), "bootstrap": bootstrap, "seed": seed, "price": price_used},
    }
    dumped = ScoreDocument.model_validate(payload).dump()
    rows_ = per_session_rows(session_ids, langs, matrix)
    for at in range(0, len(rows_), PER_SESSION_SLICE):  # plain JSON values: they dump as they are
        _SESSION_LINES.validate_python(rows_[at:at + PER_SESSION_SLICE])
    return {key: rows_ if key == "per_session" else value for key, value in dumped.items()}


def score_predictions(
    sessions: Sequence[Session | Mapping[str, Any]],
    rows: Sequence[PredictionRow | Mapping[str, Any]],
    *,
    system: str = "predictions",
    mode: str | None = None,
    split: str = DEFAULT_SPLIT,
    bootstrap: int = DEFAULT_BOOTSTRAP,
    seed: int = DEFAULT_SEED,
    allow_duplicates: bool = False,
    price: PriceArgument = None,
    source: str = "<predictions>",
    lines: Sequence[int] | None = None,
    only_sessions: set[str] | None = None,
    show_progress: bool = False,
    provenance: Mapping[str, Any] | None = None,
    thread_labels: bool = False,
) -> RunScore:
    """Score one run's rows against the sessions of ``split``; returns a :class:`RunScore`.

    ``mode`` overrides the mode the rows name (default: the first row that names one, else
    closed). ``only_sessions`` restricts scoring to those session ids (a paired comparison scores
    both runs on the sessions both cover). ``price`` turns tokens into a cost per message; a
    callable gets the model the rows name (commands pass
    :func:`~interleave_bench.llm.prices.prices_from` the environment; the default is the dated
    table). The price used is recorded in the provenance. ``provenance`` adds to the document's
    (which holds ``bootstrap``, ``seed`` and the price). Raises :class:`~interleave_bench.errors.InputErrors` on duplicate rows unless
    ``allow_duplicates``; with ``thread_labels``, :class:`~interleave_bench.errors.InputError` for a
    closed-mode run none of whose labels names a thread, as ``score`` refuses its file (:mod:`.labels`).
    """
    check_bootstrap(bootstrap)
    check_seed(seed)
    all_sessions = as_sessions(sessions)
    rows = as_rows(rows, source)
    by_id = {s.session_id: s for s in all_sessions}
    index = index_rows(rows, by_id, source=source, lines=lines, allow_duplicates=allow_duplicates)
    run_mode = index.resolved_mode(mode)
    wrong_mode = mode_errors(rows, run_mode, source, lines) if mode is None else []
    if wrong_mode:
        raise InputErrors(wrong_mode)
    price = price_of_run(price, index.model)
    chosen = select_split(all_sessions, split)
    if only_sessions is not None:
        chosen = [s for s in chosen if s.session_id in only_sessions]
    if thread_labels and run_mode == "closed":
        labels, threads = ThreadLabels(), {s.session_id: set(s.thread_ids()) for s in chosen}
        for k, row in enumerate(rows):  # the rows scored: of the sessions chosen, the last for a turn
            if row.session_id in threads and index.by_session.get(row.session_id, {}).get(row.i) is row:
                labels.add(lines[k] if lines is not None else k + 1, row.pred, threads[row.session_id])
        if labels.refused:
            raise labels.error(source, labels.first[0])  # type: ignore[index]
    pooled, scored, scores = _score_records(chosen, index, run_mode, system, show_progress)
    in_split = {s.session_id for s in chosen}
    run = pooled.finish(rows=index.rows, mode=index.mode, policy=index.policy, model=index.model, predictions_sha256=None,
                        scored_mode=run_mode)
    left_out = [LeftOut(NO_PREDICTIONS, sid) for sid in run.unscored]
    left_out += index.unknown_sessions + index.unknown_turns + index.duplicates
    run.outside = sum(len(v) for sid, v in index.by_session.items() if sid not in in_split)
    result = run_document(run, left_out, system=system, split=split, bootstrap=bootstrap, seed=seed, price=price,
                          provenance=provenance)
    return RunScore(system, run_mode, split, scored, scores, index, left_out, result,
                    exact=exact_metrics(run.matrix.sum(axis=0), run.bcubed))


#: sessions scored at a time from records (what a block of a data file holds, about)
RECORD_BLOCK = 2_000


def _score_records(chosen: Sequence[Session], index: PredictionIndex, mode: str, system: str,
                   show_progress: bool) -> tuple[PooledRun, list[Session], list[SessionScore]]:
    """Sessions and their indexed rows scored by :func:`~.block.score_block`, a block of
    :data:`RECORD_BLOCK` sessions at a time: the pooled run, the scored sessions and what each
    of their messages came to."""
    from .datafile import columns_of

    pooled = PooledRun()
    scored: list[Session] = []
    scores: list[SessionScore] = []
    starts = range(0, len(chosen), RECORD_BLOCK)
    for at in progress(starts, desc=f"score {system}", unit="block") if show_progress else starts:
        part = chosen[at:at + RECORD_BLOCK]
        data = columns_of(list(part))
        rows: list[PredictionRow] = []
        where: list[int] = []
        for k, s in enumerate(part):
            by_i = index.by_session.get(s.session_id, {})
            rows += by_i.values()
            where += [k] * len(by_i)
        block = score_block(data, record_columns(rows, data, where), "all", mode, detail=True)
        pooled.add(block)
        with_rows = [k for k, s in enumerate(part) if index.by_session.get(s.session_id)]
        scored += [part[k] for k in with_rows]
        scores += session_scores(data, block, with_rows)
    return pooled, scored, scores


def run_document(run: ColumnarRun, left_out: Sequence[LeftOut], *, system: str, split: str, bootstrap: int, seed: int,
                 price: Price | None, provenance: Mapping[str, Any] | None,
                 in_sample: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The score document of a run from its pooled counts (:class:`~.columnar.ColumnarRun`)."""
    check_bootstrap(bootstrap)
    check_seed(seed)
    return score_document(
        system=system, mode=run.scored_mode, split=split, policy=run.policy, model=run.model, matrix=run.matrix,
        latency=run.latency, latency_rows=run.latency_rows, bcubed=run.bcubed, breakdown=run.breakdown, rows=run.rows,
        outside=run.outside, left_out=left_out, session_ids=run.session_ids, langs=run.langs, bootstrap=bootstrap,
        seed=seed, price=price, provenance=provenance, cluster=run.cluster, calibration=run.calibration,
        in_sample=in_sample,
    )


def score_runs(
    sessions: Sequence[Session | Mapping[str, Any]],
    rows_by_run: Mapping[str, Sequence[PredictionRow | Mapping[str, Any]]],
    *,
    mode: str | None = None,
    split: str = DEFAULT_SPLIT,
    bootstrap: int = DEFAULT_BOOTSTRAP,
    seed: int = DEFAULT_SEED,
    allow_duplicates: bool = False,
    price: PriceArgument = None,
) -> dict[str, dict[str, Any]]:
    """Score several runs on the same sessions; ``{run name: score document}`` in the given order.

    Sessions and rows may be records or plain dicts (validated). Each run's mode comes from its
    own rows unless ``mode`` is given; its price from ``price`` (default: the dated table, for the
    model its rows name). Provenance carries the package, git and Python facts, ``bootstrap``,
    ``seed`` and the price used (no file fingerprints: there are no files).
    """
    from ..provenance import provenance

    all_sessions = as_sessions(sessions)
    out: dict[str, dict[str, Any]] = {}
    facts = provenance()
    for name, rows in rows_by_run.items():
        run = score_predictions(
            all_sessions, rows, system=name, mode=mode, split=split, bootstrap=bootstrap, seed=seed,
            allow_duplicates=allow_duplicates, price=price, source=f"<{name}>", provenance=facts,
        )
        out[name] = run.result
    return out


# --- the file edge ---------------------------------------------------------------------------------

@dataclass
class ScoredFile:
    """One predictions file scored: the run's name, its score document and where it was written."""

    system: str
    result: dict[str, Any]
    score_file: Path | None = None


def _document_of(
    pred_path: Path, data_path: Path, data_sha: str, run: ColumnarRun | None,
    *, mode: str | None, split: str, bootstrap: int, seed: int, allow_duplicates: bool,
    price: PriceArgument, write: bool, data_source: Mapping[str, Any],
    keep_per_session: bool = True, recorded_prices: bool = False, in_sample: FitSample | None = None,
) -> ScoredFile:
    """One predictions file's document from its pooled counts (``run``; ``None`` for a file
    holding a defect, which raises the strict reader's errors); the rows left out are listed,
    a second row for a turn and a row of another mode raise (in that order). Written beside the
    predictions when ``write``."""
    from ..io import write_json
    from ..fingerprints import sha256_file
    from ..provenance import provenance
    from .read import refused

    if run is None:
        refused(pred_path, "predictions")
    left_out = [LeftOut(NO_PREDICTIONS, sid) for sid in run.unscored]
    left_out += run.listing.listed()  # raises naming every duplicate
    if run.other_mode:
        raise InputErrors(run.other_mode)
    if not run.session_ids:
        raise nothing_scored(pred_path, data_path, split, left_out, run.outside)
    if run.wrong_labels:
        raise InputErrors(run.wrong_labels)
    facts = provenance(
        data_file=str(data_path),
        data_sha256=data_sha,
        predictions_file=str(pred_path),
        # taken as the file was read (JSONL), else read for it
        predictions_sha256=run.predictions_sha256 or sha256_file(pred_path),
        **data_source,
    )
    result = run_document(run, left_out, system=system_name(pred_path), split=split, bootstrap=bootstrap, seed=seed,
                          provenance=facts, price=price_of_run(price, run.model, pred_path if recorded_prices else None),
                          in_sample=in_sample_of(in_sample, pred_path, run.policy))
    out = ScoredFile(system_name(pred_path), result)
    if write:
        out.score_file = score_path(pred_path, split, mode)
        write_json(out.score_file, result)
        if not keep_per_session:  # written whole; what is kept of many large runs stays small
            out.result = {key: value for key, value in result.items() if key != "per_session"}
    return out


def nothing_scored(pred_path: Path, data_path: Path, split: str, left_out: Sequence[LeftOut], outside: int) -> InputError:
    """The one-line error for a predictions file none of whose rows is for a session of the split:
    a number made of no message is no score (the first row outside the data named by line)."""
    stray = [x for x in left_out if x.reason in (UNKNOWN_SESSION, UNKNOWN_TURN)]
    parts = []
    if stray:
        parts.append(f"{len(stray):,} row{'s' if len(stray) != 1 else ''} for sessions or turns it does not hold "
                     f"(the first for session {shown(stray[0].session_id)})")
    if outside:
        parts.append(f"{outside:,} row{'s' if outside != 1 else ''} for sessions of other splits (--split)")
    line = stray[0].line if stray else None
    field = "session_id" if stray else None
    return InputError(str(pred_path), line, field, f"no row is for a session of the {split} split of {data_path}"
                      + (": " + "; ".join(parts) if parts else "") + ": nothing to score")


def score_files(
    data: str | os.PathLike,
    predictions: Sequence[str | os.PathLike],
    *,
    mode: str | None = None,
    split: str = DEFAULT_SPLIT,
    bootstrap: int = DEFAULT_BOOTSTRAP,
    seed: int = DEFAULT_SEED,
    allow_duplicates: bool = False,
    write: bool = True,
    sessions: Sequence[Session] | None = None,
    data_source: Mapping[str, Any] | None = None,
    price: PriceArgument = None,
    jobs: int = 1,
    keep_per_session: bool = True,
    recorded_prices: bool = False,
    in_sample: FitSample | None = None,
) -> list[ScoredFile]:
    """Score prediction files against a data file; writes ``<pred>.score.json`` beside each when
    ``write`` (the name :func:`~.paths.score_path` gives for ``split`` and ``mode``).

    ``data`` is a sessions file or a folder holding ``sessions.jsonl``; a predictions entry may be
    a folder of ``*.jsonl`` and ``*.parquet`` files. The data file is read and checked once for
    all runs, a block of sessions at a time, each run scored on arrays in step with it
    (:mod:`.columnar`); a file holding a defect raises the strict reader's errors, which name
    every bad line (the data file's first). ``sessions``, when given, are the data file's already
    read: the data fingerprint is taken from them. ``price`` as for :func:`score_predictions`; with
    ``recorded_prices``, a run's own record's price where no ``EVAL_PRICES`` is given
    (:func:`~interleave_bench.llm.prices.price_of_run`). ``jobs`` > 1 shares the files out among
    that many worker processes (``concurrent.futures``; each reads the data once for its share,
    and a callable ``price`` must pickle); the documents are the same. Each document's provenance adds the data file and the data fingerprint (on the records:
    :func:`~interleave_bench.fingerprints.records_fingerprint`), the predictions file and its SHA-256, and
    ``data_source`` when given (where the data came from, e.g. the Hub repo, revision and commit).
    Returns one :class:`ScoredFile` per predictions file, in order; unless ``keep_per_session``,
    a document written to its score file is returned without its ``per_session`` rows (the file
    holds them), so that scoring many large runs holds little. A run whose record states another
    mode than ``mode`` is refused before any reading (:func:`~.paths.require_recorded_mode`).
    ``in_sample``: the data is what a fit read (:mod:`.in_sample`); each run of its weights is
    marked so in its document.
    """
    if jobs < 1:
        raise UsageError(f"--jobs must be 1 or more, got {jobs}")
    check_bootstrap(bootstrap)  # before the long read, not after it
    check_seed(seed)
    check_split(split)
    data_path = sessions_file(data)
    pred_paths = prediction_files(predictions)
    for path in [data_path, *pred_paths]:  # fail before the long read, not after it
        require_file(path)
    other_kind(data_path, "sessions", DATA_FIRST)  # the array readers pass over fields of the other kind
    for path in pred_paths:
        other_kind(path, "predictions")
        require_recorded_mode(path, mode)
    if write:
        require_score_outputs(data_path, pred_paths, split, mode)
    options = dict(mode=mode, split=split, bootstrap=bootstrap, seed=seed, allow_duplicates=allow_duplicates,
                   price=price, write=write, data_source=dict(data_source or {}), keep_per_session=keep_per_session or not write,
                   recorded_prices=recorded_prices, in_sample=in_sample)
    jobs = min(jobs, len(pred_paths))
    if jobs <= 1 or sessions is not None:  # the data file read on a second core while this one scores
        return _score_share(pred_paths, data_path, sessions, options, background=True)
    from concurrent.futures import ProcessPoolExecutor

    data_fingerprint(data_path)  # the data's defects named once, before any worker starts
    shares = [pred_paths[k::jobs] for k in range(jobs)]
    with ProcessPoolExecutor(jobs) as pool:  # each share read and scored in a process of its own
        done = list(pool.map(_score_share, shares, [data_path] * jobs, [None] * jobs, [options] * jobs))
    by_path = {p: r for share, results in zip(shares, done) for p, r in zip(share, results)}
    return [by_path[p] for p in pred_paths]


def require_score_outputs(data_path: Path, pred_paths: Sequence[Path], split: str, mode: str | None = None) -> None:
    """Refuse (one line, before any work) to score ``pred_paths`` into files beside them
    (:func:`score_path`) when two of them would write one score file (``x.jsonl`` and
    ``x.parquet``), or when one of those files is an input or a file of another kind
    (:func:`~interleave_bench.errors.require_output`)."""
    from ..documents import is_score_head
    from ..errors import require_one_each, require_output
    from .read import data_inputs

    inputs = [*data_inputs(data_path), *((p, "a predictions file") for p in pred_paths)]
    outputs = [(pred, score_path(pred, split, mode)) for pred in pred_paths]
    require_one_each(outputs, "score:", "predictions file", "score", "score them one at a time with --out, or rename one")
    for pred, output in outputs:
        require_output(output, inputs, is_score_head, "a score file",
                       f"score: {pred} has its score file beside it, and")


def _score_share(pred_paths: Sequence[Path], data_path: Path, sessions: Sequence[Session] | None,
                 options: dict[str, Any], background: bool = False) -> list[ScoredFile]:
    """Score some of the files in one pass over the data (which also gives the data fingerprint,
    unless the sessions were given already read: then theirs), the data file read in a forked
    process when ``background``."""
    from ..fingerprints import records_fingerprint
    from .columnar import score_run_blocks

    runs, passed = score_run_blocks(data_path, pred_paths, options["split"], options["mode"], options["allow_duplicates"],
                                    background)
    data_sha = records_fingerprint(sessions) if sessions is not None else passed
    return [_document_of(p, data_path, data_sha, run, **options) for p, run in zip(pred_paths, runs)]
