"""How ``local`` does against ``bm25`` on chat written in the model writer's style.

    python benchmarks/model_style.py [--data DATA]

The offline writer's text is another, easier kind than a model's (docs/local.md), and no model is
reachable here. ``benchmarks/data/model-style/sessions.jsonl`` holds 18 sessions (902 messages, 9
in English and 9 in Chinese) whose user messages were written by hand, row by row, to the model
writer's own prompt (``generate/prompts.py``: ``WRITE``) from the project's plans and thread cards
(plan seed 9173): the plan gives each message's thread, action, style, fact and cue, and the
gold labels are the plan's; the rule reader marked the ambiguous messages (17.7%, where model data
has about 8%). ``scripts/fit_local.py`` never reads it. It was used to choose two things: that open
mode weighs a term's overlap by how common it is, as closed mode does, and that those weights are
squared (``local_background.POWER``; docs/local_history.md#the-background), so its figures are not
out of sample for those choices.

``benchmarks/data/model-style-blind/sessions.jsonl`` (``--data`` it) is the second sample, made
after every choice of the shipped weights and never used for one: 16 sessions (784 messages, 8 in
English from plan seed 7301 and 8 in Chinese from seed 7302) whose every model step (thread cards,
messages eight plan rows at a time, the independent reading) was answered by hand, without sight of
the routers, through ``generate --model`` against an OpenAI-compatible server on loopback that held
each request until its answer was written. Its readers marked 0.5% ambiguous.

Prints strict accuracy of ``local`` and ``bm25`` in both modes, the difference, and ``local``'s
expected calibration error (10 equal-width bins over strict messages, as a score document's
``calibration`` gives it: ``interleave_bench/score/calibration.py``). Nothing is timed. ``--data``
takes a sessions file or the data folder that holds it, as every command does; to check
``local``'s confidence on data of your own, route it with ``--policy local`` and score it
(docs/route.md). Exit codes: 0 printed, 2 bad input (one line on stderr).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from interleave_bench.errors import InterleaveError  # noqa: E402
from interleave_bench.io import read_sessions, sessions_file  # noqa: E402
from interleave_bench.route.local import LocalRouter  # noqa: E402
from interleave_bench.route.local_fit import judge_run  # noqa: E402
from interleave_bench.route.runner import RouteOptions, make_router, route_session  # noqa: E402
from interleave_bench.schema import PredictionRow  # noqa: E402
from interleave_bench.score.calibration import calibration_error  # noqa: E402
from interleave_bench.score.routing import score_session  # noqa: E402

DATA = ROOT / "benchmarks" / "data" / "model-style" / "sessions.jsonl"


def bm25_correct(sessions, mode: str) -> list[bool]:
    """Whether each strict message of ``sessions`` is right when ``bm25`` routes them in ``mode``."""
    router, opts, out = make_router("bm25"), RouteOptions(mode=mode, policy="bm25"), []

    async def main() -> None:
        for s in sessions:
            rows, _ = await route_session(s, router, opts)
            scored = score_session(s, {r["i"]: PredictionRow.model_validate(r) for r in rows}, mode)
            out.extend(bool(ok) for t, ok in zip(s.turns, scored.correct) if t.gold.thread is not None and not t.ambiguous)

    asyncio.run(main())
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(DATA), help="a sessions file, or the data folder that holds it "
                                                          "(default: the model-style sample)")
    args = parser.parse_args()
    try:
        sessions = read_sessions(sessions_file(args.data))
    except InterleaveError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print("| mode | strict messages | local | bm25 | local - bm25 | local ECE |")
    print("|---|---|---|---|---|---|")
    for mode in ("closed", "open"):
        judged = judge_run(sessions, mode, LocalRouter())
        if not judged:
            print(f"| {mode} | 0 | – | – | – | – |")
            continue
        local = sum(j.correct for j in judged) / len(judged)
        base = bm25_correct(sessions, mode)
        bm25 = sum(base) / len(base)
        ece = calibration_error([j.confidence for j in judged], [j.correct for j in judged])
        print(f"| {mode} | {len(judged):,} | {local:.3f} | {bm25:.3f} | {local - bm25:+.3f} | {ece:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
