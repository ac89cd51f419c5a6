"""``interleave-bench report DATA PRED... --html OUT.html``: one static page to look at.

Scores the runs (as ``score`` does, writing nothing beside them) and writes one self-contained HTML
file: the results table, accuracy with its 95% interval per system, accuracy against cost per
message, outcomes and accuracy by gold action and by message style, and the flipped messages of a
comparison (``--compare A B``; default: the two most accurate runs of one mode). Plots need the
optional extra ``plots`` (matplotlib); without it the page says so and keeps every table.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..progress import Timer, print_summary
from .score import add_scoring_arguments, run_inputs


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="one static HTML page of scored runs, with plots",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("data", metavar="DATA",
                   help="sessions.jsonl, the data folder that holds it, or hub:ORG/NAME@REV[#CONFIG]")
    p.add_argument("predictions", nargs="+", metavar="PRED", help="prediction files (.jsonl), or folders of them")
    p.add_argument("--html", required=True, metavar="OUT.html", help="the page to write")
    p.add_argument("--compare", nargs=2, metavar=("A", "B"),
                   help="list the flipped messages of B against A (run names, e.g. closed-stay closed-bm25)")
    p.add_argument("--title", default="InterleaveBench report", help="the page's title")
    add_scoring_arguments(p)
    p.set_defaults(func=run)


def default_pair(results: list[dict]) -> tuple[str, str] | None:
    """The two most accurate runs of the mode with the most runs (A the second best), or None."""
    by_mode: dict[str, list[dict]] = {}
    for r in results:
        if r["metrics"].get("accuracy") is not None:
            by_mode.setdefault(r["mode"], []).append(r)
    if not by_mode:
        return None
    runs = max(by_mode.values(), key=len)
    if len(runs) < 2:
        return None
    best = sorted(runs, key=lambda r: -r["metrics"]["accuracy"])
    return best[1]["system"], best[0]["system"]


def run(args: argparse.Namespace) -> int:
    from ..errors import UsageError, require_output
    from ..hub.source import local_data
    from ..io import atomic_write_text, sessions_file
    from ..llm.prices import prices_from
    from ..score.compare import compare_predictions
    from ..reports.page import have_matplotlib, is_page_head, report_page
    from ..reports.tables import warn_in_sample, warn_partial
    from ..route.local_sample import fit_sample
    from ..score.read import DATA_FIRST, read_predictions_fast, read_sessions_fast
    from ..score.run import prediction_files, score_files, system_name

    timer = Timer()
    prediction_files(args.predictions, "report:")  # a run given twice, refused before anything is read
    # before the scoring, not after it
    price = prices_from(os.environ)
    data, source = local_data(args.data)
    require_output(args.html, run_inputs(data, args.predictions), is_page_head, "a page report wrote", "report: --html")
    sessions = read_sessions_fast(sessions_file(data), DATA_FIRST)
    runs = score_files(data, args.predictions, mode=args.mode, split=args.split, bootstrap=args.bootstrap,
                       seed=args.seed, allow_duplicates=args.allow_duplicates, write=False, sessions=sessions,
                       data_source=source, price=price, recorded_prices=True,
                       in_sample=fit_sample(sessions_file(data), args.split))
    results = [r.result for r in runs]
    paths = {system_name(p): p for p in prediction_files(args.predictions)}
    pair = tuple(args.compare) if args.compare else default_pair(results)
    comparison = None
    if pair is not None:
        missing = [n for n in pair if n not in paths]
        if missing:
            raise UsageError(f"--compare {' '.join(pair)}: no run named {', '.join(missing)} (runs: {', '.join(paths)})")
        (rows_a, lines_a), (rows_b, lines_b) = (read_predictions_fast(paths[n]) for n in pair)
        comparison = compare_predictions(
            sessions, rows_a, rows_b, names=pair, sources=(str(paths[pair[0]]), str(paths[pair[1]])),
            lines=(lines_a, lines_b), data_file=str(sessions_file(data)), mode=args.mode, split=args.split,
            bootstrap=args.bootstrap, seed=args.seed,
            allow_duplicates=args.allow_duplicates,
        )
    out = Path(args.html)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out, report_page(results, comparison, title=args.title))
    plots = "" if have_matplotlib() else " (no plots: matplotlib is not installed; pip install 'interleave-bench[plots]')"
    print(f"wrote {out}{plots}")
    warn_partial(results, sys.stderr)
    warn_in_sample(results, sys.stderr)
    flips = len(comparison["flips"]) if comparison else 0
    print_summary("report", {"runs": len(results), "flipped messages": flips}, timer.seconds)
    return 0
