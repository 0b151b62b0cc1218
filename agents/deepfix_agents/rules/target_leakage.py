"""target_leakage: a feature that encodes the label."""

from __future__ import annotations

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, interp

#: association of one feature with the label -> impact score
#: (|2*AUC-1| for classes, |Spearman| for regression, NMI for categoricals). Strong real
#: features reach ~0.95 (e.g. tumour size on breast cancer), so only near-perfect
#: associations count.
ASSOCIATION_SCORE = ((0.97, 0.05), (0.98, 0.3), (0.99, 0.55), (0.997, 0.8), (1.0, 0.9))
PPS_SCORE = ((0.8, 0.1), (0.9, 0.4), (0.97, 0.7), (1.0, 0.85))


#: below this many training rows a single feature separating the classes is plausible by
#: chance, so the score is scaled down linearly (to half at 0 rows)
RELIABLE_ROWS = 1000
#: one-vs-rest associations overstate multiclass leakage: a real feature often isolates
#: one class perfectly (petal length and setosa), a leak predicts every class
MULTICLASS_FACTOR = 0.6


def _damping(artifact) -> float:
    train = artifact.dataset.train
    rows = train.n_rows if train is not None else 0
    factor = 0.5 + 0.5 * min(rows / RELIABLE_ROWS, 1.0)
    if artifact.task == "multiclass_classification":
        factor *= MULTICLASS_FACTOR
    return factor


def _leaky_columns(artifact, threshold: float = 0.97):
    train = artifact.dataset.train
    if train is None:
        return []
    features = set(artifact.dataset.feature_names)
    found = []
    for column in train.columns:
        if column.name not in features or column.monotonic:
            continue
        if column.target_association is not None and column.target_association >= threshold:
            found.append(column)
    return sorted(found, key=lambda c: (-(c.target_association or 0), c.name))


@register_rule
class TargetLeakage(Rule):
    id = "target_leakage"
    name = "A feature leaks the label"
    detects = (
        "A feature whose relation with the label is too strong to be real: it is derived "
        "from the label or recorded after the outcome."
    )
    why = (
        "At prediction time that information does not exist yet, so the model learns a "
        "shortcut: it scores near-perfectly in evaluation and fails in production."
    )
    example = (
        "A churn model uses `days_since_cancellation`, which is only filled in for customers "
        "who already churned."
    )
    fixes = (
        "Remove the leaking feature(s) and retrain; for each feature ask 'would I know this "
        "value at the moment the prediction is made?'.",
        "Build features only from data timestamped before the prediction time (point-in-time "
        "joins), and keep target-derived encodings inside the cross-validation folds "
        "(e.g. `TargetEncoder` in a `Pipeline`).",
        "Compare the score with and without the suspicious feature: a collapse from ~1.0 to a "
        "realistic score confirms the leak.",
    )
    severity_policy = (
        "Score from the strongest feature-label association on train (Somers' D = |2 AUC - 1| "
        "for classes, |Spearman| for regression, normalised mutual information for "
        "categoricals): 0.98 -> 0.3, 0.99 -> 0.55, 0.997 -> 0.8, 1.0 -> 0.9; Deepchecks' "
        "predictive power score (PPS) >= 0.9 corroborates; native importance concentrated on "
        "the same feature adds confidence. Scores are scaled by 0.5-1.0 with the training "
        "size (full at 1000 rows: small samples separate by chance) and by 0.6 for multiclass "
        "tasks (one-vs-rest associations overstate a feature that isolates one class)."
    )
    explains = ("unused_features",)
    checks = ("Feature Label Correlation", "Feature Label Correlation Change")

    def detect_dataset(self, artifact):
        damping = _damping(artifact)
        for column in _leaky_columns(artifact)[:3]:
            yield self.signal(
                "dataset",
                score=damping * interp(column.target_association, ASSOCIATION_SCORE),
                confidence=0.8,
                detail=(
                    f"feature {column.name!r} has association {column.target_association:.3f} "
                    "with the label on train"
                ),
                value=column.target_association,
                feature=column.name,
            )

    def detect_deepchecks(self, artifact):
        leaky = {c.name for c in _leaky_columns(artifact)}
        features = set(artifact.dataset.feature_names)
        ids = {
            c.name
            for c in (artifact.dataset.train.columns if artifact.dataset.train else [])
            if c.monotonic
        }
        for name in self.checks:
            check = artifact.check(name)
            if check is None or check.outcome != "not_passed":
                continue
            top = sorted(
                (
                    (f, v)
                    for f, v in check.values.items()
                    if f in features and f not in ids and v is not None
                ),
                key=lambda kv: (-kv[1], kv[0]),
            )
            if not top:
                continue
            feature, pps = top[0]
            if pps < 0.9 and feature not in leaky:
                continue
            yield self.check_signal(
                check,
                score=_damping(artifact) * interp(pps, PPS_SCORE),
                confidence=0.7,
                feature=feature,
            )

    def detect_model(self, artifact):
        importances = artifact.model.feature_importances
        leaky = [c.name for c in _leaky_columns(artifact)]
        for name in leaky[:1]:
            share = importances.get(name, 0.0)
            if share >= 0.5:
                yield self.signal(
                    "model",
                    score=0.3,
                    confidence=0.6,
                    detail=f"the model puts {share:.0%} of its importance on {name!r}",
                    value=share,
                    feature=name,
                )

    def title(self, signals, artifact):
        feature = self.fact(signals, "feature")
        if feature:
            return f"Feature {feature!r} is too predictive of the label to be real (likely leakage)"
        return self.name

    def explanation(self, signals, artifact):
        feature = self.fact(signals, "feature", "one feature")
        return (
            f"{feature!r} predicts the label almost perfectly on its own. Real-world signals are "
            "rarely that clean, so it most likely contains the answer: it was computed from the "
            "label or recorded after the outcome. The model leans on it, scores very well in "
            "evaluation, and will fail when that value is not available at prediction time."
        )
