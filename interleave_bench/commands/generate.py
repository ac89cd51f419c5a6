"""``interleave-bench generate``: write a data set of interleaved sessions (docs/generate.md#the-plan-interleave_benchgenerateplanpy).

With a model (``--model``, or ``--dry-run`` for the fake model) every step asks it: threads, the
messages eight plan rows at a time with a leak rewrite, and the independent reading. ``--offline``
needs no model at all: domain packs, phrasing templates and a rule-based reader. ``--dataset v1``
adds the assistant's replies, fact episodes (checked step by step), a timeline and probes. Writes
``sessions.jsonl`` and ``manifest.json``; an interrupted run resumes when run again.
"""

from __future__ import annotations

import argparse
import sys

from ..errors import UsageError
from ..generate.plan import PlanOptions
from ..generate.runner import (
    DATASETS,
    DEFAULT_LANGS,
    DEFAULT_SEED,
    DEFAULT_SESSIONS,
    GenerateConfig,
    GenerateResult,
    check_langs,
    check_session_count,
    default_out,
    generate,
)
from ..llm import add_model_arguments, model_session_from_args
from ..options import whole_number
from ..progress import print_summary


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "generate",
        help="generate interleaved sessions (with a model, the fake model, or offline)",
        description=__doc__.split("\n\n")[0] + " " + __doc__.split("\n\n")[1],
    )
    p.add_argument("--sessions", type=whole_number(), default=DEFAULT_SESSIONS, metavar="N", help=f"sessions to generate (default {DEFAULT_SESSIONS})")
    p.add_argument("--dataset", default="v0", choices=DATASETS, help="dataset config (default v0)")
    p.add_argument("--seed", type=whole_number(), default=DEFAULT_SEED, help=f"seed of the plans and offline choices (default {DEFAULT_SEED})")
    p.add_argument("--langs", default=",".join(DEFAULT_LANGS), metavar="L1,L2", help="session languages, alternating by session index (default en,zh)")
    p.add_argument("--offline", action="store_true", help="no model: domain packs, templates and the rule-based reader")
    p.add_argument("--out", metavar="DIR", help="output folder (default data/interleave-v0/, -dry/ for --dry-run, -offline/ for --offline)")
    p.add_argument("--plan", action="append", default=[], metavar="NAME=VALUE",
                   help="change one plan parameter, e.g. oneoff_p=0.1 (repeatable; see docs/generate.md)")
    p.add_argument("--overwrite", action="store_true", help="discard what the output folder holds instead of resuming")
    add_model_arguments(p)
    p.set_defaults(func=run)


def parse_langs(value: str) -> tuple[str, ...]:
    return tuple(x.strip() for x in value.split(",") if x.strip())


def run(args: argparse.Namespace) -> int:
    if args.offline and args.dry_run:
        raise UsageError("--offline and --dry-run exclude each other: --offline uses no model at all")
    if args.offline and args.model:
        raise UsageError("--offline uses no model: drop --model, or drop --offline to generate with the model")
    check_session_count(args.sessions)
    langs = check_langs(parse_langs(args.langs))  # before any model is set up
    plan = PlanOptions.from_overrides(args.plan)
    mode = "offline" if args.offline else "dry" if args.dry_run else "model"
    out = args.out or default_out(args.dataset, mode)
    config = GenerateConfig(dataset=args.dataset, seed=args.seed, langs=langs, plan=plan)
    if args.offline:
        result = generate(args.sessions, out, config=config, overwrite=args.overwrite)
        report(result)
        return exit_code(result)
    if args.dry_run:
        from ..generate import fake  # noqa: F401  (registers the fake model's answers to generation requests)
    with model_session_from_args(args) as llm:  # checks --concurrency before any model is set up
        result = generate(args.sessions, out, config=config, llm=llm, concurrency=args.concurrency, overwrite=args.overwrite)
        report(result, llm)
        print(llm.cost_line(), file=sys.stderr)
    return exit_code(result)


def report(result: GenerateResult, llm=None) -> None:
    """The lines a run ends with: failures and the summary on stderr, what was written on stdout."""
    for f in result.failed:
        print(f"failed: {f['session_id']}: {f['reason']}", file=sys.stderr)
    c = result.counts
    langs = ", ".join(f"{k} {v}" for k, v in result.by_lang.items()) or "none"
    # every message marked ambiguous, one-offs too, over every message: not the ambiguous share
    # (thread messages only) that validate and stats give, so it says what it counts
    share = f" ({c['ambiguous'] / c['messages']:.1%} of messages)" if c["messages"] else ""
    resumed = f"; {result.resumed} taken from an earlier run" if result.resumed else ""
    print(f"wrote {result.sessions_path} and {result.manifest_path.name}: {c['sessions']:,} sessions ({langs}), "
          f"{c['messages']:,} messages, {c['ambiguous']:,} ambiguous{share}, {c['leaks']:,} leaks{resumed}")
    if result.failed:
        print(f"{len(result.failed)} session(s) failed (listed in {result.manifest_path.name}); run the same command "
              "again to retry them (their unusable answers are not reused)", file=sys.stderr)
    print_summary("generate", c, result.seconds, llm)


def exit_code(result: GenerateResult) -> int:
    """0 when sessions were written; 1 when every requested session failed."""
    return 1 if result.failed and not result.counts["sessions"] else 0
