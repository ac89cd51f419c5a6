"""``interleave-bench export``: write the Hub-ready dataset folder (Parquet per config and split + card).

Validates every input first and writes nothing when any of it is bad (exit 2). Prints the files
written and one summary line; the folder then loads with ``datasets.load_dataset(FOLDER, "v0")``.
"""

from __future__ import annotations

import argparse
import sys

from ..progress import Timer, print_summary


#: ``--mid-reply`` given without a file: the package's own cases, wherever it is installed
PACKAGED = "mid_reply/cases.json"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "export",
        help="write the dataset folder for the Hub (Parquet + dataset card)",
        description=__doc__.split("\n\n")[0],
    )
    p.add_argument("--v0", metavar="DIR", help="v0 data: a folder with sessions.jsonl (and manifest.json), or the file")
    p.add_argument("--v1", metavar="DIR", help="v1 data: a folder with sessions.jsonl (and manifest.json), or the file")
    p.add_argument("--mid-reply", metavar="FILE", nargs="?", const=PACKAGED,
                   help="a mid-reply case file; alone, the cases shipped in the package")
    p.add_argument("--irc", metavar="DIR", help="IRC data written by `import irc` (config irc_ubuntu, CC BY 4.0)")
    p.add_argument("--sgd", metavar="DIR", help="SGD data written by `import sgd` (config sgd, CC BY-SA 4.0)")
    p.add_argument("--out", required=True, metavar="DIR", help="the dataset folder to write, e.g. interleavebench/")
    p.add_argument(
        "--card-template", metavar="DIR",
        help="folder holding the card template README.md (default: the checkout's dataset_card/)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..hub.export import export_dataset

    timer = Timer()
    if args.mid_reply is PACKAGED:
        from .. import data_path

        args.mid_reply = data_path(PACKAGED)
    result = export_dataset(
        args.out, v0=args.v0, v1=args.v1, mid_reply=args.mid_reply, template_dir=args.card_template, irc=args.irc,
        sgd=args.sgd,
    )
    for w in result.warnings:
        print(f"warning: {w}", file=sys.stderr)
    for f in result.files:
        print(f"wrote {result.out / f}")
    counts: dict[str, object] = {}
    for name, splits in result.configs.items():
        print(f"{name}: " + ", ".join(f"{s} {n:,}" for s, n in splits.items()))
        counts[f"{name} {'cases' if name == 'mid_reply' else 'sessions'}"] = sum(splits.values())
    counts["files"] = len(result.files)
    counts["bytes"] = result.bytes
    print_summary("export", counts, timer.seconds)
    return 0
