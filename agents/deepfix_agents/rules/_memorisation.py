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


#: a refit's test score counts as held when it falls no further than this many standard
#: errors of the paired difference (the ladder's "beyond noise" bar)
HELD_NOISE_UNITS = 2.0


def noise_carries_memorisation(artifact) -> bool:
    """Whether the model's memorisation rests on the columns without label association:
    the testing step's refit with them held constant (``drop_noise_features``) no longer
    reaches a memorised training score, while its test score holds within noise. What
    the model reproduces is then collected noise (the unused-features finding names the
    columns), not its training rows in general."""
    for measured in artifact.interventions:
        if measured.kind != "drop_noise_features" or measured.change is None:
            continue
        before = measured.values.get("train_before")
        after = measured.values.get("train_after")
        if before is None or after is None or not memorises(before) or memorises(after):
            continue
        if -measured.change <= HELD_NOISE_UNITS * (measured.noise or 0.0):
            return True
    return False
