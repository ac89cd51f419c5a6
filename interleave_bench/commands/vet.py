"""``interleave-bench vet DATA...``: look for secrets and personal data in every text field.

Scans every string of sessions (v0 and v1), mid-reply case files and any JSON or JSONL file under a
data folder for API keys and tokens, long random strings, e-mail addresses, phone numbers, IBANs,
card numbers, URLs with credentials, local home-folder paths and IP addresses. Prints one line per
finding (file, line, field, kind, the match masked) and a summary. Exit 0 when clean, 1 when a
finding is not accepted by the allowlist, 2 when an input cannot be read.
"""

from __future__ import annotations

import argparse
import sys

from ..errors import error_line
from ..progress import Timer, progress, print_summary


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("vet", help="find secrets and personal data before publishing", description=__doc__.split("\n\n")[0])
    p.add_argument("paths", nargs="+", metavar="DATA", help="data folders, sessions.jsonl files, mid-reply case files, any JSON/JSONL")
    p.add_argument("--allow", metavar="FILE",
                   help="allowlist of known fakes, `[KIND:]PATTERN  # REASON` per line (default: ./vet-allow.txt if present)")
    p.add_argument("--show-allowed", action="store_true", help="also print the findings the allowlist accepts")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..vet import default_allowlist, vet_paths

    timer = Timer()
    allow = args.allow or default_allowlist()
    report = vet_paths(args.paths, allowlist=allow,
                       progress_bar=lambda files: progress(files, desc="vet", unit="file"))
    for f in report.findings:
        if f.allowed_by is None or args.show_allowed:
            print(f.format())
    for rule in report.unused_rules:
        print(f"warning: {rule.path}:{rule.line}: pattern accepted no finding; remove it if the data no longer needs it",
              file=sys.stderr)
    for err in report.errors:
        print(error_line(err.format()), file=sys.stderr)
    if report.errors and not report.files:
        return 2  # nothing could be read: the error lines say it all, a summary of nothing would not
    print(f"vet: {report.summary()}" + (f"; allowlist {allow}" if allow else ""))
    print_summary("vet", {"files": len(report.files), "findings": len(report.blocking),
                               "allowed": len(report.allowed), "unreadable": len(report.errors)}, timer.seconds)
    if report.errors:
        return 2
    return 1 if report.blocking else 0
