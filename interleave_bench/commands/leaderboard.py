"""``interleave-bench leaderboard add|show``: publish scored runs to a leaderboard dataset, print it.

``add`` scores each run itself (predictions on --data, or the files a score file or mid-reply /
shared-facts summary names, whose stated figures must agree with the computed ones), appends one
row per run and publishes the board as one commit tagged board-1, board-2...; it refuses, exit 2,
figures that disagree, runs without intervals, values outside their range, partial runs, data
revisions that do not hold the data the run was scored on, duplicates (the same predictions, or a
name already in the table, case and spacing aside), and runs on another data revision than the
one ranked (unless --new-board). ``show`` prints the ranking as markdown with intervals.
"""

from __future__ import annotations

import argparse

from ..progress import Timer, print_summary
from ..schema import SCORE_SPLITS


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("leaderboard", help="add scored runs to a leaderboard on the Hub, or show it",
                       description=__doc__.split("\n\n")[0])
    lsub = p.add_subparsers(dest="leaderboard_command", metavar="ACTION")
    lsub.required = True

    a = lsub.add_parser("add", help="score runs, add one row each and publish the board (one commit + tag)")
    a.add_argument("runs", nargs="+", metavar="RUN",
                   help="prediction files (scored on --data), or score files written by `interleave-bench score` "
                        "(or mid-reply / shared-facts summaries): recomputed from the files they name")
    a.add_argument("--data", metavar="DATA",
                   help="the data the predictions were routed on: a data folder, sessions file or hub:ORG/NAME@REV[#CONFIG] "
                        "(default for a score file: the data its provenance names)")
    a.add_argument("--split", choices=SCORE_SPLITS,
                   help="the split predictions files are scored on (default: a score file's, else dev)")
    a.add_argument("--repo", required=True, metavar="ORG/NAME", help="the leaderboard dataset repo, e.g. org/interleavebench-leaderboard")
    a.add_argument("--system", metavar="NAME", help="the system's name on the board (default: the score file's `system`, else the predictions "
                        "file's name); normalised, and one row of its table whatever its case")
    a.add_argument("--model", metavar="M", help="the model behind the run (default: the model the run's rows name)")
    a.add_argument("--data-repo", metavar="R", help="the dataset repo the run was scored on, e.g. org/interleavebench")
    a.add_argument("--data-revision", metavar="REV",
                   help="the data revision (a tag of --data-repo), checked against the data the run was scored on; "
                        "default: the revision of hub: data, else the data fingerprint")
    a.add_argument("--new-board", action="store_true",
                   help="start a new ranking on this data revision (earlier rows stay in the history, unranked)")
    a.add_argument("--private", action="store_true", help="create the board repo private")
    a.set_defaults(func=run_add)

    s = lsub.add_parser("show", help="print the ranking as a markdown table with intervals")
    s.add_argument("--repo", required=True, metavar="ORG/NAME", help="the leaderboard dataset repo")
    s.add_argument("--revision", metavar="REV", help="a publication tag (board-1, board-2...) or commit (default: the latest)")
    s.add_argument("--data-revision", metavar="REV", help="rank the rows of this data revision (default: the board's current one)")
    s.add_argument("--html", metavar="OUT.html",
                   help="write the board as one self-contained HTML page with plots instead of printing markdown")
    s.set_defaults(func=run_show)

    e = lsub.add_parser("export-eval-results", help="write a model's .eval_results/ files (the Hub's Eval Results) from the board")
    e.add_argument("--repo", required=True, metavar="ORG/NAME", help="the leaderboard dataset repo")
    e.add_argument("--model", required=True, metavar="ORG/MODEL", help="the model (its rows' `model`), e.g. org/my-router")
    e.add_argument("--revision", metavar="REV", help="a publication tag or commit of the board (default: the latest)")
    e.add_argument("--out", default=".", metavar="DIR",
                   help="the model repo's folder to write .eval_results/ into (default: the current folder)")
    e.set_defaults(func=run_export_eval_results)


def run_add(args: argparse.Namespace) -> int:
    from ..hub import client
    from ..hub.leaderboard import add_runs, describe, render_markdown

    timer = Timer()
    r = add_runs(args.runs, args.repo, data=args.data, system=args.system, model=args.model, data_repo=args.data_repo,
                 data_revision=args.data_revision, split=args.split, new_board=args.new_board, private=args.private)
    for row in r.added:
        print(f"added {describe(row)} on data revision {row['data_revision']}")
    print(f"published {r.repo_id}: commit {r.commit}, tag {r.tag}")
    print(f"url: {client.repo_url(r.repo_id, r.tag)}")
    print()
    _, tables, _ = render_markdown(r.rows)
    print(tables)
    print()
    print_summary("leaderboard add", {"added": len(r.added), "on the board": len(r.rows)}, timer.seconds)
    return 0


def run_export_eval_results(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..hub.leaderboard import eval_results_for
    from ..io import atomic_write_text

    timer = Timer()
    files = eval_results_for(args.repo, args.model, revision=args.revision)
    for rel, text in files.items():
        path = Path(args.out) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, text)
        print(f"wrote {path}")
    print_summary("leaderboard export-eval-results", {"files": len(files)}, timer.seconds)
    return 0


def run_show(args: argparse.Namespace) -> int:
    from ..hub.leaderboard import show

    if args.html:
        from pathlib import Path

        from ..errors import require_output
        from ..io import atomic_write_text
        from ..reports.page import is_page_head

        # before the board is read: a file that is not a page (data, a score file) is never replaced
        require_output(args.html, [], is_page_head, "a page report wrote", "leaderboard show: --html")
        Path(args.html).parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(args.html, show(args.repo, revision=args.revision, data_revision=args.data_revision, html=True))
        print(f"wrote {args.html}")
        return 0
    print(show(args.repo, revision=args.revision, data_revision=args.data_revision))
    return 0
