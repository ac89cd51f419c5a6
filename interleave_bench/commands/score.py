"""``interleave-bench score DATA PRED.jsonl...``: score routing runs (docs/score.md#the-metrics-exactly).

Prints one markdown table comparing the runs (a second one for burst runs) and a ``not scored:``
line per run, and writes ``<pred>.score.json`` beside each predictions file (``<pred>.<split>.score.json``
for a split other than dev, ``<pred>[.<split>].<mode>.score.json`` for a ``--mode`` other than the one
the rows were routed in: :func:`~interleave_bench.score.paths.score_path`). ``--json`` prints the
score document(s) instead of the tables and writes no file; ``--out PATH`` writes the one run's
document there instead. Re-scoring never calls a model.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path
from typing import Any, Mapping

from ..documents import is_score_head
from ..errors import InputError, UsageError, require_file, require_output
from ..heap import paused_gc
from ..options import whole_number
from ..progress import Timer, print_summary
from ..schema import MODES
from ..text import escape_unshown
from ..score.defaults import DEFAULT_BOOTSTRAP, DEFAULT_SEED, DEFAULT_SPLIT, SPLITS, bootstrap_option, seed_option


def add_scoring_arguments(p: argparse.ArgumentParser) -> None:
    """Options ``score`` and ``compare`` share."""
    p.add_argument("--split", choices=SPLITS, default=DEFAULT_SPLIT, help=f"sessions to score (default {DEFAULT_SPLIT})")
    p.add_argument("--bootstrap", type=bootstrap_option, default=DEFAULT_BOOTSTRAP, metavar="N",
                   help=f"bootstrap resamples over sessions for the intervals, 0 for none (default {DEFAULT_BOOTSTRAP})")
    p.add_argument("--seed", type=seed_option, default=DEFAULT_SEED,
                   help=f"seed of the resamples, 0 or more (default {DEFAULT_SEED})")
    p.add_argument("--mode", choices=MODES,
                   help="score in this mode (default: the first row that names one, else closed)")
    p.add_argument("--allow-duplicates", action="store_true",
                   help="keep the last of several rows for one turn instead of stopping with an error")
    p.add_argument("--json", action="store_true", help="print the JSON document instead of markdown")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("score", help="score routing predictions", description=__doc__.split("\n\n")[0])
    p.add_argument("data", metavar="DATA",
                   help="sessions.jsonl, the data folder that holds it, or hub:ORG/NAME@REV[#CONFIG] (a published revision)")
    p.add_argument("predictions", nargs="+", metavar="PRED",
                   help="prediction files (.jsonl), or folders of them")
    add_scoring_arguments(p)
    p.add_argument("--per-session", action="store_true", help="also print one row per scored session")
    p.add_argument("--require-complete", action="store_true",
                   help="exit 1 when a run has no rows for some sessions or turns of the split (default: score the rest)")
    p.add_argument("--jobs", type=whole_number(), default=1, metavar="N",
                   help="score up to N prediction files at once in worker processes (same results; default 1)")
    p.add_argument("--out", metavar="PATH",
                   help="write the score document here (one predictions file) instead of beside the predictions")
    p.set_defaults(func=run)


#: what the tables say of a run scored without intervals, so an interval-less number is never read as one with
NO_INTERVALS = ("no bootstrap intervals: --bootstrap 0 was given, so accuracy, lenient accuracy and weighted error "
                "(and every other bootstrap interval) are null in the score file and unbracketed here")


def run(args: argparse.Namespace) -> int:
    timer = Timer()
    # records are built by the hundred thousand: keep the cyclic collector off meanwhile
    with _score_files_held(args), paused_gc():
        from ..hub.source import local_data
        from ..io import sessions_file
        from ..llm.prices import prices_from
        from ..locks import writer_of
        from ..route.digest import refuse_other_data
        from ..route.local_sample import fit_sample
        from ..score.run import prediction_files, score_files

        data, source = local_data(args.data)
        price = prices_from(os.environ)
        preds = prediction_files(args.predictions)  # (listed once: a folder's files, each checked given once)
        if args.out is not None and len(preds) != 1:
            raise UsageError("--out names one score file: give one predictions file")
        # before it is read: a run whose file a route is still writing is scored as far as it goes, and said so
        writing = {p: who for p in preds if (who := writer_of(p)) is not None}
        # before anything is written: a run is scored on the sessions it routed
        unchecked = refuse_other_data(sessions_file(data), preds, args.split, writes_own=not args.json and args.out is None)
        if args.out is not None:
            # before the scoring, not after it
            require_output(args.out, run_inputs(data, args.predictions), is_score_head, "a score file", "score: --out")
        runs = score_files(
            data, args.predictions, mode=args.mode, split=args.split, bootstrap=args.bootstrap,
            seed=args.seed, allow_duplicates=args.allow_duplicates, data_source=source, price=price,
            jobs=args.jobs, keep_per_session=args.per_session or args.json,
            write=not args.json and args.out is None, recorded_prices=True,
            in_sample=fit_sample(sessions_file(data), args.split),
        )
    from ..io import print_json, write_json
    from ..reports.tables import (burst_table, calibration_table, cluster_table, main_table, per_session_table,
                                  warn_in_sample, warn_partial)
    from ..score.rows import error_rows_notice, not_scored_notice, scored_counts

    results = [r.result for r in runs]
    if args.out is not None:
        write_json(args.out, results[0])
        runs[0].score_file = Path(args.out)
    if args.json:
        print_json(results[0] if len(results) == 1 else results)
        for line in filter(None, map(not_scored_notice, results)):
            print(line, file=sys.stderr)
    else:
        print(main_table(results))
        bursts = burst_table(results)
        if bursts:
            print()
            print(bursts)
        clusters = cluster_table(results)
        if clusters:
            print()
            print(clusters)
        calibrated = calibration_table(results)
        if calibrated:
            print()
            print(calibrated)
        if args.per_session:
            print()
            print(per_session_table(results))
        notes = [line for line in map(not_scored_notice, results) if line]
        notes += [NO_INTERVALS] if args.bootstrap == 0 else []
        if notes:
            print()
            print("\n".join(notes))
    if args.bootstrap == 0 and args.json:
        print(NO_INTERVALS, file=sys.stderr)
    written = {p: r.score_file for p, r in zip(preds, runs) if r.score_file is not None}
    sys.stdout.flush()  # the tables, then the warnings, then the files they speak of
    for line in routing_warnings(unchecked, args.predictions, args.mode, split=args.split, written=written):
        print(line, file=sys.stderr)
    for run_ in runs:
        if run_.score_file is not None:
            print(f"wrote {escape_unshown(str(run_.score_file))}", file=sys.stderr if args.json else sys.stdout)
    for p, run_ in zip(preds, runs):
        if p in writing:
            print(being_written(p, writing[p], run_.result["counts"]["rows"]), file=sys.stderr)
    warn_partial(results, sys.stderr)
    warn_in_sample(results, sys.stderr)
    for line in filter(None, map(error_rows_notice, results)):
        print(line, file=sys.stderr)
    print_summary("score", scored_counts(results, args.split), timer.seconds)
    incomplete = [r["system"] for r in results if r["counts"]["sessions_without_rows"] or r["counts"]["missing_rows"]]
    if args.require_complete and incomplete:
        print(f"incomplete: rows are missing for part of the {args.split} split in {', '.join(incomplete)} (see the "
              "not scored: line); --require-complete asks for every session and turn", file=sys.stderr)
        return 1
    return 0


def being_written(pred: str | os.PathLike, holder: str, rows: int) -> str:
    """The warning for a predictions file whose lock a writer held as it was read (``holder``, as
    :func:`~interleave_bench.locks.writer_of` says it): its ``rows`` are the part written so far."""
    return (f"warning: {pred} is being written by a running route (its lock is held: {holder}): scored the "
            f"{rows:,} row{'s' if rows != 1 else ''} written so far")


def run_inputs(data: str | os.PathLike, predictions: list[str]) -> list[tuple[os.PathLike, str]]:
    """What scoring ``predictions`` against ``data`` reads, as ``(path, what it is)`` pairs: the
    sessions file and every predictions file (a folder's, one by one)."""
    from ..score.read import data_inputs
    from ..score.run import prediction_files

    paths = prediction_files(predictions)
    what = "the predictions file" if len(paths) == 1 else "a predictions file"
    return [*data_inputs(data), *((p, what) for p in paths)]



def routing_warnings(unchecked: Mapping[str, str], predictions: list[str], mode: str | None,
                     split: str = DEFAULT_SPLIT, written: Mapping[Path, Path] | None = None) -> list[str]:
    """Warnings for predictions files whose run record (``<name>.run.json``) is an older version's,
    without session digests, and says they were routed on other data (``unchecked``, what
    :func:`~interleave_bench.route.digest.refuse_other_data` returned before the scoring), and for
    files without a record whose rows name another mode than ``mode`` (``--mode``, None: the rows'
    own) scores them in (a record's mode is never overridden: the scorer refuses it,
    :func:`~interleave_bench.score.paths.require_recorded_mode`); the latter names the score file
    ``written`` holds for the file (scored on ``split``), and the score file of the rows' own mode,
    which it leaves as it is (:func:`~interleave_bench.score.paths.score_path`)."""
    from ..score.paths import prediction_files, recorded_mode, routed_mode, score_path

    out: list[str] = []
    paths = prediction_files(predictions)
    for p in paths:
        out += [unchecked[str(p)]] if str(p) in unchecked else []
        routed = routed_mode(p) if mode is not None and recorded_mode(p) is None else None
        if routed is not None and routed != mode:
            line = (f"warning: {p}'s rows say they were routed in {routed} mode (it has no run record stating its mode) and "
                    f"it is scored in {mode} mode, as --mode asks")
            to = (written or {}).get(p)
            own = score_path(p, split)
            if to is not None:
                line += f": written to {to}" + (f" ({own.name}, its {routed}-mode score file, is left as it is)"
                                                  if to != own else "")
            out.append(line)
    return out


@contextlib.contextmanager
def _score_files_held(args: argparse.Namespace) -> Any:
    """The lock of every score file the run writes, held from start to end (one writer per output:
    a second ``score`` of the same runs stops at once, naming this one). ``--json`` and ``--out``
    write none beside the predictions, so they lock none there (a read-only folder scores)."""
    from ..locks import exclusive_output
    from ..score.run import prediction_files, score_path

    with contextlib.ExitStack() as held:
        try:
            paths = prediction_files(args.predictions)  # a run given twice is refused here, before anything is read
        except InputError:
            paths = []  # said where the predictions are read
        outputs = ([] if args.json else [(None, Path(args.out))] if args.out is not None
                   else [(p, score_path(p, args.split, args.mode)) for p in paths])
        for pred, path in outputs:
            if pred is not None and pred.exists():  # (one not there is named where it is read, after the data)
                require_file(pred)  # a FIFO or device has no score file beside it: named, not its lock file
            try:
                held.enter_context(exclusive_output(path, "score"))
            except OSError as exc:
                if pred is None:
                    raise
                raise no_score_file_beside(pred, path, exc) from None
        yield


def no_score_file_beside(pred: Path, score_file: Path, exc: OSError) -> InputError:
    """The one line for a predictions file whose folder cannot hold its score file (``/proc``, a
    read-only folder): it names the predictions file given, not the lock file the system refused."""
    reason = exc.strerror or type(exc).__name__
    return InputError(str(pred), None, None, f"its folder cannot hold its score file {score_file.name} "
                                             f"({reason[:1].lower()}{reason[1:]}): score it with --out PATH or --json")
