"""``interleave-bench demo``: the main job on the embedded default, with no key and no network.

Generates offline data from the packaged templates, runs the model-free baselines and the free
``local`` router in both modes, scores them and prints the table; then writes a small offline v1 set (replies, fact episodes,
timeline and probes) and prints its probe counts by category. Every step is deterministic (seeded generation, model-free
routers, seeded bootstrap), so a rerun, or a run after an interruption, ends with the same files
and the same table.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..progress import Timer, print_summary
from ..options import whole_number
from ..schema import SCORE_SPLITS
from ..score.defaults import bootstrap_option

#: sessions in the demo data set: enough for intervals worth reading, small enough for seconds
DEMO_SESSIONS = 60
#: the demo's seed, so every machine prints the same table
DEMO_SEED = 0
#: where the demo writes (relative to the current folder)
DEMO_OUT = "data/interleave-v0-demo"
#: sessions of the demo's v1 set: enough to show every probe category, a second to write
DEMO_V1_SESSIONS = 10
#: where the demo's v1 set goes
DEMO_V1_OUT = "data/interleave-v1-demo"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="offline data, baselines and scores: the main job, no key needed",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("--sessions", type=whole_number(), default=DEMO_SESSIONS, help=f"sessions to generate (default {DEMO_SESSIONS})")
    p.add_argument("--seed", type=whole_number(), default=DEMO_SEED, help=f"generation seed (default {DEMO_SEED})")
    p.add_argument("--out", default=DEMO_OUT, help=f"data folder (default {DEMO_OUT})")
    p.add_argument("--split", choices=SCORE_SPLITS, default="all",
                   help="sessions to route and score (default all: the demo data is small)")
    p.add_argument("--bootstrap", type=bootstrap_option, default=1000, metavar="N", help="bootstrap resamples for the intervals (default 1000)")
    p.add_argument("--v1-sessions", type=whole_number(), default=DEMO_V1_SESSIONS, metavar="N",
                   help=f"sessions of the small offline v1 set (default {DEMO_V1_SESSIONS}; 0 skips it)")
    p.add_argument("--v1-out", default=DEMO_V1_OUT, help=f"v1 data folder (default {DEMO_V1_OUT})")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..errors import UsageError, same_path
    from ..generate import generate_offline
    from ..generate.runner import check_session_count
    from ..commands.baselines import write_baselines
    from ..fingerprints import read_unchanged
    from ..io import sessions_file
    from ..route.runner import RouteOptions, run_route
    from ..llm.prices import prices_from
    from ..heap import paused_gc
    from ..score.read import read_sessions_fast
    from ..reports.tables import main_table, warn_in_sample
    from ..route.local_sample import fit_sample
    from ..score.rows import not_scored_notice
    from ..score.run import score_files

    check_session_count(args.sessions)
    if args.v1_sessions < 0:
        raise UsageError("--v1-sessions must be 0 or more")
    if args.v1_sessions and same_path(args.out, args.v1_out):  # the v1 set would replace the routed data
        raise UsageError(f"demo: --out {args.out} and --v1-out {args.v1_out} are one folder; give the v1 set another --v1-out")
    timer = Timer()
    price = prices_from(os.environ)
    out = Path(args.out)
    print(f"1/4 generating {args.sessions} sessions offline (templates, seed {args.seed}) into {out}/", file=sys.stderr)
    # offline generation takes about a second and is deterministic: always write it afresh
    data = generate_offline(args.sessions, out, seed=args.seed, overwrite=True)
    print(f"2/4 routing with the model-free baselines and local (split {args.split})", file=sys.stderr)
    with paused_gc():  # records by the thousand: keep the cyclic collector off meanwhile
        file = sessions_file(out)  # read and validated once for every step
        sessions, sha = read_unchanged(file, lambda: read_sessions_fast(file))
        results = write_baselines(str(out), args.split, sessions=sessions, data_sha=sha)
        # the free router that knows how sure it is, beside the baselines
        results += [run_route(out, RouteOptions(mode=mode, policy="local", split=args.split), fresh=True,
                              sessions=sessions, data_sha=sha) for mode in ("closed", "open")]
        print("3/4 scoring", file=sys.stderr)
        runs = score_files(out, [r.path for r in results], split=args.split, bootstrap=args.bootstrap,
                           sessions=sessions, price=price, in_sample=fit_sample(sessions_file(out), args.split))
    docs = [r.result for r in runs]
    warn_in_sample(docs, sys.stderr)  # a --seed the local fit's data was generated with
    v1_line = None
    if args.v1_sessions:
        print(f"4/4 generating {args.v1_sessions} v1 sessions offline (replies, facts, probes) into {args.v1_out}/",
              file=sys.stderr)
        v1_line = v1_probe_line(generate_offline(args.v1_sessions, args.v1_out, seed=args.seed, overwrite=True, dataset="v1"))
    print()
    print(f"InterleaveBench demo: {data} (split {args.split}), 95% bootstrap intervals over sessions")
    print()
    print(main_table(docs))
    print()
    for line in filter(None, map(not_scored_notice, docs)):
        print(line)
    print(f"predictions and score files: {out / 'predictions'}/")
    if v1_line:
        print(v1_line)
    print(f"next: `interleave-bench route {out} --mode closed --policy hybrid --dry-run` runs the model router "
          "against the fake model (into predictions-dry/); set DEEPSEEK_API_KEY (or OPENAI_BASE_URL and "
          "OPENAI_API_KEY) and drop --dry-run for a real one.")
    print("real chat: `interleave-bench import irc DIR` turns the IRC disentanglement corpus into data; then "
          "`interleave-bench baselines data/irc-ubuntu --mode open` and `score` (with the field's 1-1, VI, ARI).")
    messages = docs[0]["counts"]["messages"] if docs else 0
    print_summary("demo", {"sessions": docs[0]["counts"]["sessions"] if docs else 0, "messages": messages,
                                "runs scored": len(docs)}, timer.seconds)
    return 0


def v1_probe_line(sessions_path: Path) -> str:
    """One line on the demo's v1 set: sessions, fact steps, and probes by category."""
    from ..io import read_manifest
    from ..schema import PROBE_CATEGORIES

    counts = read_manifest(sessions_path.parent / "manifest.json").counts.model_dump()
    by_cat = ", ".join(f"{c} {counts.get('probes_' + c, 0)}" for c in PROBE_CATEGORIES)
    return (f"v1 facts: {sessions_path}: {counts['sessions']} sessions, {counts.get('fact_steps', 0)} fact steps, "
            f"{counts.get('probes', 0)} probes ({by_cat})")
