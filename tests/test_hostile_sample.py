"""A seeded sample of the hostile corpus (``benchmarks/hostile.py``): a few cases of every reading
command, each the one-line error (exit 2) when malformed and taken when valid; never an internal
error, never a wrong value taken silently. The benchmark runs the whole corpus."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import hostile  # noqa: E402
from hostile_base import OK, run_case  # noqa: E402

#: malformed cases drawn per command and kind of input, and the draw's seed
PER_COMMAND, SEED = 3, 27
#: what the corpus still finds, each named with why it is left (nothing now)
KNOWN: set[tuple[str, str]] = set()


def _sample() -> list[tuple[str, hostile.Case]]:
    rng = random.Random(SEED)
    out = []
    for group, cases in hostile.COMMANDS.items():
        by_command: dict[str, list[hostile.Case]] = {}
        for case in cases():
            by_command.setdefault(case.command, []).append(case)
        for command, found in by_command.items():
            bad = [c for c in found if c.bad and (c.command, c.name) not in KNOWN]
            out += [(group, c) for c in found if not c.bad][:1]
            out += [(group, c) for c in rng.sample(bad, min(PER_COMMAND, len(bad)))]
    return out


SAMPLE = _sample()


@pytest.mark.parametrize("group,case", SAMPLE, ids=[f"{c.command}: {c.name}"[:90] for _, c in SAMPLE])
def test_a_hostile_case_is_refused_with_one_line_or_taken_when_valid(tmp_path, group, case):
    outcome, err = run_case(case, tmp_path)
    assert outcome in OK, f"{outcome}: {err[:500]}"


def test_the_sample_covers_every_reading_command():
    commands = {c.command for _, c in SAMPLE}
    assert {"validate", "score", "compare", "baselines", "route local", "route bm25", "stats", "export", "report",
            "leaderboard add", "mid-reply", "import sgd", "import irc", "import inspect", "vet", "vet --allow", "score-facts",
            "facts", "export-irc", "push", "release", "route (resumed)", "generate (resumed)"} <= commands
    assert len(SAMPLE) >= 60
