"""label_drift: the label distribution differs between splits (unrepresentative split)."""

from __future__ import annotations

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, interp, pct
from deepfix_agents.rules._shares import (
    class_share_shift,
    share_shift_z,  # noqa: F401 - re-exported from its earlier home
    total_variation,  # noqa: F401 - re-exported from its earlier home
)
from deepfix_agents.rules._shift_harm import ladder_beats_shifted
from deepfix_agents.rules._target_shift import MEAN_SHIFT_Z, target_mean_shift
from deepfix_agents.rules.feature_drift import PeriodDriftHarm
from deepfix_agents.rules.prediction_drift import outran_outcomes

#: total variation distance between train and test label distributions -> score
TVD_SCORE = ((0.05, 0.0), (0.1, 0.25), (0.15, 0.45), (0.25, 0.7), (0.4, 0.9))
#: Deepchecks' label drift score (Cramer's V / Earth Mover's distance) -> score
DRIFT_SCORE = ((0.1, 0.0), (0.15, 0.25), (0.25, 0.5), (0.4, 0.75), (0.6, 0.9))


#: Kolmogorov-Smirnov D * sqrt(n m / (n + m)) (1.36 at p = 0.05, 1.95 at p = 0.001) ->
#: confidence of Deepchecks' label drift signal
KS_LAMBDA_CONFIDENCE = ((1.36, 0.75), (1.95, 0.85), (3.0, 0.95))

#: regression: the test target's mean moved by this many training standard deviations
#: (Cohen's small / medium / large effects) -> score, once it is beyond noise
MEAN_SHIFT_SCORE = ((0.2, 0.25), (0.35, 0.45), (0.5, 0.6), (0.8, 0.8))
#: how many standard errors of sampling noise the shift is (the moved class's share, or
#: the target's mean) -> how far the confidence rises from the rule's base towards
#: ``SURE_SHIFT_CONFIDENCE``: a shift far beyond what drawing the splits at random gives
#: is surely an unrepresentative split
SHIFT_Z_RAISE = ((3.0, 0.0), (6.0, 1.0))
#: classification: a moved class share within this many standard errors of sampling
#: noise is what two random draws of one population show on splits this small: not a
#: measured unrepresentative split, so at most ``WITHIN_NOISE_CAP`` (low; a low finding
#: absorbs no symptoms)
SHIFT_NOISE_Z = 2.0
WITHIN_NOISE_CAP = 0.39
SURE_SHIFT_CONFIDENCE = 0.97


def shift_confidence(base: float, z: float) -> float:
    """``base``, raised towards 0.97 as the shift goes from 3 to 6 standard errors
    (never below ``base``)."""
    return max(base, base + (SURE_SHIFT_CONFIDENCE - base) * interp(z, SHIFT_Z_RAISE))


@register_rule
class LabelDrift(PeriodDriftHarm, Rule):
    id = "label_drift"
    name = "Label distribution differs between train and test"
    detects = (
        "Class proportions (or the target's distribution) that differ markedly between the "
        "training and evaluation splits."
    )
    why = (
        "The test set does not represent the population the model was trained for (or vice "
        "versa), so the test score is not comparable with training and poor results can be a "
        "split artefact rather than a model weakness."
    )
    example = (
        "The data file is sorted by label and split without shuffling: train is 80% class 0, "
        "test is 70% class 1."
    )
    fixes = (
        "Split with stratification: `train_test_split(X, y, stratify=y, shuffle=True)` or "
        "`StratifiedShuffleSplit`.",
        "If the shift is real (the population changed), retrain on recent data and monitor the "
        "label distribution in production.",
        "When priors legitimately differ, recalibrate probabilities or adjust the decision "
        "threshold to the deployment prevalence.",
    )
    severity_policy = (
        "Classification: total variation distance between class shares, 0.1 -> 0.25, 0.15 -> "
        "0.45, 0.25 -> 0.7, 0.4 -> 0.9; at most 0.39 (low) when the most moved class's share "
        "differs by less than 2 standard errors of sampling noise. Regression: the target mean's shift in training SDs, less what the "
        "model's predictions moved (the part the inputs explain), once beyond 3 standard errors, 0.2 -> 0.25, 0.35 -> 0.45, 0.5 -> 0.6, 0.8 -> 0.8; and (corroboration) "
        "Deepchecks' Label Drift score 0.15 -> 0.25, 0.25 -> 0.5, 0.4 -> 0.75. Capped at low on a chronological split "
        "whose test period costs neither the baseline ladder nor the model anything measurable "
        "(as feature drift). It explains no moved outputs, train/test gap or chance-level "
        "score when the predictions moved beyond the outcomes' move by more than noise "
        "(the inputs moved them: feature or prediction drift's harm)."
    )
    explains = (
        "underfitting",
        "prediction_drift",
        "weak_segment",
        "poor_calibration",
        "decision_threshold",
        "overfitting",
        "class_imbalance",
    )
    checks = ("Label Drift",)
    modality_fixes = {
        "text": (
            "Re-split with stratification on the label (`train_test_split(..., "
            "stratify=df.label)`) so both splits keep the same class shares.",
            "If the test texts come from another period or channel, check whether the class "
            "shares really moved (e.g. more complaints after a release) and label a sample "
            "of the new data to train on.",
            "Report per-class metrics (precision/recall per class) and re-tune the decision "
            "threshold for the deployment class shares.",
        ),
        "image": (
            "Re-split with stratification on the label so both splits keep the same class "
            "shares; when images come in capture sessions, use `StratifiedGroupKFold`.",
            "If the new images come from another site or device, check whether the class mix "
            "really changed and collect labelled images from that site.",
            "Report per-class metrics and re-weight or re-threshold for the deployment class "
            "shares.",
        ),
    }

    def explains_for(self, artifact):
        """All of ``explains``, less ``underfitting`` when the test rows, shifted as
        they are, cost the baseline ladder nothing and a rung clearly beats the model on
        them (:func:`ladder_beats_shifted`): simple models fitted on the same training
        rows predict the shifted labels as well as held-out training rows, so the shift
        is learnable from the inputs, and a model that loses to them on those very rows,
        and already lost to them on its own training rows, loses on its own (too
        simple), not by the split. (Overfitting and a weak segment
        stay: a shift can widen a flexible model's gap; DEV showed dropping them only
        lost label_drift cases to a natural forest/hgb gap.)

        Less ``prediction_drift``, ``overfitting`` and ``underfitting`` when the model's
        outputs outran the outcomes: its predictions moved beyond what the outcomes'
        move justifies, by more than that difference's noise
        (``prediction_drift.outran_outcomes``; regression: the mean prediction, which
        then often moves the other way). A shift of the outcomes moves a model's
        predictions at most as far as itself, never away from them; outputs that moved
        further were moved by the inputs on their own (a shifted or nudged feature), and
        the test loss that comes with them (the gap, a score at chance) is that input
        shift's harm, which feature or prediction drift names. The label shift keeps its
        own finding, sized by the part of it the predictions did not follow. (DEV: on a
        daily temperature series whose later period is naturally 0.7 SD colder, three
        features shifted by 1.5 SD moved a memorising model's predictions 0.45 SD
        warmer; the natural label shift absorbed the model's collapse and outranked the
        planted feature drift.)"""
        explains = self.explains
        if outran_outcomes(artifact):
            # outputs moved beyond (or against) the outcomes: the inputs moved them
            explains = tuple(
                c for c in explains
                if c not in ("prediction_drift", "overfitting", "underfitting")
            )
        if ladder_beats_shifted(artifact):
            return tuple(c for c in explains if c != "underfitting")
        return explains

    def detect_dataset(self, artifact):
        dataset = artifact.dataset
        if dataset.train is None:
            return
        if artifact.task == "regression":
            yield from self._regression_shift(dataset, artifact.performance.prediction_stats)
            return
        shift = class_share_shift(dataset)
        if shift is None:
            return
        distance, moved, z = shift["tv"], shift["label"], shift["z"]
        score = interp(distance, TVD_SCORE)
        if score <= 0:
            return
        within_noise = z < SHIFT_NOISE_Z
        if within_noise:
            score = min(score, WITHIN_NOISE_CAP)
        yield self.signal(
            "dataset",
            score=score,
            confidence=shift_confidence(0.9, z),
            detail=(
                f"class {moved!r} is {pct(shift['train_share'])} of train labels but "
                f"{pct(shift['test_share'])} of test labels (total variation {distance:.2f})"
                + (f"; only {z:.1f} standard errors of sampling noise at these split sizes"
                   if within_noise else "")
            ),
            value=distance,
            label=moved,
            train_share=shift["train_share"],
            test_share=shift["test_share"],
        )

    def _regression_shift(self, dataset, prediction_stats):
        """The target's mean moved beyond noise (Deepchecks' KS passes a 0.37-SD shift of
        a third of the rows' targets at 0.14 < 0.15, though it is 6 standard errors), by
        more than the model's own predictions moved: the part the predictions follow is
        explained by the inputs (a covariate shift, a trend the features carry), the rest
        is a shift of the outcomes this model pays for in a biased test error."""
        train, test = dataset.train.label_stats, dataset.test.label_stats
        found = target_mean_shift(train, dataset.train.n_rows, test, dataset.test.n_rows)
        if found is None:
            return
        moved, se = found
        if abs(moved) / se < MEAN_SHIFT_Z:
            return
        predicted = prediction_stats or {}
        followed = 0.0
        if "train" in predicted and "test" in predicted:
            followed = predicted["test"].get("mean", 0.0) - predicted["train"].get("mean", 0.0)
        # only predictions moving the same way, and no further, explain the shift (ones
        # that move more, or alone, are a serving or model problem, not the outcomes');
        # ``moved`` is not 0 here: it is at least 3 standard errors
        followed = min(max(followed / moved, 0.0), 1.0) * moved
        left = abs(moved - followed)
        size, z = left / train["std"], left / se
        score = interp(size, MEAN_SHIFT_SCORE)
        if z < MEAN_SHIFT_Z or score <= 0:
            return
        yield self.signal(
            "dataset",
            score=score,
            confidence=shift_confidence(0.85, z),
            detail=(
                f"the target's mean is {test['mean']:.4g} on test vs "
                f"{train['mean']:.4g} on train; the model's predictions moved "
                f"{followed:+.4g}, so {size:.2f} training standard deviations of the shift "
                f"({z:.1f} standard errors) is left in its test error"
            ),
            value=size,
            drift=size,
        )

    def detect_deepchecks(self, artifact):
        check = artifact.check("Label Drift")
        if check is None or check.value is None:
            return
        score = interp(check.value, DRIFT_SCORE)
        if check.outcome == "not_passed" and score > 0:
            yield self.check_signal(check, score=score, confidence=self._ks_confidence(
                check, artifact), drift=check.value)

    @staticmethod
    def _ks_confidence(check, artifact) -> float:
        """0.75; for a Kolmogorov-Smirnov statistic, raised with its significance at
        these split sizes: D * sqrt(n m / (n + m)) is about 1.95 at p = 0.001, so a
        distance far beyond what two random draws of one population show (that is,
        an unrepresentative split) is surer than the same distance on a few rows."""
        train = artifact.dataset.train
        method = str((check.details or {}).get("method", ""))
        if train is None or "kolmogorov" not in method.lower():
            return 0.75
        n, m = train.n_rows, artifact.dataset.test.n_rows
        if n < 1 or m < 1:
            return 0.75
        lam = check.value * (n * m / (n + m)) ** 0.5
        return interp(lam, KS_LAMBDA_CONFIDENCE)

    def title(self, signals, artifact):
        label = self.fact(signals, "label")
        if label is not None:
            return (
                f"Class {label!r} is {pct(self.fact(signals, 'train_share'))} of train labels but "
                f"{pct(self.fact(signals, 'test_share'))} of test labels"
            )
        return f"The target's distribution drifts between train and test (score {self.fact(signals, 'drift', 0):.2f})"

    def explanation(self, signals, artifact):
        return (
            "Train and test do not contain the same mix of outcomes, so they do not describe the "
            "same population. Scores measured on such a test set are hard to interpret, and "
            "weak results may come from the split rather than from the model; this typically "
            "happens when data sorted by label or time is split without shuffling or "
            "stratification."
        )
