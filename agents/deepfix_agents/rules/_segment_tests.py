"""Exact one-sided tests of a segment's errors, shared by the weak-segment rule's scan of
the test split and its corroboration on the training rows
(:mod:`deepfix_agents.rules._training_segments`): one copy of the arithmetic, no import
circle between the two."""

from __future__ import annotations

import math
from statistics import NormalDist


def log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def z_upper_tail(log_terms) -> float:
    """The z of an exact one-sided test from its upper tail's probabilities, given as
    logs from the observed count upwards (log space: exact counts of a large test split
    overflow floats). Above the mean the terms only fall, so the first is the largest
    and the sum stops once they no longer add anything; p converted to the normal
    scale (0 when p is not below one half)."""
    first, tail = None, 0.0
    for log_term in log_terms:
        if first is None:
            first = log_term
        tail += math.exp(log_term - first)
        if log_term - first < -40:
            break
    if first is None:
        return 0.0
    p = max(math.exp(first) * tail, 1e-300)
    return -NormalDist().inv_cdf(p) if p < 0.5 else 0.0


def z_binomial(hits: int, n_rows: int, rate: float) -> float:
    """The z of the exact one-sided binomial test that ``hits`` errors in ``n_rows``
    rows exceed an error rate of ``rate`` (a segment's own constant-guess error when its
    feature's other categories are pure, :func:`deepfix_agents.rules.weak_segment.
    only_errable`; what comparable rows get, on the training rows):
    :func:`z_upper_tail` of the binomial's tail, whose terms fall from ``hits`` on since
    ``hits`` lies above the mean."""
    if n_rows <= 0 or hits <= rate * n_rows:
        return 0.0
    if rate <= 0:
        return 8.0  # errors where a constant guess makes none: beyond any bar
    log_p, log_q = math.log(rate), math.log1p(-rate) if rate < 1 else -math.inf
    return z_upper_tail(
        log_comb(n_rows, k) + k * log_p + (n_rows - k) * log_q
        for k in range(hits, n_rows + 1)
    )


def rest_error(seg, n_test: int) -> float:
    """The mean error of the test rows outside ``seg``, derived from the overall error
    and the segment's (the artifact records only those two)."""
    return (seg.overall_error * n_test - seg.error * seg.n_rows) / max(n_test - seg.n_rows, 1)
