"""``interleave-bench demo``: the main job on the embedded default, with no key and no network.

Generates offline data from the packaged templates, runs the model-free baselines in both modes,
scores them and prints the table. Every step is deterministic (seeded generation, model-free
routers, seeded bootstrap), so a rerun, or a run after an interruption, ends with the same files
and the same table.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..progress import Timer, summary_line
from ..schema import SCORE_SPLITS

#: sessions in the demo data set: enough for intervals worth reading, small enough for seconds
DEMO_SESSIONS = 60
#: the demo's seed, so every machine prints the same table
DEMO_SEED = 0
#: where the demo writes (relative to the current folder)
DEMO_OUT = "data/interleave-v0-demo"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="offline data, baselines and scores: the main job, no key needed",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("--sessions", type=int, default=DEMO_SESSIONS, help=f"sessions to generate (default {DEMO_SESSIONS})")
    p.add_argument("--seed", type=int, default=DEMO_SEED, help=f"generation seed (default {DEMO_SEED})")
    p.add_argument("--out", default=DEMO_OUT, help=f"data folder (default {DEMO_OUT})")
    p.add_argument("--split", choices=SCORE_SPLITS, default="all",
                   help="sessions to route and score (default all: the demo data is small)")
    p.add_argument("--bootstrap", type=int, default=1000, metavar="N", help="bootstrap resamples for the intervals (default 1000)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..errors import UsageError
    from ..generate import generate_offline
    from ..commands.baselines import write_baselines
    from ..io import sessions_file
    from ..llm.prices import prices_from
    from ..score.read import paused_gc, read_sessions_fast
    from ..score.report import main_table, not_scored_line
    from ..score.run import score_files

    if args.sessions < 1:
        raise UsageError("--sessions must be at least 1")
    timer = Timer()
    price = prices_from(os.environ)
    out = Path(args.out)
    print(f"1/3 generating {args.sessions} sessions offline (templates, seed {args.seed}) into {out}/", file=sys.stderr)
    # offline generation takes about a second and is deterministic: always write it afresh
    data = generate_offline(args.sessions, out, seed=args.seed, overwrite=True)
    print(f"2/3 routing with the model-free baselines (split {args.split})", file=sys.stderr)
    with paused_gc():  # records by the thousand: keep the cyclic collector off meanwhile
        sessions = read_sessions_fast(sessions_file(out))  # read and validated once for every step
        results = write_baselines(str(out), args.split, sessions)
        print("3/3 scoring", file=sys.stderr)
        runs = score_files(out, [r.path for r in results], split=args.split, bootstrap=args.bootstrap,
                           sessions=sessions, price=price)
    docs = [r.result for r in runs]
    print()
    print(f"InterleaveBench demo: {data} (split {args.split}), 95% bootstrap intervals over sessions")
    print()
    print(main_table(docs))
    print()
    for d in docs:
        line = not_scored_line(d)
        if not line.endswith(": nothing"):
            print(line)
    print(f"predictions and score files: {out / 'predictions'}/")
    print(f"next: `interleave-bench route {out} --mode closed --policy hybrid --dry-run` runs the model router "
          "against the fake model (into predictions-dry/); set DEEPSEEK_API_KEY (or OPENAI_BASE_URL and "
          "OPENAI_API_KEY) and drop --dry-run for a real one.")
    messages = docs[0]["counts"]["messages"] if docs else 0
    print(summary_line("demo", {"sessions": docs[0]["counts"]["sessions"] if docs else 0, "messages": messages,
                                "runs scored": len(docs)}, timer.seconds))
    return 0
