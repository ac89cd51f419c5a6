#!/usr/bin/env python
"""Fit the ``local`` router's weights and confidence calibration on offline ``dev`` data.

    python scripts/fit_local.py                      # 800 offline sessions, seed 0, dev split only
    python scripts/fit_local.py --sessions 600 --seed 3
    python scripts/fit_local.py --data data/interleave-v0-offline --out /tmp/weights.json

Without ``--data`` it writes offline sessions (the template writer, no model) to a temporary
folder; with ``--data`` it reads that folder. Either way only ``dev`` sessions are used: ``test``
is never seen. Writes ``interleave_bench/data/local/weights.json`` (or ``--out``) and prints, per
mode, the dev accuracy of the calibrated router and its reliability table (confidence bins against
observed accuracy). The same data give a byte-identical file: rerun it after the offline writer
changes. Exit codes: 0 written, 2 bad input (one line on stderr).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from interleave_bench.errors import InterleaveError  # noqa: E402
from interleave_bench.generate.runner import generate_offline  # noqa: E402
from interleave_bench.io import atomic_write_text, iter_sessions, read_json, sessions_file  # noqa: E402
from interleave_bench.progress import Timer, summary_line  # noqa: E402
from interleave_bench.route.local_fit import RELIABILITY_MIN_N, fit_local, reliability_holds  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "interleave_bench" / "data" / "local" / "weights.json"
#: offline sessions generated for the fit (four in five are dev): ~32,000 dev messages, so every
#: calibration step rests on hundreds of them
DEFAULT_SESSIONS = 800
DEFAULT_SEED = 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=DEFAULT_SESSIONS, help=f"offline sessions to generate (default {DEFAULT_SESSIONS})")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"seed of the offline writer (default {DEFAULT_SEED})")
    ap.add_argument("--data", metavar="DIR", help="fit on the dev sessions of this data instead of generating")
    ap.add_argument("--out", metavar="FILE", default=str(DEFAULT_OUT), help="where to write the weights")
    args = ap.parse_args(argv)
    timer = Timer()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            if args.data:
                path = sessions_file(args.data)
                source = {"data": "given", "data_file": Path(path).name}
            else:
                if args.sessions < 5:
                    print(f"fit_local: --sessions must be at least 5, got {args.sessions}", file=sys.stderr)
                    return 2
                path = generate_offline(args.sessions, Path(tmp) / "offline", seed=args.seed)
                config = read_json(Path(path).parent / "manifest.json")["options"]["config"]
                # the writer's version and content fingerprint say when a refit is due
                source = {"data": "offline", "generated_sessions": args.sessions, "seed": args.seed,
                          "generator": config.get("generator"), "content": config.get("content")}
            dev = [s for s in iter_sessions(path) if s.split == "dev"]
        if not dev:
            print(f"fit_local: {path}: no dev sessions", file=sys.stderr)
            return 2
        weights, report = fit_local(dev, source=source)
    except InterleaveError as exc:
        print(exc, file=sys.stderr)
        return 2
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out, json.dumps(weights.to_json(), ensure_ascii=False, indent=1) + "\n")
    for mode, r in report.items():
        print(f"{mode}: dev accuracy {r['accuracy']:.4f} over {r['strict_messages']:,} strict messages "
              f"({r['examples']:,} fitting examples)")
        print("  bin        n  confidence  accuracy    gap")
        for row in r["reliability"]:
            flag = "" if row["n"] < RELIABILITY_MIN_N or row["gap"] <= 0.05 else "  <- over 0.05"
            print(f"  {row['lo']:.1f}-{row['hi']:.1f} {row['n']:6d}  {row['confidence']:10.4f}  {row['accuracy']:8.4f}  "
                  f"{row['gap']:.4f}{flag}")
        print(f"  calibrated within 0.05 in every bin of {RELIABILITY_MIN_N}+ messages: "
              f"{'yes' if reliability_holds(r['reliability']) else 'NO'}")
    print(f"wrote {out}")
    print(summary_line("fit_local", {"dev sessions": len(dev)}, timer.seconds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
