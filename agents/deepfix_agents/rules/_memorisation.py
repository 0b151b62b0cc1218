"""When a training score shows a model that reproduces its training rows.

Shared by ``overfitting`` (its home reading) and ``prediction_drift`` (a memoriser's
outputs on its training rows are its labels restated): a private module, so that the
drift rule does not import the overfitting rule, which imports ``outliers``, which
imports ``prediction_drift`` (an import circle ``lint-imports`` refuses).
"""

from __future__ import annotations

#: a training score this close to perfect is memorisation, not learning (F1 / R2)
MEMORISED = 0.97


def _clip(score: float) -> float:
    """R2 below 0 is "worse than the mean" however negative: scores are clipped to
    [0, 1] so that a model that is bad everywhere does not read as a gap."""
    return min(max(score, 0.0), 1.0)


def memorises(train_score: float) -> bool:
    """Whether a training score this close to perfect (``MEMORISED``) shows a model that
    reproduces its training rows rather than learning."""
    return _clip(train_score) >= MEMORISED
