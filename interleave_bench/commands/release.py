"""``interleave-bench release --revision TAG --repo ORG/NAME``: publish one data revision, end to end.

Steps, stopping at the first that fails (one line, exit 1 for vetting findings, 2 otherwise; the
Hub is then left untouched): take the data folders (--v0 DIR) or generate them (--offline, or with
a model), validate, vet for secrets and personal data, run and score the model-free baselines,
export every config with the release recorded on the card, check that ``load_dataset`` on the
export gives back the source records, then push in one commit and tag it. ``--dry-run`` does every
step but the push. Running a finished release again makes no commit.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import error_line
from ..progress import Timer, print_summary
from ..options import whole_number


def register(sub: argparse._SubParsersAction) -> None:
    from ..generate.runner import DEFAULT_LANGS, DEFAULT_SEED, DEFAULT_SESSIONS
    from ..llm import add_model_arguments
    from ..release import RELEASES_DIR, SESSION_CONFIGS
    from ..route.runner import SPLITS
    from ..score.defaults import DEFAULT_BOOTSTRAP, DEFAULT_SPLIT, bootstrap_option

    p = sub.add_parser("release", help="generate, vet, export and publish a data revision",
                       description=" ".join(__doc__.split("\n\n")[:2]))
    p.add_argument("--revision", required=True, metavar="TAG", help="the revision's tag, e.g. v0.1 (tags are never moved)")
    p.add_argument("--repo", required=True, metavar="ORG/NAME", help="the dataset repo, created if needed")
    g = p.add_argument_group("data")
    for config in SESSION_CONFIGS:
        g.add_argument(f"--{config}", metavar="DIR", help=f"release this {config} data folder (or sessions file) as it is")
    g.add_argument("--offline", action="store_true", help="generate the data offline (templates, no model)")
    g.add_argument("--sessions", type=whole_number(), default=DEFAULT_SESSIONS, metavar="N", help=f"sessions to generate (default {DEFAULT_SESSIONS})")
    g.add_argument("--seed", type=whole_number(), default=DEFAULT_SEED, help=f"generation seed (default {DEFAULT_SEED})")
    g.add_argument("--langs", default=",".join(DEFAULT_LANGS), metavar="L1,L2", help="languages of generated sessions (default en,zh)")
    g.add_argument("--mid-reply", metavar="FILE", help="the mid-reply case file (default: the packaged cases)")
    g.add_argument("--no-mid-reply", action="store_true", help="release no mid_reply config")
    p.add_argument("--allow", metavar="FILE", help="the vetting allowlist (default: ./vet-allow.txt if present)")
    p.add_argument("--split", choices=SPLITS, default=DEFAULT_SPLIT, help=f"split the baselines are scored on (default {DEFAULT_SPLIT})")
    p.add_argument("--bootstrap", type=bootstrap_option, default=DEFAULT_BOOTSTRAP, metavar="N",
                   help=f"bootstrap resamples for the baseline intervals (default {DEFAULT_BOOTSTRAP})")
    p.add_argument("--work", metavar="DIR", help=f"the release's folder (default {RELEASES_DIR}/<revision>)")
    p.add_argument("--card-template", metavar="DIR", help="folder holding the card template README.md")
    p.add_argument("--private", action="store_true", help="create the repo private (an existing repo keeps its visibility)")
    # dest differs from the model options' dry_run, which would mean "generate with the fake model"
    p.add_argument("--dry-run", dest="no_push", action="store_true", help="do every step but the push; nothing is sent")
    add_model_arguments(p, dry_run=False)
    p.set_defaults(func=run)


def options_from_args(args: argparse.Namespace):
    """The :class:`~interleave_bench.release.ReleaseOptions` the command line asks for."""
    from ..commands.generate import parse_langs
    from ..errors import UsageError
    from ..llm import model_session_from_args
    from ..release import SESSION_CONFIGS, GenerateRequest, ReleaseOptions

    data = {c: Path(getattr(args, c)) for c in SESSION_CONFIGS if getattr(args, c, None)}
    gen = None
    if not data:
        if args.offline and args.model:
            raise UsageError("--offline uses no model: drop --model, or drop --offline to generate with the model")
        gen = GenerateRequest(
            sessions=args.sessions, seed=args.seed, langs=parse_langs(args.langs),
            model_session=None if args.offline else (lambda: model_session_from_args(args)),
            concurrency=args.concurrency,
        )
    elif args.offline or args.model:
        raise UsageError("data folders are released as they are: drop --offline/--model, or drop the folders to generate")
    if args.mid_reply and args.no_mid_reply:
        raise UsageError("--mid-reply and --no-mid-reply exclude each other")
    return ReleaseOptions(
        revision=args.revision, repo=args.repo, data=data, generate=gen,
        mid_reply=Path(args.mid_reply) if args.mid_reply else None,
        allowlist=Path(args.allow) if args.allow else None,
        work=Path(args.work) if args.work else None, split=args.split, bootstrap=args.bootstrap,
        dry_run=args.no_push, private=args.private,
        card_template=Path(args.card_template) if args.card_template else None,
    )


def run(args: argparse.Namespace) -> int:
    import contextlib

    from ..hub import client
    from ..release import ReleaseStopped, packaged_cases, run_release
    from ..vet import default_allowlist

    timer = Timer()
    opts = options_from_args(args)
    if opts.allowlist is None:
        opts.allowlist = default_allowlist()

    def show(k: int, n: int, name: str, line: str) -> None:
        print(f"[{k}/{n}] {name}: {line}", flush=True)

    use_packaged = opts.mid_reply is None and not args.no_mid_reply
    with (packaged_cases() if use_packaged else contextlib.nullcontext()) as cases:
        if use_packaged:
            opts.mid_reply = cases
        try:
            state = run_release(opts, on_step=show)
        except ReleaseStopped as exc:
            for line in exc.details:
                print(line)
            print(error_line(str(exc)), file=sys.stderr)
            return exc.code
    if opts.dry_run:
        print(f"dry run: {opts.folder / 'dataset'} is ready ({state.files} files, {state.bytes:,} bytes); "
              f"nothing was sent to {client.endpoint()}")
    else:
        print(f"released {opts.repo} {opts.revision}: commit {state.commit}" + (" (already released; no commit made)" if state.unchanged else ""))
        if state.commit_url:
            print(f"commit: {state.commit_url}")
        print(f"url: {state.url}")
        first = next(iter(state.exported), "v0")
        print(f'load: datasets.load_dataset("{opts.repo}", "{first}", revision="{opts.revision}")')
    print_summary("release", {"configs": len(state.exported), "files": state.files,
                                   "commits": 0 if (opts.dry_run or state.unchanged) else 1}, timer.seconds)
    return 0
