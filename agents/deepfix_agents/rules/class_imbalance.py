"""class_imbalance: a rare class with no correction."""

from __future__ import annotations

import math

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, interp, pct
from deepfix_agents.rules._ladder import at_chance, training_rows_show_signal
from deepfix_agents.rules.decision_threshold import DecisionThreshold, positive_share
from deepfix_agents.scoring import severity_for
from mlflow_deepfix.schemas import severity_rank

#: share of the rarest class -> impact score (before correction and impact adjustments)
MINORITY_SCORE = ((0.01, 0.6), (0.03, 0.5), (0.05, 0.4), (0.1, 0.25), (0.2, 0.0))


def _minority(distribution: dict[str, float]) -> tuple[str, float] | None:
    if len(distribution) < 2:
        return None
    label, share = min(distribution.items(), key=lambda kv: (kv[1], kv[0]))
    return label, share


def binary_equivalent(share: float, n_classes: int) -> float:
    """The rarest class's share scaled to a two-class problem: ``share * k / 2``. With k
    balanced classes every class holds 1/k, so 9.7% of ten digits is as balanced as 48.5%
    of two classes, while 2% of three classes is as rare as 3% of two."""
    return share * max(n_classes, 2) / 2.0


def presence_score(artifact) -> float:
    """The score the rarity alone warrants (the rarest class's share scaled to two
    classes, halved when the model sets class weights), before any measured impact."""
    split = artifact.dataset.train or artifact.dataset.test
    found = _minority(split.label_distribution) if split is not None else None
    if artifact.task == "regression" or found is None:
        return 0.0
    score = interp(binary_equivalent(found[1], len(split.label_distribution)), MINORITY_SCORE)
    return score * 0.5 if _corrected(artifact) else score


def predicted_share(artifact, label: str, labels: dict[str, float]) -> float | None:
    """Share of test rows the model predicts as ``label``: 0 when the model never predicts
    it (the class is absent from the prediction distribution, whose keys match the
    labels'), None when unknown (no predictions, or predictions named unlike the labels,
    so absence says nothing)."""
    predicted = artifact.performance.prediction_distribution
    if not predicted:
        return None
    if label in predicted:
        return predicted[label]
    return 0.0 if set(predicted) & set(labels) else None


def rare_class_shortfall(artifact, label: str) -> tuple[float, float, float] | None:
    """(recall of the class ``label`` on test, the recall of the other classes' rows,
    the standard error of the rare class's recall): the harm a rare class suffers,
    measured. Two classes: exact, from accuracy and balanced accuracy (their mean
    recall) and the class's test share. More classes: the rare class's recall is
    bounded above by the share of rows predicted as it over its share of test rows (it
    cannot be right more often than it is predicted), and the rest's recall, given
    accuracy, bounded below accordingly: a measured shortfall, never an overstated
    one. None when the scores or shares are missing."""
    test = artifact.dataset.test
    if test is None or not test.label_distribution:
        return None
    scores = artifact.performance.scores.get("test", {})
    acc, bal = scores.get("accuracy"), scores.get("balanced_accuracy")
    share = test.label_distribution.get(label)
    if acc is None or share is None or not 0.0 < share < 1.0:
        return None
    n_rare = share * test.n_rows
    if n_rare < 1.0:
        return None
    if len(test.label_distribution) == 2:
        if bal is None or abs(2.0 * share - 1.0) < 1e-6:
            return None
        recall = (acc - 2.0 * bal * (1.0 - share)) / (2.0 * share - 1.0)
    else:
        predicted = predicted_share(artifact, label, test.label_distribution)
        if predicted is None:
            return None
        recall = predicted / share
    recall = min(max(recall, 0.0), 1.0)
    rest = min(max((acc - share * recall) / (1.0 - share), 0.0), 1.0)
    pooled = (recall + rest) / 2.0
    se = max(math.sqrt(pooled * (1.0 - pooled) / n_rare), 1.0 / n_rare)
    return recall, rest, se


def _corrected(artifact) -> bool:
    params = artifact.model.hyperparameters
    weight = params.get("class_weight")
    return weight not in (None, "None") or params.get("scale_pos_weight") not in (None, 1, "None")


#: F1 of the minority class at the best threshold above the all-positive F1 from which
#: the model clearly ranks the rare class: the default threshold, not the rarity, is
#: then what costs the decisions
RANKS_RARE_CLASS = 0.15
#: the rare class's test recall below the other classes' (beyond noise) -> share of the
#: +0.3 impact: the measured harm of a rare class the model learns poorly
RECALL_GAP_IMPACT = ((0.15, 0.0), (0.5, 1.0))
#: ... beyond noise: the gap over the rare recall's standard error
RECALL_GAP_Z = 2.0
#: a decision_threshold measurement from this score (low) recovers a reportable part
#: of the rare class's shortfall by moving the threshold: that part is the threshold's
#: harm, so the graded recall impact is not counted here as well
THRESHOLD_RECOVERS = 0.2
#: a best threshold picked on fewer test rows of the rare class says too little to name
#: the threshold, rather than the rarity, as the cause. Measured (simulated calibrated
#: binormal scores, AUC 0.80-0.96, 300-400 draws): what picking the best of 99 cut-offs on
#: the same rows gains over the population's best cut-off by chance (95th percentile) is
#: about 0.6/sqrt(rare rows), not decision_threshold's balanced-class 0.5/sqrt(rows):
#: 0.23-0.28 F1 at 7 rare rows, 0.21-0.23 at 10, 0.16-0.17 at 14, 0.12-0.13 at 21. Below
#: 10 rows an F1 gain is one or two positives and within that noise
MIN_RARE_TEST_ROWS = 10


def threshold_is_the_cause(artifact) -> bool:
    """Whether a rare class is well ranked but cut at the wrong place: the model's best
    threshold gives the minority class an F1 at least ``RANKS_RARE_CLASS`` above flagging
    every row (``2p / (1 + p)``), and the harm measured at the 0.5 threshold is a
    severity band above what the rarity alone warrants (class_imbalance's presence
    score), with at least ``MIN_RARE_TEST_ROWS`` test rows of the rare class to pick the
    threshold on. Then the missing correction for the rare class *is* the threshold
    (class_imbalance is its context). When even the best threshold leaves the class near
    that trivial F1, the model has not learned it; when the threshold's harm is no larger
    than the rarity's, the rarity stays the cause (and folds the threshold in)."""
    performance = artifact.performance
    p = positive_share(artifact)
    if p is None or performance.f1_at_best is None:
        return False
    if p * artifact.dataset.test.n_rows < MIN_RARE_TEST_ROWS:
        return False
    if performance.f1_at_best - 2 * p / (1 + p) < RANKS_RARE_CLASS:
        return False
    measured = max((s.score for s in DecisionThreshold().detect_model(artifact)), default=0.0)
    if measured <= 0:
        return False
    return severity_rank(severity_for(measured)) < severity_rank(
        severity_for(presence_score(artifact))
    )


def rarity_explains_gap(artifact) -> bool:
    """Whether the train/test gap is the missed rare class and nothing else: the model
    predicts the rarest class for under a quarter of its share of test rows (so its test
    rows are, nearly all, errors), and its accuracy on the *other* classes' test rows
    (bounded by ``test accuracy / (1 - the rare class's test share)``) is within noise
    of its training accuracy. Then a macro score that falls from train to test falls by
    the missed class's term: the rarity is the cause, the gap its symptom (an overfit
    model also loses accuracy on the common classes, and keeps its own finding)."""
    if artifact.task == "regression":
        return False
    split, test = artifact.dataset.train, artifact.dataset.test
    if split is None or test is None:
        return False
    found = _minority(split.label_distribution)
    if found is None:
        return False
    label, share = found
    predicted = predicted_share(artifact, label, split.label_distribution)
    if predicted is None or predicted >= 0.25 * share or threshold_is_the_cause(artifact):
        return False
    scores = artifact.performance.scores
    acc_train = scores.get("train", {}).get("accuracy")
    acc_test = scores.get("test", {}).get("accuracy")
    rare_test = test.label_distribution.get(label)
    if acc_train is None or acc_test is None or rare_test is None or rare_test >= 1.0:
        return False
    n_rest = max(test.n_rows * (1.0 - rare_test), 1.0)
    rest = min(acc_test / (1.0 - rare_test), 1.0)
    noise = max(1.96 * math.sqrt(acc_train * (1.0 - acc_train) / n_rest), 1.0 / n_rest)
    return acc_train - rest <= noise


@register_rule
class ClassImbalance(Rule):
    id = "class_imbalance"
    name = "A rare class is not corrected for"
    detects = (
        "A class that makes up a small share of the training labels while the model applies "
        "no correction (class weights, resampling, threshold)."
    )
    why = (
        "Minimising average error, the model learns that ignoring the rare class is cheap: "
        "accuracy looks fine while the class you usually care about (fraud, disease, churn) "
        "is missed."
    )
    example = "3% of transactions are fraud; the model predicts 'not fraud' for everything."
    fixes = (
        "Weight the classes: `LogisticRegression(class_weight='balanced')`, "
        "`RandomForestClassifier(class_weight='balanced')`, or `sample_weight` in `fit`.",
        "Keep the class ratio in every split with `StratifiedShuffleSplit` / `StratifiedKFold`.",
        "Tune the decision threshold on validation data (precision-recall curve) instead of "
        "using 0.5.",
        "Judge the model with metrics that see the rare class: recall/precision per class, "
        "balanced accuracy, PR-AUC, not plain accuracy.",
        "If the rare class is truly underrepresented, collect more of it or resample the "
        "training split only (e.g. imbalanced-learn's `RandomOverSampler` inside a pipeline).",
    )
    severity_policy = (
        "Base score from the rarest class's share of train, scaled to two classes (share x k "
        "/ 2 for k classes, so a balanced 10-class problem scores 0): 1% -> 0.6, 3% -> 0.5, "
        "5% -> 0.4, 10% -> 0.25, >= 20% -> 0. Halved when the model sets class weights. +0.3 "
        "when the "
        "model predicts the rare class for under a quarter of its true share on test (impact), "
        "unless the model ranks the class well and only the 0.5 threshold misses it (that harm"
        " is decision_threshold's); otherwise up to +0.3 from the measured harm: the rare "
        "class's test recall below the other classes' (exact from accuracy and balanced "
        "accuracy with two classes, bounded by its predicted share with more), beyond 2 "
        "standard errors, 0.15 -> +0, 0.5 -> +0.3, unless moving the threshold recovers a "
        "reportable part of it (decision_threshold scores 0.2 or more)."
    )
    explains = ("degenerate_predictions", "decision_threshold", "poor_calibration", "underfitting")
    checks = ("Class Imbalance",)

    def explains_for(self, artifact):
        """Not a threshold that is the cause itself: when the model ranks the rare class
        well and only the 0.5 cut-off loses it, decision_threshold names the fix and
        takes this finding in (see :func:`threshold_is_the_cause`). The train/test gap
        when it is the missed rare class alone (see :func:`rarity_explains_gap`)."""
        explains = self.explains
        if threshold_is_the_cause(artifact):
            explains = tuple(c for c in explains if c != "decision_threshold")
        if rarity_explains_gap(artifact):
            # the train/test gap is the missed class's term of the macro score
            explains = explains + ("overfitting",)
        if at_chance(artifact) is not None and not training_rows_show_signal(artifact):
            # a model at chance whose training rows show no signal to any simple model
            # (labels replaced by noise, or misaligned with their rows) is not at chance
            # because one class is rare: the no-signal finding stays the cause
            explains = tuple(c for c in explains if c != "underfitting")
        return explains
    modality_fixes = {
        "text": (
            "Weight the classes in the loss (`class_weight='balanced'`) or resample inside "
            "the training folds only.",
            "Collect or augment more texts of the rare class (back-translation, paraphrasing, "
            "synonym replacement), never by copying texts across the split.",
            "Judge the model with per-class recall, PR-AUC or balanced accuracy, and tune the "
            "decision threshold for the rare class.",
        ),
        "image": (
            "Weight the classes in the loss or sample batches class-balanced "
            "(`WeightedRandomSampler`).",
            "Collect more images of the rare class, and augment them (flips, crops, rotations, "
            "colour jitter) inside the training loop.",
            "Judge the model with per-class recall, PR-AUC or balanced accuracy, and tune the "
            "decision threshold for the rare class.",
        ),
    }

    def detect_dataset(self, artifact):
        if artifact.task == "regression":
            return
        split = artifact.dataset.train or artifact.dataset.test
        found = _minority(split.label_distribution)
        if found is None:
            return
        label, share = found
        score = interp(binary_equivalent(share, len(split.label_distribution)), MINORITY_SCORE)
        if score <= 0:
            return
        corrected = _corrected(artifact)
        if corrected:
            score *= 0.5
        predicted = predicted_share(artifact, label, split.label_distribution)
        missed = predicted is not None and predicted < 0.25 * share
        if missed and threshold_is_the_cause(artifact):
            # the rare class is ranked well and only the 0.5 cut-off misses it: that
            # harm is decision_threshold's measurement, not counted twice here
            missed = False
        impact = 1.0 if missed and not corrected else 0.0
        gap = None if corrected else self._recall_gap(artifact, label)
        if gap is not None:
            impact = max(impact, interp(gap, RECALL_GAP_IMPACT))
        score += 0.3 * impact
        detail = f"class {label!r} is {pct(share)} of the {split.name} labels"
        if corrected:
            detail += " (the model sets class weights)"
        if predicted is not None:
            detail += f"; the model predicts it for {pct(predicted)} of test rows"
        yield self.signal(
            "dataset",
            score=score,
            confidence=0.9 if missed else 0.7,
            detail=detail,
            value=share,
            label=label,
            share=share,
            predicted=predicted,
        )

    @staticmethod
    def _recall_gap(artifact, label) -> float | None:
        """The rare class's measured recall shortfall behind the other classes on test
        (:func:`rare_class_shortfall`), when it is beyond noise and moving the threshold
        does not recover it (decision_threshold measures under ``THRESHOLD_RECOVERS``,
        and the threshold is not the cause): the harm the rarity does to this model."""
        found = rare_class_shortfall(artifact, label)
        if found is None:
            return None
        recall, rest, se = found
        gap = rest - recall
        if gap < RECALL_GAP_Z * se or threshold_is_the_cause(artifact):
            return None
        recovered = max((s.score for s in DecisionThreshold().detect_model(artifact)),
                        default=0.0)
        return None if recovered >= THRESHOLD_RECOVERS else gap

    def title(self, signals, artifact):
        label, share = self.fact(signals, "label"), self.fact(signals, "share")
        if label is None:
            return self.name
        predicted = self.fact(signals, "predicted")
        suffix = (
            f" and the model almost never predicts it ({pct(predicted)})"
            if predicted is not None and predicted < 0.25 * share
            else ""
        )
        return f"Class {label!r} is only {pct(share)} of the training labels{suffix}"

    def explanation(self, signals, artifact):
        label, share = self.fact(signals, "label", "?"), self.fact(signals, "share", 0.0)
        return (
            f"Only {pct(share)} of the training rows belong to class {label!r}. Without class "
            "weights or resampling, a model minimises its average error by mostly predicting "
            "the common class, so the rare one, often the one that matters, is missed while "
            "overall accuracy still looks good."
        )
