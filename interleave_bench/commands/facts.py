"""``interleave-bench facts DATA``: does topic B get topic A's value as it stands now?

Replays each v1 session in turn order (topics follow gold labels) and at each probe asks the
probe's question once per strategy (single, own, summary, facts, oracle); the facts strategy gets
what a shared-facts system delivers (the reference system, or any ``--system module:Class``).
Probes and a seeded sample of turns with candidates are routed with and without facts offered.
Rows go to ``facts/<model>[-<system>].jsonl`` beside the data, with a ``.score.json`` beside them;
a rerun resumes (finished sessions are kept, model answers come from the cache). Exits 1 unless the
run passed (no error rows, no missing answers, every gate), as ``score-facts`` does; 2 for bad input.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from ..errors import UsageError, require_output
from ..facts.protocol import load_system, system_name
from ..facts.records import RESULTS_HEAD
from ..facts.report import report
from ..facts.runner import DEFAULT_ROUTE_TURNS, FactsRun, RunOptions
from ..interrupted import kept_in, note_kept
from ..io import read_sessions, sessions_file
from ..locks import exclusive_output
from ..options import whole_number
from ..llm import add_model_arguments, model_session_from_args
from ..llm.provider import run_model
from ..progress import Timer, print_summary
from ..schema import Session
from ..facts.metrics import STRATEGIES
from .score_facts import exit_code, require_summary_outputs, score_and_write, summary_path

#: the folder beside the data that holds facts results
RESULTS_DIR = "facts"
SPLITS = ("dev", "test", "all")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("facts", help="shared facts (v1): ask each probe once per strategy, route with/without facts",
                       description=__doc__.split("\n\n")[1].replace("\n", " "))
    p.add_argument("data", metavar="DATA", help="v1 sessions.jsonl, or the data folder that holds it")
    p.add_argument("--split", choices=SPLITS, default="dev", help="sessions to run (default dev)")
    p.add_argument("--strategies", default=",".join(STRATEGIES),
                   help=f"comma-separated strategies, in order (default {','.join(STRATEGIES)})")
    p.add_argument("--system", default="reference", metavar="reference|module:Class",
                   help="the shared-facts system behind the facts strategy (default: the reference system)")
    p.add_argument("--route-turns", type=whole_number(), default=DEFAULT_ROUTE_TURNS, metavar="N",
                   help=f"turns with candidates routed twice per session besides the probes (default {DEFAULT_ROUTE_TURNS})")
    p.add_argument("--seed", type=whole_number(), default=0, help="seed of the sampled turns (default 0)")
    p.add_argument("--out", metavar="FILE", help="results JSONL (default: DATA/facts/<model>[-<system>].jsonl)")
    p.add_argument("--limit", type=whole_number(), metavar="N", help="only the first N sessions of the split (a smoke test)")
    add_model_arguments(p)
    p.set_defaults(func=run)


def parse_strategies(text: str) -> tuple[str, ...]:
    """The strategies named, in order; raises :class:`UsageError` for an unknown or repeated one."""
    names = tuple(x.strip() for x in text.split(",") if x.strip())
    bad = [x for x in names if x not in STRATEGIES]
    if bad or not names:
        raise UsageError(f"--strategies: unknown {', '.join(bad) or '(none given)'}; choose from {', '.join(STRATEGIES)}")
    if len(set(names)) != len(names):
        raise UsageError(f"--strategies: each strategy once, got {text!r}")
    return names


def read_v1_sessions(path: Path) -> list[Session]:
    """The sessions of a v1 file, with their timeline and probes checked (file, line, field on error)."""
    sessions = read_sessions(path)  # one line for a file of another kind, as every command says it
    if sessions and not any(s.probes for s in sessions):
        raise UsageError(f"{path}: no session has probes: facts needs v1 data (timeline and probes), "
                         "(v0 sessions route only)")
    return sessions


def run(args: argparse.Namespace) -> int:
    timer = Timer()
    strategies = parse_strategies(args.strategies)
    if args.route_turns < 0:
        raise UsageError(f"--route-turns must be 0 or more, got {args.route_turns}")
    if args.limit is not None and args.limit < 1:
        raise UsageError(f"--limit must be at least 1, got {args.limit}")
    data = sessions_file(args.data)
    sessions = read_v1_sessions(data)
    selected = [s for s in sessions if args.split == "all" or s.split == args.split]
    if args.limit is not None:
        selected = selected[: args.limit]
    if not selected:
        raise UsageError(f"{data}: no {args.split} sessions")
    system_cls = load_system(args.system)
    name = system_name(args.system, system_cls)
    model = run_model(args.model, bool(args.dry_run))
    stem = _UNSAFE.sub("_", model) + ("" if args.system == "reference" else "-" + _UNSAFE.sub("_", name))
    out = Path(args.out) if args.out else data.parent / RESULTS_DIR / f"{stem}.jsonl"
    # before any work: a results file is resumed, and nothing else is ever cut or replaced
    require_output(out, [(data, "the sessions file")], RESULTS_HEAD, "a facts results file", "facts: --out")
    require_summary_outputs([out], data, "facts:")
    out.parent.mkdir(parents=True, exist_ok=True)
    opts = RunOptions(strategies=strategies, system=args.system, system_name=name, route_turns=args.route_turns,
                      seed=args.seed, model=model)
    job = FactsRun(selected, out, opts, system_cls, [s.session_id for s in sessions])
    with exclusive_output(out, f"facts --system {args.system} --model {model}"):
        return _run_locked(args, job, out, data, name, model, len(selected), timer)


def _run_locked(args: argparse.Namespace, job: FactsRun, out: Path, data: Path, name: str, model: str,
                selected: int, timer: Timer) -> int:
    """The run proper, while this process holds the output's lock; returns the exit code."""
    plan = job.prepare()
    llm = None
    try:
        if plan.todo:
            if args.dry_run:
                from ..facts import fake  # noqa: F401  (registers the fake model's answers to facts requests)
            with model_session_from_args(args) as llm:
                llm.run(job.run(llm))
    except KeyboardInterrupt as exc:  # the line Ctrl-C ends with says what the results file holds
        note_kept(exc, kept_in(job.finished(), selected, "session", out))
        raise
    finally:
        job.finish()

    doc = score_and_write(out, data)
    print(f"facts: system {name}, model {model}{' (dry run)' if args.dry_run else ''}; "
          f"{selected} {'' if args.split == 'all' else args.split + ' '}session{'s' if selected != 1 else ''} of {data}")
    print()
    print(report(doc.metrics))
    print(f"results: {out}; summary: {summary_path(out)}", file=sys.stderr)
    if llm is not None:
        print(llm.cost_line(), file=sys.stderr)
    counts = {"sessions": selected, "replayed now": len(job.fresh) - len(job.failed),
              "kept from earlier runs": len(plan.kept), "failed": len(job.failed)}
    if plan.redone:
        counts["failed, changed or cut-off sessions replayed"] = plan.redone
    print_summary("facts", counts, timer.seconds, llm)
    unrouted = job.unrouted()
    if unrouted:
        print(f"{unrouted} session{'s' if unrouted != 1 else ''} hold a routing answer that named no topic (scored as "
              "a failed route); run the same command again to ask for them again", file=sys.stderr)
    if job.failed:
        if len(job.failed) == len(plan.todo):
            raise UsageError(f"every session failed ({len(job.failed)}); first: {next(iter(job.failed.values()))}")
        n = len(job.failed)
        print(f"warning: {n} session{'s' if n != 1 else ''} failed and {'are' if n != 1 else 'is'} recorded as "
              f"{'error rows' if n != 1 else 'an error row'} (first: {next(iter(job.failed.values()))}); run the same "
              "command again to finish them", file=sys.stderr)
    return exit_code([doc])  # 1 when the run did not pass (its error rows, a gate), as score-facts says
