"""Calibration of a router's ``confidence``: expected calibration error and the reliability table
(docs/score.md#calibration).

A prediction row may carry a ``confidence``, the router's chance (0..1) that its decision is
right (``local`` gives one on every row; ``hybrid --threshold T`` keeps ``local``'s decision
where it is at least T). Here, one definition for every figure the project gives of it:
the score document's ``calibration`` section (:func:`calibration_section`, over the strict
messages whose row carries a confidence, each right or wrong exactly as ``accuracy`` counts it),
the fit of ``local``'s calibration map (``route/local_fit.py``, ``scripts/fit_local.py``) and
``benchmarks/model_style.py``.

Confidences are put in :data:`RELIABILITY_BINS` equal-width bins over 0..1 (:func:`bin_of`:
``floor(10 c)`` with ``10 c`` a float, so a confidence a rounding step under an edge may land above
it; a confidence of exactly 1 falls in the top bin). The expected
calibration error is the gap between a bin's mean confidence and its accuracy, weighted by the
bin's share of the messages.

Pure: numbers in, numbers out (the metric table, :mod:`.table`, gives the decimals).
"""

from __future__ import annotations

from typing import Any, Iterator, Optional, Sequence

import numpy as np

from .table import RATE, rounded

#: bins of the reliability table (equal width over 0..1)
RELIABILITY_BINS = 10
#: decimals of the calibration figures in a document (the metric table's, as every rate's)
DECIMALS = RATE


def bin_of(confidence: np.ndarray, bins: int = RELIABILITY_BINS) -> np.ndarray:
    """The bin of each confidence: ``floor(c * bins)``, a confidence of exactly 1 in the top bin."""
    return np.minimum((np.asarray(confidence, dtype=float) * bins).astype(int), bins - 1)


def _bins(c: np.ndarray, ok: np.ndarray, bins: int) -> Iterator[tuple[int, int, float, float]]:
    """``(bin, messages, mean confidence, accuracy)`` of each non-empty bin, in order."""
    idx = bin_of(c, bins)
    for b in range(bins):
        sel = idx == b
        n = int(sel.sum())
        if n:
            yield b, n, float(c[sel].mean()), float(ok[sel].mean())


def reliability_table(confidence: Sequence[float], correct: Sequence[bool], bins: int = RELIABILITY_BINS,
                      empty: bool = False) -> list[dict[str, Any]]:
    """Rows ``{lo, hi, n, confidence, accuracy, gap}`` for each non-empty equal-width bin of
    ``confidence`` (a confidence of exactly 1 falls in the top bin); means rounded to 4 decimals.
    With ``empty``, every bin, an empty one with ``n`` 0 and its means ``None``."""
    found = {b: (n, mc, acc) for b, n, mc, acc in _bins(np.asarray(confidence, dtype=float),
                                                        np.asarray(correct, dtype=float), bins)}
    out = []
    for b in range(bins):
        if b not in found:
            if empty:
                out.append({"lo": round(b / bins, 4), "hi": round((b + 1) / bins, 4), "n": 0,
                            "confidence": None, "accuracy": None, "gap": None})
            continue
        n, mc, acc = found[b]
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
    gap = 0.0
    for _, n, mc, acc in _bins(c, np.asarray(correct, dtype=float), bins):
        gap += n * abs(mc - acc)
    return gap / len(c)


def calibration_section(confidence: np.ndarray, correct: np.ndarray, strict: int) -> Optional[dict[str, Any]]:
    """A score document's ``calibration``: over the strict messages whose row carries a confidence
    (``confidence``, and whether each reached its gold thread, ``correct``), of the run's
    ``strict`` strict messages; ``None`` when no strict message has one (nothing to measure).

    ``ece`` (:func:`calibration_error`), ``bins``, ``messages`` (those with a confidence, what
    every figure here is over), ``strict``, ``confidence`` and ``accuracy`` (their mean confidence
    and share right), and ``reliability``, one row per bin, empty ones too
    (:func:`reliability_table`)."""
    c = np.asarray(confidence, dtype=float)
    if not len(c):
        return None
    ok = np.asarray(correct, dtype=bool)
    return {
        "ece": rounded("ece", calibration_error(c, ok)),
        "bins": RELIABILITY_BINS,
        "messages": len(c),
        "strict": int(strict),
        "confidence": round(float(c.mean()), DECIMALS),
        "accuracy": round(float(ok.mean()), DECIMALS),
        "reliability": reliability_table(c, ok, empty=True),
    }
