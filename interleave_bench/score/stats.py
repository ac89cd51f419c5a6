"""Statistics shared by every scorer: intervals and paired tests.

Pure functions: numbers in, numbers out.
"""

from __future__ import annotations

import math

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
