"""Whether a train/test shift (of labels or inputs) explains a model's shortfall against
the baseline ladder: shared by ``label_drift`` and ``feature_drift`` (a private module,
so neither rule imports the other for it)."""

from __future__ import annotations

import math

from deepfix_agents.rules._ladder import chance_noise, cross_validated_ladder
from deepfix_agents.rules._noise import sampling_noise

#: the ladder keeps its score on the test rows when its best rung there is not below its
#: best cross-validated score by more than this many noise units of the test score (as
#: ``feature_drift.PERIOD_NOISE_UNITS``)
KEPT_NOISE_UNITS = 1.0
#: a rung beats the model on the shifted test rows clearly when by more than this many
#: noise units of the test score (as the chance guard's two standard errors)
BEATEN_NOISE_UNITS = 2.0


def ladder_beats_shifted(artifact) -> bool:
    """True when the baseline ladder handles the shifted test rows and this model does
    not, which is what ``underfitting`` measures: the ladder's best rung on the test
    rows is not below its cross-validated score on the training rows by more than
    ``KEPT_NOISE_UNITS`` noise units of the test score (the ``chance_level``
    measurement's standard error, at least the sampling noise 0.5/sqrt(test rows)), so
    the test rows, shift and all, are no harder for a simple model fitted on the same
    training rows than the training rows were; that rung beats the model on those very
    rows by more than ``BEATEN_NOISE_UNITS`` noise units; and the model falls short of
    the ladder's cross-validated score on its own training rows (where nothing shifted)
    by as much. A shift cannot be why the model loses to a simple model that faced the
    same shifted rows and lost nothing, when it lost to it before any shift: the
    shortfall is the model's own (too simple, too regularised). A model that fits its
    training rows as well as the ladder and only falls behind on the shifted rows keeps
    the shift as a possible cause (it may lean on what moved)."""
    rungs = cross_validated_ladder(artifact)
    score, train = artifact.performance.test_score, artifact.performance.train_score
    if not rungs or score is None or train is None:
        return False
    noise = chance_noise(artifact)
    if not math.isfinite(noise) or noise < 0:
        noise = 0.0
    noise = max(noise, sampling_noise(artifact.dataset.test.n_rows))
    best = max(rungs, key=lambda b: (b.test_score, b.name))
    cv = max(b.cv_score for b in rungs)
    return (
        best.test_score >= cv - KEPT_NOISE_UNITS * noise
        and best.test_score - score > BEATEN_NOISE_UNITS * noise
        and cv - train > BEATEN_NOISE_UNITS * noise
    )
