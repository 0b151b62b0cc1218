"""feature_drift: covariate or multivariate shift between the training and test splits.

Our own evidence compares each feature's train and test statistics (location shift in
training standard deviations, change of spread), discounts what sampling noise alone
produces at the splits' sizes, and weights each feature by how much the model relies on
it: a shift in a feature the model ignores costs nothing. Deepchecks' per-feature drift
scores (Kolmogorov-Smirnov / Cramer's V) and its domain-classifier Multivariate Drift
corroborate, with the same noise floor. With Spark input the per-feature scores are
recomputed over every row of both full tables (``SplitComparison.column_drift``) and
preferred, with the noise floor at the full row counts.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, interp
from deepfix_agents.rules._ladder import (
    cross_validated_ladder,
    split_squared_errors,
    training_rows_show_signal,
)
from deepfix_agents.rules._ordered import copied_share, ordered_split_axis, uncopied_share
from deepfix_agents.rules._shift_harm import BEATEN_NOISE_UNITS, ladder_beats_shifted
from deepfix_agents.rules.degenerate_predictions import collapsed_on_training_rows
from deepfix_agents.scoring import severity_for

#: below Cohen's conventional "large" effect size (d = 0.8) a numeric feature's shift is a
#: nudge: it cannot explain moved outputs on its own, only added up with the others
#: (prediction drift then measures their sum).
NUDGE_SD = 0.8

#: location shift (beyond noise) in training standard deviations -> score
SHIFT_SCORE = (
    (0.15, 0.0),
    (0.3, 0.2),
    (0.5, 0.35),
    (1.0, 0.55),
    (2.0, 0.75),
    (4.0, 0.9),
    (10.0, 1.0),
)
#: |log| of the test/train spread ratio (beyond noise) -> score:
#: 2x -> 0.3, 4x -> 0.55, 10x -> 0.75, 1000x -> 1
SPREAD_SCORE = ((0.3, 0.0), (0.7, 0.3), (1.4, 0.55), (2.3, 0.75), (4.6, 0.9), (6.9, 1.0))
#: change of the most frequent category's share (beyond noise) -> score
TOP_SHARE_SCORE = ((0.05, 0.0), (0.1, 0.2), (0.2, 0.4), (0.35, 0.6), (0.5, 0.75))
#: Deepchecks per-feature drift score (KS statistic / Cramer's V, beyond noise) -> score
DRIFT_SCORE = ((0.05, 0.0), (0.1, 0.2), (0.2, 0.4), (0.35, 0.6), (0.5, 0.75), (0.7, 0.85))
#: Deepchecks' multivariate drift score (2 * domain classifier AUC - 1, beyond noise) -> score
MULTIVARIATE_SCORE = ((0.1, 0.0), (0.25, 0.25), (0.4, 0.45), (0.6, 0.65), (0.8, 0.8))
#: a feature's native importance relative to the mean importance -> weight of its drift
IMPORTANCE_WEIGHT = ((0.0, 0.5), (0.3, 0.65), (1.0, 0.9), (2.0, 1.0))
#: weight when the model exposes no importances
UNKNOWN_WEIGHT = 0.75
#: weight of a text/image property (length, brightness, ...): the model reads the content,
#: not the property, but a shifted property means the content itself changed
PROPERTY_WEIGHT = 0.8
#: Deepchecks' per-column drift checks: tabular features, text and image properties
COLUMN_DRIFT_CHECKS = ("Feature Drift", "Property Drift", "Image Property Drift")
#: Deepchecks' whole-sample drift checks (a domain classifier on features / embeddings)
MULTIVARIATE_CHECKS = ("Multivariate Drift", "Text Embeddings Drift", "Image Dataset Drift")
#: Deepchecks Feature Drift's default condition: every feature's drift score below 0.2
#: (applied to the full-table scores when the artifact holds them)
FULL_TABLE_CONDITION = 0.2
#: z-score of a shift at which it counts half (fully from NOISE_Z + 1, not below NOISE_Z - 1)
NOISE_Z = 3.0
#: a feature counts as drifted when its unweighted score reaches this
DRIFTED = 0.2


def effective_rows(artifact, split: str) -> int:
    """Rows of ``split`` that sample-based checks saw (``sample_size`` caps them)."""
    stats = artifact.dataset.train if split == "train" else artifact.dataset.test
    n = stats.n_rows if stats is not None else 0
    if artifact.sample_size:
        n = min(n, artifact.sample_size)
    return max(n, 1)


def two_sample_noise(n_train: int, n_test: int) -> float:
    """The size a two-sample distance (KS, Cramer's V) reaches by chance (about
    p = 0.001 for KS: 1.95 * sqrt((n + m) / (n m))); small splits need larger effects."""
    return 1.95 * math.sqrt(1.0 / max(n_train, 1) + 1.0 / max(n_test, 1))


def importance_weight(artifact, feature: str) -> float:
    if feature in artifact.dataset.property_names:
        return PROPERTY_WEIGHT
    importances = artifact.model.feature_importances
    if not importances:
        return UNKNOWN_WEIGHT
    mean = 1.0 / len(importances)
    return interp(importances.get(feature, 0.0) / mean, IMPORTANCE_WEIGHT)


def _skipped_columns(artifact) -> set[str]:
    """Index-like, id and date columns drift by construction in ordered splits; they are
    identifier/temporal issues, not covariate shift."""
    dataset = artifact.dataset
    skipped = {dataset.index_col, dataset.datetime_col, dataset.target}
    if dataset.train is not None:
        skipped |= {c.name for c in dataset.train.columns if c.monotonic}
    return {c for c in skipped if c}


def significant(effect: float, se: float) -> float:
    """``effect`` where it is clearly beyond sampling noise, shrunk towards 0 as its
    z-score falls from ``NOISE_Z + 1`` to ``NOISE_Z - 1`` (0 below)."""
    if se <= 0:
        return effect
    return effect * interp(effect / se, ((NOISE_Z - 1.0, 0.0), (NOISE_Z + 1.0, 1.0)))


def numeric_shift(train, test, n_train: int, n_test: int) -> dict | None:
    """Location and spread change of one numeric column, raw and as significant effects.

    Location: the smaller of the mean and the median shift in training standard
    deviations (a few outliers move the mean but not the median; a discrete column's
    median jumps while its mean does not). Spread: the std ratio or the 1%-99% width
    ratio, whichever is closer to 1, on a log scale. Each effect counts only as far as it
    is beyond sampling noise at these split sizes (:func:`significant`).
    """
    if train.std is None or test.std is None or train.mean is None or test.mean is None:
        return None
    std = train.std
    if not std or std <= 0 or not math.isfinite(std) or train.n_unique <= 1:
        # a column with one value in training has no spread to measure a shift in: its
        # std is float rounding (7e-15 for a stuck feed), and a rounding difference of the
        # means then reads as a shift of several standard deviations
        return None
    se = math.sqrt(1.0 / max(n_train, 1) + 1.0 / max(n_test, 1))
    mean_shift = abs(test.mean - train.mean) / std
    shift, location = mean_shift, significant(mean_shift, se)
    if train.n_unique > 10 and train.q50 is not None and test.q50 is not None:
        robust = std
        if train.q99 is not None and train.q01 is not None and train.q99 > train.q01:
            robust = (train.q99 - train.q01) / 4.65
        median_shift = abs(test.q50 - train.q50) / max(robust, 1e-12)
        shift = min(shift, median_shift)
        location = min(location, significant(median_shift, 1.25 * se))
    ratios = []
    if test.std > 0:
        ratios.append(test.std / std)
    if None not in (train.q01, train.q99, test.q01, test.q99):
        width_train, width_test = train.q99 - train.q01, test.q99 - test.q01
        if width_train > 0 and width_test > 0:
            ratios.append(width_test / width_train)
    ratio = min(ratios, key=lambda r: abs(math.log(r))) if ratios else 1.0
    return {
        "shift": shift,
        "location": location,
        "ratio": ratio,
        "spread": significant(abs(math.log(ratio)), spread_se(train, test, n_train, n_test)),
    }


def spread_se(train, test, n_train: int, n_test: int) -> float:
    """Standard error of the log spread ratio: ``sqrt(1/n + 1/m)`` over the rows that
    carry the spread. A column whose most frequent value holds a share ``t`` of the rows
    (a point mass: 88% zeros) has its spread set by the other ``(1 - t) n`` rows alone,
    so two random draws of it differ in spread as much as draws of that many rows do
    (the variance of a log standard deviation grows as 1 / ((1 - t) n) for such a
    mixture): a test split of 64 rows with 6 non-zero values halves or doubles its
    spread by chance."""
    def carrying(stats, n: int) -> float:
        return max(n * (1.0 - min(max(stats.top_fraction or 0.0, 0.0), 1.0)), 1.0)

    return math.sqrt(1.0 / carrying(train, max(n_train, 1)) + 1.0 / carrying(test, max(n_test, 1)))


#: severity cap of a drift finding between the periods of a chronological split that
#: costs this model nothing measurable (see :func:`period_drift_without_harm`)
PERIOD_CAP = 0.35
#: noise units within which the baseline ladder's test score counts as unchanged from
#: its cross-validated score: one standard error, stricter than the chance guard's two,
#: because a planted nudge of 0.35 SD on a series costs the ladder only ~1.5 standard
#: errors (DEV co2). (The model's shortfall against the ladder is a difference between
#: two scores on the same test rows and counts, like any such difference in these
#: rules, beyond ``_shift_harm.BEATEN_NOISE_UNITS`` = 2.)
PERIOD_NOISE_UNITS = 1.0


def chronological(artifact) -> bool:
    """Whether the test split lies wholly after the training split in time: a dated split
    with no test row before the latest training date once the test rows that copy
    training rows are set aside (a copy carries its training date:
    :func:`_ordered.uncopied_share`), or an undated one that runs forward along an
    ordered column such as a year (:func:`_ordered.ordered_split_axis`, which sets the
    copies aside alike)."""
    dataset = artifact.dataset
    comparison = dataset.comparison
    dated = bool(
        dataset.datetime_col
        and comparison is not None
        and comparison.test_before_train_fraction is not None
        and uncopied_share(comparison.test_before_train_fraction, copied_share(artifact)) <= 0.0
    )
    return dated or ordered_split_axis(artifact) is not None


def period_drift_without_harm(artifact) -> str | None:
    """Why a drift between the two periods of a chronological split is no measured harm
    to this model, or None when it may be. The reason is a clause without a verdict:
    each rule that quotes it states its own (the drift rules cap at low, unseen
    categories call the new values an extrapolation).

    On a time series the test period naturally differs from the training period; that
    is the honest split, not a bug, unless the difference costs the model. The baseline
    ladder (linear and tree models fitted on the same training rows) measures that cost
    for any model: when its best test score is not below its best cross-validated score
    by more than one noise unit of the test score (the ``chance_level`` measurement's
    standard error), the later period is no harder to predict than the earlier
    one; and when the model itself scores as well as the ladder on it (not below the
    ladder's best rung by more than ``BEATEN_NOISE_UNITS`` = 2 noise units, the bar at
    which ``_shift_harm.ladder_beats_shifted`` and the chance guard read a difference
    of two scores as real), the drift harms neither the simple models nor this one.
    The margin is stricter for the ladder than for the model on purpose: the ladder's
    loss is what a planted shift shows (it must be caught early), while a shortfall of
    the model within 2 noise units is no measured shortfall at all (DEV nowcast: a weak
    model 1.2-1.8 noise units behind a ladder that scores better on the later period
    than in cross-validation read as a medium joint drift on two clean series). A
    regression model below the ladder beyond that is judged against itself instead
    (:func:`own_error_unchanged`): a model that errs as much on its own training rows
    as on the later period is weak on both alike (too simple, too regularised), and
    reading its shortfall as the drift's harm let a natural seasonal drift outrank, and
    absorb, the underfitting that is the cause. Or against every rung of the ladder
    (:func:`every_rung_kept`): when the tree and the linear model alike score on the
    later period what they scored in cross-validation, the period moved no input where
    a model fitted on the training rows loses its footing, and what this model alone
    loses there is its own weakness (an overfitted fit, an extrapolating kernel). Or
    against the ladder on the model's own training rows
    (:func:`~deepfix_agents.rules._shift_harm.ladder_beats_shifted`): a model that
    already falls short of the ladder's cross-validated score on the rows it was fitted
    to, where no period moved, while the ladder keeps that score on the later period,
    brought its shortfall with it (DEV airfares: an RBF regressor at 0.43 on its
    training years against a tree's 0.49 in cross-validation and 0.48 on the test
    years read a natural year drift as high, and the new years as unknown categories).
    """
    if not chronological(artifact):
        return None
    measured = artifact.intervention("chance_level")
    noise = measured.noise if measured is not None else None
    if noise is None or not math.isfinite(noise) or noise <= 0:
        return None
    ladder = twin_free_ladder(artifact, cross_validated_ladder(artifact))
    test_score = artifact.performance.test_score
    if not ladder or test_score is None:
        return None
    cv = max(b.cv_score for b in ladder)
    rows = "the training rows"
    if any(isinstance(b, _Rung) for b in ladder):
        rows += " without an exact duplicate (a lower bound)"
    best = max(ladder, key=lambda b: (b.test_score, b.name))
    margin = PERIOD_NOISE_UNITS * noise
    if best.test_score < cv - margin:
        return None
    if test_score < best.test_score - BEATEN_NOISE_UNITS * noise:
        # the model falls short of the ladder on the later period; the drift is its
        # cause only if the period is harder for this model than the training rows were
        own = (
            own_error_unchanged(artifact)
            or every_rung_kept(ladder, margin)
            or (
                "the model already falls short of the ladder on its own training rows"
                if ladder_beats_shifted(artifact)
                else None
            )
        )
        if own is None:
            return None
        return (
            f"the test period follows the training period (chronological split); the "
            f"baseline ladder scores {best.test_score:.3f} on it vs {cv:.3f} in "
            f"cross-validation on {rows}, and {own}: the later period is no "
            "harder to predict, the model's shortfall is its own, so the drift costs it "
            "nothing measurable"
        )
    return (
        f"the test period follows the training period (chronological split); the baseline "
        f"ladder scores {best.test_score:.3f} on it vs {cv:.3f} in cross-validation on "
        f"{rows} and the model {test_score:.3f} (noise {noise:.3f}): the later period "
        "is no harder to predict, so the drift costs this model nothing measurable"
    )


class _Rung(NamedTuple):
    """A rung of the baseline ladder with its cross-validated score read without the
    training rows that have an exact twin (see :func:`twin_free_ladder`)."""

    name: str
    cv_score: float
    test_score: float


def twin_free_ladder(artifact, ladder) -> list:
    """The ladder with each rung's cross-validated score discounted by what exact
    duplicates in the training rows can add to it, at most.

    A training row whose exact twin is also a training row sits, in cross-validation,
    in a validation fold while its twin is in the training folds: it is predicted from
    its own copy, which no later period offers. The rows with a twin are at most twice
    the duplicated share ``d`` (every extra copy beside its original), ``f = min(2d,
    1)``; scored perfectly they lift a score whose loss adds up per row (1 - R2, the
    error rate) from ``s`` on the other rows to ``1 - (1 - s)(1 - f)``, so the other rows
    score at least ``1 - (1 - cv) / (1 - f)``. Without that discount planted duplicates
    read as a later period harder than the earlier one (DEV county_crime with 20% of
    its training rows duplicated: tree 0.72 in cross-validation, 0.53 on the rows
    without a twin, 0.59 on the test years) and block the period excuse."""
    train = artifact.dataset.train
    duplicated = train.duplicate_fraction if train is not None else 0.0
    twinned = min(2 * (duplicated or 0.0), 1.0)
    if twinned <= 0 or twinned >= 1:
        return ladder
    return [
        _Rung(b.name, min(b.cv_score, 1 - (1 - b.cv_score) / (1 - twinned)), b.test_score)
        for b in ladder
    ]


#: rungs of the ladder needed to read "every rung kept its score": one simple model
#: holding up says little; a linear and a tree model read a shift differently
MIN_KEPT_RUNGS = 2


def every_rung_kept(ladder, margin: float) -> str | None:
    """Every rung of the baseline ladder (at least :data:`MIN_KEPT_RUNGS`) scores on the
    test period no less than in cross-validation on the training rows, beyond
    ``margin``, said in words; else None.

    The best rung keeping its score shows that the later period can still be predicted,
    not that nothing in it moved out of the training range: a shifted input (a planted
    shift of a few features by 1.5-2.5 SD) leaves a linear rung, which extrapolates,
    where it was, and drops the tree rung, which cannot predict past the values it was
    fitted on (DEV seattle_temps 0.997 -> 0.110, nowcast -0.09 -> -0.60, the linear
    rung kept). A natural drift between periods costs both nothing (DEV county_crime's
    wages drifting two SD over the years: linear 0.47 -> 0.56, tree 0.61 -> 0.58); a
    model that loses on it what neither lost (an RBF kernel past its support, a forest
    fitted to noisy labels) is weak in its own way, which other rules measure."""
    if len(ladder) < MIN_KEPT_RUNGS or any(b.test_score < b.cv_score - margin for b in ladder):
        return None
    kept = ", ".join(f"{b.name} {b.cv_score:.3f} -> {b.test_score:.3f}" for b in ladder)
    return (
        f"every simple model of the ladder scores on it what it scored in "
        f"cross-validation ({kept})"
    )


def own_error_unchanged(artifact) -> str | None:
    """Regression: the model's mean squared error on the test period is no larger than
    on its own training rows beyond ``PERIOD_NOISE_UNITS`` standard errors (each split's
    MSE with the normal-error standard error ``MSE * sqrt(2 / n)``), said in words; else
    None. A model that fits its training rows no better than it predicts the later period
    (too simple, too regularised) is weak on both periods alike: its shortfall against
    the ladder is no harm of the drift. An overfitted model's training error is
    optimistic, so this never excuses the drift for it."""
    if artifact.task != "regression":
        return None
    measured = split_squared_errors(artifact)
    if measured is None or not measured[0] > 0:
        return None
    rmse_train, rmse_test, mse_train, mse_test, se = measured
    if mse_test > mse_train + PERIOD_NOISE_UNITS * se:
        return None
    return (
        f"the model's error on it (RMSE {rmse_test:.4g}) is no larger than on its own "
        f"training rows (RMSE {rmse_train:.4g}) beyond noise"
    )


class PeriodDriftHarm:
    """For the drift rules (feature, label, prediction drift): on a chronological split
    whose later period costs neither the baseline ladder nor the model anything
    measurable (:func:`period_drift_without_harm`), the finding is capped at low and the
    measurement joins its evidence (a zero-score ``baseline`` signal, which creates no
    finding on its own)."""

    def detect_baseline(self, artifact):
        reason = period_drift_without_harm(artifact)
        if reason is not None:
            yield self.signal("baseline", score=0.0, confidence=0.0, detail=f"{reason}: low")

    def severity(self, signals, artifact):
        score = self.score(signals)
        if period_drift_without_harm(artifact) is not None:
            score = min(score, PERIOD_CAP)
        return severity_for(score)


def performance_factor(artifact) -> float:
    """Drift that leaves the test score where the training score is has had no impact yet."""
    performance = artifact.performance
    if performance.train_score is None or performance.test_score is None:
        return 1.0
    return 0.8 if performance.train_score - performance.test_score <= 0.02 else 1.0


def drift_measured_columns(artifact):
    """(name, train column, test column, kind) for every input column whose drift is
    measured: not skipped (:func:`_skipped_columns`), present in both splits, and numeric
    in both (kind "numeric") or categorical or boolean in both (kind "categorical").
    One place for which columns :func:`_column_drift` reads, and how many there are.
    Needs a training split."""
    dataset = artifact.dataset
    skipped = _skipped_columns(artifact)
    for name in dataset.input_columns:
        if name in skipped:
            continue
        train, test = dataset.train.column(name), dataset.test.column(name)
        if train is None or test is None:
            continue
        if train.kind == "numeric" and test.kind == "numeric":
            yield name, train, test, "numeric"
        elif train.kind in ("categorical", "boolean") and test.kind == train.kind:
            yield name, train, test, "categorical"


def _column_drift(artifact):
    """Per-feature drift from our own statistics: (weighted score, facts) best first."""
    dataset = artifact.dataset
    if dataset.train is None:
        return []
    n_train, n_test = effective_rows(artifact, "train"), effective_rows(artifact, "test")
    unseen = dataset.comparison.unseen_category_fraction if dataset.comparison else {}
    found = []
    for name, train, test, kind in drift_measured_columns(artifact):
        facts = {"feature": name}
        if kind == "numeric":
            shift = numeric_shift(train, test, n_train, n_test)
            if shift is None:
                continue
            raw = max(interp(shift["location"], SHIFT_SCORE), interp(shift["spread"], SPREAD_SCORE))
            facts.update(
                shift=round(shift["shift"], 2), spread=round(shift["ratio"], 2), kind="numeric"
            )
        else:
            p = train.top_fraction
            se = math.sqrt(max(p * (1 - p), 0.01) * (1.0 / n_train + 1.0 / n_test))
            raw = interp(significant(abs(test.top_fraction - p), se), TOP_SHARE_SCORE)
            if unseen.get(name, 0.0) >= 0.05:  # new categories: unseen_categories' job
                raw *= 0.5
            facts.update(top_train=p, top_test=test.top_fraction, kind="categorical")
        if raw <= 0:
            continue
        weight = importance_weight(artifact, name)
        facts.update(raw=raw, weight=weight)
        found.append((raw * weight, facts))
    return sorted(found, key=lambda item: (-item[0], item[1]["feature"]))


def full_table_drift(artifact) -> dict[str, float]:
    """Per-feature drift scores over every row of both full tables (Spark input,
    ``SplitComparison.column_drift``); empty on the pandas path."""
    comparison = artifact.dataset.comparison
    return dict(comparison.column_drift) if comparison is not None else {}


def _drift_scores(artifact, check) -> tuple[dict, float]:
    """The per-feature drift scores and their noise floor: the full-table scores at the
    full tables' row counts when present (Spark input), else the check's own, computed
    on the rows it saw (``effective_rows``)."""
    full = full_table_drift(artifact)
    if full:
        dataset = artifact.dataset
        return full, two_sample_noise(dataset.train.n_rows, dataset.test.n_rows)
    noise = two_sample_noise(effective_rows(artifact, "train"), effective_rows(artifact, "test"))
    return check.values, noise


def _check_drift(artifact):
    """Per-feature (or per-property) drift scores beyond the noise floor, weighted by
    importance: Deepchecks' on its sample, or the same scores over the full tables when
    the artifact holds them (:func:`full_table_drift`)."""
    check = next(filter(None, map(artifact.check, COLUMN_DRIFT_CHECKS)), None)
    if check is None or check.outcome in ("errored", "skipped"):
        return check, []
    values, noise = _drift_scores(artifact, check)
    if not values:
        return check, []
    dataset = artifact.dataset
    features = set(dataset.input_columns) - _skipped_columns(artifact)
    found = []
    for name, drift in values.items():
        if name not in features or drift is None or not math.isfinite(drift):
            continue
        raw = interp(drift - noise, DRIFT_SCORE)
        if raw <= 0:
            continue
        found.append(
            (raw * importance_weight(artifact, name), {"feature": name, "drift": drift, "raw": raw})
        )
    return check, sorted(found, key=lambda item: (-item[0], item[1]["feature"]))


def _multivariate(check) -> float | None:
    """Deepchecks' multivariate drift score (2 AUC - 1) from whichever number it logged."""
    values = check.values
    for key in ("domain_classifier_drift_score", "drift_score"):
        if values.get(key) is not None:
            return float(values[key])
    if values.get("domain_classifier_auc") is not None:
        return max(0.0, 2.0 * float(values["domain_classifier_auc"]) - 1.0)
    return check.value


def multivariate_drift(artifact):
    """(check, score, facts) of Deepchecks' whole-sample drift (a domain classifier told
    the splits apart) beyond noise, weighted like the classifier's most useful feature;
    None when it passed or scores below 0.05. Prediction drift reads it too: when every
    feature moved only a little, this is the measure of their joint shift."""
    multi = next(filter(None, map(artifact.check, MULTIVARIATE_CHECKS)), None)
    if multi is None or multi.outcome != "not_passed":
        return None
    drift = _multivariate(multi)
    if drift is None:
        return None
    noise = 1.0 / math.sqrt(effective_rows(artifact, "test"))
    # the domain classifier's most useful feature: the drift matters as much as the
    # model relies on it
    features = set(artifact.dataset.input_columns)
    ranked = sorted(
        ((v, k) for k, v in multi.values.items() if k in features and v is not None),
        reverse=True,
    )
    if ranked and ranked[0][1] in _skipped_columns(artifact):
        # the classifier tells the splits apart by an index, id or date column, which
        # drifts by construction in an ordered split: that column's issue (identifier
        # or temporal), not covariate shift, as for the per-column scores
        return None
    weight = importance_weight(artifact, ranked[0][1]) if ranked else 0.8
    score = weight * interp(drift - noise, MULTIVARIATE_SCORE) * performance_factor(artifact)
    if score < 0.05:
        return None
    facts = {"multivariate": drift}
    if ranked:
        facts["domain_feature"] = ranked[0][1]
    return multi, score, facts


#: how close a feature's test/train ratio of medians and of spreads must both come to
#: the same power of ten (a factor within this of 10**k) to read as a unit change
UNIT_RATIO_TOLERANCE = 1.25


def unit_change(artifact, feature: str | None) -> int | None:
    """The power of ten ``k`` by which ``feature``'s test values differ from its
    training values when both its median and its spread moved by ``10**k`` (within
    :data:`UNIT_RATIO_TOLERANCE`), ``|k| >= 1`` and both medians positive: a unit
    change (thousands of dollars for dollars, mm for m) rather than a population that
    moved. None otherwise, or without the statistics.

    A shift measured in training standard deviations ("1.7 SD") describes the symptom;
    a ratio of exactly 1000 in both location and spread names the cause and its fix."""
    dataset = artifact.dataset
    if feature is None or dataset.train is None or dataset.test is None:
        return None
    train, test = dataset.train.column(feature), dataset.test.column(feature)
    if train is None or test is None:
        return None
    values = (train.q50, test.q50, train.std, test.std)
    if any(v is None or not v > 0 for v in values):
        return None
    location, spread = test.q50 / train.q50, test.std / train.std
    power = round(math.log10(location))
    if power == 0:
        return None
    near = [abs(math.log10(r) - power) <= math.log10(UNIT_RATIO_TOLERANCE) for r in (location, spread)]
    return power if all(near) else None


def _unit_words(power: int) -> str:
    """``1000x smaller`` / ``100x larger`` for a power of ten."""
    return f"{10 ** abs(power):,}x {'smaller' if power < 0 else 'larger'}"


UNIT_FIX = (
    "Convert {feature!r} to the unit the model was trained in before predict (its test "
    "values are {words} than the training values: median and spread both), and check the "
    "upstream export or join that changed it; add a unit or range check on that column to "
    "the serving pipeline."
)


@register_rule
class FeatureDrift(PeriodDriftHarm, Rule):
    id = "feature_drift"
    name = "Feature distributions shift between train and test"
    detects = (
        "Features whose distribution in the evaluation data differs from the training data (a"
        " shifted mean, a changed spread, different category shares, or a shift only visible "
        "in combination), weighted by how much the model relies on each feature."
    )
    why = (
        "A model is only reliable on data like the data it learned from. When important "
        "inputs move, the model extrapolates: its scores on the new data drop, and the test "
        "score no longer tells how it will do where the data came from."
    )
    example = (
        "A credit model is trained on 2019 applications and evaluated on 2023 ones: incomes "
        "rose by 1.5 standard deviations and the model's top feature now sits outside the "
        "range it was fitted on."
    )
    fixes = (
        "Check that train and test come from the same population and the same pipeline: "
        "same source, period, units and preprocessing (a unit change or a missing transform "
        "shows up as a huge shift in one feature).",
        "If the split was not random, re-split with shuffling "
        "(`train_test_split(..., shuffle=True, stratify=y)`); if the shift is real "
        "(time, region), train on data that represents the deployment population, e.g. "
        "recent data or `TimeSeriesSplit` validation.",
        "Make the model robust to the shift: drop or re-engineer unstable features (ratios, "
        "ranks instead of raw amounts), or weight training rows by their similarity to the "
        "target population (importance weighting from a domain classifier).",
        "Monitor the drifting features in production and retrain when their drift score "
        "crosses a threshold.",
    )
    severity_policy = (
        "Per feature, our statistics: location shift in training standard deviations (the "
        "smaller of mean and median shift), counted fully from z = 4 and not below z = 2: 0.3"
        " -> 0.2, 0.5 -> 0.35, 1 -> 0.55, 2 -> 0.75, 4 -> 0.9, 10 -> 1; or spread ratio 2x ->"
        " 0.3, 4x -> 0.55, 10x -> 0.75; categorical: change of the top category's share 0.1 "
        "-> 0.2, 0.2 -> 0.4, 0.35 -> 0.6. Each feature's score is weighted by its importance "
        "relative to the mean (0 -> 0.5, 0.3x -> 0.65, 1x -> 0.9, 2x -> 1.0; 0.75 when "
        "unknown): an ignored feature's shift still signals another population. The strongest"
        " feature sets the score, +0.05 when 3 or more features drift, +0.1 when also 30% of "
        "them. Deepchecks Feature Drift (KS / Cramer's V beyond 1.95 sqrt(1/n+1/m); with Spark "
        "input the same scores over every row of both tables, n and m their row counts) "
        "maps 0.1 -> 0.2, 0.2 -> 0.4, 0.35 -> 0.6, 0.5 -> 0.75 with the same weights; Multivariate "
        "Drift (2 AUC - 1, less 1/sqrt(n_test)) 0.25 -> 0.25, 0.4 -> 0.45, 0.6 -> 0.65, "
        "weighted like its most useful feature (x0.8 when unknown), none when that feature is an "
        "index, id or date column (it drifts by construction in an ordered split, like the "
        "columns the per-feature scores skip). Everything x0.8 when the "
        "test score is within 0.02 of the training score (no impact yet). On a chronological "
        "split, capped at low when the baseline ladder scores as well on the test period as "
        "in cross-validation (within one noise unit of the chance-level measurement) and the "
        "model as well as the ladder (not below its best rung by more than two noise units), "
        "or, for a regression model further below the ladder, its "
        "squared error on test is no larger than on its own training rows (within one "
        "standard error): the later period costs no model anything, the shortfall is the "
        "model's own. The ladder's cross-validated score is read without the training rows "
        "that have an exact duplicate (at most twice the duplicated share, scored "
        "perfectly from their copy), and the split's direction without the test rows that "
        "copy training rows."
    )
    explains = (
        "prediction_drift",
        "degenerate_predictions",
        "overfitting",
        "underfitting",
        "weak_segment",
        "poor_calibration",
        "overconfident_slice",
    )
    checks = COLUMN_DRIFT_CHECKS + MULTIVARIATE_CHECKS
    modality_fixes = {
        "text": (
            "Check that train and test texts come from the same source, period and pipeline: "
            "the same platform, language, template and cleaning (a new source, a scraper that "
            "now keeps HTML, or a truncation on one side shows up as a shifted text property).",
            "If the split was not random, re-split with shuffling and stratification; if the "
            "shift is real (new product line, new channel), label texts from the new domain "
            "and add them to training.",
            "Make the model robust to the shift: normalise texts the same way at training and "
            "inference, and fine-tune or retrain on a mix of both domains (domain-adaptive "
            "training); data augmentation (back-translation, paraphrases) widens coverage.",
            "Monitor text properties (length, language, share of unknown tokens) and embedding "
            "drift in production and retrain when they move.",
        ),
        "image": (
            "Standardise the acquisition protocol: the same camera, exposure, white balance, "
            "lighting and resolution for training and production images (a new device or "
            "light setting shows up as brightness, contrast or colour-channel drift).",
            "Normalise images the same way everywhere: per-channel mean/std normalisation, "
            "histogram equalisation or colour constancy in the preprocessing that both "
            "training and inference run.",
            "Train with augmentation covering the shift (brightness/contrast jitter, colour "
            "jitter, blur), and add labelled images from the new acquisition conditions.",
            "Monitor image properties (brightness, contrast, colour intensities) in "
            "production and retrain or recalibrate when they drift.",
        ),
    }

    def detect_dataset(self, artifact):
        drifted = _column_drift(artifact)
        if not drifted:
            return
        score, facts = drifted[0]
        n_drifted = sum(1 for _, f in drifted if f["raw"] >= DRIFTED)
        n_columns = len(artifact.dataset.input_columns)
        if n_drifted >= 3:  # several features moving together: another population
            score += 0.1 if n_drifted >= 0.3 * n_columns else 0.05
        score *= performance_factor(artifact)
        if score < 0.05:
            return
        name = facts["feature"]
        if facts["kind"] == "numeric":
            detail = (
                f"{name!r} moved by {facts['shift']:.2f} training standard deviations "
                f"(test/train spread {facts['spread']:.2f}x)"
            )
        else:
            detail = (
                f"the most frequent category of {name!r} covers {facts['top_train']:.0%} of train "
                f"but {facts['top_test']:.0%} of test"
            )
        detail += (
            f"; {n_drifted} of {n_columns} {'properties and features' if artifact.dataset.property_names else 'features'} drift beyond noise"
        )
        yield self.signal(
            "dataset",
            score=score,
            confidence=0.8,
            detail=detail,
            value=facts.get("shift"),
            n_drifted=n_drifted,
            n_features=n_columns,
            **facts,
        )

    def _full_table_signal(self, artifact, check, score, facts, n_drifted):
        """The drift score measured over every row of both Spark tables: its own
        evidence text, since the sample's Deepchecks check may have passed."""
        comparison = artifact.dataset.comparison
        feature, drift = facts["feature"], facts["drift"]
        method = comparison.column_drift_method.get(feature, "drift score")
        return self.signal(
            "dataset",
            score=score,
            confidence=0.7,
            detail=(
                f"{method} of {feature!r} over every row of both tables: {drift:.3f} "
                f"(Deepchecks Feature Drift's condition: below {FULL_TABLE_CONDITION})"
            ),
            value=drift,
            check=check.name if check is not None else None,
            feature=feature,
            drift=drift,
            n_drifted_check=n_drifted,
            drift_rows="full tables",
        )

    def detect_deepchecks(self, artifact):
        check, drifted = _check_drift(artifact)
        full = full_table_drift(artifact)
        # Deepchecks' condition (drift score < 0.2 for every feature) judged on its
        # sample; with full-table scores, the same condition on those
        failed = (
            any(v >= FULL_TABLE_CONDITION for v in full.values())
            if full else check is not None and check.outcome == "not_passed"
        )
        if drifted and failed:
            score, facts = drifted[0]
            score *= performance_factor(artifact)
            if score >= 0.05 and full:
                yield self._full_table_signal(artifact, check, score, facts, len(drifted))
            elif score >= 0.05:
                yield self.check_signal(
                    check,
                    score=score,
                    confidence=0.7 if effective_rows(artifact, "test") >= 100 else 0.5,
                    feature=facts["feature"],
                    drift=facts["drift"],
                    n_drifted_check=len(drifted),
                )
        found = multivariate_drift(artifact)
        if found is not None:
            multi, score, facts = found
            yield self.check_signal(multi, score=score, confidence=0.6, **facts)

    def names(self, signals, artifact):
        """The columns that drift beyond noise (own statistics): a model applied to inputs
        that moved is confidently wrong where they moved, so an overconfident slice on one
        of them is this drift's symptom; a slice on other features is another bug."""
        return tuple(facts["feature"] for _, facts in _column_drift(artifact))

    def explains_for(self, artifact):
        """Feature drift claims the moved predictions when a feature moved far on its own
        (at least ``NUDGE_SD``) or a categorical one changed: that shift
        may be the visible cause. When every drifting feature moved only a little
        (numeric nudges below Cohen's large effect, spreads within 2x), no single feature
        explains the moved outputs; their sum does, and prediction drift is the finding
        that measures it, so it is left to claim this one. A model at chance is the
        drift's harm only when the training rows showed a signal to lose
        (:func:`training_rows_show_signal`), and a model that loses to the baseline
        ladder is the drift's harm only when the drifted test rows cost the ladder
        something too (:func:`ladder_beats_shifted`). Outputs collapsed onto one class
        or value on the test rows only are the moved predictions at their extreme, so
        they go with them (to this finding, or to prediction drift's when that one claims
        the move); a collapse already there on the training rows, where nothing moved
        (:func:`collapsed_on_training_rows`), is no drift's symptom and keeps its own
        finding (stop 53: a linear SVM on fair predicted '0' for 80 % of its training
        rows and 97 % of the test rows after two features moved by one training SD, and
        the collapse outranked the drift that caused it)."""
        explains = self.explains
        if collapsed_on_training_rows(artifact):
            explains = tuple(c for c in explains if c != "degenerate_predictions")
        if not training_rows_show_signal(artifact):
            # a drift can cost the model only a signal the training rows showed
            explains = tuple(c for c in explains if c != "underfitting")
        if artifact.dataset.property_names:
            return explains
        drifting = [facts for _, facts in _column_drift(artifact)]
        small_nudges = bool(drifting) and all(
            facts.get("kind") == "numeric"
            and facts.get("shift", 0.0) < NUDGE_SD
            and 0.5 <= facts.get("spread", 1.0) <= 2.0
            for facts in drifting
        )
        if ladder_beats_shifted(artifact):
            # a simple rung fitted on the same rows loses nothing on the drifted test
            # rows and clearly beats the model there: the underfitting is its own
            explains = tuple(c for c in explains if c != "underfitting")
        if small_nudges:
            return tuple(c for c in explains
                         if c not in ("prediction_drift", "degenerate_predictions"))
        return explains

    def _unit_power(self, signals, artifact) -> int | None:
        """The finding's numeric feature's unit change (:func:`unit_change`), else None:
        read once here for the title, the explanation and the fixes alike."""
        if self.fact(signals, "kind") != "numeric":
            return None
        return unit_change(artifact, self.fact(signals, "feature"))

    def fix_list(self, signals, artifact):
        """A unit change (:meth:`_unit_power`) first gets its own fix: convert the column."""
        fixes = super().fix_list(signals, artifact)
        power = self._unit_power(signals, artifact)
        if power is not None:
            feature = self.fact(signals, "feature")
            fixes.insert(0, UNIT_FIX.format(feature=feature, words=_unit_words(power)))
        return fixes

    def title(self, signals, artifact):
        feature = self.fact(signals, "feature")
        shift = self.fact(signals, "shift")
        if feature in artifact.dataset.property_names:
            what = {"text": "Text", "image": "Image"}.get(artifact.modality, "Derived")
            label = f"{what} property {feature!r}"
        else:
            label = f"Feature {feature!r}"
        kind = self.fact(signals, "kind")
        n = self.fact(signals, "n_drifted")
        columns = "properties and features" if artifact.dataset.property_names else "features"
        more = f" ({n} of {self.fact(signals, 'n_features')} {columns} drift)" if n and n > 1 else ""
        if feature and kind == "numeric":
            spread = self.fact(signals, "spread") or 1.0
            power = self._unit_power(signals, artifact)
            if power is not None:
                return (
                    f"{label} is {_unit_words(power)} on test than in training: a unit "
                    f"change{more}"
                )
            if shift >= 0.3 or not (0.5 < spread < 2.0):
                if shift >= 0.3:
                    return (
                        f"{label} shifted by {shift:.1f} training standard deviations "
                        f"between train and test{more}"
                    )
                return (
                    f"The spread of {label[0].lower() + label[1:]} changed {spread:.1f}x between train "
                    f"and test{more}"
                )
        if feature and kind == "categorical":
            return (
                f"Category shares of {feature!r} shift between train and test "
                f"({self.fact(signals, 'top_train'):.0%} -> {self.fact(signals, 'top_test'):.0%} "
                f"for the most frequent value){more}"
            )
        drift = self.fact(signals, "drift")
        if feature and drift is not None:
            return f"{label} drifts between train and test (drift score {drift:.2f})"
        multi = self.fact(signals, "multivariate")
        if multi is not None:
            return f"Train and test are told apart by a classifier (multivariate drift {multi:.2f})"
        return self.name

    def explanation(self, signals, artifact):
        feature = self.fact(signals, "feature")
        if feature in artifact.dataset.property_names or (
            feature is None and artifact.dataset.property_names
        ):
            what = "images" if artifact.modality == "image" else "texts"
            which = f"{feature!r} and possibly other properties" if feature else "Their properties"
            return (
                f"The evaluation {what} differ from the training {what}: {which} moved beyond "
                "what sampling noise explains. The content itself changed -- "
                + (
                    "another camera, exposure, lighting or scanner, or a preprocessing step "
                    "applied on one side only"
                    if artifact.modality == "image"
                    else "another source, channel, style or length, or cleaning applied on one "
                    "side only"
                )
                + " -- so the model meets inputs unlike those it learned from and its "
                "predictions on them get worse."
            )
        power = self._unit_power(signals, artifact)
        if power is not None:
            return (
                f"Feature {feature!r} is {_unit_words(power)} in the evaluation data than in "
                "the training data, in its median and its spread alike: the same quantity "
                "recorded in another unit (or scaled by a step applied on one side only), not "
                "a population that moved. The model reads the numbers as they are, so every "
                "prediction that depends on this feature is computed from values it never "
                "saw."
            )
        which = f"Feature {feature!r} and possibly others" if feature else "The input features"
        return (
            f"{which} look different in the evaluation data than in the training data, and the "
            "model relies on them. A model only knows the patterns of the data it was trained "
            "on; on shifted inputs it extrapolates, so its predictions get worse and the test "
            "score stops describing the population it was built for. This happens with "
            "non-random splits, data from another period or source, or a unit or preprocessing "
            "change on one side."
        )
