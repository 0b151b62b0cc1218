"""How wide a regressor's predictions can spread on this data: shared by
``degenerate_predictions`` (a collapsed output) and ``preprocessing_mismatch`` (an output
squeezed by a missing scaler), so neither rule imports the other for it."""

from __future__ import annotations

import math


def reachable_r2(artifact) -> float | None:
    """The best R2 measured on this data: the model's on test, the baseline ladder's in
    cross-validation and on test (at most 1); None when none was measured. A
    predictor explaining a share R2 of the target's variance has a spread of
    sqrt(R2) times the target's (least squares: var(pred) = R2 var(y)), so on weak
    signal a narrow spread is what the best predictor gives, not a collapse."""
    scores = [artifact.performance.test_score] if artifact.performance.metric == "r2" else []
    for b in artifact.baselines:
        if b.name.startswith("dummy") or b.metric != "r2":
            continue
        scores += [b.cv_score, b.test_score]
    scores = [s for s in scores if s is not None and math.isfinite(s)]
    return min(max(scores), 1.0) if scores else None
