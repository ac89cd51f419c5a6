#!/usr/bin/env python
"""Score runs and add them to the InterleaveBench leaderboard on the Hub, or print it (thin wrapper).

Same as ``interleave-bench leaderboard add|show``. ``add`` scores each run itself (a predictions
file on ``--data``, or the files a ``*.score.json`` names, whose figures must agree with the
computed ones), appends one row per run and publishes the board as one commit tagged board-1,
board-2, ...; it refuses figures that disagree, runs without intervals, duplicates (the same
predictions, or a name already in the table) and runs on another data revision than the one ranked
(unless --new-board). ``show`` prints the ranking with intervals.

    python scripts/publish_leaderboard.py add predictions/closed-bm25.jsonl --data hub:my-org/interleavebench@v0.1 \\
        --repo my-org/interleavebench-leaderboard --system bm25-baseline
    python scripts/publish_leaderboard.py show --repo my-org/interleavebench-leaderboard

Environment: HF_TOKEN (or a `hf auth login`) for add, HF_ENDPOINT (a Hub mirror; default the Hub).
Exit codes: 0 done, 2 refused or a Hub error (one line per problem on stderr; nothing published).
"""

from __future__ import annotations

import sys
from typing import Sequence

from interleave_bench.cli import main as cli_main


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    return cli_main(["leaderboard", *args])


if __name__ == "__main__":
    sys.exit(main())
