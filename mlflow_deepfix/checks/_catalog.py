"""What each Deepchecks check reports once condensed, and how deepfix runs it.

One entry per check of Deepchecks' three default tabular suites, keyed by the name
Deepchecks gives it (``check.name()``, also the header of its result). The rules engine
reads ``CheckOutcome.value`` / ``values`` / ``details`` by these definitions, so each
entry says exactly what they hold. Conventions:

* ``value`` is one number; unless the entry says otherwise, **higher means worse**.
* ``values`` keys named ``<column>`` are feature (or identifier) column names;
  ``train_<x>`` / ``test_<x>`` are the same quantity per split.
* Single-dataset checks of ``data_integrity`` run on both splits when there is training
  data: their ``value`` is the worse (higher) of the two, ``values`` keeps per key the
  worse (higher) of the two and adds ``train_value`` / ``test_value`` (each split's
  headline); condition names end in `` (train)`` / `` (test)``. The two expensive ones
  (``both_splits=False``: Outlier Sample Detection, Feature Label Correlation, whose test
  side Feature Label Correlation Change reports) run on train only. Without training
  data they all run on the test split.
* Single-dataset checks of ``model_evaluation`` run on the test split.
* Per-column ``values`` keep at most :data:`MAX_VALUES` entries (the worst ones).
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_VALUES = 50

DATA_INTEGRITY = "data_integrity"
TRAIN_TEST_VALIDATION = "train_test_validation"
MODEL_EVALUATION = "model_evaluation"
SUITES: tuple[str, ...] = (DATA_INTEGRITY, TRAIN_TEST_VALIDATION, MODEL_EVALUATION)


@dataclass(frozen=True)
class CheckSpec:
    """How one check is run and what its condensed outcome means."""

    name: str
    suite: str
    #: ``single`` (one dataset), ``pair`` (train vs test) or ``model`` (model only)
    scope: str
    value: str
    values: str = "(none)"
    details: str = "(none)"
    #: needs the model's predictions (skipped without a model)
    needs_model: bool = False
    #: classification: needs predicted probabilities (skipped without them)
    needs_proba: bool = False
    #: rows per split it sees: ``all``, ``sample`` (sample_size), or a note
    rows: str = "all"
    #: rough relative cost, used to start expensive checks first
    cost: int = 1
    #: data_integrity single-dataset checks: run on both splits (else on train only)
    both_splits: bool = True


_SPECS = (
    # ------------------------------------------------------------------ data integrity
    CheckSpec(
        "Is Single Value", DATA_INTEGRITY, "single",
        value="number of columns (features, label) with at most one distinct non-null value",
        values="<column>: 1.0 for each such column",
    ),
    CheckSpec(
        "Special Characters", DATA_INTEGRITY, "single",
        value="largest share of a column's rows holding only special characters",
        values="<column>: that share, for columns where it is > 0",
    ),
    CheckSpec(
        "Mixed Nulls", DATA_INTEGRITY, "single",
        value="largest number of distinct null markers (None, nan, 'null', '?', ...) in one "
        "column; 0 when there are no nulls (the condition fails above 1)",
        values="<column>: number of null markers; null_fraction_<column>: share of rows "
        "holding any of them (columns with nulls only)",
    ),
    CheckSpec(
        "Mixed Data Types", DATA_INTEGRITY, "single",
        value="largest share of the rarer type (strings vs numbers) in one column; 0 when no "
        "column mixes types",
        values="<column>: that share, for mixed columns",
    ),
    CheckSpec(
        "String Mismatch", DATA_INTEGRITY, "single",
        value="number of base forms, over all columns, written in more than one way "
        "(e.g. 'red', 'Red', 'RED!')",
        values="<column>: number of such base forms; variant_fraction_<column>: share of rows "
        "holding any variant of them",
    ),
    CheckSpec(
        "Data Duplicates", DATA_INTEGRITY, "single",
        value="share of rows (features and label) that duplicate another row",
    ),
    CheckSpec(
        "String Length Out Of Bounds", DATA_INTEGRITY, "single",
        value="largest share of a string column's rows whose length is an outlier",
        values="<column>: that share, for columns with outliers",
    ),
    CheckSpec(
        "Conflicting Labels", DATA_INTEGRITY, "single",
        value="share of rows whose exact feature values appear with more than one label",
        values="n_groups: number of such feature-value groups",
        rows="all (Deepchecks runs on the rows whose features repeat, found by hashing; the "
        "share is taken over all rows, so it is exact)",
        cost=2,
    ),
    CheckSpec(
        "Outlier Sample Detection", DATA_INTEGRITY, "single",
        value="share of sampled rows whose LoOP outlier probability is >= 0.7 (Deepchecks' "
        "default threshold); the check has no condition in the default suite, so its outcome "
        "is passed unless it errors",
        values="max_probability, fraction_above_0.9, n_samples",
        rows="sample_size // 4 (nearest-neighbour cost grows with the square)",
        cost=4, both_splits=False,
    ),
    CheckSpec(
        "Feature Label Correlation", DATA_INTEGRITY, "single",
        value="largest Predictive Power Score (0..1) of one feature for the label",
        values="<column>: PPS of each feature",
        rows="sample_size // 2 (PPS cross-validates a tree per feature)",
        cost=3, both_splits=False,
    ),
    CheckSpec(
        "Feature Feature Correlation", DATA_INTEGRITY, "single",
        value="number of feature pairs with correlation > 0.9, as the condition counts them "
        "(signed Spearman for numeric pairs, Theil's U / correlation ratio otherwise)",
        values="'<a> | <b>': |correlation| of the most correlated pairs (>= 0.5)",
        rows="sample",
        cost=2,
    ),
    CheckSpec(
        "Identifier Label Correlation", DATA_INTEGRITY, "single",
        value="largest PPS (0..1) of the index or datetime column for the label (the "
        "condition fails above 0)",
        values="<column>: PPS of index_col / datetime_col",
        rows="sample_size // 2",
    ),
    # ----------------------------------------------------------- train test validation
    CheckSpec(
        "Datasets Size Comparison", TRAIN_TEST_VALIDATION, "pair",
        value="test rows / train rows (LOWER is worse; the condition fails at <= 0.01)",
        values="train_size, test_size",
    ),
    CheckSpec(
        "New Label Train Test", TRAIN_TEST_VALIDATION, "pair",
        value="share of test rows whose label never appears in train",
        values="n_new_labels: number of such labels",
    ),
    CheckSpec(
        "New Category Train Test", TRAIN_TEST_VALIDATION, "pair",
        value="largest share of test rows, in one categorical feature, holding a category "
        "never seen in train",
        values="<column>: that share; n_new_<column>: number of new categories",
    ),
    CheckSpec(
        "String Mismatch Comparison", TRAIN_TEST_VALIDATION, "pair",
        value="number of base forms, over all columns, with a test spelling never seen in "
        "train",
        values="<column>: number of such base forms",
    ),
    CheckSpec(
        "Date Train Test Leakage Duplicates", TRAIN_TEST_VALIDATION, "pair",
        value="share of test rows whose date also appears in train",
    ),
    CheckSpec(
        "Date Train Test Leakage Overlap", TRAIN_TEST_VALIDATION, "pair",
        value="share of test rows dated before the latest training date",
    ),
    CheckSpec(
        "Index Train Test Leakage", TRAIN_TEST_VALIDATION, "pair",
        value="share of test rows whose index value also appears in train",
    ),
    CheckSpec(
        "Train Test Samples Mix", TRAIN_TEST_VALIDATION, "pair",
        value="share of (sampled) test rows, features and label, that also appear in train",
        values="n_test_rows: test rows checked",
        rows="test: sample; train: all (only rows whose hash matches a test row are given "
        "to Deepchecks, which cannot change the share)",
        cost=2,
    ),
    CheckSpec(
        "Feature Label Correlation Change", TRAIN_TEST_VALIDATION, "pair",
        value="largest PPS drop or rise of one feature between train and test "
        "(|train PPS - test PPS|)",
        values="train_<column>, test_<column>: PPS per split",
        rows="sample_size // 2",
        cost=3,
    ),
    CheckSpec(
        "Feature Drift", TRAIN_TEST_VALIDATION, "pair",
        value="largest drift score of one feature (Kolmogorov-Smirnov for numeric, Cramer's V "
        "for categorical; 0..1)",
        values="<column>: drift score of each feature",
        details="method_<column>: drift method",
        rows="up to 100,000 (Deepchecks' default)",
        cost=2,
    ),
    CheckSpec(
        "Label Drift", TRAIN_TEST_VALIDATION, "pair",
        value="drift score of the label (Cramer's V for classes, Kolmogorov-Smirnov for "
        "regression)",
        details="method",
    ),
    CheckSpec(
        "Multivariate Drift", TRAIN_TEST_VALIDATION, "pair",
        value="domain-classifier drift score, 2 * AUC - 1 clipped at 0 (0 = splits "
        "indistinguishable, 1 = fully separable)",
        values="domain_classifier_auc; <column>: the domain classifier's permutation "
        "importance per feature (> 0 only), computed only when the drift score is >= 0.25 "
        "(the condition's threshold)",
        rows="sample (importance: sample_size // 2)",
        cost=3,
    ),
    # --------------------------------------------------------------- model evaluation
    CheckSpec(
        "Train Test Performance", MODEL_EVALUATION, "pair", needs_model=True,
        value="largest relative degradation (train - test) / |train| over metrics and classes",
        values="train_<metric>, test_<metric>: metric per split, averaged over classes "
        "(classification: F1, Precision, Recall; regression: Neg RMSE, Neg MAE, R2)",
    ),
    CheckSpec(
        "Roc Report", MODEL_EVALUATION, "single", needs_model=True, needs_proba=True,
        value="lowest one-vs-rest ROC AUC over classes (LOWER is worse)",
        values="auc_<class>: AUC per class",
    ),
    CheckSpec(
        "Confusion Matrix Report", MODEL_EVALUATION, "single", needs_model=True,
        value="largest share of predictions that go to one class (1.0 = one class predicted "
        "for everything); no condition in the default suite",
        values="accuracy; predicted_share_<class>, recall_<class>",
    ),
    CheckSpec(
        "Prediction Drift", MODEL_EVALUATION, "pair", needs_model=True,
        value="drift score of the predictions (Cramer's V / Kolmogorov-Smirnov; 0..1)",
        details="method",
    ),
    CheckSpec(
        "Simple Model Comparison", MODEL_EVALUATION, "pair", needs_model=True,
        value="gain of the model over a most-frequent / mean baseline, (model - simple) / "
        "(perfect - simple), averaged over classes, lowest over metrics (LOWER is worse; "
        "the condition fails below 0.1)",
        values="model_<metric>, simple_<metric>, gain_<metric>",
        rows="sample",
    ),
    CheckSpec(
        "Weak Segments Performance", MODEL_EVALUATION, "single", needs_model=True,
        needs_proba=True,
        value="relative performance drop of the weakest segment, (average - weakest) / "
        "|average| (the condition warns at >= 0.2)",
        values="average_score, weakest_score, weakest_segment_fraction (share of rows)",
        details="metric, weakest_segment (its description)",
        rows="sample_size // 2, the 5 most important features",
        cost=4,
    ),
    CheckSpec(
        "Calibration Score", MODEL_EVALUATION, "single", needs_model=True, needs_proba=True,
        value="largest Brier score over classes (0 = perfect); no condition in the default "
        "suite",
        values="brier_<class>",
    ),
    CheckSpec(
        "Regression Error Distribution", MODEL_EVALUATION, "single", needs_model=True,
        value="systematic error ratio |mean error| / RMSE (the condition fails at >= 0.01)",
        values="rmse, mean_error, median_error, kurtosis (the condition fails at <= -0.1)",
    ),
    CheckSpec(
        "Unused Features", MODEL_EVALUATION, "single", needs_model=True,
        value="number of unused features with high variance (the condition fails above 5)",
        values="n_used, n_unused_high_variance, n_unused_low_variance",
        details="unused_high_variance: comma-separated names",
        rows="sample",
    ),
    CheckSpec(
        "Boosting Overfit", MODEL_EVALUATION, "pair", needs_model=True,
        value="relative decline of the test score from its best boosting iteration to the "
        "last, (best - last) / |best| (the condition fails at >= 0.05)",
        values="train_score, test_score (last iteration), best_test_score (Deepchecks' "
        "default metric: accuracy for classification, negative RMSE for regression)",
        rows="sample; needs the raw AdaBoost / GradientBoosting / LightGBM / XGBoost / "
        "CatBoost model (skipped otherwise)",
        cost=2,
    ),
    CheckSpec(
        "Model Inference Time", MODEL_EVALUATION, "single", needs_model=True,
        value="None: a clock reading is kept out of the headline value so findings stay "
        "deterministic",
        values="``seconds_per_row``: average seconds per row of the model's predict (the "
        "condition fails at >= 0.001)",
        rows="1,000 test rows",
    ),
)

#: check name -> :class:`CheckSpec`, in Deepchecks' suite order.
CHECK_CATALOG: dict[str, CheckSpec] = {spec.name: spec for spec in _SPECS}

#: check name -> the CONTRACT.md section 5 category a naive user would blame when the
#: check does not pass (used by ``deepfix bench --baseline deepchecks``). Model Inference
#: Time is absent: no category is about speed.
DEEPCHECKS_CATEGORY: dict[str, str] = {
    "Is Single Value": "constant_feature",
    "Special Characters": "data_type_issues",
    "Mixed Nulls": "missing_values",
    "Mixed Data Types": "data_type_issues",
    "String Mismatch": "data_type_issues",
    "Data Duplicates": "duplicate_samples",
    "String Length Out Of Bounds": "outliers",
    "Conflicting Labels": "conflicting_labels",
    "Outlier Sample Detection": "outliers",
    "Feature Label Correlation": "target_leakage",
    "Feature Feature Correlation": "unused_features",
    "Identifier Label Correlation": "identifier_leakage",
    "Datasets Size Comparison": "split_size_mismatch",
    "New Label Train Test": "unseen_categories",
    "New Category Train Test": "unseen_categories",
    "String Mismatch Comparison": "data_type_issues",
    "Date Train Test Leakage Duplicates": "temporal_leakage",
    "Date Train Test Leakage Overlap": "temporal_leakage",
    "Index Train Test Leakage": "train_test_overlap",
    "Train Test Samples Mix": "train_test_overlap",
    "Feature Label Correlation Change": "target_leakage",
    "Feature Drift": "feature_drift",
    "Label Drift": "label_drift",
    "Multivariate Drift": "feature_drift",
    "Train Test Performance": "overfitting",
    "Roc Report": "underfitting",
    "Confusion Matrix Report": "degenerate_predictions",
    "Prediction Drift": "prediction_drift",
    "Simple Model Comparison": "underfitting",
    "Weak Segments Performance": "weak_segment",
    "Calibration Score": "poor_calibration",
    "Regression Error Distribution": "underfitting",
    "Unused Features": "unused_features",
    "Boosting Overfit": "overfitting",
}
