"""Scoring: the routing metrics of docs/score.md#the-metrics-exactly, intervals, paired comparisons, reports.

The plain Python API (the CLI, the evaluate modules, the demo and the leaderboard call these):

- :func:`score_runs` ``(sessions, rows_by_run, *, mode=None, split="dev", bootstrap=1000, seed=0,
  allow_duplicates=False) -> {run: score document}``
- :func:`score_predictions` one run in memory -> :class:`RunScore` (document + per-session results)
- :func:`score_files` ``(data, predictions, ...)`` the file edge: reads, scores, writes ``<pred>.score.json``
- :func:`compare_predictions` two runs on the same data -> comparison document
- :func:`bcubed` general B-cubed precision/recall/F1 with optional group ids
"""

from .bcubed import bcubed  # (the function, not its module: the name is both)

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


#: where each name of the API lives (imported on first use: ``score`` itself stays light, so that a
#: command can start reading its data file before the scorer's modules are loaded)
_HOMES = {
    "DEFAULT_BOOTSTRAP": ".defaults", "DEFAULT_SEED": ".defaults", "DEFAULT_SPLIT": ".defaults",
    "SCORE_FORMAT": ".run", "RunScore": ".run", "score_files": ".run", "score_predictions": ".run",
    "score_runs": ".run", "compare_predictions": ".compare",
}


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(_HOMES[name], __name__), name)
    globals()[name] = value
    return value
