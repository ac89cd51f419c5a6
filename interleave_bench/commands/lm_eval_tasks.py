"""``interleave-bench lm-eval-tasks``: print the lm-evaluation-harness task folder, for ``--include_path``.

``lm_eval --tasks interleavebench_closed --include_path "$(interleave-bench lm-eval-tasks)"``
(docs/harness.md#lm-evaluation-harness). The folder ships in the package; printing its path needs
neither harness installed.
"""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("lm-eval-tasks", help="print the lm-evaluation-harness task folder (for --include_path)",
                       description=__doc__.split("\n\n")[0])
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..harness.names import TASKS_DIR

    print(TASKS_DIR)
    return 0
