"""Typed data shared by every step of a deepfix evaluation.

The flow is one-directional: *testing* produces :class:`ArtifactData` (statistics,
check outcomes, model metadata; never raw rows), *diagnosis* turns it into a
:class:`Diagnosis` of ranked :class:`Finding` objects, and *output* serialises both.
Keeping these shapes in one module means every step (and every third-party analyzer,
rule or LLM provider) agrees on what it receives, and ``findings.json`` follows
``CONTRACT.md`` section 4 by construction.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

SCHEMA_VERSION = "1"

Task = Literal["binary_classification", "multiclass_classification", "regression"]
Modality = Literal["tabular", "text", "image"]
Severity = Literal["critical", "high", "medium", "low", "info"]
Outcome = Literal["passed", "not_passed", "errored", "skipped"]
Status = Literal["pass", "warn", "fail"]
Layer = Literal["data", "split", "model"]

#: Severities from most to least urgent; the index is used for sorting and thresholds.
SEVERITY_ORDER: tuple[str, ...] = ("critical", "high", "medium", "low", "info")

#: Every category id of CONTRACT.md section 5, with its layer. Adding one here is not
#: enough: a rule module for it must be registered in ``deepfix_agents.rules``.
CATEGORY_LAYERS: dict[str, str] = {
    "missing_values": "data",
    "data_type_issues": "data",
    "duplicate_samples": "data",
    "conflicting_labels": "data",
    "target_leakage": "data",
    "identifier_leakage": "data",
    "constant_feature": "data",
    "outliers": "data",
    "class_imbalance": "data",
    "train_test_overlap": "split",
    "label_drift": "split",
    "feature_drift": "split",
    "prediction_drift": "split",
    "unseen_categories": "split",
    "temporal_leakage": "split",
    "split_size_mismatch": "split",
    "schema_mismatch": "split",
    # added since the contract (version 0.2.0), appended at the end of their layer
    "spurious_correlation": "split",
    "overfitting": "model",
    "underfitting": "model",
    "degenerate_predictions": "model",
    "poor_calibration": "model",
    "decision_threshold": "model",
    "weak_segment": "model",
    "preprocessing_mismatch": "model",
    "wrong_task_type": "model",
    "unused_features": "model",
    # added since the contract (version 0.2.0), appended at the end of their layer
    "fragile_predictions": "model",
    "overconfident_slice": "model",
    "group_disparity": "model",
    "training_divergence": "model",
    "training_stalled": "model",
}
CATEGORIES: tuple[str, ...] = tuple(CATEGORY_LAYERS)
#: the categories listed in CONTRACT.md section 5 (schema version 1); the others were
#: added since (README, "Categories added since the contract")
ADDED_CATEGORIES: tuple[str, ...] = (
    "spurious_correlation",
    "fragile_predictions",
    "overconfident_slice",
    "group_disparity",
    "training_divergence",
    "training_stalled",
)
CONTRACT_CATEGORIES: tuple[str, ...] = tuple(c for c in CATEGORIES if c not in ADDED_CATEGORIES)


def severity_rank(severity: str) -> int:
    """0 for ``critical`` ... 4 for ``info``; lower is more urgent."""
    return SEVERITY_ORDER.index(severity)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --------------------------------------------------------------------------- testing


class ColumnStats(_Model):
    """Aggregate statistics of one column in one split (no values of single rows)."""

    name: str
    dtype: str
    kind: Literal["numeric", "categorical", "boolean", "datetime", "text", "other"]
    missing_fraction: float = 0.0
    n_unique: int = 0
    unique_fraction: float = 0.0
    #: share of rows holding the most frequent value
    top_fraction: float = 0.0
    #: values of more than one Python type (e.g. numbers and strings mixed)
    mixed_types: bool = False
    #: strings that look numeric in an object column, or stray whitespace/case variants
    string_mismatch_fraction: float = 0.0
    #: text columns (object/string dtype): share of non-missing values that are text
    #: reading as a number once currency signs, thousands separators, percent signs and
    #: surrounding spaces are removed ("$52,300", "1.5 ", "12%"); None when not computed
    #: (non-text column). Numbers stored as text are a data-type issue.
    numeric_string_fraction: float | None = None
    mean: float | None = None
    std: float | None = None
    min: float | None = None
    max: float | None = None
    q01: float | None = None
    q50: float | None = None
    q99: float | None = None
    #: share of rows further than 5 IQRs outside the inter-quartile range
    outlier_fraction: float | None = None
    #: how far the values beyond those fences sit apart from the rest on the log scale:
    #: the widest empty interval, in decades (log10 of the ratio of the values on either
    #: side, the lower one at least the IQR), that separates a group of flagged values
    #: (at least 2 rows and 0.1% of them) from every value below it (above it for the low
    #: side), the wider of the two sides. A unit error or a sentinel code (x1000, 9999)
    #: leaves a gap of a factor 10 or more with nothing in between; a natural heavy tail
    #: continues the bulk (well under one decade). None when fewer rows are flagged on
    #: both sides or when not computed (Spark statistics)
    outlier_gap: float | None = None
    n_inf: int = 0
    #: Somers' D |2 AUC - 1| (classification, one-vs-rest max), |Spearman| (regression) or
    #: normalised mutual information (categoricals) with the target, train split
    target_association: float | None = None
    #: monotone with the row order (an index-like column)
    monotonic: bool = False


class SplitStats(_Model):
    """Statistics of one split (``train`` or ``test``)."""

    name: Literal["train", "test"]
    n_rows: int
    n_columns: int
    columns: list[ColumnStats] = Field(default_factory=list)
    #: share of rows that are an exact copy of an earlier row (features + label)
    duplicate_fraction: float = 0.0
    #: share of rows whose features repeat with a *different* label
    conflicting_label_fraction: float = 0.0
    label_missing_fraction: float = 0.0
    #: classification: class label (as str) -> share of rows
    label_distribution: dict[str, float] = Field(default_factory=dict)
    #: regression: mean/std/min/max/q50 of the target
    label_stats: dict[str, float] = Field(default_factory=dict)

    def column(self, name: str) -> ColumnStats | None:
        return next((c for c in self.columns if c.name == name), None)


class SplitComparison(_Model):
    """How the test split relates to the training split."""

    #: share of test rows (features only) that also appear in train
    overlap_fraction: float = 0.0
    columns_only_in_train: list[str] = Field(default_factory=list)
    columns_only_in_test: list[str] = Field(default_factory=list)
    #: column -> "train dtype -> test dtype"
    dtype_mismatches: dict[str, str] = Field(default_factory=dict)
    #: categorical column -> share of test rows holding a category never seen in train
    unseen_category_fraction: dict[str, float] = Field(default_factory=dict)
    unseen_label_fraction: float = 0.0
    test_to_train_ratio: float = 0.0
    #: share of test rows dated before the latest training date (needs datetime_col)
    test_before_train_fraction: float | None = None
    #: Spark input only (empty on the pandas path, where Deepchecks' Feature Drift on the
    #: sample is the per-feature drift score): feature -> drift score over every row of
    #: both full tables, defined as Deepchecks' Feature Drift defines it with its
    #: defaults: the two-sample Kolmogorov-Smirnov statistic of the non-missing values
    #: of a numeric feature (see ``column_drift_error``), the bias-corrected Cramer's V of a categorical
    #: feature's non-missing values (categories under 1% of train binned as "Other", the
    #: larger split scaled down to the smaller one's size); a feature with fewer than 10
    #: non-missing values in either split has no score
    column_drift: dict[str, float] = Field(default_factory=dict)
    #: feature -> "Kolmogorov-Smirnov" or "Cramer's V" (the method of ``column_drift``)
    column_drift_method: dict[str, str] = Field(default_factory=dict)
    #: upper bound of the absolute error of the Kolmogorov-Smirnov scores in
    #: ``column_drift``: 0 when exact (up to 100,000 rows per split), else 0.0012 (from
    #: 1,000 quantiles of each split with relative rank error 1e-4); Cramer's V is exact
    column_drift_error: float = 0.0


class DatasetSummary(_Model):
    target: str
    feature_names: list[str] = Field(default_factory=list)
    cat_features: list[str] = Field(default_factory=list)
    index_col: str | None = None
    datetime_col: str | None = None
    #: text/image modality: the column holding the raw content (not summarised itself)
    content_column: str | None = None
    #: text/image modality: numeric properties derived from the content (text length,
    #: brightness, ...), summarised like columns but not read by the model; duplicates,
    #: conflicting labels and overlap are then measured on the content itself
    property_names: list[str] = Field(default_factory=list)
    train: SplitStats | None = None
    test: SplitStats
    comparison: SplitComparison | None = None

    @property
    def input_columns(self) -> list[str]:
        """What describes an input, for drift and outlier rules: the model's features,
        then (text/image) the content's properties."""
        return [*self.feature_names, *self.property_names]


class ConditionResult(_Model):
    name: str
    status: Literal["PASS", "WARN", "FAIL", "ERROR"]
    details: str = ""


class CheckOutcome(_Model):
    """One check's outcome, condensed: its verdict, headline value and key numbers.

    ``value`` is the check's single headline number (its meaning per check is listed in
    ``mlflow_deepfix.checks``); ``values`` holds further named numbers (e.g. drift score
    per column, ``"<feature>"`` -> score) that analyzers may use.
    """

    name: str
    suite: str
    outcome: Outcome
    value: float | None = None
    values: dict[str, float] = Field(default_factory=dict)
    #: further named facts that are text (e.g. the weakest segment, the drift method)
    details: dict[str, str] = Field(default_factory=dict)
    conditions: list[ConditionResult] = Field(default_factory=list)
    #: why a check was skipped, or the error (type and message) when it errored
    reason: str | None = None
    duration_seconds: float = 0.0


class ModelInfo(_Model):
    """What we learned about the model without looking at its training data."""

    flavor: str | None = None
    model_class: str | None = None
    hyperparameters: dict[str, Any] = Field(default_factory=dict)
    is_pipeline: bool = False
    pipeline_steps: list[str] = Field(default_factory=list)
    #: a scaler/encoder/imputer step sits in front of the estimator
    has_preprocessing: bool = False
    #: a step in front of the estimator scales numeric features (a scaler, possibly inside
    #: a ColumnTransformer); None when the model is not a pipeline (unknown)
    has_scaling: bool | None = None
    #: distance/gradient-based estimator whose results depend on feature scale
    scale_sensitive: bool = False
    n_parameters: int | None = None
    has_predict_proba: bool = False
    #: ``class_labels``, ``probabilities``, ``continuous`` or ``unknown``
    output_kind: str = "unknown"
    classes: list[str] = Field(default_factory=list)
    #: model-native importances (``feature_importances_`` / ``|coef_|``), normalised
    feature_importances: dict[str, float] = Field(default_factory=dict)
    signature_inputs: list[str] = Field(default_factory=list)
    signature_types: dict[str, str] = Field(default_factory=dict)


class SegmentScore(_Model):
    """The model's error on test rows sharing one value of a categorical feature.

    ``error`` is the error rate (classification) or mean absolute error (regression) in
    the segment, ``overall_error`` the same on all test rows. ``baseline_error`` is the
    error of the best constant guess *within* the segment (its majority class, or its
    median target) and ``overall_baseline_error`` the same on all test rows: a segment
    whose targets simply spread wider (dinner bills vs lunch bills) has a larger error
    and a larger baseline alike, while a segment the model fails on has an error close
    to, or above, its own baseline.
    """

    feature: str
    value: str
    share: float
    n_rows: int
    error: float
    overall_error: float
    baseline_error: float | None = None
    overall_baseline_error: float | None = None
    #: the standard deviation (ddof 1) of the per-row errors in the segment and on the
    #: other test rows: a regression segment's mean absolute error is compared with the
    #: other rows' through the spread of *its own* errors, which a few wild rows widen,
    #: instead of one spread assumed for all test rows. None on old artifacts
    error_std: float | None = None
    rest_error_std: float | None = None
    #: the feature's *other* categories, every one of them however small (only the
    #: sizeable, worst few are listed as segments): their rows, their mean error and the
    #: row-weighted mean of each category's own constant-guess error (categories whose
    #: constant guess is exact, one row or one target value, left out of all three, as
    #: the rule leaves out such listed siblings). The model's skill on
    #: comparable rows, sibling_error / sibling_baseline_error, needs all of them: from
    #: the listed siblings alone it is the skill on the worst few. None on old artifacts
    sibling_n_rows: int | None = None
    sibling_error: float | None = None
    sibling_baseline_error: float | None = None


class PerformanceSummary(_Model):
    """Scores of the user's model on each split, plus its prediction distribution."""

    metric: str = ""
    test_score: float | None = None
    train_score: float | None = None
    #: all metrics computed: split -> name -> value
    scores: dict[str, dict[str, float]] = Field(default_factory=dict)
    #: classification: predicted label -> share of test predictions
    prediction_distribution: dict[str, float] = Field(default_factory=dict)
    #: per-category error of the worst segments on test (largest excess error first)
    segments: list[SegmentScore] = Field(default_factory=list)
    #: regression: std of predictions / std of the target on test
    prediction_spread_ratio: float | None = None
    #: classification: ``[min, max]`` of the model's test outputs when they are numbers
    #: and not all whole (a regressor, or a pyfunc returning a probability instead of a
    #: label); empty otherwise, and in older artifacts
    output_range: list[float] = Field(default_factory=list)
    #: classification with probabilities: expected calibration error on test
    calibration_error: float | None = None
    #: the ECE a perfectly calibrated model with the same confidences reaches by chance
    #: on these rows (90th percentile of simulations); None when not computed
    calibration_noise: float | None = None
    #: classification with probabilities: the mean stated probability of the predicted
    #: class minus the share of test rows predicted right; > 0 overconfident, < 0
    #: underconfident (the ECE says how far off, this which way on the whole)
    confidence_gap: float | None = None
    #: the standard error of ``confidence_gap`` for a perfectly calibrated model with
    #: these confidences on these rows, sqrt(sum c(1-c)) / n over the stated
    #: confidences c: a gap within a few of these is chance, not miscalibration
    confidence_gap_noise: float | None = None
    #: binary with probabilities: best F1 threshold vs default (0.5) F1 on test
    best_threshold: float | None = None
    f1_at_default: float | None = None
    f1_at_best: float | None = None
    #: classification: predicted label -> share of *train* predictions (with
    #: ``prediction_distribution``, tells prediction drift from a biased model)
    train_prediction_distribution: dict[str, float] = Field(default_factory=dict)
    #: regression: split -> ``mean`` / ``std`` of the model's predictions on that split;
    #: on test also ``distinct``, ``in_train_targets`` and ``train_target_distinct`` (the
    #: set the predictions are drawn from, ``testing.performance._answer_set``)
    prediction_stats: dict[str, dict[str, float]] = Field(default_factory=dict)


class BaselineResult(_Model):
    """One rung of the baseline ladder (dummy -> linear -> small tree)."""

    name: str
    metric: str
    cv_score: float | None = None
    test_score: float | None = None
    #: the rung's out-of-fold errors per category of each categorical feature on the
    #: training sample (the rows its ``cv_score`` was measured on), in the units of
    #: ``performance.segments``. A category whose labels are unreliable fails every
    #: model, on the training rows as on test, and the training split holds two to three
    #: times as many of its rows: the weak-segment rule reads both. Aggregates only, no
    #: rows; empty for the dummy rung and on old artifacts
    train_segments: list[SegmentScore] = Field(default_factory=list)
    #: training rows scored out of fold for ``train_segments`` (None when not measured)
    train_rows: int | None = None


class Intervention(_Model):
    """One measurement of harm: the model's score before and after removing a suspected
    cause (a counterfactual refit), on the rows a pattern affects vs the rest, or against
    chance. Severity follows these numbers, not the presence of a pattern.

    ``kind`` says what was done (``chance_level``, ``drop_feature``, ``clip_outliers``,
    ``affected_rows``, ...), ``target`` on what (a column, or ``*`` for the whole model).
    ``score_before``/``score_after`` are in ``metric`` (the main metric unless said):
    for a refit, the clone refitted as is vs with the cause removed; for ``affected_rows``
    the score on the unaffected vs the affected rows; for ``chance_level`` the chance
    score vs the model's. ``noise`` is the standard error of ``score_after -
    score_before`` (paired bootstrap over test rows), so a change is real when it exceeds
    about twice that. ``model_used`` says what was refitted: a ``clone`` of the user's
    model, a ``surrogate`` (a baseline-ladder model, when the model cannot be cloned), or
    nothing (``predictions``: the model's own test predictions).
    """

    kind: str
    category: str
    target: str = "*"
    metric: str
    score_before: float | None = None
    score_after: float | None = None
    noise: float | None = None
    n_rows: int = 0
    seconds: float = 0.0
    model_used: Literal["clone", "surrogate", "predictions"] = "predictions"
    #: further named numbers (e.g. ``p_value``, ``association``, ``share``)
    values: dict[str, float] = Field(default_factory=dict)
    detail: str = ""
    #: one number per model input, for measurements made on every input at once
    #: (``shuffle_reads``: the share of test rows whose output moves when that input alone
    #: is shuffled; exactly 0 from a dense learner's probabilities means the column never
    #: reaches the model). None for every other kind and in older artifacts.
    per_feature: dict[str, float] | None = None

    @property
    def change(self) -> float | None:
        """``score_after - score_before`` (None when either is missing)."""
        if self.score_before is None or self.score_after is None:
            return None
        return self.score_after - self.score_before


class RuntimeFailure(_Model):
    """Runtime information captured when the model or a check crashed (crash diagnosis)."""

    stage: str
    exception_type: str
    message: str
    expected_columns: list[str] = Field(default_factory=list)
    given_columns: list[str] = Field(default_factory=list)
    expected_types: dict[str, str] = Field(default_factory=dict)
    given_types: dict[str, str] = Field(default_factory=dict)
    shape: list[int] = Field(default_factory=list)
    nan_counts: dict[str, int] = Field(default_factory=dict)
    inf_counts: dict[str, int] = Field(default_factory=dict)
    #: text/object columns: number of values that are not numbers (a numeric model
    #: cannot read them)
    non_numeric_counts: dict[str, int] = Field(default_factory=dict)
    #: categorical columns: rows holding a category absent from the training data
    unseen_counts: dict[str, int] = Field(default_factory=dict)
    #: the shape of what the model returned, when it returned something unusable
    output_shape: list[int] = Field(default_factory=list)
    #: the pyfunc refused the data but the raw model predicted it (a signature that
    #: cannot hold pandas ``category`` columns): predictions, and so every other
    #: check, come from the raw model; the refusal itself still breaks serving
    served_by_raw_model: bool = False
    #: how an MLflow packaging refused pandas ``category`` columns the model itself
    #: reads: ``"signature"`` (a signature has no categorical type, and one inferred
    #: from such a frame stores the column as string and cannot convert it back) or
    #: ``"xgboost_dmatrix"`` (the xgboost flavour builds a native booster's DMatrix
    #: without ``enable_categorical``); ``""`` for any other failure
    category_refusal: Literal["", "signature", "xgboost_dmatrix"] = ""
    #: the ``category`` columns so refused (empty unless ``category_refusal``)
    refused_category_columns: list[str] = Field(default_factory=list)


# ------------------------------------------------------- behaviour probes (0.2.0)
# Measured by the testing step on bounded, seeded samples of the evaluation data (and
# of the training data for spurious correlations); aggregates only, never rows.


class FeatureFragility(_Model):
    """How the model's predictions react when one input is perturbed a little."""

    #: the feature (tabular) or ``"<column>: <perturbation>"`` (text, images)
    feature: str
    #: ``numeric``, ``categorical``, ``text`` or ``image``
    kind: str
    #: the perturbation in words ("noise of 5% of the IQR", "adjacent level", "typos")
    perturbation: str
    #: share of sampled rows whose prediction changed (classes: another label;
    #: regression: a move of more than a fifth of the target's standard deviation)
    flip_rate: float
    #: headline score on the sample before minus after the perturbation
    score_drop: float | None = None


class RobustnessSummary(_Model):
    """Prediction stability under small realistic perturbations (``testing.robustness``)."""

    n_rows: int
    metric: str
    base_score: float | None = None
    #: every perturbable input perturbed at once
    flip_rate: float = 0.0
    score_drop: float | None = None
    #: numeric noise as a fraction of each feature's spread (IQR, else std)
    noise_fraction: float = 0.0
    #: per input, most fragile first
    features: list[FeatureFragility] = Field(default_factory=list)
    #: inputs left unperturbed and why (e.g. unordered categories)
    not_perturbed: dict[str, str] = Field(default_factory=dict)


class SliceConfidence(_Model):
    """One slice of the evaluation data, described in words, and how sure the model is
    on it compared with how often it is right."""

    description: str
    features: list[str] = Field(default_factory=list)
    #: ``overconfident`` (confident and wrong) or ``underconfident`` (unsure but right)
    kind: Literal["overconfident", "underconfident"]
    n_rows: int
    share: float
    #: rows of the slice predicted with confidence >= the summary's threshold
    n_confident: int = 0
    #: overconfident: share of the slice's confident predictions that are wrong;
    #: underconfident: share of the slice's predictions that are right
    rate: float
    rate_low: float
    rate_high: float
    #: overconfident: the rate expected in the slice: the error rate the model claims
    #: there (one minus ``mean_confidence``) plus the overconfidence it shows outside the
    #: slice on the same class and confidence band (so a model that is overconfident
    #: everywhere, or about one class, is a calibration problem, not a slice);
    #: underconfident: the accuracy on all rows
    overall_rate: float
    mean_confidence: float
    #: overconfident: share of every confident wrong prediction that falls in the slice
    share_of_confident_errors: float | None = None
    #: overconfident: the noise model of the slice's confident-error count (round 32).
    #: ``n_wrong`` confident predictions are wrong; a model erring on each confident row
    #: with the probability ``overall_rate`` gives it (one minus its confidence plus the
    #: outside overconfidence) would make ``expected_wrong`` errors, a Poisson-binomial
    #: count with variance ``expected_wrong_var`` (sum of p(1 - p) over the rows): small
    #: when the model says 0.99 everywhere, larger at 0.85, so observed vs expected errors
    #: is tested with the standard error of the null, not an assumed or observed one.
    #: None in artifacts written before it was measured.
    n_wrong: int | None = None
    expected_wrong: float | None = None
    expected_wrong_var: float | None = None


class ConfidenceSummary(_Model):
    """Slices where the model is confidently wrong or needlessly unsure (``testing.confidence``)."""

    n_rows: int
    threshold: float
    #: share of all confident predictions that are wrong
    confident_error_rate: float
    n_confident: int
    n_slices_searched: int = 0
    slices: list[SliceConfidence] = Field(default_factory=list)


class GroupStats(_Model):
    """The model's behaviour on one group of one sensitive feature (test rows)."""

    group: str
    n_rows: int
    #: binary: share predicted positive; regression: mean prediction
    selection_rate: float | None = None
    selection_low: float | None = None
    selection_high: float | None = None
    #: binary: share of actual positives in the group
    base_rate: float | None = None
    accuracy: float | None = None
    accuracy_low: float | None = None
    accuracy_high: float | None = None
    tpr: float | None = None
    fpr: float | None = None
    #: regression: mean absolute error
    mae: float | None = None
    #: regression: 95% interval of the MAE, the mean target and the mean residual
    #: (prediction - truth: > 0 over-predicts the group)
    mae_low: float | None = None
    mae_high: float | None = None
    mean_target: float | None = None
    mean_residual: float | None = None
    #: multiclass: mean of the per-class recalls on the group's rows
    macro_recall: float | None = None


class GroupDisparity(_Model):
    """Gaps between the groups of one sensitive feature, each with a 95% interval
    (Newcombe's hybrid score interval of a difference of two proportions)."""

    feature: str
    #: whether the model reads this column itself
    model_sees_it: bool
    groups: list[GroupStats] = Field(default_factory=list)
    #: groups with fewer rows than the minimum, left out of the gaps
    small_groups: list[str] = Field(default_factory=list)
    min_group_rows: int = 30
    #: metric name -> gap between the best and worst scored group, and its interval
    demographic_parity_difference: float | None = None
    demographic_parity_low: float | None = None
    #: the same gap in actual positives: a selection gap within it mirrors the labels
    base_rate_difference: float | None = None
    equalized_odds_difference: float | None = None
    equalized_odds_low: float | None = None
    accuracy_difference: float | None = None
    accuracy_difference_low: float | None = None
    #: the groups the largest gap lies between (worse first)
    worst_group: str | None = None
    best_group: str | None = None
    #: multiclass: the class whose one-vs-rest rates give the equalized odds and
    #: demographic parity gaps above (per-class gaps, the largest kept)
    worst_class: str | None = None
    #: regression: gap in MAE between the worst and best group and the lower end of
    #: its interval; the MAE over all scored rows; the gap in mean residual (one group
    #: systematically under- or over-predicted) and its lower end; the target's spread
    mae_difference: float | None = None
    mae_difference_low: float | None = None
    mae_overall: float | None = None
    bias_difference: float | None = None
    bias_difference_low: float | None = None
    target_std: float | None = None
    #: the normal quantile the intervals of the regression / multiclass gaps use:
    #: 1.96 widened (Bonferroni) for the pairs of groups and classes compared
    z: float | None = None


class FairnessSummary(_Model):
    """Group disparities for the columns named in ``sensitive_features`` (``testing.fairness``)."""

    n_rows: int
    features: list[GroupDisparity] = Field(default_factory=list)


class FeatureAssociationShift(_Model):
    """A feature whose relation to the label differs between training and evaluation."""

    feature: str
    #: model-free association with the label (signed Somers' D, Spearman, or
    #: normalised mutual information for categoricals) in each split
    association_train: float
    association_test: float
    #: 95% interval of test minus train association (bootstrap standard error,
    #: Bonferroni-widened for the number of features tested)
    change_low: float
    change_high: float
    #: marginal shift of the feature itself (Kolmogorov-Smirnov or total variation)
    marginal_shift: float
    #: drop of the model's score when this feature is shuffled, on each split's sample
    importance_train: float
    importance_test: float


class SliceOnlyAssociation(_Model):
    """A feature tied to the label inside one slice of the training data (one level of
    a categorical column: a site, a source, a device) and not outside it, that the
    model nevertheless applies everywhere (``testing.spurious``)."""

    feature: str
    slice_feature: str
    slice_value: str
    n_inside: int
    n_outside: int
    #: association with the label (training sample) inside and outside the slice, and
    #: the lower end of the interval of |inside| - |outside| (bootstrap, Bonferroni)
    association_inside: float
    association_outside: float
    difference_low: float
    #: evaluation rows outside the slice whose prediction changes when the feature is
    #: shuffled among them (classification), or the mean change in target standard
    #: deviations (regression): decisions made on a feature that says nothing there
    reliance_outside: float
    #: the same on the evaluation rows inside the slice (where the feature is informative)
    reliance_inside: float
    #: the feature's own shift between the splits (KS / total variation)
    marginal_shift: float


class SpuriousSummary(_Model):
    """Train-versus-evaluation stability of each important feature's link to the label
    (``testing.spurious``)."""

    n_rows_train: int
    n_rows_test: int
    metric: str
    features: list[FeatureAssociationShift] = Field(default_factory=list)
    #: median over the features of (shuffle importance on training - on evaluation): what
    #: any feature loses when the model merely fits training better (overfitting)
    typical_importance_gap: float = 0.0
    #: features whose link to the label holds only inside one slice (see SliceOnlyAssociation)
    slice_only: list[SliceOnlyAssociation] = Field(default_factory=list)


MetricRole = Literal["train_loss", "val_loss", "train_score", "val_score"]


class MetricHistory(_Model):
    """One training metric as the training run logged it, step by step.

    ``values`` holds ``None`` where the logged value was NaN or infinite (JSON has no
    NaN); long histories are thinned to at most ``training_history.MAX_POINTS`` evenly spaced
    points (``n_points`` is the count as logged), the last point always kept.
    """

    key: str
    role: MetricRole
    steps: list[int] = Field(default_factory=list)
    values: list[float | None] = Field(default_factory=list)
    n_points: int = 0
    n_nonfinite: int = 0
    #: the step of the first NaN/inf value, if any
    first_nonfinite_step: int | None = None

    @property
    def finite(self) -> list[float]:
        return [v for v in self.values if v is not None]


class TrainingHistory(_Model):
    """What the model's training run logged: metric curves and the hyperparameters that
    explain them (learning rate, epochs, batch size, optimizer, early stopping)."""

    run_id: str
    metrics: list[MetricHistory] = Field(default_factory=list)
    #: the recognised hyperparameters, as logged (param key -> value)
    params: dict[str, str] = Field(default_factory=dict)
    learning_rate: float | None = None
    epochs: int | None = None
    batch_size: int | None = None
    optimizer: str | None = None
    #: early stopping (a patience / early-stopping param) was configured
    early_stopping: bool | None = None
    #: rows of the validation split the validation curves were measured on (a
    #: ``val_rows`` param): sets how much of their epoch-to-epoch wobble is noise
    val_rows: int | None = None

    def metric(self, role: str) -> MetricHistory | None:
        return next((m for m in self.metrics if m.role == role), None)


class ArtifactData(_Model):
    """Everything the diagnosis engine sees. Written as ``deepfix/artifact_data.json``."""

    schema_version: str = SCHEMA_VERSION
    deepfix_version: str = ""
    task: Task
    modality: Modality = "tabular"
    seed: int = 0
    sample_size: int | None = None
    dataset: DatasetSummary
    checks: list[CheckOutcome] = Field(default_factory=list)
    model: ModelInfo = Field(default_factory=ModelInfo)
    performance: PerformanceSummary = Field(default_factory=PerformanceSummary)
    baselines: list[BaselineResult] = Field(default_factory=list)
    runtime_failures: list[RuntimeFailure] = Field(default_factory=list)
    #: behaviour probes (0.2.0): None when not measured (see ``notes`` for why)
    robustness: RobustnessSummary | None = None
    confidence: ConfidenceSummary | None = None
    fairness: FairnessSummary | None = None
    spurious: SpuriousSummary | None = None
    #: wall time of each behaviour probe (probe -> seconds), part of ``checks_seconds``
    probe_seconds: dict[str, float] = Field(default_factory=dict)
    #: measured harm: counterfactual refits, affected-row scores, chance level
    interventions: list[Intervention] = Field(default_factory=list)
    #: the model's training history read from its MLflow run (None: none was logged)
    training: TrainingHistory | None = None
    #: plain-language notes about what was skipped and why
    notes: list[str] = Field(default_factory=list)
    checks_seconds: float = 0.0

    def check(self, name: str) -> CheckOutcome | None:
        return next((c for c in self.checks if c.name == name), None)

    def intervention(self, kind: str, target: str | None = None) -> Intervention | None:
        """The first intervention of ``kind`` (on ``target`` when given)."""
        return next(
            (
                i
                for i in self.interventions
                if i.kind == kind and (target is None or i.target == target)
            ),
            None,
        )


# --------------------------------------------------------------------------- diagnosis


class Evidence(_Model):
    source: str
    check: str | None = None
    detail: str
    value: float | None = None


class Reference(_Model):
    title: str
    source: str
    section: str | None = None


class Finding(_Model):
    """One root cause, with everything a user needs to act on it."""

    rank: int = 0
    category: str
    layer: Layer
    title: str
    severity: Severity
    confidence: float = Field(ge=0.0, le=1.0)
    evidence: list[Evidence] = Field(default_factory=list)
    explanation: str
    fixes: list[str] = Field(default_factory=list)
    references: list[Reference] = Field(default_factory=list)

    @field_validator("category")
    @classmethod
    def _known_category(cls, value: str) -> str:
        if value not in CATEGORY_LAYERS:
            raise ValueError(
                f"unknown category {value!r}; accepted: {', '.join(CATEGORIES)}"
            )
        return value


class CheckSummary(_Model):
    name: str
    suite: str
    outcome: Outcome
    value: float | None = None


class Timings(_Model):
    checks_seconds: float = 0.0
    diagnosis_seconds: float = 0.0
    total_seconds: float = 0.0


class Diagnosis(_Model):
    """The content of ``deepfix/findings.json`` (CONTRACT.md section 4)."""

    schema_version: str = SCHEMA_VERSION
    status: Status
    modality: Modality
    task: Task
    findings: list[Finding] = Field(default_factory=list)
    checks: list[CheckSummary] = Field(default_factory=list)
    timings: Timings = Field(default_factory=Timings)
    #: beyond the contract: which engine produced the findings and what happened to it
    provider: str = "rules"
    notes: list[str] = Field(default_factory=list)
    #: analyzers that raised (name -> error); the others' findings stand
    analyzer_errors: dict[str, str] = Field(default_factory=dict)


def compute_status(findings: list[Finding], fail_on: str) -> Status:
    """CONTRACT.md section 3: ``fail`` at/above ``fail_on``, ``warn`` for high/medium."""
    threshold = severity_rank(fail_on)
    if any(severity_rank(f.severity) <= threshold for f in findings):
        return "fail"
    if any(f.severity in ("high", "medium") for f in findings):
        return "warn"
    return "pass"
