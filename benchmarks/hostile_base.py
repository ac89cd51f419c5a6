"""What every part of the hostile corpus shares: the hostile values, a case, and how one is run and
counted (``benchmarks/hostile.py`` runs the corpus; ``tests/test_hostile_sample.py`` a sample).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Optional
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
for _p in (str(ROOT), str(ROOT / "tests")):
    if _p not in sys.path:
        sys.path.insert(0, _p)
os.environ.setdefault("INTERLEAVE_NO_PROGRESS", "1")

from interleave_bench.cli import main as cli_main  # noqa: E402

#: values no count can be (each is one malformed case per count field)
BAD_COUNTS: tuple[Any, ...] = (-1, "6", 1.5, True, [], {}, "NaN", "1e400", "HUGE", "BIG64")
#: values no id can be
BAD_IDS: tuple[Any, ...] = ("", "a\nerror: forged", "tab\there", 5, None, [], {})
#: values no name from a fixed list can be
BAD_NAMES: tuple[Any, ...] = ("magic", "", 5, None, [], "FACTS")
#: values no optional text can be
BAD_TEXTS: tuple[Any, ...] = (5, [], {}, True)
#: raw JSON spliced in for the placeholders above (not JSON values Python writes)
RAW = {'"NaN"': "NaN", '"1e400"': "1e400", '"HUGE"': "9" * 5000, '"BIG64"': str(2**64)}
#: raw JSON values no field of any file can hold, spliced in as an extra field
RAW_EXTRAS: tuple[tuple[str, str], ...] = (
    ("NaN", "NaN"), ("1e400", "1e400"), ("-Infinity", "-Infinity"), ("5,000 digits", "9" * 5000),
    ("65 bits", str(2**64)), ("deep nesting", "[" * 100_000 + "]" * 100_000))


def raw_json(obj: Any) -> str:
    text = json.dumps(obj, ensure_ascii=False)
    for k, v in RAW.items():
        text = text.replace(k, v)
    return text


@dataclass
class Case:
    command: str
    name: str
    bad: bool  # must be refused (exit 2, one error line)
    run: Callable[[Path], list[str]]  # writes its inputs under the folder, returns the arguments
    #: for a valid case that stops on purpose past every input check (the leaderboard without a
    #: token to publish with): words of the one error line it must end with
    stops_at: Optional[str] = None
    #: environment variables set while the case runs
    env: Optional[dict[str, str]] = None


#: the outcomes a case must have
OK = ("refused with one line", "refused with a line per defect", "accepted")


def run_case(case: Case, folder: Path) -> tuple[str, str]:
    """``(outcome, stderr)`` of one case run in this process, in ``folder`` (where a command writes
    what it writes beside its working directory)."""
    args = case.run(folder)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(folder), mock.patch.dict(os.environ, case.env or {}), contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(err):
        try:
            code = cli_main(args)
        except SystemExit as exc:  # option errors
            code = exc.code if isinstance(exc.code, int) else 2
        except BaseException as exc:  # noqa: BLE001 - counted, never hidden
            return "internal error", f"{type(exc).__name__}: {exc}"
    text = err.getvalue()
    errors = [line for line in text.splitlines() if line.startswith("error:")]
    if "internal error" in text or "Traceback" in text:
        return "internal error", text
    if case.bad:
        if code == 2 and len(errors) == 1:
            return "refused with one line", text
        if code == 2 and errors:  # several defects, a line naming file, line and field for each
            return "refused with a line per defect", text
        return "silently accepted", text
    if case.stops_at is not None:
        ok = code == 2 and len(errors) == 1 and case.stops_at in errors[0]
        return ("accepted" if ok else "valid input refused"), text
    return ("accepted" if code in (0, 1) and not errors else "valid input refused"), text


def table(counts: dict[str, Counter]) -> list[str]:
    """The markdown table of cases per command and outcome."""
    lines = ["| command | cases | refused with one line | accepted (valid) | other |", "|---|---|---|---|---|"]
    for command, c in counts.items():
        other = {k: v for k, v in c.items() if k not in ("refused with one line", "accepted")}
        lines.append(f"| {command} | {sum(c.values())} | {c['refused with one line']} | {c['accepted']} | "
                     f"{', '.join(f'{k} {v}' for k, v in other.items()) or 0} |")
    return lines


def tally(cases: Iterable[tuple[str, Case]], show: int = 5) -> tuple[dict[str, Counter], int]:
    """Runs ``(group, case)`` pairs, each in a fresh folder: counts per command (and group of inputs) and outcome, and how
    many cases failed; prints up to ``show`` cases of each failing outcome."""
    counts: dict[str, Counter] = {}
    shown: Counter = Counter()
    failing = 0
    for group, case in cases:
        with tempfile.TemporaryDirectory() as tmp:
            outcome, err = run_case(case, Path(tmp))
        counts.setdefault(case.command if case.command == group else f"{case.command} ({group})", Counter())[outcome] += 1
        if outcome not in OK:
            failing += 1
            if shown[outcome] < show:
                shown[outcome] += 1
                print(f"{outcome}: {group}: {case.name}: {err.strip()[:300]}")
    return counts, failing
