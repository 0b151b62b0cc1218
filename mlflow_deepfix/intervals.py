"""Small statistics shared by the testing step and the diagnosis rules.

A leaf (it imports nothing of ours), so the rules (``deepfix_agents``), which read typed
artifact data and never the testing layer, and the testing step that measures that data
compute an interval the same way.
"""

from __future__ import annotations

import math

__all__ = ["Z95", "wilson"]

#: two-sided 95 % normal quantile
Z95 = 1.96


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion ``successes / n`` (sensible for small n and
    rates near 0 or 1, where the normal interval leaves [0, 1]); (0, 1) without rows."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)
