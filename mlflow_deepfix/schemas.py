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
    "overfitting": "model",
    "underfitting": "model",
    "degenerate_predictions": "model",
    "poor_calibration": "model",
    "decision_threshold": "model",
    "weak_segment": "model",
    "preprocessing_mismatch": "model",
    "wrong_task_type": "model",
    "unused_features": "model",
    # added since the contract (version 0.2.0): read from the model's training history
    "training_divergence": "model",
    "training_stalled": "model",
}
#: Categories added after CONTRACT.md section 5, with the version that added them
#: (append-only; the README lists them too).
CATEGORIES_ADDED: dict[str, str] = {
    "training_divergence": "0.2.0",
    "training_stalled": "0.2.0",
}
CATEGORIES: tuple[str, ...] = tuple(CATEGORY_LAYERS)


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
    the segment, ``overall_error`` the same on all test rows.
    """

    feature: str
    value: str
    share: float
    n_rows: int
    error: float
    overall_error: float


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
    #: classification with probabilities: expected calibration error on test
    calibration_error: float | None = None
    #: binary with probabilities: best F1 threshold vs default (0.5) F1 on test
    best_threshold: float | None = None
    f1_at_default: float | None = None
    f1_at_best: float | None = None
    #: classification: predicted label -> share of *train* predictions (with
    #: ``prediction_distribution``, tells prediction drift from a biased model)
    train_prediction_distribution: dict[str, float] = Field(default_factory=dict)
    #: regression: split -> ``mean`` / ``std`` of the model's predictions on that split
    prediction_stats: dict[str, dict[str, float]] = Field(default_factory=dict)


class BaselineResult(_Model):
    """One rung of the baseline ladder (dummy -> linear -> small tree)."""

    name: str
    metric: str
    cv_score: float | None = None
    test_score: float | None = None


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
    #: the model's training history read from its MLflow run (None: none was logged)
    training: TrainingHistory | None = None
    #: plain-language notes about what was skipped and why
    notes: list[str] = Field(default_factory=list)
    checks_seconds: float = 0.0

    def check(self, name: str) -> CheckOutcome | None:
        return next((c for c in self.checks if c.name == name), None)


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
