"""One-to-one matching of a system's own topic labels to gold threads (open mode, docs/score.md#one-to-one).

Labels are matched to threads so that they agree on as many thread messages as possible (the
Hungarian method, ``scipy.optimize.linear_sum_assignment``). Which of several equally good
matchings wins is part of the definition: rows are the session's thread ids and columns its
labels, each sorted as strings, and the solver runs on the negated count matrix, exactly as the
reference scorer does, so existing prediction files score the same.
"""

from __future__ import annotations

from typing import Iterable, Mapping

import numpy as np


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
    from scipy.optimize import linear_sum_assignment  # here: scipy takes most of a second to import

    r, c = linear_sum_assignment(-weights)
    return {cols[j]: rows[i] for i, j in zip(r.tolist(), c.tolist()) if weights[i, j] > 0}
