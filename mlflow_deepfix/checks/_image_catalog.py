"""What each Deepchecks *vision* check reports once condensed, and how deepfix runs it.

The image counterpart of :mod:`mlflow_deepfix.checks._catalog`: one
:class:`~mlflow_deepfix.checks._catalog.CheckSpec` per check of Deepchecks' three default
vision suites (``deepchecks.vision.suites``), keyed by ``check.name()``, plus the condensers
that turn each result into a :class:`~mlflow_deepfix.schemas.CheckOutcome`. The same
conventions hold (``value``: one number, higher is worse unless said otherwise).

Why a separate catalog: several vision checks share a name with a tabular check but not
its result shape (Label Drift, Prediction Drift, Simple Model Comparison, Confusion
Matrix Report, Weak Segments Performance). Their condensers here give ``value`` /
``values`` **the meaning of the tabular entry**, so the rules read both modalities alike.

Image properties are deepfix's own (:data:`mlflow_deepfix.testing.content.image_features.IMAGE_PROPERTIES`,
snake_case: ``brightness``, ``rms_contrast``, ``mean_red_relative_intensity``, ...);
Deepchecks computes its checks on them, so ``values`` keys named ``<property>`` are those
names. Grey image sets have no colour properties.

How they run (see :mod:`mlflow_deepfix.checks._image`): data_integrity's Image Property
Outliers runs on both splits (merged like the tabular single-dataset checks), Property
Label Correlation on train only (its test side is in Property Label Correlation Change);
without training data they run on test. model_evaluation's single-dataset checks run on
test. Every check sees at most ``sample_size`` images per split (one seeded random
sample; ``rows`` says which see half of it).

This module imports no Deepchecks vision code (nor torch): the catalog is readable from
the tabular path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from mlflow_deepfix.checks._catalog import (
    DATA_INTEGRITY,
    MODEL_EVALUATION,
    TRAIN_TEST_VALIDATION,
    CheckSpec,
)
from mlflow_deepfix.checks._condense import (
    Condensed,
    _clean,
    _confusion_matrix,
    _drift,
    _feature_drift,
    _max,
    _multivariate_drift,
    _num,
    _pps,
    _train_test_performance,
    _weak_segments,
    to_outcome,
)
from mlflow_deepfix.schemas import CheckOutcome

#: checks that only apply to object detection (deepfix runs image classification)
DETECTION_ONLY = frozenset({"Mean Average Precision Report", "Mean Average Recall Report"})
#: checks that need the model's probabilities on the training split too
NEEDS_TRAIN_PROBA = frozenset({"Class Performance", "Prediction Drift"})

_SPECS = (
    # ------------------------------------------------------------------ data integrity
    CheckSpec(
        "Image Property Outliers", DATA_INTEGRITY, "single",
        value="largest share of images that are IQR outliers (1.5 x IQR beyond the quartiles) "
        "on one image property; no condition in the default suite, so its outcome is passed "
        "unless it errors",
        values="<property>: that share per property (> 0 only); lower_<property> / "
        "upper_<property>: the inlier range of the properties with outliers",
        rows="sample",
    ),
    CheckSpec(
        "Label Property Outliers", DATA_INTEGRITY, "single",
        value="(always skipped: Deepchecks defines label properties for object detection and "
        "segmentation only)",
    ),
    CheckSpec(
        "Property Label Correlation", DATA_INTEGRITY, "single",
        value="largest Predictive Power Score (0..1) of one image property for the label (a "
        "property that predicts the class, e.g. all cats photographed in the dark); no "
        "condition in the default suite",
        values="<property>: PPS of each property",
        rows="sample_size // 2 (PPS cross-validates trees per property)", cost=2,
        both_splits=False,
    ),
    # ----------------------------------------------------------- train test validation
    CheckSpec(
        "New Labels", TRAIN_TEST_VALIDATION, "pair",
        value="share of test images whose label never appears in train (as New Label Train "
        "Test)",
        values="n_new_labels: number of such labels; new_<class>: test images of each",
    ),
    CheckSpec(
        "Heatmap Comparison", TRAIN_TEST_VALIDATION, "pair",
        value="mean absolute difference between the average grey image of train and of test "
        "(images resized to the first one's size), in 0..1 (1 = 255 grey levels); no "
        "condition in the default suite",
        values="max_difference: the largest pixel difference, 0..1",
    ),
    CheckSpec(
        "Label Drift", TRAIN_TEST_VALIDATION, "pair",
        value="drift score of the label (Cramer's V over classes; 0..1)",
        details="method",
    ),
    CheckSpec(
        "Image Property Drift", TRAIN_TEST_VALIDATION, "pair",
        value="largest drift score of one image property (Kolmogorov-Smirnov, 0..1)",
        values="<property>: drift score of each property",
        details="method_<property>: drift method",
        rows="sample",
    ),
    CheckSpec(
        "Image Dataset Drift", TRAIN_TEST_VALIDATION, "pair",
        value="domain-classifier drift score on the image properties, 2 * AUC - 1 clipped at "
        "0 (as Multivariate Drift); no condition in the default suite",
        values="domain_classifier_auc; <property>: the domain classifier's feature importance "
        "(> 0 only)",
        rows="sample (the larger split is cut to the smaller one's size)",
        cost=2,
    ),
    CheckSpec(
        "Property Label Correlation Change", TRAIN_TEST_VALIDATION, "pair",
        value="largest PPS drop or rise of one image property for one class between train and "
        "test (|train PPS - test PPS|; the condition fails when train - test >= 0.2)",
        values="train_<property>, test_<property>: the property's highest PPS over classes, "
        "per split",
        rows="sample_size // 2 (PPS per property and class)", cost=3,
    ),
    # --------------------------------------------------------------- model evaluation
    CheckSpec(
        "Class Performance", MODEL_EVALUATION, "pair", needs_model=True, needs_proba=True,
        value="largest relative degradation (train - test) / |train| over metrics and classes "
        "(as Train Test Performance; the condition fails at >= 0.1)",
        values="train_<metric>, test_<metric>: metric per split averaged over classes "
        "(Precision, Recall)",
    ),
    CheckSpec(
        "Mean Average Precision Report", MODEL_EVALUATION, "single", needs_model=True,
        value="(always skipped: object detection only)",
    ),
    CheckSpec(
        "Mean Average Recall Report", MODEL_EVALUATION, "single", needs_model=True,
        value="(always skipped: object detection only)",
    ),
    CheckSpec(
        "Prediction Drift", MODEL_EVALUATION, "pair", needs_model=True, needs_proba=True,
        value="drift score of the predicted classes (Cramer's V; 0..1)",
        details="method",
    ),
    CheckSpec(
        "Simple Model Comparison", MODEL_EVALUATION, "pair", needs_model=True,
        needs_proba=True,
        value="gain of the model over the most-frequent-class baseline, (model - simple) / "
        "(perfect - simple), averaged over classes, lowest over metrics (LOWER is worse; the "
        "condition fails when a class's gain is <= 0.1)",
        values="model_<metric>, simple_<metric>, gain_<metric> (metric: F1 per class, "
        "averaged)",
    ),
    CheckSpec(
        "Confusion Matrix Report", MODEL_EVALUATION, "single", needs_model=True,
        needs_proba=True,
        value="largest share of predictions that go to one class (1.0 = one class predicted "
        "for everything); no condition in the default suite",
        values="accuracy; predicted_share_<class>, recall_<class>",
    ),
    CheckSpec(
        "Weak Segments Performance", MODEL_EVALUATION, "single", needs_model=True,
        needs_proba=True,
        value="relative performance drop of the weakest segment of image properties, "
        "(average - weakest) / |average| (score: negative cross-entropy; the condition warns "
        "at >= 0.2)",
        values="average_score, weakest_score, weakest_segment_fraction (share of images)",
        details="metric, weakest_segment (its description, in image properties)",
        rows="sample_size // 2", cost=3,
    ),
)

#: check name -> :class:`CheckSpec`, in Deepchecks' vision suite order.
IMAGE_CHECK_CATALOG: dict[str, CheckSpec] = {spec.name: spec for spec in _SPECS}

#: check name -> the CONTRACT.md section 5 category a naive user would blame when the
#: check does not pass. Class Performance -> overfitting: its default condition is the
#: train-to-test relative degradation, the overfitting signal (underfitting is Simple
#: Model Comparison's).
IMAGE_DEEPCHECKS_CATEGORY: dict[str, str] = {
    "Image Property Outliers": "outliers",
    "Label Property Outliers": "outliers",
    "Property Label Correlation": "target_leakage",
    "New Labels": "unseen_categories",
    "Heatmap Comparison": "feature_drift",
    "Label Drift": "label_drift",
    "Image Property Drift": "feature_drift",
    "Image Dataset Drift": "feature_drift",
    "Property Label Correlation Change": "target_leakage",
    "Class Performance": "overfitting",
    "Mean Average Precision Report": "underfitting",
    "Mean Average Recall Report": "underfitting",
    "Prediction Drift": "prediction_drift",
    "Simple Model Comparison": "underfitting",
    "Confusion Matrix Report": "degenerate_predictions",
    "Weak Segments Performance": "weak_segment",
}


# --------------------------------------------------------------------------- condensers


def _outlier_shares(v: dict, n_images: int) -> Condensed:
    """``{property: {'outliers_identifiers', 'lower_limit', 'upper_limit'} | message}``;
    shares are taken over the ``n_images`` images the check saw."""
    values: dict[str, float] = {}
    for prop, info in v.items():
        if not isinstance(info, dict) or not n_images:
            continue
        share = len(info.get("outliers_identifiers", [])) / n_images
        if share > 0:
            values[str(prop)] = share
            for bound in ("lower", "upper"):
                limit = _num(info.get(f"{bound}_limit"))
                if limit is not None:
                    values[f"{bound}_{prop}"] = limit
    shares = [s for k, s in values.items() if not k.startswith(("lower_", "upper_"))]
    return _max(shares), values, {}


def _new_labels(v: dict) -> Condensed:
    new = {str(k): _num(n) or 0.0 for k, n in (v.get("new_labels") or {}).items()}
    total = _num(v.get("all_labels_count")) or 0.0
    values = {"n_new_labels": float(len(new))}
    values.update({f"new_{k}": n for k, n in new.items()})
    return (sum(new.values()) / total if total else 0.0), values, {}


def _heatmap(v: dict) -> Condensed:
    diff = np.asarray(v.get("diff"), dtype=float)
    if diff.size == 0:
        return None, {}, {}
    return float(diff.mean() / 255.0), {"max_difference": float(diff.max() / 255.0)}, {}


def _class_drift(v: dict) -> Condensed:
    """Vision Label / Prediction Drift report one entry per label property; for
    classification the only one is 'Samples Per Class' (the class distribution)."""
    entries = [e for e in v.values() if isinstance(e, dict)]
    if not entries:
        return None, {}, {}
    worst = max(entries, key=lambda e: _num(e.get("Drift score")) or 0.0)
    return _drift(worst)


def _pps_change(v: dict) -> Condensed:
    values: dict[str, float] = {}
    diffs: list[float] = []
    for prop, info in v.items():
        train, test = info.get("train", {}), info.get("test", {})
        if all(isinstance(x, dict) for x in (train, test)):  # per class
            for cls in set(train) | set(test):
                diffs.append(abs((_num(train.get(cls)) or 0.0) - (_num(test.get(cls)) or 0.0)))
            train_best, test_best = _max(train.values()), _max(test.values())
        else:
            diffs.append(abs((_num(train) or 0.0) - (_num(test) or 0.0)))
            train_best, test_best = _num(train), _num(test)
        if train_best is not None:
            values[f"train_{prop}"] = train_best
        if test_best is not None:
            values[f"test_{prop}"] = test_best
    return _max(diffs), _clean(values), {}


def _simple_model(v: pd.DataFrame) -> Condensed:
    """Vision's result is a frame (Model, Metric, Class, Value) of per-class scores of the
    given, simple and perfect models; the gain is as tabular's Simple Model Comparison."""
    from deepchecks.utils.metrics import get_gain

    if not isinstance(v, pd.DataFrame) or v.empty:
        return None, {}, {}
    values: dict[str, float] = {}
    gains = []
    for metric, rows in v.groupby("Metric", sort=True):
        table = rows.pivot_table(index="Class", columns="Model", values="Value", aggfunc="mean")
        if not {"Given Model", "Simple Model"} <= set(table.columns):
            continue
        table = table.dropna(subset=["Given Model", "Simple Model"])
        if table.empty:
            continue
        values[f"model_{metric}"] = float(table["Given Model"].mean())
        values[f"simple_{metric}"] = float(table["Simple Model"].mean())
        if "Perfect Model" in table.columns:
            metric_gains = [get_gain(s, o, p, 50) for o, s, p in
                            zip(table["Given Model"], table["Simple Model"], table["Perfect Model"])
                            if _num(p) is not None]
            if metric_gains:
                values[f"gain_{metric}"] = float(np.mean(metric_gains))
                gains.append(values[f"gain_{metric}"])
    return (min(gains) if gains else None), values, {}


def _confusion(v: Any, class_names: list[str] | None = None) -> Condensed:
    """Vision gives a bare square array (rows: true class, columns: predicted class, in
    sorted class-id order; NaN where a class was never predicted or never a label); with
    the names it becomes tabular's frame."""
    matrix = np.nan_to_num(np.asarray(v, dtype=float))
    if matrix.ndim != 2 or matrix.size == 0:
        return None, {}, {}
    names = class_names if class_names and len(class_names) == matrix.shape[0] \
        else [str(i) for i in range(matrix.shape[0])]
    return _confusion_matrix(pd.DataFrame(matrix, index=names, columns=names))


IMAGE_CONDENSERS: dict[str, Callable[..., Condensed]] = {
    "Image Property Outliers": _outlier_shares,
    "Property Label Correlation": _pps,
    "New Labels": _new_labels,
    "Heatmap Comparison": _heatmap,
    "Label Drift": _class_drift,
    "Image Property Drift": _feature_drift,
    "Image Dataset Drift": _multivariate_drift,
    "Property Label Correlation Change": _pps_change,
    "Class Performance": _train_test_performance,
    "Prediction Drift": _class_drift,
    "Simple Model Comparison": _simple_model,
    "Confusion Matrix Report": _confusion,
    "Weak Segments Performance": _weak_segments,
}


def condense_image(name: str, suite: str, result: Any, seconds: float, suffix: str = "", *,
                   n_images: int = 0, class_names: list[str] | None = None) -> CheckOutcome:
    """One Deepchecks vision ``CheckResult`` -> :class:`CheckOutcome`. ``n_images``: images
    the check saw (Image Property Outliers' shares); ``class_names``: names of the class ids
    0..K-1 observed (Confusion Matrix Report's rows and columns)."""
    condenser = IMAGE_CONDENSERS[name]
    if name == "Image Property Outliers":
        condensed = condenser(result.value, n_images)
    elif name == "Confusion Matrix Report":
        condensed = condenser(result.value, class_names)
    else:
        condensed = condenser(result.value)
    return to_outcome(name, suite, result, seconds, condensed, suffix)
