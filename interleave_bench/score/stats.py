"""Statistics shared by every scorer: intervals and paired tests.

Pure functions: numbers in, numbers out.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

#: z for a two-sided 95% interval
Z95 = 1.959963984540054


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a share of ``k`` out of ``n`` (``(0.0, 1.0)`` when ``n`` is 0).

    Preferred over the normal approximation because it stays inside [0, 1] and behaves for small
    counts and shares near 0 or 1.
    """
    if n <= 0:
        return (0.0, 1.0)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


# --- bootstrap over units (sessions) ---------------------------------------------------------------

#: resamples per block: the blocks whose counts make one matrix product each (the product's
#: grouping can move the last bit of a sum of fractions, so it is kept whenever memory allows)
BOOTSTRAP_BLOCK = 100
#: bytes of per-unit counts held at once: a block whose counts would take more (above some 21,000
#: sessions) is multiplied a few resamples at a time, so memory stays flat in the number of units;
#: sums of whole counts stay exact, a sum of fractions may move in its last bit, far below the
#: decimals the documents keep
BOOTSTRAP_WEIGHT_BYTES = 16 << 20
#: two-sided confidence level of every interval the project prints
CONFIDENCE = 0.95


def bootstrap_sums(stats: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """Column sums of ``stats`` (units x columns) over ``resamples`` bootstrap resamples of its rows.

    Returns an array of shape ``(resamples, columns)``. Each resample draws as many units as there
    are, with replacement, uniformly; the draw is turned into per-unit counts (``bincount``) and
    the sums into matrix products (:data:`BOOTSTRAP_BLOCK` resamples each, fewer when
    :data:`BOOTSTRAP_WEIGHT_BYTES` asks), so a thousand resamples of ten thousand sessions cost a
    few hundred milliseconds. The same ``seed`` gives the same resamples for the same number of units,
    whatever the columns are, so two runs scored on the same sessions share their resamples.
    """
    stats = np.asarray(stats, dtype=np.float64)
    if stats.ndim != 2:
        raise ValueError("stats must be a 2-d array (units x columns)")
    n_units, n_cols = stats.shape
    out = np.zeros((max(0, resamples), n_cols), dtype=np.float64)
    if resamples <= 0 or n_units == 0:
        return out
    rng = np.random.default_rng(seed)
    # 32-bit draws are the same numbers as 64-bit ones (ranges below 2**32 draw 32 bits either
    # way), and a resample drawn on its own the same numbers as drawn with its block
    draw_type = np.int32 if n_units < 2**31 else np.int64
    step = max(2, BOOTSTRAP_WEIGHT_BYTES // (8 * n_units))  # rows of counts per product
    weights = np.empty((min(step + 1, BOOTSTRAP_BLOCK, resamples), n_units), dtype=np.float64)
    with one_blas_thread():
        _resampled_sums(stats, rng, draw_type, step, weights, out)
    return out


def one_blas_thread() -> Any:
    """The products on one BLAS thread: a threaded product splits the sums, so the last bit of a
    sum of fractions moved with the machine's cores, and on a shared machine its threads cost
    more than the product: ten products of 100 resamples by 2,000 sessions by 40 counts (the
    shape of ``benchmarks/bench_score.py --sessions 2000``'s) took 0.145 s threaded and 0.009 s on
    one thread in a process of their own on two shared cores; in the command, where its threads
    had started before, ``bootstrap_sums`` took 0.068 s against 0.080 s under cProfile."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(1, user_api="blas")


def _resampled_sums(stats: np.ndarray, rng: np.random.Generator, draw_type: type, step: int, weights: np.ndarray,
                    out: np.ndarray) -> None:
    """:func:`bootstrap_sums`' resamples, a block of products at a time, into ``out``."""
    n_units = len(stats)
    resamples = len(out)
    for start in range(0, resamples, BOOTSTRAP_BLOCK):
        block = min(BOOTSTRAP_BLOCK, resamples - start)
        for lo, hi in _product_rows(block, step):
            for r in range(hi - lo):
                weights[r] = np.bincount(rng.integers(0, n_units, size=n_units, dtype=draw_type), minlength=n_units)
            out[start + lo:start + hi] = weights[:hi - lo] @ stats


def _product_rows(block: int, step: int) -> list[tuple[int, int]]:
    """Row ranges of a block of ``block`` resamples, ``step`` at a time; none of one row unless the
    block is one row (a one-row product is a vector product, which adds in yet another order)."""
    ranges = [(lo, min(lo + step, block)) for lo in range(0, block, step)]
    if len(ranges) > 1 and ranges[-1][1] - ranges[-1][0] == 1:
        ranges[-2:] = [(ranges[-2][0], block)]
    return ranges


def percentile_interval(values: np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """The percentile interval of bootstrap values (NaN resamples ignored); ``None`` if none is finite.

    A resample can be undefined (say, accuracy over resampled sessions that hold no strict
    message); such resamples are left out rather than counted as zero.
    """
    values = np.asarray(values, dtype=np.float64)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return None
    tail = (1.0 - confidence) / 2.0 * 100.0
    lo, hi = linear_percentiles(values, [tail, 100.0 - tail])
    return (float(lo), float(hi))


def linear_percentiles(values: np.ndarray, q: Sequence[float]) -> np.ndarray:
    """``np.percentile(values, q)`` of finite float values, to the bit: the same virtual index
    ``(n - 1) * q / 100`` and the same interpolation (from the upper neighbour when the weight is
    0.5 or more), without the step by which numpy loads ``numpy.ma`` (20 ms of a command's
    start)."""
    ordered = np.sort(values)
    n = len(ordered)
    virtual = (n - 1) * np.true_divide(np.asarray(q, dtype=np.float64), 100)
    below = np.floor(virtual)
    above = below + 1
    last = virtual >= n - 1
    below[last] = above[last] = -1
    below[virtual < 0] = above[virtual < 0] = 0
    a, b = ordered[below.astype(np.intp)], ordered[above.astype(np.intp)]
    gamma = virtual - below
    diff = b - a
    out = a + diff * gamma
    np.subtract(b, diff * (1 - gamma), out=out, where=gamma >= 0.5)
    return out


def bootstrap_ratio_interval(
    numerators: np.ndarray, denominators: np.ndarray, resamples: int, seed: int, confidence: float = CONFIDENCE
) -> tuple[float, float] | None:
    """Percentile bootstrap interval over units of ``sum(numerators) / sum(denominators)``.

    Units are resampled together (one numerator and one denominator each), which is how a share
    pooled over sessions varies when the sessions are a sample. ``None`` when no resample is
    defined (no resamples, or every denominator is zero).
    """
    stats = np.column_stack([np.asarray(numerators, dtype=np.float64), np.asarray(denominators, dtype=np.float64)])
    sums = bootstrap_sums(stats, resamples, seed)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = sums[:, 0] / sums[:, 1]
    return percentile_interval(ratios, confidence)


# --- paired tests ------------------------------------------------------------------------------------


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for ``b`` and ``c`` discordant pairs (1.0 when there are none).

    Under the null each discordant pair goes either way with probability 1/2, so the smaller count
    is binomial(b + c, 1/2); the p-value doubles its lower tail, capped at 1.
    """
    if b < 0 or c < 0:
        raise ValueError("discordant counts cannot be negative")
    n = b + c
    if n == 0:
        return 1.0
    return float(min(1.0, 2.0 * _binom_cdf_half(min(b, c), n)))


def _binom_cdf_half(k: int, n: int) -> float:
    from scipy.stats import binom

    return float(binom.cdf(k, n, 0.5))


def paired_bootstrap_diff(
    numerators_a: np.ndarray,
    numerators_b: np.ndarray,
    denominators: np.ndarray,
    resamples: int,
    seed: int,
    confidence: float = CONFIDENCE,
) -> tuple[float, float] | None:
    """Percentile interval of ``(sum(b) - sum(a)) / sum(denominators)`` with units resampled in pairs.

    For two runs scored on the same sessions: ``numerators_*`` are each session's right answers,
    ``denominators`` its scored messages. Resampling a session takes both runs' answers on it, so
    the interval reflects the paired design (much narrower than two independent intervals).
    """
    diff = np.asarray(numerators_b, dtype=np.float64) - np.asarray(numerators_a, dtype=np.float64)
    return bootstrap_ratio_interval(diff, denominators, resamples, seed, confidence)
