"""``interleave-bench stats DATA [DATA2 ...]``: the realism profile of data sets, side by side.

Per language and style: messages, median characters, the share of explicit messages carrying
their thread's title verbatim, distinct openings, the ambiguous share; then actions, threads per
session and twins (docs/generate.md#stats). ``--json`` prints the numbers instead of the table.
"""

from __future__ import annotations

import argparse

from ..generate.stats import profile, render_table
from ..io import print_json, sessions_file
from ..progress import Timer, print_summary
from ..score.read import read_sessions_fast


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("stats", help="the realism profile of data sets, side by side",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("data", nargs="+", metavar="DATA", help="sessions.jsonl or the data folder that holds it")
    p.add_argument("--json", action="store_true", help="print the numbers as JSON instead of the table")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    timer = Timer()
    from ..hub.source import local_data

    paths = [sessions_file(local_data(d)[0]) for d in args.data]  # a Hub revision or an export too
    profiles = [profile(read_sessions_fast(p)) for p in paths]
    if args.json:
        print_json({"format": "interleave-stats-v1",
                    "data": [{"path": str(p), **prof} for p, prof in zip(paths, profiles)]})
        return 0
    print(render_table([str(d) for d in args.data], profiles))
    print_summary("stats", {"data sets": len(profiles), "sessions": sum(p["sessions"] for p in profiles),
                                 "messages": sum(p["messages"] for p in profiles)}, timer.seconds)
    return 0
