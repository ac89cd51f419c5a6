"""``interleave-bench route DATA --mode closed|open --policy P``: route every message, write predictions.

Writes ``predictions/<mode>-<policy>[-t<threshold>][-merge<all|adaptive>][-each][-<model>].jsonl`` beside the
data (``predictions-dry/`` with ``--dry-run``, so fake-model output never sits beside real runs;
one row per message of the chosen split) and ``<name>.run.json`` (options, data fingerprint,
counts, usage, provenance). A rerun resumes: finished sessions are kept and skipped.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ..errors import UsageError
from ..llm import add_model_arguments, model_options_given, model_session_from_args
from ..llm.prices import prices_from
from ..options import number, whole_number
from ..progress import Timer, print_summary
from ..route.bursts import DECIDES, DEFAULT_CROSS, DEFAULT_SAME, DEFAULT_SEED, MERGES
from ..route.resume import stale_scores_line
from ..route.runner import (DEFAULT_SPLIT, MODEL_POLICIES, POLICIES, SPLITS, RouteOptions, RouteResult, run_name,
                            run_route)
from ..route.sweep import DEFAULT_THRESHOLDS, SweepResult, check_thresholds, curve_table, parse_thresholds, run_sweep
from ..schema import MODES
from ..text import escape_unshown


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("route", help="route every message of a data set with one policy", description=__doc__.split("\n\n")[0])
    p.add_argument("data", metavar="DATA",
                   help="a data folder holding sessions.jsonl, the file itself, or hub:ORG/NAME@REV[#CONFIG]")
    p.add_argument("--mode", choices=MODES, required=True,
                   help="closed: the thread list is given up front; open: topics are made on the way")
    p.add_argument("--policy", choices=POLICIES,
                   help="llm and hybrid call a model; local is the model-free router with a confidence; "
                        "the others are model-free baselines")
    p.add_argument("--router", metavar="module:Class|URL",
                   help="instead of --policy: your own router, a Python class with route(view) or an HTTP "
                        "endpoint (docs/own_router.md); the run carries its policy name; "
                        "--concurrency N routes N sessions side by side (default 1)")
    p.add_argument("--router-arg", action="append", default=[], metavar="NAME=VALUE",
                   help="a keyword argument of the --router class (a JSON value or text); repeatable")
    p.add_argument("--threshold", type=number(), default=None, metavar="T",
                   help="hybrid only: route with local when its confidence is at least T (0..1), else ask the "
                        "model (default: the rule fast path)")
    p.add_argument("--sweep-threshold", nargs="?", const=",".join(f"{t:g}" for t in DEFAULT_THRESHOLDS),
                   default=None, metavar="T1,T2,...",
                   help="hybrid only: run at each threshold (default "
                        f"{','.join(f'{t:g}' for t in DEFAULT_THRESHOLDS)}) and write the accuracy vs calls, "
                        "tokens and cost per message curve (.sweep.json, .sweep.csv) beside the predictions")
    p.add_argument("--merge", choices=MERGES, default="none",
                   help="bursts: wait after every message (all), after one that seems to go on (adaptive), or never (default none)")
    p.add_argument("--decide", choices=DECIDES, default="one",
                   help="a merged burst gets one decision (one, default) or one per message in a single call (each)")
    p.add_argument("--same", type=number(), default=None, metavar="P",
                   help=f"chance a same-thread message follows within the window (default {DEFAULT_SAME})")
    p.add_argument("--cross", type=number(), default=None, metavar="P",
                   help=f"chance a message on another thread follows within the window (default {DEFAULT_CROSS})")
    p.add_argument("--seed", type=whole_number(), default=None, help=f"seed of the arrival simulation (default {DEFAULT_SEED})")
    p.add_argument("--split", choices=SPLITS, default=DEFAULT_SPLIT, help=f"sessions to route (default {DEFAULT_SPLIT})")
    p.add_argument("--out", metavar="FILE", help="write the predictions here instead of DATA/predictions/<name>.jsonl "
                        "(DATA/predictions-dry/ with --dry-run)")
    p.add_argument("--fresh", action="store_true", help="start over instead of resuming an existing predictions file (the score files of "
                        "its rows are removed as the new run's first row replaces them)")
    add_model_arguments(p)
    p.set_defaults(func=run)


def options_from_args(args: argparse.Namespace, policy: str | None = None) -> RouteOptions:
    """The run's options; ``policy`` is a plug-in router's own name (``--router``)."""
    if (args.policy is None) == (policy is None):
        raise UsageError("give --policy P or --router module:Class|URL (one of them)")
    if args.merge == "none":
        given = [name for name, v in (("--same", args.same), ("--cross", args.cross), ("--seed", args.seed)) if v is not None]
        if given:
            raise UsageError(f"{', '.join(given)} only apply to bursts: add --merge all or --merge adaptive")
    opts = RouteOptions(
        mode=args.mode,
        policy=policy or args.policy,
        router=args.router,
        router_args=tuple(args.router_arg),
        merge=args.merge,
        decide=args.decide,
        same=DEFAULT_SAME if args.same is None else args.same,
        cross=DEFAULT_CROSS if args.cross is None else args.cross,
        seed=DEFAULT_SEED if args.seed is None else args.seed,
        split=args.split,
        threshold=args.threshold,
    )
    opts.check()
    return opts


def print_file_line(result: RouteResult) -> None:
    """:func:`file_line` on stdout, after the line naming the stale score files a ``--fresh`` run
    removed (on stderr), if it removed any."""
    if result.stale_scores:
        print(stale_scores_line(result.stale_scores), file=sys.stderr)
    print(file_line(result))


def file_line(result: RouteResult) -> str:
    """What a run left in its file: ``wrote FILE (N rows)``, or ``kept FILE (N rows, already
    complete)`` when every session was done already and nothing new was written."""
    path = escape_unshown(str(result.path))  # (a line break in its name would split the line)
    if result.sessions:
        return f"wrote {path} ({result.rows:,} rows)"
    return f"kept {path} ({result.rows:,} rows, already complete)"


def run_title(opts: RouteOptions, model: str | None = None) -> str:
    """``route <mode>-<policy>[...]``, the summary line's name of a run (its progress bar's too:
    :func:`~interleave_bench.route.runner.run_name`), whatever ``--out`` names."""
    return f"route {run_name(opts, model)}"


def describe(result: RouteResult) -> dict[str, object]:
    """The counts of the summary line."""
    c = result.counts
    counts: dict[str, object] = {"sessions": result.sessions}
    if result.resumed:
        counts["already done"] = result.resumed
    counts.update(messages=c.messages, errors=c.errors, clarify=c.clarify)
    if c.rules:
        counts["by rule"] = c.rules
    if c.local:
        counts["by local"] = c.local
    if c.bursts:
        counts["merged bursts"] = c.bursts
    if c.fallback:
        counts["fallback"] = c.fallback
    return counts


def run(args: argparse.Namespace) -> int:
    from ..hub.source import local_data

    router = concurrency = None
    if args.router is not None:
        from ..route.plugin import load_router

        if args.policy is not None:
            raise UsageError("give --policy P or --router module:Class|URL (one of them)")
        given = model_options_given(args)
        ignored = [o for o in given if o != "--concurrency"]
        ignored += ["--sweep-threshold"] if args.sweep_threshold is not None else []
        if ignored:  # a plug-in router calls no model of ours: of the model options only --concurrency applies
            raise UsageError(f"{', '.join(ignored)}: the model options and --sweep-threshold apply to the built-in "
                             f"model policies, not --router (which takes --concurrency only)")
        concurrency = args.concurrency if "--concurrency" in given else None
        router = load_router(args.router, args.router_arg)
    elif args.router_arg:
        raise UsageError("--router-arg needs --router module:Class")
    opts = options_from_args(args, router.policy if router is not None else None)
    args.data, source = local_data(args.data)
    if args.out is not None:
        from ..route.plugin import router_source
        from ..route.resume import require_route_outputs

        require_route_outputs(args.data, args.out, router_source(router) if router is not None else None, "route: --out")
    if source is not None:
        print(f"data: {source['data_repo']}@{source['data_revision']} (commit {source['data_commit']}) in {args.data}")
    if router is not None:
        try:
            return run_route_command(args, opts, router, concurrency)
        finally:
            router.close()
    if args.dry_run:  # every dry run that asks the fake model (one run or a sweep) needs its routing answers
        from ..route import fake  # noqa: F401  (registers the fake model's answers to routing requests)
    if args.sweep_threshold is not None:
        return run_sweep_command(args, opts)
    if opts.policy not in MODEL_POLICIES:
        ignored = model_options_given(args)
        if ignored:
            raise UsageError(f"the {opts.policy} policy calls no model: drop {', '.join(ignored)}")
        return run_route_command(args, opts)
    with model_session_from_args(args) as llm:
        result = run_route(args.data, opts, llm=llm, out=args.out, fresh=args.fresh, dry_run=args.dry_run)
        print_file_line(result)
        print_summary(run_title(opts, llm.model), describe(result), result.seconds, llm,
                           rate=("messages", result.counts.messages))
        print(llm.cost_line(), file=sys.stderr)
    if result.errors_left:
        print(errors_left_line(result, "model calls that failed after every retry"), file=sys.stderr)
    return 0


def errors_left_line(result: RouteResult, what: str) -> str:
    """The line saying how many ``ERROR`` rows (``what`` they are) a run left, and how to ask again."""
    n = result.errors_left
    return (f"{n:,} ERROR {'row remains' if n == 1 else 'rows remain'} in {result.path} ({what}); "
            "run the same command again to ask for them again")


def run_route_command(args: argparse.Namespace, opts: RouteOptions, router: Any = None,
                      concurrency: int | None = None) -> int:
    """A run without a model of ours: a model-free policy, or a plug-in ``router`` (routing
    ``concurrency`` sessions side by side)."""
    result = run_route(args.data, opts, out=args.out, fresh=args.fresh, router=router, concurrency=concurrency)
    print_file_line(result)
    print_summary(run_title(opts), describe(result), result.seconds,
                       rate=("messages", result.counts.messages))
    if result.errors_left:
        print(errors_left_line(result, "decisions the router could not give"), file=sys.stderr)
    return 0


def sweep_counts(result: SweepResult) -> dict[str, object]:
    """The counts of a sweep's summary line, worded as :func:`describe` words a resumed run: the
    thresholds routed now and those already done, what the curve holds, the messages routed now,
    and the ``ERROR`` rows the runs of this sweep hold."""
    now = sum(1 for r in result.runs if r.sessions)
    counts: dict[str, object] = {"thresholds": now}
    if len(result.runs) > now:
        counts["already done"] = len(result.runs) - now
    counts.update({"on the curve": len(result.points), "messages": sum(r.counts.messages for r in result.runs),
                   "errors": sum(r.errors_left for r in result.runs)})
    return counts


def run_sweep_command(args: argparse.Namespace, opts: RouteOptions) -> int:
    """``--sweep-threshold``: one hybrid run per threshold, then the curve files and table, each
    point's cost priced as ``score`` prices its run (``EVAL_PRICES``, else its run record's price,
    else the dated table)."""
    if opts.policy != "hybrid":
        raise UsageError(f"--sweep-threshold applies to the hybrid policy only, not {opts.policy}")
    if args.threshold is not None:
        raise UsageError("--threshold and --sweep-threshold exclude each other")
    if args.out:
        raise UsageError("--sweep-threshold writes one predictions file per threshold: drop --out")
    thresholds = parse_thresholds(args.sweep_threshold)
    price = prices_from(os.environ)  # the curve's costs priced as score prices a run: read once, before any work
    check_thresholds(thresholds)  # before the model's session, as before any run
    timer = Timer()
    with model_session_from_args(args) as llm:
        result = run_sweep(args.data, opts, thresholds, llm=llm, fresh=args.fresh, dry_run=args.dry_run, price=price)
        for r in result.runs:
            print_file_line(r)
        for path, why in result.left_off:
            print(f"not on the curve: {path} ({why})", file=sys.stderr)
        print(curve_table(result.points))
        points = len(result.points)
        print(f"wrote {result.json_path} and {result.csv_path.name} ({points:,} threshold{'s' if points != 1 else ''})")
        print_summary(f"route sweep {opts.mode}-hybrid", sweep_counts(result), timer.seconds, llm)
        print(llm.cost_line(), file=sys.stderr)
    for r in result.runs:  # an ERROR row counts as wrong on the curve: each run says how many it holds
        if r.errors_left:
            print(errors_left_line(r, "model calls that failed after every retry"), file=sys.stderr)
    return 0
