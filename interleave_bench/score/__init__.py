"""Scoring: the routing metrics of DESIGN.md section 7, intervals, paired comparisons, reports.

The plain Python API (the CLI, the evaluate modules, the demo and the leaderboard call these):

- :func:`score_runs` ``(sessions, rows_by_run, *, mode=None, split="dev", bootstrap=1000, seed=0,
  allow_duplicates=False) -> {run: score document}``
- :func:`score_predictions` one run in memory -> :class:`RunScore` (document + per-session results)
- :func:`score_files` ``(data, predictions, ...)`` the file edge: reads, scores, writes ``<pred>.score.json``
- :func:`compare_predictions` two runs on the same data -> comparison document
- :func:`bcubed` general B-cubed precision/recall/F1 with optional group ids
"""

from .bcubed import bcubed
from .compare import compare_predictions
from .run import (
    DEFAULT_BOOTSTRAP,
    DEFAULT_SEED,
    DEFAULT_SPLIT,
    SCORE_FORMAT,
    RunScore,
    score_files,
    score_predictions,
    score_runs,
)

__all__ = [
    "DEFAULT_BOOTSTRAP",
    "DEFAULT_SEED",
    "DEFAULT_SPLIT",
    "SCORE_FORMAT",
    "RunScore",
    "bcubed",
    "compare_predictions",
    "score_files",
    "score_predictions",
    "score_runs",
]
