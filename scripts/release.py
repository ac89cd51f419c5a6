#!/usr/bin/env python
"""Publish one InterleaveBench data revision to the Hugging Face Hub, end to end (thin wrapper).

Same as ``interleave-bench release``: take the data folders or generate them, validate, vet for
secrets and personal data, run and score the model-free baselines, export every config (the card
records the release), check that ``load_dataset`` gives the source records back, push in one
commit and tag it, then print the URL and the commit. Stops at the first failing step with one
line and leaves the Hub untouched; ``--dry-run`` does everything but the push; running a finished
release again makes no commit.

    python scripts/release.py --revision v0.1 --repo my-org/interleavebench --offline --sessions 200 --dry-run
    HF_TOKEN=hf_... python scripts/release.py --revision v0.1 --repo my-org/interleavebench --offline --sessions 200
    HF_TOKEN=hf_... python scripts/release.py --revision v0.2 --repo my-org/interleavebench --v0 data/interleave-v0

Environment: HF_TOKEN (or a `hf auth login`), HF_ENDPOINT (a Hub mirror; default the Hub), and the
model variables of `interleave-bench generate` when generating with a model.
Exit codes: 0 released (or already released), 1 vetting found something, 2 any other stop.
"""

from __future__ import annotations

import sys
from typing import Sequence

from interleave_bench.cli import main as cli_main


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    return cli_main(["release", *args])


if __name__ == "__main__":
    sys.exit(main())
