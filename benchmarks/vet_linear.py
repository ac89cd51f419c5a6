"""vet in linear time: one long line of hostile text, at two sizes, through ``vet_paths``.

    python benchmarks/vet_linear.py [--mb 10] [--small-mb 1]

For each shape (a run of one character class, repeated URL schemes, thousands of e-mail addresses
or IP addresses, ...) a JSONL file of one record whose one field is that shape repeated to the
size is vetted with the project's own reader and detectors. Prints, per shape, the seconds at the
small size and at the large one and their ratio against the ratio of sizes (linear: about 1x;
quadratic: about the size ratio), and exits 1 when any large line takes 10 s or more or when a
ratio (of a line taking a second or more) is over twice the size ratio. Measured as ratios within one run, on one machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from interleave_bench.vetfiles import vet_paths  # noqa: E402

#: the shapes: what quadratic scans were seen on (runs a pattern re-reads from every start), and
#: what makes many findings (where resolving overlaps pairwise was quadratic)
SHAPES = {
    "letters": "a",
    "key alphabet": "A1b2",
    "dotted": "a.",
    "dashes": "sk-",
    "schemes": "x://",
    "schemes with query": "x://a?",
    "userinfo": "x://a:b@",
    "query keys": "?key=",
    "emails": "a@mail.de ",
    "ips": "81.2.69.160 ",
    "phones": "+44 20 7946 0958 ",
    "paths": "/home/ann/ ",
    "digits": "1",
    "spaces and digits": "1 ",
    "jwt starts": "eyJ",
}
#: the slowest a 10 MB line may take (issue 27)
LIMIT_S = 10.0
#: below this many seconds a time ratio says more about the machine's other work than about vet
NOISE_S = 1.0


def vet_one_line(text: str, folder: Path) -> tuple[float, int]:
    path = folder / "line.jsonl"
    path.write_text(json.dumps({"session_id": "x", "text": text}) + "\n", encoding="utf-8")
    start = time.perf_counter()
    report = vet_paths([path])
    seconds = time.perf_counter() - start
    assert not report.errors, report.errors
    return seconds, len(report.findings)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=10.0, help="size of the long line, in MB (default 10)")
    ap.add_argument("--small-mb", type=float, default=1.0, help="size of the short line, in MB (default 1)")
    args = ap.parse_args()
    big, small = int(args.mb * 1_000_000), int(args.small_mb * 1_000_000)
    size_ratio = big / small
    bad = 0
    print(f"| shape | {args.small_mb:g} MB s | {args.mb:g} MB s | time ratio / size ratio | findings |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, unit in SHAPES.items():
            t_small, _ = vet_one_line((unit * (small // len(unit) + 1))[:small], Path(tmp))
            t_big, found = vet_one_line((unit * (big // len(unit) + 1))[:big], Path(tmp))
            growth = (t_big / max(t_small, 1e-6)) / size_ratio
            # growth is read only where the long line takes a second or more: below, noise rules
            flag = t_big >= LIMIT_S or (t_big >= NOISE_S and growth > 2.0)
            bad += flag
            print(f"| {name} | {t_small:.2f} | {t_big:.2f} | {growth:.2f} | {found:,} |{' SLOW' if flag else ''}")
    print(f"vet_linear: {len(SHAPES)} shapes, {bad} over {LIMIT_S:g} s or growing faster than the text")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
