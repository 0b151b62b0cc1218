"""Seeded row sampling, shared by every statistic that runs on a sample, and the
bounded, label-stratified samples that Deepchecks' suites get.

deepfix's own statistics and the performance summary read every row (chunked where it
matters); Deepchecks' suites get at most :data:`CHECKS_MAX_ROWS` rows per split, so
their cost stops growing with the table. :func:`stratified_index` keeps each class's
share (largest remainder allocation, every present class keeps at least one row) so
that label shares, per-class metrics and calibration seen by the checks match the split.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def sample_index(n: int, max_rows: int, seed: int) -> np.ndarray:
    """Sorted positions of a seeded sample of ``max_rows`` of ``n`` rows (all when fewer)."""
    if n <= max_rows:
        return np.arange(n)
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(n, size=max_rows, replace=False))


#: rows per split that Deepchecks' suites see at most
CHECKS_MAX_ROWS = 50_000


def stratified_index(labels: pd.Series | np.ndarray | None, n_rows: int, max_rows: int,
                     seed: int) -> np.ndarray:
    """Sorted positions of a seeded sample of at most ``max_rows`` of ``n_rows`` rows,
    stratified by ``labels`` (class labels; None or regression targets: uniform)."""
    if max_rows < 1:
        raise ValueError(f"max_rows must be >= 1, got {max_rows!r}")
    if n_rows <= max_rows:
        return np.arange(n_rows)
    rng = np.random.default_rng(seed)
    if labels is None:
        return np.sort(rng.choice(n_rows, size=max_rows, replace=False))
    codes, uniques = pd.factorize(pd.Series(np.asarray(labels)), use_na_sentinel=True)
    codes = np.where(codes < 0, len(uniques), codes)  # missing labels form their own stratum
    counts = np.bincount(codes)
    exact = counts * (max_rows / n_rows)
    take = np.floor(exact).astype(int)
    take = np.maximum(take, (counts > 0).astype(int))
    short = max_rows - int(take.sum())
    if short > 0:  # largest remainders first, ties by stratum order: deterministic
        order = np.argsort(-(exact - np.floor(exact)), kind="stable")
        for stratum in order[:short]:
            take[stratum] += 1
    take = np.minimum(take, counts)
    order = np.argsort(codes, kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    picked = [
        order[start + rng.choice(count, size=k, replace=False)]
        for start, count, k in zip(starts, counts, take)
        if k > 0
    ]
    return np.sort(np.concatenate(picked))
