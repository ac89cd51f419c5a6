"""Hold the offline v0 data against the model-written reference profile (issue 24's acceptance).

Generates ``--sessions`` offline v0 sessions (seed 0 by default) twice into a scratch folder
(same bytes both times, time of the first run), prints every figure of
``interleave_bench.generate.stats.REFERENCE`` against its target, runs the four standard baselines
on the dev split and prints their accuracy against the reference. Exit 1 when a figure misses.

    python scripts/realism_check.py [--sessions 50] [--seed 0] [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from interleave_bench.generate import generate_offline
from interleave_bench.generate.stats import REFERENCE, profile
from interleave_bench.route.standard import write_baselines
from interleave_bench.score.read import read_sessions_fast
from interleave_bench.score.run import score_files

#: verbatim titles allowed per language, as a share of explicit messages
MAX_TITLE_SHARE = 0.10
#: the fewest distinct English openings, as a share of English messages
MIN_DISTINCT_OPENINGS = 0.60
#: how far a median may be from the model-written figure, relative
MEDIAN_TOLERANCE = 0.30
#: the ambiguous share must fall in this range
AMBIGUOUS_RANGE = (0.07, 0.22)
#: how far a baseline's dev accuracy may be from the model-written figure, absolute
ACCURACY_TOLERANCE = 0.07
#: the longest a 50-session offline run may take
MAX_SECONDS = 5.0
#: the baseline runs checked, as their prediction file names
RUNS = ("closed-bm25", "closed-stay", "open-single", "open-bm25")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="scratch folder (default: a temporary one)")
    args = ap.parse_args(argv)
    base = Path(args.out or tempfile.mkdtemp(prefix="realism-"))
    checks: list[tuple[str, str, str, bool]] = []

    def check(name: str, got: object, target: str, ok: bool) -> None:
        checks.append((name, f"{got:.3f}" if isinstance(got, float) else str(got), target, ok))

    start = time.perf_counter()
    path = generate_offline(args.sessions, base / "a", seed=args.seed, overwrite=True)
    seconds = time.perf_counter() - start
    again = generate_offline(args.sessions, base / "b", seed=args.seed, overwrite=True)
    check("generation seconds", round(seconds, 2), f"< {MAX_SECONDS}", seconds < MAX_SECONDS)
    same = path.read_bytes() == again.read_bytes()
    check("same seed, same bytes", same, "True", same)

    sessions = read_sessions_fast(path)
    prof = profile(sessions)
    for lang, target in REFERENCE["title_share"].items():
        got = prof["langs"][lang]["title_share"]
        check(f"{lang} explicit with title verbatim", got, f"<= {MAX_TITLE_SHARE} (model {target})", got <= MAX_TITLE_SHARE)
    for lang, target in REFERENCE["distinct_openings"].items():
        got = prof["langs"][lang]["distinct_openings"]
        check(f"{lang} distinct openings", got, f">= {MIN_DISTINCT_OPENINGS} (model {target})", got >= MIN_DISTINCT_OPENINGS)
    for lang, medians in REFERENCE["median_chars"].items():
        for style, target in medians.items():
            got = prof["langs"][lang]["styles"][style]["median_chars"]
            ok = abs(got - target) <= MEDIAN_TOLERANCE * target
            check(f"{lang} {style} median chars", got, f"{target} ± {MEDIAN_TOLERANCE:.0%}", ok)
    lo, hi = AMBIGUOUS_RANGE
    got = prof["ambiguous_share"]
    check("ambiguous share", got, f"{lo}..{hi} (model {REFERENCE['ambiguous_share']})", lo <= got <= hi)

    results = write_baselines(path.parent, "dev", sessions=sessions)
    preds = [r.path for r in results if Path(r.path).stem in RUNS]
    runs = score_files(path.parent, preds, split="dev", bootstrap=0, sessions=sessions, write=False)
    for run in runs:
        name = f"{run.result['mode']}-{run.result['policy']}"
        target = REFERENCE["accuracy"][name]
        got = run.result["metrics"]["accuracy"]
        check(f"{name} dev accuracy", got, f"{target} ± {ACCURACY_TOLERANCE}", abs(got - target) <= ACCURACY_TOLERANCE)

    width = max(len(c[0]) for c in checks)
    for name, got, target, ok in checks:
        print(f"{'ok  ' if ok else 'MISS'} {name:<{width}}  {got:>8}  target {target}")
    missed = sum(not c[3] for c in checks)
    print(f"done: realism check: {len(checks)} figures, {missed} missed; data in {base}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
