"""degenerate_predictions: one class or one value predicted for (almost) everything."""

from __future__ import annotations

import math

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, entropy, interp, pct
from deepfix_agents.rules._ladder import at_chance
from deepfix_agents.rules._spread import reachable_r2
from deepfix_agents.rules.underfitting import signal_is_learnable, weak_model

#: share of the most predicted class, beyond its true share on test -> score
EXCESS_SCORE = ((0.05, 0.0), (0.1, 0.4), (0.2, 0.7), (0.3, 0.9))
#: how dominant the most predicted class is -> factor (a 51/49 split is not a collapse)
DOMINANCE_FACTOR = ((0.8, 0.0), (0.9, 0.6), (0.97, 1.0))
SPREAD_SCORE = ((0.02, 0.9), (0.1, 0.6), (0.25, 0.3), (0.4, 0.0))
#: the share of the training labels' entropy that the model's probabilities explain on its
#: own training rows (1 - log loss / entropy of the class shares, McFadden's R2) below
#: which they are the class shares restated for every row: a flat probability output
FLAT_INFORMATION = 0.005
#: a flat probability output whose decisions still beat shuffled labels
FLAT_PROBABILITIES = 0.7
#: the decisions beat shuffled labels by this many noise units (the chance measurement's)
DECISION_NOISE_UNITS = 2.0


def flat_probabilities(artifact) -> dict | None:
    """The model's probabilities are the same for every row (the training class shares,
    or uniform) while its decisions still carry the signal: on its own training rows the
    log loss is within ``FLAT_INFORMATION`` of the class shares' entropy (what always
    stating the shares scores), and its test decisions beat shuffled labels by
    ``DECISION_NOISE_UNITS`` noise units (the ``chance_level`` measurement). A lack of
    signal cannot do that (its decisions would be at chance too); a setting in the wrong
    units that squashes every posterior to the prior (a smoothing or a penalty a million
    times too large) does: the arg-max survives on differences in the sixth decimal, and
    every stated probability is the class share. None otherwise (no training log loss,
    no chance measurement)."""
    dataset = artifact.dataset
    if artifact.task == "regression" or dataset.train is None:
        return None
    log_loss = artifact.performance.scores.get("train", {}).get("log_loss")
    shares = dataset.train.label_distribution
    floor = entropy(shares.values()) if shares else 0.0
    if log_loss is None or len(shares) < 2 or floor <= 0:
        return None
    explained = 1.0 - log_loss / floor
    if abs(explained) > FLAT_INFORMATION:
        return None
    measured = artifact.intervention("chance_level")
    if measured is None or measured.change is None or not measured.noise:
        return None
    if measured.change <= DECISION_NOISE_UNITS * measured.noise:
        return None
    return {"explained": explained, "log_loss": log_loss, "entropy": floor,
            "decisions": measured.score_after, "chance": measured.score_before,
            "metric": measured.metric}


def one_class_collapse(artifact) -> tuple[str, float, float, float] | None:
    """(label, its share of the test predictions, its share of the test labels, score)
    for a classifier's most predicted class: the score is above 0 when that class takes
    a dominant share of the predictions beyond its true share (a collapse onto one
    class). None without both distributions."""
    predicted = artifact.performance.prediction_distribution
    truth = artifact.dataset.test.label_distribution if artifact.dataset.test else None
    if not predicted or not truth:
        return None
    label, share = max(predicted.items(), key=lambda kv: (kv[1], kv[0]))
    true_share = truth.get(label, 0.0)
    score = interp(share - true_share, EXCESS_SCORE) * interp(share, DOMINANCE_FACTOR)
    if share >= 0.99 and max(truth.values()) < 0.95:
        score = max(score, 0.8)
    return label, share, true_share, score


def collapsed_on_training_rows(artifact) -> bool:
    """Whether the model's outputs are collapsed on its own training rows too, read the
    way ``degenerate_predictions`` reads the test split: regression predictions whose
    spread on the training rows is under ``SPREAD_SCORE``'s zero point (0.4) of what
    the best measured R2 lets an optimal predictor spread there (sqrt(R2) of the
    training target's spread); a classifier predicting one class for at least 97% of
    its training rows (``DOMINANCE_FACTOR``'s full point) while that class holds under
    95% of their labels. A shift between the splits explains only what differs
    between them: a collapse already present where nothing moved is no drift's
    symptom. False when the training split's statistics are missing."""
    dataset, performance = artifact.dataset, artifact.performance
    if dataset.train is None:
        return False
    if artifact.task == "regression":
        train = (performance.prediction_stats or {}).get("train") or {}
        label_std = (dataset.train.label_stats or {}).get("std")
        spread = train.get("std")
        reachable = reachable_r2(artifact)
        if spread is None or not label_std or label_std <= 0 or reachable is None:
            return False
        expected = math.sqrt(max(reachable, 0.0))
        return expected > 0 and spread / label_std < SPREAD_SCORE[-1][0] * expected
    predicted = performance.train_prediction_distribution
    truth = dataset.train.label_distribution
    if not predicted or not truth:
        return False
    label, share = max(predicted.items(), key=lambda kv: (kv[1], kv[0]))
    return share >= DOMINANCE_FACTOR[-1][0] and truth.get(label, 0.0) < 0.95


@register_rule
class DegeneratePredictions(Rule):
    id = "degenerate_predictions"
    name = "The model predicts (almost) the same output for every row"
    detects = (
        "Predictions collapsed onto one class (classification) or onto a narrow band of "
        "values (regression), far from the variety of the true labels."
    )
    why = (
        "A model that always answers the same thing has learned nothing usable; whatever "
        "its headline score, its predictions carry no information about the input."
    )
    example = (
        "A pipeline step zeroes every feature, and the classifier predicts 'no' for 100% of "
        "rows although 40% of labels are 'yes'."
    )
    fixes = (
        "Inspect the inputs the model receives at inference: print `model[:-1].transform(X)` "
        "stats, check for all-zero/NaN/constant columns and for a missing scaler or encoder.",
        "Check that training converged (e.g. `max_iter`, learning rate) and is not over-"
        "regularised (`C`, `alpha`), and compare with a `DummyClassifier` baseline.",
        "If one class dominates the labels, use class weights or resampling and judge with "
        "per-class recall.",
    )
    severity_policy = (
        "Classification: the share of the most predicted class minus its true share on test "
        "(+0.1 -> 0.4, +0.2 -> 0.7, +0.3 -> 0.9) times its dominance (share 0.8 -> 0, 0.9 -> "
        "0.6, 0.97 -> 1), and at least 0.8 when one class takes >= 99% "
        "of predictions while the true labels are varied. 0.7 when the probabilities are flat "
        "(on the training rows the log loss is within 0.5% of the class shares' entropy) while "
        "the test decisions beat shuffled labels by 2 noise units: every row is stated the "
        "class shares. Regression: std(pred)/std(y) on test, "
        "divided by sqrt(best R2 measured: the model's on test, the ladder's in cross-validation "
        "or on test; the spread of a least-squares predictor with that R2): 0.02 -> 0.9, "
        "0.1 -> 0.6, 0.25 -> 0.3; nothing when no R2 above 0 was measured."
    )
    explains = ("poor_calibration", "underfitting")

    def explains_for(self, artifact):
        """A model at chance whose labels look unrelated to every feature (no simple
        baseline does better either) collapses because there is nothing to learn: the
        no-signal finding (underfitting's) is then the cause, and this its symptom. So is
        a model whose answers still vary while simple baselines clearly learn the labels
        (:func:`~deepfix_agents.rules.underfitting.weak_model`): a model too weak for the
        data, not one broken into a constant output."""
        measured = at_chance(artifact)
        if measured is not None and (
            signal_is_learnable(artifact, measured) is False or weak_model(artifact)
        ):
            return tuple(c for c in self.explains if c != "underfitting")
        return self.explains

    def detect_model(self, artifact):
        performance = artifact.performance
        if artifact.task == "regression":
            ratio = performance.prediction_spread_ratio
            if ratio is None:
                return
            reachable = reachable_r2(artifact)
            expected = 1.0 if reachable is None else math.sqrt(max(reachable, 0.0))
            if expected <= 0:
                # nothing reaches above the training mean: a constant answer is the
                # best there is, a narrow spread no collapse
                return
            score = interp(ratio / expected, SPREAD_SCORE)
            if score > 0:
                detail = f"the spread of predictions is {ratio:.2f}x the spread of the target"
                if reachable is not None and expected < 1.0:
                    detail += (
                        f" (the best R2 measured here, {reachable:.2f}, gives an optimal "
                        f"predictor {expected:.2f}x)"
                    )
                yield self.signal(
                    "model",
                    score=score,
                    confidence=0.85,
                    detail=detail,
                    value=ratio,
                    spread=ratio,
                )
            return
        flat = flat_probabilities(artifact)
        if flat is not None:
            yield self.signal(
                "model",
                score=FLAT_PROBABILITIES,
                confidence=0.9,
                detail=(
                    f"on its training rows the model's log loss is {flat['log_loss']:.4f}, "
                    f"the entropy of the class shares ({flat['entropy']:.4f}): its "
                    f"probabilities explain {pct(max(flat['explained'], 0.0))} of the labels' "
                    "uncertainty, the class shares stated for every row, while its decisions "
                    f"score {flat['decisions']:.3f} {flat['metric']} (shuffled labels "
                    f"{flat['chance']:.3f})"
                ),
                value=flat["explained"],
                flat=True,
                explained=flat["explained"],
            )
        collapse = one_class_collapse(artifact)
        if collapse is None:
            return
        label, share, true_share, score = collapse
        if score <= 0:
            return
        yield self.signal(
            "model",
            score=score,
            confidence=0.9,
            detail=(
                f"{pct(share)} of test predictions are {label!r} while {pct(true_share)} of test "
                "labels are"
            ),
            value=share,
            label=label,
            share=share,
            true_share=true_share,
        )

    def title(self, signals, artifact):
        label, share = self.fact(signals, "label"), self.fact(signals, "share")
        if label is not None:
            return f"The model predicts {label!r} for {pct(share)} of test rows"
        if self.fact(signals, "flat"):
            return ("The model states the same probabilities for every row: they carry "
                    "none of the signal its decisions have")
        spread = self.fact(signals, "spread")
        if spread is not None:
            return f"Predictions barely vary: their spread is {spread:.2f}x that of the target"
        return self.name

    def explanation(self, signals, artifact):
        if self.fact(signals, "flat") and self.fact(signals, "label") is None:
            return (
                "The model states the same probabilities (the class shares) for every row: "
                "its decisions still follow the inputs, on differences in far decimals, but "
                "the probabilities say nothing about the row, so any threshold, risk score or "
                "confidence read from them is meaningless, and its confidence is as far off "
                "as its accuracy is above chance. Typical cause: a smoothing or regularisation setting in the "
                "wrong units (var_smoothing, C, alpha a million times too large) that squashes "
                "every posterior to the prior."
            )
        return (
            "The model gives (nearly) the same answer whatever the input, so its predictions "
            "carry almost no information. Typical causes: inputs transformed differently than in "
            "training (a missing scaler or encoder), a training run that did not converge or is "
            "over-regularised, or a rare class the model learned to ignore."
        )
