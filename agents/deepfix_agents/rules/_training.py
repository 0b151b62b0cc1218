"""Shared reading of training curves for the rules that use the ``training`` source.

Curves are read as they were logged, per epoch or per step. Per-step losses are noisy
(one mini-batch each), so a curve with more than ``MAX_BINS`` points is first averaged
into ``MAX_BINS`` consecutive bins: the shape (falling, flat, rising) survives, the
batch noise does not.

**Harm** is what turns a curve pattern into a severity (a flat curve is harmless when
the model learnt everything in its first epoch). It is measured on the evaluated model
itself when possible: its balanced accuracy on the test data against chance
(``1 / n_classes``), or R2 for regression; else on the last logged validation (then
training) accuracy; else, for classifiers, on the last logged loss against the
cross-entropy of a uniform guess, ``ln(n_classes)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlflow_deepfix.schemas import ArtifactData, MetricHistory

MAX_BINS = 20
#: within this share of the distance from chance to perfect, a model is "at chance"
CHANCE_MARGIN = 0.15
#: a cross-entropy loss above this share of ln(n_classes) is about a uniform guess
UNIFORM_LOSS_SHARE = 0.8


def smoothed(metric: MetricHistory) -> list[float]:
    """The finite values of ``metric``, averaged into at most ``MAX_BINS`` bins."""
    values = metric.finite
    if len(values) <= MAX_BINS:
        return values
    edges = [round(i * len(values) / MAX_BINS) for i in range(MAX_BINS + 1)]
    return [sum(values[a:b]) / (b - a) for a, b in zip(edges, edges[1:]) if b > a]


@dataclass(frozen=True)
class Curve:
    """The numbers the rules read from one (smoothed) loss curve."""

    first: float
    best: float
    last: float
    highest_after_start: float
    best_index: int
    n: int
    #: relative improvement from the first value to the best one
    progress: float
    #: the curve never changed at all (nothing is being trained)
    constant: bool
    #: share of steps (after the first) on which the loss rose by more than 1%
    rises: float

    @classmethod
    def of(cls, metric: MetricHistory) -> Curve | None:
        values = smoothed(metric)
        if len(values) < 3:
            return None
        first, best = values[0], min(values)
        scale = max(abs(first), 1e-12)
        return cls(
            first=first,
            best=best,
            last=values[-1],
            highest_after_start=max(values[1:]),
            best_index=values.index(best),
            n=len(values),
            progress=(first - best) / scale,
            constant=max(values) - best <= 1e-6 * scale,
            rises=sum(b > a + 0.01 * abs(a) for a, b in zip(values[1:], values[2:]))
            / max(len(values) - 2, 1),
        )


def n_classes(artifact: ArtifactData) -> int | None:
    if artifact.task == "regression":
        return None
    labels = set(artifact.dataset.test.label_distribution)
    if artifact.dataset.train is not None:
        labels |= set(artifact.dataset.train.label_distribution)
    return len(labels) if len(labels) >= 2 else None


def uniform_loss(artifact: ArtifactData) -> float | None:
    """Cross-entropy of a uniform guess over the classes, ``ln(n_classes)``."""
    k = n_classes(artifact)
    return math.log(k) if k else None


def at_chance(artifact: ArtifactData) -> tuple[bool | None, str]:
    """Whether the model is no better than chance (None: cannot tell), and how we know."""
    k = n_classes(artifact)
    test = artifact.performance.scores.get("test", {})
    if k and "balanced_accuracy" in test:
        chance = 1.0 / k
        value = test["balanced_accuracy"]
        verdict = value <= chance + CHANCE_MARGIN * (1.0 - chance)
        return verdict, f"balanced accuracy {value:.2f} on test, chance is {chance:.2f}"
    if artifact.task == "regression" and "r2" in test:
        return test["r2"] <= CHANCE_MARGIN, f"R2 {test['r2']:.2f} on test"
    history = artifact.training
    if history is not None and k:
        chance = 1.0 / k
        for role, name in (("val_score", "validation"), ("train_score", "training")):
            metric = history.metric(role)
            if metric is not None and metric.finite and metric.finite[-1] <= 1.0:
                value = metric.finite[-1]
                verdict = value <= chance + CHANCE_MARGIN * (1.0 - chance)
                return verdict, f"last {name} {metric.key} {value:.2f}, chance is {chance:.2f}"
        loss = history.metric("train_loss")
        if loss is not None and loss.finite:
            value, uniform = loss.finite[-1], math.log(k)
            return (
                value >= UNIFORM_LOSS_SHARE * uniform,
                f"last {loss.key} {value:.3f}, a uniform guess scores {uniform:.3f}",
            )
    return None, "the model's quality could not be measured"


def stuck(curve: Curve, artifact: ArtifactData) -> bool:
    """The loss never got meaningfully better than where training started: for a
    classifier it never went below ``UNIFORM_LOSS_SHARE`` x the loss of a uniform guess;
    otherwise it never improved by 10% of its first value."""
    uniform = uniform_loss(artifact)
    if uniform is not None:
        return curve.best >= UNIFORM_LOSS_SHARE * uniform
    return curve.progress < 0.1


def diverged_from_start(curve: Curve, artifact: ArtifactData) -> str | None:
    """Why a stuck loss curve reads as divergence rather than a stall, or None: it rose
    above its start; for a classifier, it stays above the loss of a uniform guess; it
    started at 1.5x or more of its level (blew up in the first epoch, then stuck); it
    oscillates (rises on at least 30% of steps)."""
    if not stuck(curve, artifact):
        return None
    uniform = uniform_loss(artifact)
    if curve.highest_after_start >= 1.1 * curve.first:
        return f"rose from {curve.first:.3g} to {curve.highest_after_start:.3g}"
    if uniform is not None and curve.best > 1.03 * uniform:
        return f"never went below {curve.best:.3g}, worse than a uniform guess ({uniform:.3g})"
    if curve.first >= 1.5 * curve.best:
        return f"started at {curve.first:.3g}, then stuck at {curve.best:.3g} or above"
    if curve.rises >= 0.3:
        return f"oscillates (rises on {curve.rises:.0%} of the logged points)"
    return None


def lr_text(artifact: ArtifactData) -> str:
    history = artifact.training
    if history is None or history.learning_rate is None:
        return ""
    optimizer = f" ({history.optimizer})" if history.optimizer else ""
    return f"; learning rate {history.learning_rate:g}{optimizer}"
