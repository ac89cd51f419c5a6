"""One-to-one matching of a system's own topic labels to gold threads (open mode, docs/score.md#one-to-one).

Labels are matched to threads so that they agree on as many thread messages as possible (the
Hungarian method, ``scipy.optimize.linear_sum_assignment``). Which of several equally good
matchings wins is part of the definition: rows are the session's thread ids and columns its
labels, each sorted as strings, and the solver runs on the negated count matrix, exactly as the
reference scorer does, so existing prediction files score the same.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Iterable, Mapping

import numpy as np


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


def match_labels(
    thread_ids: Iterable[str], labels: Iterable[str], agreement: Mapping[tuple[str, str], int]
) -> dict[str, str]:
    """``{label: thread}`` maximising the summed agreement, one label per thread at most.

    ``agreement[(thread, label)]`` is the number of thread messages of ``thread`` that got
    ``label`` (missing pairs count zero). ``labels`` should hold only topic labels (no special
    ones). A matched pair with zero agreement maps nothing, so a label that never shared a message
    with any thread stays unmapped.
    """
    rows = sorted(set(thread_ids))
    cols = sorted(set(labels))
    if not rows or not cols:
        return {}
    weights = np.array([[agreement.get((t, lab), 0) for lab in cols] for t in rows], dtype=np.int64)
    r, c = linear_sum_assignment()(-weights)
    return {cols[j]: rows[i] for i, j in zip(r.tolist(), c.tolist()) if weights[i, j] > 0}
