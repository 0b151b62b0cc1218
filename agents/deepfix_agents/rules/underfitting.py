"""underfitting: the model is no better than a simple or trivial baseline."""

from __future__ import annotations

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, interp

#: model's margin over the dummy baseline, relative to the best baseline's margin -> score
SHORTFALL_SCORE = ((0.35, 0.0), (0.5, 0.3), (0.7, 0.5), (0.9, 0.7), (1.0, 0.85))


def baseline(artifact, prefix: str):
    return next((b for b in artifact.baselines if b.name.startswith(prefix)), None)


def best_baseline(artifact):
    scored = [b for b in artifact.baselines if b.test_score is not None and not b.name.startswith("dummy")]
    return max(scored, key=lambda b: (b.test_score, b.name), default=None)


@register_rule
class Underfitting(Rule):
    id = "underfitting"
    name = "The model does no better than simple baselines"
    detects = (
        "A model whose test score is close to a trivial (dummy) baseline and well below what "
        "a small linear or tree model reaches on the same data, on train as well as on test."
    )
    why = (
        "The model has not captured the signal that is demonstrably in the data: too simple, "
        "too regularised, trained too briefly, or fed features it cannot use."
    )
    example = (
        "`LogisticRegression(C=1e-5)` on breast cancer scores like a majority-class guess while "
        "a depth-4 decision tree reaches 0.93 F1."
    )
    fixes = (
        "Reduce regularisation (larger `C`, smaller `alpha`), allow more capacity (deeper trees, "
        "more estimators) or train longer (`max_iter`, epochs) until train score rises.",
        "Scale numeric features and encode categoricals inside a `Pipeline` so the model can "
        "use them (`StandardScaler`, `OneHotEncoder`).",
        "Climb the baseline ladder: make sure the model beats `DummyClassifier`/`DummyRegressor`, "
        "then a linear model, then a small tree, before tuning anything else.",
    )
    severity_policy = (
        "Shortfall = 1 - (model - dummy) / (best baseline - dummy) on test, using the task's main "
        "metric: 0.5 -> 0.3, 0.7 -> 0.5, 0.9 -> 0.7, 1.0 (no better than dummy) -> 0.85. Only "
        "when the model's train score is not far above its test score (that would be overfitting)."
    )
    checks = ("Simple Model Comparison",)

    def detect_baseline(self, artifact):
        performance = artifact.performance
        dummy, best = baseline(artifact, "dummy"), best_baseline(artifact)
        model_score = performance.test_score
        if None in (model_score, dummy, best) or dummy.test_score is None:
            return
        headroom = best.test_score - dummy.test_score
        if headroom < 0.1:
            return
        train_score = performance.train_score
        if train_score is not None and train_score - model_score > 0.15:
            return
        shortfall = 1.0 - (model_score - dummy.test_score) / headroom
        score = interp(shortfall, SHORTFALL_SCORE)
        if score <= 0:
            return
        metric = performance.metric
        yield self.signal(
            "baseline",
            score=score,
            confidence=0.8,
            detail=(
                f"model {metric} {model_score:.3f} on test vs dummy {dummy.test_score:.3f} and "
                f"{best.name} baseline {best.test_score:.3f}"
            ),
            value=model_score,
            model_score=model_score,
            best=best.name,
            best_score=best.test_score,
            metric=metric,
        )

    def detect_deepchecks(self, artifact):
        if not any(s for s in self.detect_baseline(artifact)):
            return
        yield from super().detect_deepchecks(artifact)

    def title(self, signals, artifact):
        score, best = self.fact(signals, "model_score"), self.fact(signals, "best")
        if score is None:
            return self.name
        return (
            f"The model ({self.fact(signals, 'metric')} {score:.2f}) is beaten by a simple "
            f"{best} baseline ({self.fact(signals, 'best_score'):.2f})"
        )

    def explanation(self, signals, artifact):
        return (
            "Simple reference models trained on a sample of the same training data do clearly "
            "better than your model, and your model is weak on the training data too. So the "
            "signal is there, but the model does not capture it: it is too constrained, not "
            "trained long enough, or receives features in a form it cannot use."
        )
