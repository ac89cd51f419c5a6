"""Calibration of a router's ``confidence``: expected calibration error and the reliability table
(docs/local.md).

A prediction row may carry a ``confidence``, the router's chance (0..1) that its decision is
right (``local`` gives one on every row; ``hybrid --threshold T`` keeps ``local``'s decision
where it is at least T). Here, one definition for every figure the project gives of it:
the fit of ``local``'s calibration map (``route/local_fit.py``, ``scripts/fit_local.py``) and
``benchmarks/model_style.py``.

Confidences are put in :data:`RELIABILITY_BINS` equal-width bins over 0..1 (bin ``b`` holds
``b/10 <= c < (b+1)/10``; a confidence of exactly 1 falls in the top bin). The expected
calibration error is the gap between a bin's mean confidence and its accuracy, weighted by the
bin's share of the messages.

Pure: numbers in, numbers out.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

#: bins of the reliability table (equal width over 0..1)
RELIABILITY_BINS = 10


def bin_of(confidence: np.ndarray, bins: int = RELIABILITY_BINS) -> np.ndarray:
    """The bin of each confidence: ``floor(c * bins)``, a confidence of exactly 1 in the top bin."""
    return np.minimum((np.asarray(confidence, dtype=float) * bins).astype(int), bins - 1)


def reliability_table(confidence: Sequence[float], correct: Sequence[bool], bins: int = RELIABILITY_BINS) -> list[dict[str, Any]]:
    """Rows ``{lo, hi, n, confidence, accuracy, gap}`` for each non-empty equal-width bin of
    ``confidence`` (a confidence of exactly 1 falls in the top bin); means rounded to 4 decimals."""
    c = np.asarray(confidence, dtype=float)
    ok = np.asarray(correct, dtype=float)
    idx = bin_of(c, bins)
    out = []
    for b in range(bins):
        sel = idx == b
        n = int(sel.sum())
        if not n:
            continue
        mc, acc = float(c[sel].mean()), float(ok[sel].mean())
        out.append({"lo": round(b / bins, 4), "hi": round((b + 1) / bins, 4), "n": n,
                    "confidence": round(mc, 4), "accuracy": round(acc, 4), "gap": round(abs(mc - acc), 4)})
    return out


def calibration_error(confidence: Sequence[float], correct: Sequence[bool], bins: int = RELIABILITY_BINS) -> Optional[float]:
    """Expected calibration error: over ``bins`` equal-width bins of ``confidence`` (a confidence of
    exactly 1 in the top bin), the gap between mean confidence and accuracy, weighted by the
    bin's share of the messages (None for no messages)."""
    c = np.asarray(confidence, dtype=float)
    if not len(c):
        return None
    ok = np.asarray(correct, dtype=float)
    idx = bin_of(c, bins)
    gap = 0.0
    for b in range(bins):
        sel = idx == b
        if sel.any():
            gap += sel.sum() * abs(float(c[sel].mean()) - float(ok[sel].mean()))
    return gap / len(c)
