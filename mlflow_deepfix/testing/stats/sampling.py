"""Seeded row sampling, shared by every statistic that runs on a sample."""

from __future__ import annotations

import numpy as np


def sample_index(n: int, max_rows: int, seed: int) -> np.ndarray:
    """Sorted positions of a seeded sample of ``max_rows`` of ``n`` rows (all when fewer)."""
    if n <= max_rows:
        return np.arange(n)
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(n, size=max_rows, replace=False))
