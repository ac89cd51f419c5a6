"""``interleave-bench push-metrics --org ORG``: publish the evaluate modules as Hub Spaces.

Each module (``interleave_routing``, ``interleave_bcubed``, ``interleave_mid_reply``...) becomes the
Space ``ORG/<name>`` in one commit (script, card, ``app.py``, ``requirements.txt``), after which
``evaluate.load("ORG/<name>")`` works in any project. Unchanged modules make no commit.
"""

from __future__ import annotations

import argparse

from ..progress import Timer, print_summary


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("push-metrics", help="publish the evaluate modules as Spaces (ORG/<module>)",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("--org", required=True, metavar="ORG", help="the user or organisation that owns the Spaces")
    p.add_argument("--metric", action="append", metavar="NAME", dest="metrics",
                   help="publish only this module (repeatable; default: every module)")
    p.add_argument("--private", action="store_true", help="create the Spaces private")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..hub import client
    from ..hub.spaces import SPACE_TYPE, push_metrics

    timer = Timer()
    results = push_metrics(args.org, names=args.metrics, private=args.private)
    for r in results:
        if r.unchanged:
            print(f"unchanged: {r.repo_id} already holds this module")
        else:
            print(f"pushed {r.repo_id}: commit {r.commit} ({', '.join(r.files)})")
        print(f'load: evaluate.load("{r.repo_id}")  ({client.endpoint()}/{SPACE_TYPE}s/{r.repo_id})')
    commits = sum(not r.unchanged for r in results)
    print_summary("push-metrics", {"modules": len(results), "commits": commits}, timer.seconds)
    return 0
