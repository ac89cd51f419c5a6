"""``interleave-bench push DIR --repo ORG/NAME``: publish an exported folder as one commit plus a tag.

Validates the folder first and refuses invalid data, a symbolic link, and a file or a --message
holding a secret of the environment (exit 2, nothing sent). Creates the dataset
repo if needed, uploads every changed file in one commit, tags it, and prints the commit and the
URL. Pushing the same content again is reported as unchanged and makes no commit. A config on the
Hub that the folder does not carry is kept (and the card pushed lists it) unless --delete-missing. The token comes
from HF_TOKEN or `hf auth login`; the endpoint from HF_ENDPOINT (default: the Hub).
"""

from __future__ import annotations

import argparse
import sys

from ..progress import Timer, print_summary


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("push", help="publish an exported dataset folder to the Hub", description=__doc__.split("\n\n")[0])
    p.add_argument("folder", metavar="DIR", help="the folder `interleave-bench export` wrote")
    p.add_argument("--repo", required=True, metavar="ORG/NAME", help="the dataset repo, created if needed")
    p.add_argument("--revision", metavar="TAG",
                   help="tag the pushed revision with TAG (default: data-<content fingerprint>); tags are never moved")
    p.add_argument("--private", action="store_true", help="create the repo private (an existing repo keeps its visibility)")
    p.add_argument("--message", metavar="TEXT",
                   help="commit message (default names the configs and the package version); one holding a secret is refused")
    p.add_argument("--delete-missing", action="store_true",
                   help="delete configs on the Hub that the folder does not carry (default: keep them, and the card lists them)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..hub import client
    from ..hub.push import push_folder

    timer = Timer()
    r = push_folder(args.folder, args.repo, revision=args.revision, private=args.private, message=args.message,
                    delete_missing=args.delete_missing)
    assert r.summary is not None
    for w in r.summary.warnings:
        print(f"warning: {w}", file=sys.stderr)
    configs = "; ".join(f"{c} " + ", ".join(f"{s} {n:,}" for s, n in splits.items()) for c, splits in r.summary.configs.items())
    print(f"validated {args.folder}: {configs}")
    if r.unchanged:
        print(f"unchanged: {r.repo_id} main already holds this content at commit {r.commit}; no commit made")
    else:
        print(f"pushed {r.repo_id}: commit {r.commit} ({len(r.added)} added, {len(r.changed)} changed, "
              f"{len(r.deleted)} deleted)")
        print(f"commit: {r.commit_url}")
    if r.kept:
        print(f"kept on the Hub: {', '.join(r.kept)} (not in {args.folder}; --delete-missing would delete it)")
    print(f"tag: {r.tag} -> {r.commit[:12]}" + ("" if r.tag_created else " (already there)"))
    print(f"url: {client.repo_url(r.repo_id, r.tag)}")
    first = next(iter(r.summary.configs), "v0")
    print(f'load: datasets.load_dataset("{r.repo_id}", "{first}", revision="{r.tag}")')
    print_summary("push", {
        "files": len(r.summary.files),
        "uploaded": len(r.added) + len(r.changed),
        "deleted": len(r.deleted),
        "commits": 0 if r.unchanged else 1,
    }, timer.seconds)
    return 0
