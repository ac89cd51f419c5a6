"""``interleave-bench import irc|sgd DIR --out DATA``: a real corpus as a data set, in its own layout
(``import inspect LOG --out PRED``: an inspect run's predictions).

Reads the IRC disentanglement corpus (Kummerfeld et al., 2019; CC BY 4.0): one session per
annotated log, one turn per annotated message, one thread per conversation (the connected
components of the reply links). The sessions are open-only: ``route`` and ``baselines`` take
``--mode open`` on them.

``interleave-bench import inspect LOG --out PRED.jsonl``: the predictions of an inspect_ai log of
``interleavebench/routing`` as a predictions file, for ``score``, ``compare`` and the leaderboard
(docs/harness.md#inspect_ai).
"""

from __future__ import annotations

import argparse
from typing import Any

from ..progress import Timer, print_summary

#: where ``import irc`` writes by default (relative to the current folder)
DEFAULT_IRC_OUT = "data/irc-ubuntu"
#: where ``import sgd`` writes by default (relative to the current folder)
DEFAULT_SGD_OUT = "data/sgd"
#: what ``import sgd`` does, for its help (docs/sgd.md)
SGD_DESCRIPTION = (
    "Reads the Schema-Guided Dialogue corpus (Rastogi et al., 2020; CC BY-SA 4.0) in its own layout "
    "(schema.json and dialogues_*.json per split folder): one session per dialogue that uses more than one "
    "service, one thread per service, one turn per user turn with the system's reply. Both routing modes apply."
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("import", help="import an outside corpus as a data set", description=__doc__.split("\n\n")[0])
    kinds = p.add_subparsers(dest="kind", metavar="KIND", required=True, parser_class=type(p))
    irc = kinds.add_parser("irc", help="the IRC disentanglement corpus (Ubuntu IRC, Kummerfeld et al. 2019)",
                           description=__doc__.split("\n\n")[1])
    irc.add_argument("corpus", metavar="DIR", help="the corpus folder (holding dev/ and/or test/), or one split folder")
    irc.add_argument("--out", default=DEFAULT_IRC_OUT, metavar="DIR",
                     help=f"data folder to write sessions.jsonl and manifest.json into (default {DEFAULT_IRC_OUT})")
    irc.set_defaults(func=run_irc)
    sgd = kinds.add_parser("sgd", help="the Schema-Guided Dialogue corpus (multi-service dialogues, Rastogi et al. 2020)",
                           description=SGD_DESCRIPTION)
    sgd.add_argument("corpus", metavar="DIR", help="the corpus folder (holding train/, dev/ and/or test/), or one split folder")
    sgd.add_argument("--out", default=DEFAULT_SGD_OUT, metavar="DIR",
                     help=f"data folder to write sessions.jsonl and manifest.json into (default {DEFAULT_SGD_OUT})")
    sgd.set_defaults(func=run_sgd)
    insp = kinds.add_parser("inspect", help="the predictions of an inspect_ai log of interleavebench/routing",
                            description=__doc__.split("\n\n")[2])
    insp.add_argument("log", metavar="LOG", help="the inspect log (.eval or .json)")
    insp.add_argument("--out", required=True, metavar="PRED.jsonl", help="predictions file to write")
    insp.set_defaults(func=run_inspect)


def run_irc(args: argparse.Namespace) -> int:
    from ..irc import import_irc

    timer = Timer()
    result = import_irc(args.corpus, args.out)
    return _report("irc", result, "--mode open", {"sessions": result.sessions, "messages": result.messages,
                   "conversations": result.conversations, "context lines": result.context_lines}, timer)


def run_sgd(args: argparse.Namespace) -> int:
    from ..sgd import import_sgd

    timer = Timer()
    result = import_sgd(args.corpus, args.out)
    # both modes apply, and baselines without --mode writes both
    return _report("sgd", result, "", {
        "sessions": result.sessions, "messages": result.messages, "threads": result.threads,
        "dialogues of one service skipped": result.skipped}, timer)


def _report(kind: str, result: Any, modes: str, counts: dict[str, int], timer: Timer) -> int:
    """The lines every import ends with: the file written per split, the next command (``modes``:
    the ``--mode`` it needs, empty when both apply), the summary."""
    print(f"wrote {result.out / 'sessions.jsonl'} (" + ", ".join(f"{s} {n:,}" for s, n in result.splits.items()) + ")")
    print(" ".join(["next: interleave-bench baselines", str(result.out), *filter(None, [modes])]))
    print_summary(f"import {kind}", counts, timer.seconds)
    return 0


def require_predictions_out(log: str, out: str) -> None:
    """Refuse (one line, before any work) an ``--out`` that is the log itself, a folder, or a file
    already there that is not a predictions file (a sessions file, a manifest, Parquet, a page):
    writing would replace it."""
    from ..errors import require_output
    from ..route.resume import is_rows_head

    require_output(out, [(log, "the inspect log")], is_rows_head, "a predictions file", "import inspect: --out")


def run_inspect(args: argparse.Namespace) -> int:
    from ..harness import require

    require("import inspect")
    from ..harness.inspect_log import import_log

    timer = Timer()
    require_predictions_out(args.log, args.out)
    result = import_log(args.log, args.out)
    print(f"wrote {result.out} ({result.rows:,} rows, {result.mode} mode, model {result.model})")
    print_summary("import inspect", {"sessions": result.sessions, "messages": result.rows}, timer.seconds)
    return 0
