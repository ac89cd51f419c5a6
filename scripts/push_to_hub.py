#!/usr/bin/env python
"""Publish an exported InterleaveBench folder to the Hugging Face Hub (thin wrapper).

Same as ``interleave-bench push DIR --repo ORG/NAME [--revision TAG] [--private]``: validates the
folder, creates the dataset repo if needed, uploads it as one commit, tags it, and prints the
commit and the URL. A push of unchanged content makes no commit.

    interleave-bench export --v0 data/interleave-v0 --out interleavebench/
    HF_TOKEN=hf_... python scripts/push_to_hub.py interleavebench/ --repo my-org/interleavebench --revision v0.1

Environment: HF_TOKEN (or a `hf auth login`), HF_ENDPOINT (a Hub mirror; default the Hub).
Exit codes: 0 done, 2 invalid data or a Hub error (one line on stderr; the repo is left as it was).
"""

from __future__ import annotations

import sys
from typing import Sequence

from interleave_bench.cli import main as cli_main


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    return cli_main(["push", *args])


if __name__ == "__main__":
    sys.exit(main())
