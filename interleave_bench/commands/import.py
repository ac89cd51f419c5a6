"""``interleave-bench import irc DIR --out data/irc-ubuntu``: real interleaved chat as a data set.

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

from ..progress import Timer, summary_line

#: where ``import irc`` writes by default (relative to the current folder)
DEFAULT_IRC_OUT = "data/irc-ubuntu"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("import", help="import an outside corpus as a data set", description=__doc__.split("\n\n")[0])
    kinds = p.add_subparsers(dest="kind", metavar="KIND", required=True, parser_class=type(p))
    irc = kinds.add_parser("irc", help="the IRC disentanglement corpus (Ubuntu IRC, Kummerfeld et al. 2019)",
                           description=__doc__.split("\n\n")[1])
    irc.add_argument("corpus", metavar="DIR", help="the corpus folder (holding dev/ and/or test/), or one split folder")
    irc.add_argument("--out", default=DEFAULT_IRC_OUT, metavar="DIR",
                     help=f"data folder to write sessions.jsonl and manifest.json into (default {DEFAULT_IRC_OUT})")
    irc.set_defaults(func=run_irc)
    insp = kinds.add_parser("inspect", help="the predictions of an inspect_ai log of interleavebench/routing",
                            description=__doc__.split("\n\n")[2])
    insp.add_argument("log", metavar="LOG", help="the inspect log (.eval or .json)")
    insp.add_argument("--out", required=True, metavar="PRED.jsonl", help="predictions file to write")
    insp.set_defaults(func=run_inspect)


def run_irc(args: argparse.Namespace) -> int:
    from ..irc import import_irc

    timer = Timer()
    result = import_irc(args.corpus, args.out)
    print(f"wrote {result.out / 'sessions.jsonl'} (" + ", ".join(f"{s} {n:,}" for s, n in result.splits.items()) + ")")
    print(f"next: interleave-bench baselines {result.out} --mode open")
    print(summary_line("import irc", {"sessions": result.sessions, "messages": result.messages,
                                      "conversations": result.conversations, "context lines": result.context_lines},
                       timer.seconds))
    return 0


def run_inspect(args: argparse.Namespace) -> int:
    from ..harness import require

    require("import inspect")
    from ..harness.inspect_log import import_log

    timer = Timer()
    result = import_log(args.log, args.out)
    print(f"wrote {result.out} ({result.rows:,} rows, {result.mode} mode, model {result.model})")
    print(summary_line("import inspect", {"sessions": result.sessions, "messages": result.rows}, timer.seconds))
    return 0
