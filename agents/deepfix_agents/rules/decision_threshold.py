"""decision_threshold: the default 0.5 threshold does not suit the class prevalence.

Binary classifiers with probabilities: the F1 at the best threshold on test versus the
F1 at 0.5. The gain counts only when the best threshold is clearly away from 0.5, when
it exceeds what picking a threshold on the same rows gains by chance, and when the
model has real ranking skill (a collapsed model gains F1 by predicting everything
positive; that is not a threshold problem).
"""

from __future__ import annotations

import math

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, interp, pct

#: F1 gain from moving the threshold (beyond selection noise) -> score
GAIN_SCORE = ((0.02, 0.0), (0.05, 0.25), (0.08, 0.4), (0.15, 0.6), (0.3, 0.8))
#: distance of the best threshold from 0.5 -> multiplier
DISTANCE_FACTOR = ((0.05, 0.0), (0.15, 1.0))
#: F1 at the best threshold above the trivial all-positive F1 -> multiplier
SKILL_FACTOR = ((0.02, 0.0), (0.1, 1.0))
#: minority share -> multiplier. Near balance 0.5 is close to right for calibrated
#: probabilities and a lower F1-optimal threshold is a preference (F1 over accuracy);
#: the rarer the class, the more the default threshold misses it ("threshold at 0.5
#: when prevalence is 5%" is the classic bug)
PREVALENCE_FACTOR = ((0.1, 1.0), (0.2, 0.8), (0.3, 0.55), (0.5, 0.4))


def selection_noise(n_test: int) -> float:
    """What choosing the best of 99 thresholds on the same rows gains by chance for a
    calibrated model on balanced classes (simulated 95th percentile: 0.064 at 143 rows,
    0.029 at 1000), less what a well-placed default keeps: 0.5/sqrt(n)."""
    return 0.5 / math.sqrt(max(n_test, 1))


def positive_share(artifact) -> float | None:
    """Test share of the class the threshold analysis is about: the minority class
    (``mlflow_deepfix.testing.performance.threshold_analysis``)."""
    shares = artifact.dataset.test.label_distribution
    if len(shares) != 2:
        return None
    return min(shares.values())


@register_rule
class DecisionThreshold(Rule):
    id = "decision_threshold"
    name = "The default decision threshold does not fit the data"
    detects = (
        "A binary classifier whose probabilities rank the classes well, but whose default 0.5"
        " cut-off turns them into much worse decisions than another threshold would; typical "
        "when the positive class is rare."
    )
    why = (
        "With a rare positive class, calibrated probabilities seldom pass 0.5, so the model "
        "misses most positives although its scores separate them well. The fix is cheap "
        "(choose the threshold), but left alone recall and F1 suffer."
    )
    example = (
        "8% of customers churn; the model's churn probabilities are good (AUC 0.88) but "
        "rarely exceed 0.5, so F1 is 0.31 at 0.5 and 0.55 at a threshold of 0.22."
    )
    fixes = (
        "Choose the threshold on validation data, never on the test set: "
        "`TunedThresholdClassifierCV(model, scoring='f1')` (scikit-learn >= 1.5), or pick it "
        "from `precision_recall_curve` on a validation split and apply "
        "`(model.predict_proba(X)[:, 1] >= t)`.",
        "Pick the threshold from the costs of errors (missed positive vs false alarm), not "
        "only from F1, and record it with the model (e.g. as a model parameter or tag).",
        "If the rarity of the class is the root problem, also consider class weights "
        "(`class_weight='balanced'`) and judge with PR-AUC / per-class recall.",
    )
    severity_policy = (
        "Gain = F1 of the minority class at the best threshold - at 0.5 on test, less a "
        "selection-noise margin 0.5/sqrt(n_test): 0.05 -> 0.25, 0.08 -> 0.4, 0.15 -> 0.6, 0.3"
        " -> 0.8. Multiplied by the distance of the best threshold from 0.5 (0.05 -> x0, 0.15"
        " -> x1) and by the model's skill (F1 at best above the all-positive F1 2p/(1+p): "
        "0.02 -> x0, 0.1 -> x1) and by the minority share (<= 10% -> x1, 20% -> x0.8, 30% -> "
        "x0.55, 50% -> x0.4). Confidence is higher when the minority class is under 30% of "
        "test. When the F1 at the best threshold is 0.15 or more above flagging every row "
        "and this score is a severity band above class_imbalance's share-based score (and "
        "the test split holds 10+ rows of the rare class), the "
        "threshold is the cause: class_imbalance does not fold it in, nor does a "
        "no-better-than-chance finding (whose baselines are cut at 0.5 as well)."
    )
    explains = ("degenerate_predictions", "underfitting")


    def detect_model(self, artifact):
        performance = artifact.performance
        best, default, threshold = (
            performance.f1_at_best,
            performance.f1_at_default,
            performance.best_threshold,
        )
        if artifact.task != "binary_classification" or None in (best, default, threshold):
            return
        n_test = artifact.dataset.test.n_rows
        gain = best - default
        score = interp(gain - selection_noise(n_test), GAIN_SCORE)
        score *= interp(abs(threshold - 0.5), DISTANCE_FACTOR)
        p = positive_share(artifact)
        if p is not None:
            score *= interp(best - 2 * p / (1 + p), SKILL_FACTOR)
            score *= interp(p, PREVALENCE_FACTOR)
        if score <= 0:
            return
        rare = p is not None and min(p, 1 - p) < 0.3
        detail = f"F1 is {default:.3f} at threshold 0.5 but {best:.3f} at {threshold:.2f} on test"
        if p is not None:
            detail += f"; the positive class is {pct(p)} of test rows"
        yield self.signal(
            "model",
            score=score,
            confidence=0.8 if rare else 0.6,
            detail=detail,
            value=gain,
            f1_default=default,
            f1_best=best,
            threshold=threshold,
            positive_share=p,
        )

    def title(self, signals, artifact):
        default, best = self.fact(signals, "f1_default"), self.fact(signals, "f1_best")
        if default is None:
            return self.name
        return (
            f"F1 rises from {default:.2f} to {best:.2f} with a threshold of "
            f"{self.fact(signals, 'threshold'):.2f} instead of 0.5"
        )

    def explanation(self, signals, artifact):
        p = self.fact(signals, "positive_share")
        prevalence = f" (the positive class is {pct(p)} of the data)" if p is not None else ""
        return (
            "The model's probabilities separate the classes reasonably well, but turning them "
            "into yes/no answers at the default cut-off of 0.5 throws much of that away"
            f"{prevalence}. When one class is rare, its probabilities rarely pass 0.5, so most "
            "of it is missed. Choosing the cut-off on validation data recovers the lost "
            "performance without retraining."
        )
