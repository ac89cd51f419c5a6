"""``interleave-bench baselines DATA``: write the standard model-free prediction files.

Closed mode ``oracle``, ``stay`` and ``bm25``; open mode ``oracle``, ``single``, ``always_new`` and
``bm25``: seven files under ``predictions/`` beside the data, each rewritten from scratch.
"""

from __future__ import annotations

import argparse

from typing import Sequence

from ..io import sessions_file
from ..progress import Timer, summary_line
from ..route.runner import DEFAULT_SPLIT, SPLITS, RouteOptions, run_route
from ..schema import Session
from ..score.read import paused_gc, read_sessions_fast

#: the standard set: (mode, policy), in the order the files are written
STANDARD_BASELINES = (
    ("closed", "oracle"),
    ("closed", "stay"),
    ("closed", "bm25"),
    ("open", "oracle"),
    ("open", "single"),
    ("open", "always_new"),
    ("open", "bm25"),
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("baselines", help="write the seven model-free prediction files", description=__doc__.split("\n\n")[0])
    p.add_argument("data", metavar="DATA", help="a data folder holding sessions.jsonl, or the file itself")
    p.add_argument("--split", choices=SPLITS, default=DEFAULT_SPLIT, help=f"sessions to route (default {DEFAULT_SPLIT})")
    p.set_defaults(func=run)


def write_baselines(data: str, split: str = DEFAULT_SPLIT, sessions: Sequence[Session] | None = None) -> list:
    """Route ``data`` with every standard baseline; returns the :class:`RouteResult` of each file.

    The data file is read and validated once for all seven runs (``sessions``: already read).
    """
    if sessions is None:
        sessions = read_sessions_fast(sessions_file(data))
    return [run_route(data, RouteOptions(mode=mode, policy=policy, split=split), fresh=True, sessions=sessions)
            for mode, policy in STANDARD_BASELINES]


def run(args: argparse.Namespace) -> int:
    timer = Timer()
    with paused_gc():
        results = write_baselines(args.data, args.split)
    for r in results:
        print(f"wrote {r.path} ({r.rows:,} rows)")
    sessions = results[0].sessions if results else 0
    messages = results[0].rows if results else 0
    print(summary_line("baselines", {"files": len(results), "sessions": sessions, "messages each": messages}, timer.seconds))
    return 0
