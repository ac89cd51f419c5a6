"""``interleave-bench baselines DATA``: write the standard model-free prediction files.

Closed mode ``oracle``, ``stay`` and ``bm25``; open mode ``oracle``, ``single``, ``always_new`` and
``bm25``: seven files under ``predictions/`` beside the data, each rewritten from scratch
(``--mode`` keeps one mode's files; open-only data refuses closed mode).
"""

from __future__ import annotations

import argparse
import sys

from ..fingerprints import read_unchanged
from ..io import sessions_file
from ..progress import Timer, print_summary
from ..route.resume import stale_scores_line
from ..route.runner import DEFAULT_SPLIT, SPLITS
from ..route.standard import STANDARD_BASELINES, write_baselines
from ..schema import MODES
from ..heap import paused_gc
from ..score.read import read_sessions_fast

__all__ = ["STANDARD_BASELINES", "register", "run", "write_baselines"]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("baselines", help="write the seven model-free prediction files", description=__doc__.split("\n\n")[0])
    p.add_argument("data", metavar="DATA",
                   help="a data folder holding sessions.jsonl, the file itself, or hub:ORG/NAME@REV[#CONFIG]")
    p.add_argument("--split", choices=SPLITS, default=DEFAULT_SPLIT, help=f"sessions to route (default {DEFAULT_SPLIT})")
    p.add_argument("--mode", choices=MODES, help="only the baselines of this mode (default both; "
                   "open-only data such as imported IRC logs needs --mode open)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..hub.source import local_data

    timer = Timer()
    data, source = local_data(args.data)
    if source is not None:
        print(f"data: {args.data} (commit {source['data_commit']}) in {data}")
    with paused_gc():  # records by the thousand: keep the cyclic collector off meanwhile
        file = sessions_file(data)  # read and validated once for the seven runs
        sessions, sha = read_unchanged(file, lambda: read_sessions_fast(file))
        results = write_baselines(data, args.split, mode=args.mode, sessions=sessions, data_sha=sha)
    stale = [path for r in results for path in r.stale_scores]
    if stale:
        print(stale_scores_line(stale), file=sys.stderr)
    for r in results:
        print(f"wrote {r.path} ({r.rows:,} rows)")
    sessions = results[0].sessions if results else 0
    messages = results[0].rows if results else 0
    print_summary("baselines", {"files": len(results), "sessions": sessions, "messages each": messages}, timer.seconds)
    return 0
