"""The solver of open mode's one-to-one matchings (docs/score.md#the-metrics-exactly, and the 1-1
metric, docs/score.md#one-to-one): ``scipy.optimize.linear_sum_assignment`` (the Hungarian
method). Which of several equally good matchings wins is part of the mapping's definition: the
block scorer (:func:`~.block.score_block`) builds each session's matrix with rows its thread ids and
columns its labels, each sorted as strings, and solves it negated, exactly as the reference scorer
does, so existing prediction files score the same.
"""

from __future__ import annotations

import functools
from typing import Any, Callable


@functools.lru_cache(maxsize=None)
def linear_sum_assignment() -> Callable[..., Any]:
    """``scipy.optimize.linear_sum_assignment`` itself (the function of its ``_lsap`` extension),
    loaded without the rest of ``scipy.optimize``: importing that package whole takes 0.26 s, a
    fifth of an open-mode ``score`` of 2,000 sessions (``benchmarks/bench_score.py --sessions 2000
    --mode open``: 1.38 s before), while the extension loads in under a millisecond. Where the
    package is loaded already, or the extension is not where scipy keeps it, the package's."""
    import importlib.machinery
    import importlib.util
    import os
    import sys

    import scipy

    if "scipy.optimize" not in sys.modules:
        spec = importlib.machinery.PathFinder.find_spec("_lsap", [os.path.join(os.path.dirname(scipy.__file__), "optimize")])
        if spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module.linear_sum_assignment
    from scipy.optimize import linear_sum_assignment as solve

    return solve
