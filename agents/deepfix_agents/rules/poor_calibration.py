"""poor_calibration: predicted probabilities do not match observed frequencies.

Primary evidence is our expected calibration error (ECE) on the test split, less what
binning noise produces on a test set of that size; Deepchecks' Calibration Score (Brier
score per class) corroborates, and stands alone only as a weak hint when the Brier score
is worse than always predicting the class shares.
"""

from __future__ import annotations

import math

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, interp

#: expected calibration error on test (beyond noise) -> score
ECE_SCORE = ((0.03, 0.0), (0.05, 0.15), (0.1, 0.4), (0.15, 0.55), (0.25, 0.7), (0.4, 0.85))
#: Brier skill score below 0 (worse than predicting the class shares) -> score
NEGATIVE_SKILL_SCORE = ((0.0, 0.0), (0.2, 0.25), (0.5, 0.4))


def ece_noise(n_test: int) -> float:
    """ECE a perfectly calibrated model shows by chance on ``n_test`` rows with 10
    equal-frequency bins: about 0.65/sqrt(n) for confident and 1.15/sqrt(n) for
    uncertain models on average (simulated), so 1/sqrt(n): 0.1 at 100 rows, 0.03 at 1000."""
    return 1.0 / math.sqrt(max(n_test, 1))


def brier_skill(artifact, check) -> tuple[float, float] | None:
    """(Brier score, skill) of the worst class: skill = 1 - Brier / Brier of always
    predicting the class's test share, p (1 - p). Below 0 the probabilities are worse
    than knowing the class shares alone."""
    shares = artifact.dataset.test.label_distribution
    if not shares:
        return None
    per_class = {
        k.removeprefix("brier_"): v for k, v in (check.values or {}).items() if v is not None
    }
    if not per_class and check.value is not None:
        # only the largest Brier score: compare with the most uncertain class
        per_class = {max(shares, key=lambda k: (shares[k] * (1 - shares[k]), k)): check.value}
    worst = None
    for label, brier in sorted(per_class.items()):
        p = shares.get(label)
        if p is None or p <= 0 or p >= 1:
            continue
        skill = 1.0 - brier / (p * (1 - p))
        if worst is None or skill < worst[1]:
            worst = (brier, skill)
    return worst


@register_rule
class PoorCalibration(Rule):
    id = "poor_calibration"
    name = "Predicted probabilities are not calibrated"
    detects = (
        "Predicted probabilities that do not match how often the predicted outcome really "
        "happens (expected calibration error on the test split)."
    )
    why = (
        "Anything that uses the probabilities, such as risk scores, thresholds, expected "
        "costs or ranking by confidence, is wrong by the calibration error: '90% sure' events"
        " that happen 60% of the time mislead every decision built on them."
    )
    example = (
        "A boosted model's predictions cluster at 0.02 and 0.98, but among rows scored 0.98 "
        "only 75% are positive; or a model trained on oversampled data predicts 40% risk for "
        "a 5% event."
    )
    fixes = (
        "Calibrate on held-out data: `CalibratedClassifierCV(model, method='isotonic', cv=5)` "
        "(or `method='sigmoid'` for small data), or `FrozenEstimator` + a calibration split.",
        "If training used resampling or class weights, map the probabilities back to the "
        "true prevalence, or calibrate afterwards; re-tune the decision threshold after "
        "calibrating.",
        "Reduce overconfidence at the source: regularise (fewer/shallower trees, larger "
        "`min_samples_leaf`, early stopping) and check the reliability diagram "
        "(`CalibrationDisplay.from_estimator`).",
        "Judge probabilities with proper scores (Brier score, log loss) alongside accuracy.",
    )
    severity_policy = (
        "ECE on test less its noise level (the 90th percentile ECE of a perfectly calibrated model with the same confidences on as many rows, simulated; 1/sqrt(n_test) when not measured): 0.05 -> 0.15, 0.1 -> 0.4, 0.15 ->"
        " 0.55, 0.25 -> 0.7, 0.4 -> 0.85. Only with predicted probabilities. Deepchecks "
        "Calibration Score corroborates at our score when its worst class's Brier skill (1 - "
        "Brier / p(1-p)) is under 0.5; without our ECE, a skill below 0 (worse than "
        "predicting the class shares) gives 0.25 at -0.2 up to 0.4."
    )
    explains = ("decision_threshold", "weak_segment")
    checks = ("Calibration Score",)

    def _own(self, artifact) -> dict | None:
        ece = artifact.performance.calibration_error
        if ece is None or artifact.task == "regression":
            return None
        n_test = artifact.dataset.test.n_rows
        noise = artifact.performance.calibration_noise
        noise = ece_noise(n_test) if noise is None else noise
        return {"ece": ece, "score": interp(ece - noise, ECE_SCORE), "n_test": n_test,
                "noise": noise}

    def detect_model(self, artifact):
        own = self._own(artifact)
        if own is None or own["score"] <= 0:
            return
        yield self.signal(
            "model",
            score=own["score"],
            confidence=0.85 if own["n_test"] >= 200 else 0.65,
            detail=(
                f"expected calibration error {own['ece']:.3f} on {own['n_test']} test rows "
                "(predicted probability vs observed frequency, 10 bins); a calibrated model "
                f"with the same confidences reaches {own['noise']:.3f} by chance"
            ),
            value=own["ece"],
            ece=own["ece"],
        )

    def detect_deepchecks(self, artifact):
        check = artifact.check("Calibration Score")
        if (
            check is None
            or check.outcome in ("errored", "skipped")
            or artifact.task == "regression"
        ):
            return
        found = brier_skill(artifact, check)
        if found is None:
            return
        brier, skill = found
        own = self._own(artifact)
        if own is not None:
            # the Brier score mixes calibration with discrimination: it only corroborates
            if own["score"] > 0 and skill < 0.5:
                yield self.check_signal(
                    check, score=own["score"], confidence=0.45, brier=brier, skill=skill
                )
            return
        if skill < 0:
            yield self.check_signal(
                check,
                score=interp(-skill, NEGATIVE_SKILL_SCORE),
                confidence=0.4,
                brier=brier,
                skill=skill,
            )

    def title(self, signals, artifact):
        ece = self.fact(signals, "ece")
        if ece is not None:
            return (
                f"Predicted probabilities are off by {ece:.0%} on average "
                f"(expected calibration error {ece:.2f})"
            )
        brier = self.fact(signals, "brier")
        if brier is not None:
            return f"Probabilities score worse than the class shares alone (Brier {brier:.2f})"
        return self.name

    def explanation(self, signals, artifact):
        return (
            "When the model says '80% likely', the event should happen about 80% of the time. "
            "Here the stated probabilities and the observed frequencies differ clearly, so any "
            "decision that uses the probabilities (a risk cut-off, an expected cost, a ranking "
            "by confidence) is systematically off. Typical causes are overconfident models "
            "(deep trees, many boosting rounds), training on resampled or re-weighted data, "
            "and a shift between training and test data."
        )
