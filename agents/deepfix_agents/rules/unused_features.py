"""unused_features: features that the model ignores.

Cost and complexity more than accuracy: ignored features still have to be collected,
cleaned and served, widen the attack surface for drift and leaks, and slow training.
So the severity stays low unless most features are truly ignored. Redundant but
informative features (correlated measurements) are legitimately left unused by
boosting or L1 models, which is why the share alone never goes above low.

Evidence: the model's native importances (a feature counts as unused below a fifth of
the mean importance, Deepchecks' own cut-off, and as ignored below 2% of it) and
Deepchecks' Unused Features check.
"""

from __future__ import annotations

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, interp, pct

#: share of features below 0.2 x mean importance -> score (low by design)
SHARE_SCORE = ((0.25, 0.0), (0.4, 0.2), (0.6, 0.28), (0.8, 0.35), (1.0, 0.38))
#: share of features with essentially no importance (< 0.02 x mean) -> score, once most are ignored
IGNORED_SCORE = ((0.75, 0.4), (0.9, 0.5))
UNUSED_RATIO = 0.2
IGNORED_RATIO = 0.02
#: label association (train) under which an unused feature is called noise
NOISE_ASSOCIATION = 0.1
#: Deepchecks: number of high-variance unused features -> score
CHECK_COUNT_SCORE = ((5, 0.2), (15, 0.28), (30, 0.35))


def unused(artifact) -> dict | None:
    importances = artifact.model.feature_importances
    n = len(importances)
    if n < 3:
        return None
    mean = 1.0 / n
    weak = sorted(f for f, v in importances.items() if v < UNUSED_RATIO * mean)
    ignored = [f for f in weak if importances[f] < IGNORED_RATIO * mean]
    train = artifact.dataset.train
    noise = []
    if train is not None:
        for name in weak:
            column = train.column(name)
            association = None if column is None else column.target_association
            if association is not None and association < NOISE_ASSOCIATION:
                noise.append(name)
    return {
        "n_features": n,
        "n_unused": len(weak),
        "n_ignored": len(ignored),
        "n_noise": len(noise),
        "share": len(weak) / n,
        "ignored_share": len(ignored) / n,
        "examples": (noise or weak)[:5],
    }


def _coef_based(artifact) -> bool:
    """|coef| importances of a linear/SVM model on unscaled inputs depend on units."""
    model = artifact.model
    cls = model.model_class or ""
    return (".linear_model." in cls or ".svm." in cls) and not model.has_preprocessing


@register_rule
class UnusedFeatures(Rule):
    id = "unused_features"
    name = "The model ignores many of its features"
    detects = (
        "Input features that receive (almost) no importance in the fitted model: it makes its"
        " predictions without them."
    )
    why = (
        "Unused features cost without helping: they must be collected, cleaned and served, "
        "they slow training, can carry drift or leakage into the system later, and noise "
        "features give flexible models more chances to overfit. They also hint that useful "
        "signal may be encoded in a form the model cannot use."
    )
    example = (
        "A churn model gets 60 columns, 45 of them random ids, free-text codes and constant "
        "flags; the fitted model puts 98% of its importance on 12 features."
    )
    fixes = (
        "Drop features without importance and without a relation to the label, then retrain "
        "and confirm the validation score is unchanged: `SelectFromModel(model, "
        "threshold='0.2*mean')` or `RFECV(model, cv=5)` inside a `Pipeline`.",
        "Confirm with permutation importance on validation data "
        "(`sklearn.inspection.permutation_importance`), which is not biased towards "
        "high-cardinality features like impurity importance.",
        "For features you expected to matter, check their encoding (a categorical stored as "
        "text, a date not turned into useful parts, a numeric column parsed as string).",
    )
    severity_policy = (
        "Low by design. Share of features below 0.2x the mean native importance: 40% -> 0.2, "
        "60% -> 0.28, 80% -> 0.35, 100% -> 0.38. Medium only when most features are truly "
        "ignored (below 0.02x the mean) and at least 10 of them: 75% -> 0.4, 90% -> 0.5. "
        "Deepchecks Unused Features (high-variance unused features) 5 -> 0.2, 15 -> 0.28, 30 "
        "-> 0.35, capped by the share of unused features it reports and by our own score "
        "(+0.05 each). Confidence is higher when the unused features also have no association"
        " with the label (noise) and lower for coefficient importances of unscaled linear "
        "models."
    )
    checks = ("Unused Features",)

    def detect_model(self, artifact):
        found = unused(artifact)
        if found is None:
            return
        score = interp(found["share"], SHARE_SCORE)
        if found["n_ignored"] >= 10:
            score = max(
                score,
                interp(found["ignored_share"], IGNORED_SCORE)
                if found["ignored_share"] >= 0.75
                else 0.0,
            )
        if score <= 0:
            return
        confidence = 0.75 if found["n_noise"] >= 0.5 * found["n_unused"] else 0.6
        if _coef_based(artifact):
            confidence = 0.4
        detail = (
            f"{found['n_unused']} of {found['n_features']} features get under "
            f"{UNUSED_RATIO:.0%} of the mean importance ({found['n_ignored']} get essentially none)"
        )
        if found["n_noise"]:
            detail += f"; {found['n_noise']} of them have no association with the label"
        yield self.signal(
            "model",
            score=score,
            confidence=confidence,
            detail=detail,
            value=found["share"],
            **found,
        )

    def detect_deepchecks(self, artifact):
        check = artifact.check("Unused Features")
        if check is None or check.outcome != "not_passed" or check.value is None:
            return
        count = float(check.value)
        score = interp(count, CHECK_COUNT_SCORE)
        values = check.values or {}
        total = sum(
            values.get(k, 0.0)
            for k in ("n_used", "n_unused_high_variance", "n_unused_low_variance")
        )
        if total >= 3:
            unused_share = 1.0 - values.get("n_used", 0.0) / total
            score = min(score, interp(unused_share, SHARE_SCORE) + 0.05)
        own = unused(artifact)
        if own is not None:
            score = min(score, interp(own["share"], SHARE_SCORE) + 0.05)
        if score >= 0.05:
            yield self.check_signal(check, score=score, confidence=0.55, check_count=int(count))

    def title(self, signals, artifact):
        n, total = self.fact(signals, "n_unused"), self.fact(signals, "n_features")
        if n is not None:
            return f"{n} of {total} features ({pct(n / total)}) are practically unused by the model"
        count = self.fact(signals, "check_count")
        if count is not None:
            return f"{count} high-variance features are practically unused by the model"
        return self.name

    def explanation(self, signals, artifact):
        examples = self.fact(signals, "examples") or []
        shown = f" (e.g. {', '.join(repr(e) for e in examples[:3])})" if examples else ""
        return (
            f"The model barely uses many of the features it is given{shown}. That rarely hurts "
            "accuracy directly, but every extra feature has to be collected and maintained, "
            "can bring drift or leakage later, and gives the model more noise to overfit. "
            "Remove features that neither the model nor the label care about; if you expected "
            "one of them to matter, check how it is encoded."
        )
