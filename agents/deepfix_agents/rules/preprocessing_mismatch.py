"""preprocessing_mismatch: inference inputs not transformed as in training.

Two patterns, both read from statistics we already have:

* **Transformed on one side only.** The numeric features of one split look scaled
  (mean ~0 and std ~1, or squeezed into [0, 1]) while the same features in the other
  split are far away from that: the scaler was applied to training data outside the
  model and forgotten at inference (or the reverse).
* **Scaler missing.** A scale-sensitive estimator (linear models, SVMs, neighbours,
  networks) that is not a Pipeline with a preprocessing step, fed raw features whose
  scales differ by orders of magnitude. On its own that is only a risk (low); it becomes
  a root cause when the predictions collapse, the model falls far below the baseline
  ladder, whose linear rung scales its inputs, or (classifiers) its probabilities are
  far off: raw units multiplied into the logits push them to 0 or 1. A regressor that
  scores far below the mean on its own training rows shows the missing transform
  whatever the scales (:func:`worse_than_dummy_on_own_rows`).
"""

from __future__ import annotations

import math

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, interp, pct
from deepfix_agents.rules._ladder import (
    CHANCE_NOISE_UNITS,
    baseline,
    best_baseline,
    cross_validated_ladder,
)
from deepfix_agents.rules._spread import reachable_r2
from deepfix_agents.rules.poor_calibration import ECE_SCORE
from deepfix_agents.rules.prediction_drift import large_feature_shifts

#: log10 of (largest / smallest feature std) -> score of the bare risk
LATENT_SCORE = ((1.0, 0.1), (2.0, 0.2), (4.0, 0.3))
#: log10 of the std ratio -> how much of the observed damage scale differences explain
SCALE_FACTOR = ((1.0, 0.5), (2.0, 0.9), (3.0, 1.0))
#: largest |mean| / std over the numeric features (how far raw inputs sit from the
#: standardised values a model fitted behind a scaler expects) -> how much of the observed
#: damage that offset explains, when the scales themselves differ less than 10x
OFFSET_FACTOR = ((3.0, 0.5), (6.0, 0.6))
#: share of the most predicted class beyond its true share -> impact
COLLAPSE_SCORE = ((0.05, 0.0), (0.15, 0.5), (0.3, 0.8), (0.45, 0.9))
#: regression: std(pred) / std(y) -> impact
SPREAD_SCORE = ((0.05, 0.85), (0.15, 0.6), (0.3, 0.3), (0.5, 0.0))
#: shortfall behind the baseline ladder (1 = no better than dummy) -> impact
SHORTFALL_SCORE = ((0.2, 0.0), (0.35, 0.3), (0.6, 0.6), (0.9, 0.8), (1.0, 0.85))
#: share of numeric features scaled on one side only -> score
ONE_SIDED_SCORE = ((0.3, 0.0), (0.5, 0.7), (0.8, 0.9))
#: predictions that become useful once expm1 is applied (R² at least this, and a gain
#: beyond this many noise units): an un-inverted log target, scored as blatant
INVERSE_MIN_R2 = 0.1
INVERSE_NOISE_UNITS = 2.0
INVERSE_SCORE = 0.85


def numeric_features(split, feature_names) -> list:
    names = set(feature_names)
    return [
        c
        for c in split.columns
        if c.name in names
        and c.kind == "numeric"
        and c.std is not None
        and c.std > 0
        and c.n_unique > 2
    ]


def scale_ratio(split, feature_names) -> tuple[float, str, str] | None:
    """(largest std / smallest std, widest feature, narrowest feature) over the numeric
    features of ``split`` (binary and constant columns left out)."""
    columns = numeric_features(split, feature_names)
    if len(columns) < 2:
        return None
    widest = max(columns, key=lambda c: (c.std, c.name))
    narrowest = min(columns, key=lambda c: (c.std, c.name))
    return widest.std / narrowest.std, widest.name, narrowest.name


def raw_offset(split, feature_names) -> tuple[float, str] | None:
    """(largest |mean| / std, that feature) over the numeric features of ``split``: a
    feature whose values sit many of their own spreads away from 0 is in raw units; a
    model fitted on standardised values reads every such row as an extreme outlier."""
    columns = [c for c in numeric_features(split, feature_names) if c.mean is not None]
    if not columns:
        return None
    far = max(columns, key=lambda c: (abs(c.mean) / c.std, c.name))
    return abs(far.mean) / far.std, far.name


def _looks_scaled(column) -> bool:
    standardised = abs(column.mean) < 0.15 and 0.8 < column.std < 1.25
    min_max = (
        column.min is not None
        and column.max is not None
        and column.min >= -0.01
        and column.max <= 1.01
        and column.max - column.min > 0.5
    )
    return standardised or min_max


def _far_apart(scaled, other) -> bool:
    """``other`` is nowhere near ``scaled``'s range: shifted by more than 3 of its stds,
    or spread more than 3x wider/narrower."""
    if other.mean is None or other.std is None or other.std <= 0:
        return False
    shift = abs(other.mean - scaled.mean) / scaled.std
    ratio = other.std / scaled.std
    return shift > 3.0 or ratio > 3.0 or ratio < 1.0 / 3.0


def one_sided_scaling(artifact) -> dict | None:
    """Numeric features that look scaled in one split and raw in the other."""
    dataset = artifact.dataset
    if dataset.train is None:
        return None
    for scaled_split, other_split in ((dataset.train, dataset.test), (dataset.test, dataset.train)):
        columns = numeric_features(scaled_split, dataset.feature_names)
        if len(columns) < 2:
            continue
        scaled = [c for c in columns if _looks_scaled(c)]
        if len(scaled) < 0.5 * len(columns):
            continue
        apart = [
            c.name
            for c in scaled
            if other_split.column(c.name) is not None and _far_apart(c, other_split.column(c.name))
        ]
        share = len(apart) / len(columns)
        if len(apart) >= 2 and share >= 0.3:
            return {
                "scaled_split": scaled_split.name,
                "raw_split": other_split.name,
                "n_apart": len(apart),
                "n_numeric": len(columns),
                "share": share,
                "examples": sorted(apart)[:3],
            }
    return None


def collapse(artifact) -> dict | None:
    """How far the test predictions collapsed (classification: excess share of the top
    class; regression: shrunken spread, against the sqrt(R2) spread an optimal predictor
    reaches on this data), as an impact score. A weak signal gives narrow predictions
    with or without a scaler: on a series the ladder explains at R2 0.23, a spread of
    0.23x the target's is as wide as a good model spreads, no squeeze."""
    performance = artifact.performance
    if artifact.task == "regression":
        ratio = performance.prediction_spread_ratio
        if ratio is None:
            return None
        # an optimal predictor spreads sqrt(R2) as wide as the target (the best R2
        # measured here, :func:`_spread.reachable_r2`): only a spread narrower than that
        # is squeezed (degenerate predictions' reading)
        reachable = reachable_r2(artifact)
        expected = 1.0 if reachable is None else math.sqrt(max(reachable, 0.0))
        if expected <= 0:
            return None
        return {"impact": interp(ratio / expected, SPREAD_SCORE), "spread": ratio}
    predicted, truth = performance.prediction_distribution, artifact.dataset.test.label_distribution
    if not predicted or not truth:
        return None
    label, share = max(predicted.items(), key=lambda kv: (kv[1], kv[0]))
    impact = interp(share - truth.get(label, 0.0), COLLAPSE_SCORE)
    if share >= 0.99 and max(truth.values()) < 0.95:
        impact = max(impact, 0.85)
    return {"impact": impact, "label": label, "share": share}


def miscalibration(artifact) -> dict | None:
    """Classification: the test calibration error beyond its noise, on poor
    calibration's scale, as an impact. A model fitted behind a scaler and served raw
    values multiplies every wide feature's raw units into its logits: its probabilities
    are pushed to 0 or 1 whatever the row, which shows as miscalibration before (or
    without) the predicted shares collapsing."""
    performance = artifact.performance
    ece, noise = performance.calibration_error, performance.calibration_noise
    if artifact.task == "regression" or ece is None or noise is None:
        return None
    return {"impact": interp(ece - noise, ECE_SCORE), "ece": ece}


def shortfall(artifact) -> dict | None:
    """1 - (model - dummy) / (best baseline - dummy) on test, like underfitting's."""
    dummy, best = baseline(artifact, "dummy"), best_baseline(artifact)
    model_score = artifact.performance.test_score
    if None in (model_score, dummy, best) or dummy.test_score is None:
        return None
    headroom = best.test_score - dummy.test_score
    if headroom < 0.1:
        return None
    gap = 1.0 - (model_score - dummy.test_score) / headroom
    return {
        "impact": interp(gap, SHORTFALL_SCORE),
        "shortfall": gap,
        "best": best.name,
        "best_score": best.test_score,
        "model_score": model_score,
    }


def scaled_rung_no_better(artifact) -> bool:
    """The baseline ladder's linear rung scales its inputs: when it scores no better
    than the model (within a noise margin of 0.5/sqrt(n_test)), scaling would not help
    and weak or narrow predictions are the data's (a weak signal: a regressor's
    predictions spread about sqrt(R²) as wide as the target), not the missing scaler's."""
    linear = baseline(artifact, "linear")
    model_score = artifact.performance.test_score
    if linear is None or linear.test_score is None or model_score is None:
        return False
    margin = 0.5 / math.sqrt(max(artifact.dataset.test.n_rows, 1))
    return model_score >= linear.test_score - margin


def shortfall_is_the_shift(artifact) -> bool:
    """Whether the model's test shortfall against the ladder belongs to a feature shift
    rather than to the missing scaler: on its own training rows the model scores at
    least as well as the ladder's best rung cross-validates there, within one standard
    error of its training score (:func:`training_score_noise`; the raw scales did
    not stop it from learning what the simple models learn), and a feature moved a long
    way between the splits (``prediction_drift.large_feature_shifts``: 1.5 training stds,
    within noise). A missing scaler hurts a scale-sensitive model wherever it is applied,
    its training rows included; a shortfall that appears only on test rows whose inputs
    moved far is where the shift lands, and feature drift is its cause. Collapsed
    outputs and miscalibration keep their reading (they are read on test alone for
    other reasons)."""
    rungs = cross_validated_ladder(artifact)
    train = artifact.performance.train_score
    if not rungs or train is None:
        return False
    best_cv = max(b.cv_score for b in rungs)
    return train >= best_cv - training_score_noise(artifact) and bool(
        large_feature_shifts(artifact)
    )


def training_score_noise(artifact) -> float:
    """One standard error of the model's score on its training rows: for R² the
    normal-error one of its mean squared error, ``(1 - R²) sqrt(2 / n)`` (the reading
    :func:`worse_than_dummy_on_own_rows` uses), for a share-like score (accuracy, F1)
    the binomial ``sqrt(s (1 - s) / n)``. A training score and the ladder's
    cross-validated score on the same rows that differ by less are the same fit: a
    linear model without a scaler scoring 0.820 in sample where the scaled linear rung
    cross-validates 0.824 learned what the ladder learns, raw scales and all."""
    train_score = artifact.performance.train_score
    train = artifact.dataset.train
    n_train = train.n_rows if train is not None else 0
    if train_score is None or not n_train:
        return 0.0
    if artifact.performance.metric == "r2":
        return max(1.0 - train_score, 0.0) * math.sqrt(2.0 / n_train)
    share = min(max(train_score, 0.0), 1.0)
    return math.sqrt(share * (1.0 - share) / n_train)


#: a served model below the dummy on its own training rows by at least this much (and
#: by CHANCE_NOISE_UNITS noise units) was not fitted on the inputs it is served
UNFIT_MARGIN = 0.1


def worse_than_dummy_on_own_rows(artifact) -> float | None:
    """Regression scored in R2: how far the served model scores below the dummy on its
    own training rows (the dummy's cross-validated score there), when by more than
    ``UNFIT_MARGIN`` and ``CHANCE_NOISE_UNITS`` standard errors of the training score
    (the normal-error one of its mean squared error, ``(1 - R2) * sqrt(2 / n)``, the
    reading ``underfitting.split_squared_errors`` uses); else None.

    A least-squares fit with an intercept never scores below the mean of its own
    training targets on those rows (R2 >= 0 in sample), and a regularised or iterative
    regressor does not fall far below it: the rows it is fitted on and the rows it is
    scored on are the same, so nothing about the data (a split, a drift, noisy labels)
    can make it far worse than a constant there. A served pipeline that is not the
    fitted one can: a transform that ran at fitting (a scaler) left out at serving, the
    raw units multiplied into weights learned for standardised values (or an optimiser
    fed raw units that never converged: the same missing scaler). That is the damage
    measured where nothing else accounts for it, so it counts with its full weight,
    whatever the features' scales look like. Classification metrics (F1, accuracy)
    carry no such in-sample guarantee against the dummy, so they are not read here."""
    train_score = artifact.performance.train_score
    dummy = baseline(artifact, "dummy")
    if artifact.performance.metric != "r2" or train_score is None or dummy is None:
        return None
    train = artifact.dataset.train
    n_train = train.n_rows if train is not None else 0
    if dummy.cv_score is None or not n_train:
        return None
    noise = max(1.0 - train_score, 0.0) * math.sqrt(2.0 / n_train)
    gap = dummy.cv_score - train_score
    if gap <= max(UNFIT_MARGIN, CHANCE_NOISE_UNITS * noise):
        return None
    return gap


@register_rule
class PreprocessingMismatch(Rule):
    id = "preprocessing_mismatch"
    name = "Inputs are not preprocessed as the model expects"
    detects = (
        "Features transformed differently at training and at inference (scaled on one side "
        "only), or a scale-sensitive model fed raw features of very different scales without "
        "a scaler inside the model, with collapsed or baseline-level predictions as the "
        "consequence."
    )
    why = (
        "Distance- and gradient-based models read feature values literally: a feature in "
        "thousands drowns one in fractions, and a model fitted on scaled values sees raw "
        "values as extreme outliers. Predictions then collapse onto one answer or lose most "
        "of their accuracy, although the model itself is fine."
    )
    example = (
        "`X_train = StandardScaler().fit_transform(X_train)` before `SVC().fit(X_train, y)`, "
        "but the saved model is the bare SVC and receives raw test data: it predicts the "
        "majority class for 98% of rows."
    )
    fixes = (
        "Put the preprocessing inside the model so it travels with it: "
        "`model = make_pipeline(StandardScaler(), SVC())` (or a `ColumnTransformer` with "
        "`StandardScaler` for numeric and `OneHotEncoder` for categorical columns), fit it on "
        "raw training data and log that pipeline.",
        "Never transform train and test separately by hand; if you must, fit the transformer "
        "on train once and apply the same fitted object to every split and at inference.",
        "Check what the model receives: compare `X.describe()` of training and serving "
        "inputs (means ~0 and std ~1 on one side only means a scaler is missing on the "
        "other).",
        "If scaling cannot be added, use a scale-invariant model (tree ensembles such as "
        "`HistGradientBoostingClassifier`).",
    )
    severity_policy = (
        "Scaled on one side only (>= 50% of numeric features look standardised / min-max "
        "scaled in one split, and >= 30% of them are > 3 stds away or > 3x wider in the "
        "other): 0.5 of features -> 0.7, 0.8 -> 0.9, +0.05 when test predictions collapse. "
        "Scaler missing (scale-sensitive estimator, no scaling step in front of it, std ratio "
        "across numeric features >= 10): bare risk by log10(ratio) 1 -> 0.1, 2 -> 0.2, 4 -> 0.3; "
        "with damage, the larger of collapse (excess top-class share 0.15 -> 0.5, 0.3 -> 0.8;"
        " regression spread ratio over sqrt of the best R2 measured here, the spread an "
        "optimal predictor reaches, 0.15 -> 0.6, 0.05 -> 0.85), baseline shortfall (0.35 -> "
        "0.3, 0.6 -> 0.6, 0.9 -> 0.8) and, for classifiers, the test calibration error "
        "beyond its noise on poor calibration's scale (0.1 -> 0.4, 0.15 -> 0.55, 0.25 -> "
        "0.7), times a scale factor by log10(ratio) 1 -> x0.5, 2 -> "
        "x0.9, 3 -> x1 (scales within 10x: by how far the raw values sit from 0, largest "
        "|mean|/std 3 -> x0.5, 6 -> x0.6, no bare risk; a regressor scoring below the dummy's "
        "cross-validated R2 on its own training rows by more than 0.1 and 2 standard errors "
        "(1 - R2) sqrt(2/n) -> x1, whatever the scales: a fitted model cannot, so it is not "
        "served what it was fitted on); no damage is counted when the ladder's scaled linear rung scores no "
        "better than the model (within 0.5/sqrt(n_test)), and no shortfall against the ladder "
        "is counted when the model scores on its own training rows at least as well as the "
        "ladder's best cross-validated rung (within one standard error of its training "
        "score) while a feature moved 1.5 training stds or more "
        "between the splits (the shortfall is the shift's). Measured: regression predictions "
        "whose R² after expm1 beats the served R² by more than 2 noise units and is >= 0.1 "
        "(or above 0 and within 2 noise units of the best baseline, on data with little "
        "signal) are an un-inverted log target: 0.85."
    )
    explains = (
        "degenerate_predictions",
        "underfitting",
        "poor_calibration",
        "prediction_drift",
        "decision_threshold",
        "feature_drift",
        "overfitting",
        "weak_segment",
    )

    def explains_for(self, artifact):
        """Feature drift is this finding's symptom only when one split was transformed
        and the other was not (:func:`one_sided_scaling`): the same features then sit at
        different places in the two splits. A scaler left out of the served model meets
        the same raw units in both splits, and an un-inverted target moves no input, so a
        drift measured between the splits is another cause, with its own finding (DEV
        house_sales: three features moved 1.5 training stds, folded into a missing scaler
        as if the scaler had moved them)."""
        if one_sided_scaling(artifact) is None:
            return tuple(c for c in self.explains if c != "feature_drift")
        return self.explains

    def detect_intervention(self, artifact):
        """A target transform left un-inverted: the served predictions score far better
        once the inverse (expm1) is applied to them."""
        measured = artifact.intervention("invert_target_transform")
        if measured is None or measured.change is None or measured.score_after is None:
            return
        if measured.change <= INVERSE_NOISE_UNITS * (measured.noise or 0.0):
            return
        if measured.score_after < INVERSE_MIN_R2 and not self._as_good_as_the_ladder(
                artifact, measured):
            return
        if self._served_on_target_scale(artifact):
            return
        yield self.signal(
            "intervention",
            score=INVERSE_SCORE,
            confidence=0.9,
            detail=(
                f"the served predictions score R² {measured.score_before:.3f} on test; after "
                f"expm1 they score {measured.score_after:.3f}: the model was trained on "
                "log1p(target) and the inverse transform is missing at serving"
            ),
            value=measured.score_after,
            check="invert_target_transform",
            inverse="expm1",
        )

    @staticmethod
    def _served_on_target_scale(artifact) -> bool:
        """A missing inverse leaves every served prediction on the log scale, the
        training rows' too: their mean then sits nearer log1p of the target than the
        target itself. When the mean training prediction is closer to the training
        target mean as served than after expm1, the model already answers on the
        target's scale, and expm1 helping on test is a convex correction of predictions
        that are off for another reason (shifted inputs), not a missing inverse.

        A model fitted on log1p(y) can never trip this: its mean training prediction m
        is about mean(log1p y) <= log1p(mean y) (Jensen), so expm1(m) <= mean y and
        expm1 moves m towards the target mean without passing it."""
        served = artifact.performance.prediction_stats.get("train", {}).get("mean")
        truth = artifact.dataset.train.label_stats.get("mean") if artifact.dataset.train else None
        if served is None or truth is None:
            return False
        inverted = math.expm1(min(served, 700.0))
        return abs(served - truth) < abs(inverted - truth)

    @staticmethod
    def _as_good_as_the_ladder(artifact, measured) -> bool:
        """On data with little signal an R² of 0.1 is out of reach for any model: the
        inverted predictions count when they reach the best baseline's test score
        within the measurement's noise (and beat predicting the mean)."""
        best = best_baseline(artifact)
        if best is None or best.test_score is None or measured.score_after <= 0:
            return False
        noise = INVERSE_NOISE_UNITS * (measured.noise or 0.0)
        return measured.score_after >= best.test_score - noise

    def detect_dataset(self, artifact):
        found = one_sided_scaling(artifact)
        if found is None:
            return
        score = interp(found["share"], ONE_SIDED_SCORE)
        collapsed = collapse(artifact)
        if collapsed is not None and collapsed["impact"] >= 0.5:
            score += 0.05
        if score <= 0:
            return
        yield self.signal(
            "dataset",
            score=score,
            confidence=0.85,
            detail=(
                f"{found['n_apart']} of {found['n_numeric']} numeric features look scaled in "
                f"{found['scaled_split']} (mean ~0, std ~1 or range [0, 1]) but not in "
                f"{found['raw_split']}, e.g. {found['examples']}"
            ),
            value=found["share"],
            one_sided=True,
            **found,
        )

    def detect_model(self, artifact):
        model = artifact.model
        # a pipeline whose steps only encode columns (impute, one-hot) still feeds the
        # estimator raw units: what matters is a scaling step, when the testing step knew
        scaled = model.has_scaling if model.has_scaling is not None else model.has_preprocessing
        if not model.scale_sensitive or scaled:
            return
        split = artifact.dataset.train or artifact.dataset.test
        spread = scale_ratio(split, artifact.dataset.feature_names)
        offset = raw_offset(split, artifact.dataset.feature_names)
        wide = spread is not None and spread[0] >= 10
        # scales within 10x are no risk by themselves; inputs in raw units far from 0
        # still break a model fitted behind a scaler that was left out, which shows as
        # collapsed or baseline-level predictions (the damage, required below)
        offset_factor = interp(offset[0], OFFSET_FACTOR) if offset and offset[0] >= 3.0 else 0.0
        # a model worse than a constant on its own training rows was not fitted on what
        # it is served: the damage is the missing transform's, whatever the scales
        unfit = worse_than_dummy_on_own_rows(artifact)
        if unfit is None and (spread is None or (not wide and not offset_factor)):
            return
        # fewer than two numeric features give no scale ratio: the measurement on the
        # model's own training rows stands without one
        ratio, widest, narrowest = spread if spread is not None else (None, None, None)
        magnitude = math.log10(ratio) if ratio else 0.0
        score = interp(magnitude, LATENT_SCORE) if wide else 0.0
        impact, facts = 0.0, {}
        if not scaled_rung_no_better(artifact):
            short = None if shortfall_is_the_shift(artifact) else shortfall(artifact)
            for found in (collapse(artifact), short, miscalibration(artifact)):
                if found is not None and found["impact"] > impact:
                    impact, facts = found["impact"], found
        factor = max(
            interp(magnitude, SCALE_FACTOR) if wide else 0.0,
            offset_factor,
            1.0 if unfit is not None else 0.0,
        )
        score = max(score, impact * factor)
        if score <= 0:
            return
        estimator = (model.model_class or "the estimator").rsplit(".", 1)[-1]
        detail = f"{estimator} is scale-sensitive and has no scaling step"
        if ratio is not None:
            detail += f"; the std of {widest!r} is {ratio:,.0f}x that of {narrowest!r}"
        if not wide and offset_factor:
            detail += f"; {offset[1]!r} sits {offset[0]:.1f} of its stds away from 0 (raw units)"
        if unfit is not None:
            detail += (
                f"; on its own training rows it scores {unfit:.3f} below the dummy "
                "(a fitted model cannot): it is not served the inputs it was fitted on"
            )
        if "label" in facts:
            detail += f"; it predicts {facts['label']!r} for {pct(facts['share'])} of test rows"
        elif "spread" in facts:
            detail += f"; its predictions spread {facts['spread']:.2f}x as wide as the target"
        elif "ece" in facts:
            detail += (
                f"; its test probabilities are off by {facts['ece']:.2f} on average "
                "(expected calibration error)"
            )
        elif "shortfall" in facts:
            detail += (
                f"; it scores {facts['model_score']:.3f} vs {facts['best_score']:.3f} for the "
                f"{facts['best']} baseline"
            )
        yield self.signal(
            "model",
            score=score,
            confidence=0.8 if impact >= 0.4 else 0.6,
            detail=detail,
            value=ratio,
            ratio=ratio,
            widest=widest,
            narrowest=narrowest,
            estimator=estimator,
            impact=impact,
            unfit=unfit,
            **{k: v for k, v in facts.items() if k != "impact"},
        )

    def title(self, signals, artifact):
        if self.fact(signals, "inverse"):
            return (
                "The target was log-transformed for training but predictions are served "
                "without the inverse (expm1)"
            )
        if self.fact(signals, "one_sided"):
            return (
                f"{self.fact(signals, 'n_apart')} of {self.fact(signals, 'n_numeric')} numeric "
                f"features are scaled in {self.fact(signals, 'scaled_split')} but raw in "
                f"{self.fact(signals, 'raw_split')}"
            )
        ratio = self.fact(signals, "ratio")
        estimator = self.fact(signals, "estimator")
        if ratio is None:
            if self.fact(signals, "unfit") is not None:
                return (
                    f"{estimator} scores far below a constant on its own training rows: a "
                    "transform applied at fitting (a scaler) is missing at serving"
                )
            return self.name
        if self.fact(signals, "impact", 0.0) >= 0.4:
            if self.fact(signals, "label") is not None:
                label, share = self.fact(signals, "label"), self.fact(signals, "share")
                effect = f"predicts {label!r} for {pct(share)} of rows"
            elif self.fact(signals, "spread") is not None:
                effect = "barely varies its predictions"
            elif self.fact(signals, "ece") is not None:
                ece = self.fact(signals, "ece")
                effect = f"states probabilities off by {ece:.2f} on average"
            else:
                effect = "scores far below a scaled baseline"
            return f"Unscaled inputs (scales differ {ratio:,.0f}x) break {estimator}: it {effect}"
        return (
            f"{estimator} is scale-sensitive but gets unscaled features "
            f"(scales differ {ratio:,.0f}x)"
        )

    def explanation(self, signals, artifact):
        if self.fact(signals, "one_sided"):
            return (
                "The features of one split look already scaled (centred on 0 with unit spread, "
                "or squeezed into 0..1) while the same features in the other split are raw. The "
                "transformation was applied outside the model on one side only, so the model "
                "receives values on a scale it never saw and its predictions are meaningless. "
                "Put the scaler inside the model as a Pipeline step."
            )
        return (
            "This kind of model compares feature values directly (distances, weighted sums, "
            "gradient steps), so features measured in large units dominate those in small "
            "units. It receives the features without any scaling, and their scales differ by "
            "orders of magnitude; the result is a model that ignores most features and "
            "predicts poorly or the same answer for everything. Scaling inside a Pipeline "
            "fixes it."
        )
