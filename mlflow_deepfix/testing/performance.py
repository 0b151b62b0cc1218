"""How well the user's model does, and how its outputs are distributed.

The main metric is chosen to expose the model-layer failures the diagnosis looks for:

* classification: ``f1_macro`` (F1 averaged over the classes present in ``y``, each
  class weighing the same). Predicting the majority class for everything, which plain
  accuracy rewards on imbalanced data, scores about ``1 / n_classes`` of a good model.
* regression: ``r2`` (1 = perfect, 0 = no better than predicting the mean).

Everything else (accuracy, balanced accuracy, ROC AUC, log loss, RMSE, MAE, counts of
NaN predictions) goes into ``scores``. Labels are compared as strings through
:func:`mlflow_deepfix.testing.stats.label_keys`, so ``1``, ``1.0`` and ``"1"`` are one class and
string labels, labels never predicted and NaN predictions need no special care.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

import numpy as np
import pandas as pd

from mlflow_deepfix.schemas import PerformanceSummary, SegmentScore
from mlflow_deepfix.testing.stats import is_classification, label_keys

logger = logging.getLogger(__name__)

#: the main metric per task family
CLASSIFICATION_METRIC = "f1_macro"
REGRESSION_METRIC = "r2"
#: equal-frequency bins of the expected calibration error
ECE_BINS = 10
#: thresholds tried for the best F1 of the minority class
THRESHOLDS = np.round(np.arange(0.01, 1.0, 0.01), 2)
#: prediction_distribution keeps this many values; the rest go under ``<other>``
MAX_DISTRIBUTION_KEYS = 50
_MISSING = "<nan>"


def main_metric(task: str) -> str:
    """The name of the main metric for ``task``."""
    return CLASSIFICATION_METRIC if is_classification(task) else REGRESSION_METRIC


def _keys(values: Any) -> np.ndarray:
    """Labels as a str array, missing ones as ``<nan>``."""
    keys = label_keys(values)
    keys[pd.isna(keys)] = _MISSING
    return keys.astype(str) if keys.size else np.asarray([], dtype=str)


def _class_counts(y: np.ndarray, pred: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(true positives, true count, predicted count) for each class present in ``y``,
    by factorising both arrays together: linear in rows whatever the number of labels."""
    codes, uniques = pd.factorize(np.concatenate([y, pred]))
    y_codes, pred_codes = codes[: y.size], codes[y.size :]
    k = len(uniques)
    tp = np.bincount(y_codes[y_codes == pred_codes], minlength=k).astype(float)
    n_true = np.bincount(y_codes, minlength=k).astype(float)
    n_pred = np.bincount(pred_codes, minlength=k).astype(float)
    present = n_true > 0
    return tp[present], n_true[present], n_pred[present]


def _f1_per_class(y: np.ndarray, pred: np.ndarray) -> np.ndarray:
    tp, n_true, n_pred = _class_counts(y, pred)
    denominator = n_true + n_pred
    return np.divide(2 * tp, denominator, out=np.zeros_like(tp), where=denominator > 0)


def score_main_metric(task: str, y_true: Any, y_pred: Any) -> float:
    """The main metric of ``task`` (see the module docstring), robust to label dtypes;
    the baseline ladder scores with it too, so that the rungs compare with the model."""
    if is_classification(task):
        y, pred = _keys(y_true), _keys(y_pred)
        keep = y != _MISSING
        y, pred = y[keep], pred[keep]
        if y.size == 0:
            return float("nan")
        return float(_f1_per_class(y, pred).mean())
    y, pred = _regression_arrays(y_true, y_pred)
    keep = np.isfinite(y) & np.isfinite(pred)
    return _r2(y[keep], pred[keep])


def _as_float(values: Any) -> np.ndarray:
    """Targets or predictions as a flat float array (a one-column 2-D output
    flattened), NaN where a value does not read as a number."""
    array = np.asarray(values)
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    return pd.to_numeric(pd.Series(array.ravel()), errors="coerce").to_numpy(
        dtype=float, na_value=np.nan
    )


def _regression_arrays(y_true: Any, y_pred: Any) -> tuple[np.ndarray, np.ndarray]:
    return _as_float(y_true), _as_float(y_pred)


def _r2(y: np.ndarray, pred: np.ndarray) -> float:
    if y.size < 2:
        return float("nan")
    total = float(((y - y.mean()) ** 2).sum())
    residual = float(((y - pred) ** 2).sum())
    if total == 0:
        return 1.0 if residual == 0 else 0.0
    return 1.0 - residual / total


# --------------------------------------------------------------------------- classification


def _proba_matrix(proba: Any, n_rows: int, classes: list[str] | None) -> np.ndarray | None:
    if proba is None or classes is None:
        return None
    try:
        matrix = np.asarray(proba, dtype=float)
    except (TypeError, ValueError):
        return None
    if matrix.ndim == 1 and len(classes) == 2:
        matrix = np.column_stack([1.0 - matrix, matrix])
    if matrix.ndim != 2 or matrix.shape != (n_rows, len(classes)):
        logger.warning(
            "probabilities of shape %s do not match %d rows x %d classes; probability "
            "metrics skipped",
            getattr(matrix, "shape", None),
            n_rows,
            len(classes),
        )
        return None
    return matrix


def fractional_range(y_pred: Any) -> list[float]:
    """``[min, max]`` of a classifier's outputs when they are finite numbers of which at
    least one is not whole (``PerformanceSummary.output_range``), else ``[]``: what tells
    a probability (all within [0, 1]) from a regressor's unbounded estimate, where the
    prediction distribution keeps only the most frequent values."""
    try:
        values = np.asarray(y_pred, dtype=float).ravel()
    except (TypeError, ValueError):
        return []
    values = values[np.isfinite(values)]
    if not values.size or np.all(values == np.round(values)):
        return []
    return [float(values.min()), float(values.max())]


def _classification_scores(
    y_true: Any, y_pred: Any, proba: Any, classes: list[str] | None
) -> tuple[dict[str, float], np.ndarray, np.ndarray, np.ndarray | None]:
    y, pred = _keys(y_true), _keys(y_pred)
    if y.size != pred.size:
        raise ValueError(f"y has {y.size} rows but the predictions have {pred.size}")
    scores: dict[str, float] = {
        "n_rows": float(y.size),
        "nan_predictions": float(np.count_nonzero(pred == _MISSING)),
        "missing_labels": float(np.count_nonzero(y == _MISSING)),
    }
    keep = y != _MISSING
    matrix = _proba_matrix(proba, y.size, classes)
    y, pred = y[keep], pred[keep]
    if matrix is not None:
        matrix = matrix[keep]
    if y.size == 0:
        return scores, y, pred, None
    tp, n_true, n_pred = _class_counts(y, pred)
    denominator = n_true + n_pred
    f1 = np.divide(2 * tp, denominator, out=np.zeros_like(tp), where=denominator > 0)
    recall = tp / n_true
    scores.update(
        accuracy=float(np.mean(y == pred)),
        balanced_accuracy=float(recall.mean()),
        f1_macro=float(f1.mean()),
        n_predicted_classes=float(np.unique(pred[pred != _MISSING]).size),
    )
    if matrix is not None:
        scores.update(_probability_scores(y, matrix, classes))
    return scores, y, pred, matrix


def _probability_scores(y: np.ndarray, matrix: np.ndarray, classes: list[str]) -> dict[str, float]:
    from sklearn.metrics import log_loss, roc_auc_score

    out: dict[str, float] = {}
    finite = np.all(np.isfinite(matrix), axis=1)
    known = np.isin(y, classes)
    rows = finite & known
    out["nan_probabilities"] = float(np.count_nonzero(~finite))
    if rows.sum() < 2 or np.unique(y[rows]).size < 2:
        return out
    y, matrix = y[rows], matrix[rows]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if len(classes) == 2:
                out["roc_auc"] = float(roc_auc_score(y == classes[1], matrix[:, 1]))
            else:
                present = np.isin(classes, np.unique(y))
                if present.all():
                    normalised = matrix / np.clip(matrix.sum(axis=1, keepdims=True), 1e-12, None)
                    out["roc_auc"] = float(
                        roc_auc_score(
                            y, normalised, multi_class="ovr", average="macro", labels=classes
                        )
                    )
        except ValueError as exc:
            logger.warning("ROC AUC could not be computed: %s", exc)
        try:
            clipped = np.clip(matrix, 1e-15, 1.0)
            clipped = clipped / clipped.sum(axis=1, keepdims=True)
            out["log_loss"] = float(log_loss(y, clipped, labels=classes))
        except ValueError as exc:
            logger.warning("log loss could not be computed: %s", exc)
    return out


def expected_calibration_error(
    y: np.ndarray, matrix: np.ndarray, classes: list[str], bins: int = ECE_BINS
) -> float | None:
    """ECE with ``bins`` equal-frequency bins: mean |confidence - accuracy|, weighted by
    bin size. Binary: the positive class's probability against its frequency;
    multiclass: the predicted class's probability against being right."""
    finite = np.all(np.isfinite(matrix), axis=1)
    y, matrix = y[finite], matrix[finite]
    if y.size < bins:
        return None
    if len(classes) == 2:
        confidence = matrix[:, 1]
        outcome = (y == classes[1]).astype(float)
    else:
        top = np.argmax(matrix, axis=1)
        confidence = matrix[np.arange(y.size), top]
        outcome = (np.asarray(classes)[top] == y).astype(float)
    # equal-frequency edges; tied confidences always share a bin
    edges = np.quantile(confidence, np.linspace(0, 1, bins + 1)[1:-1])
    index = np.searchsorted(edges, confidence, side="right")
    size = np.bincount(index, minlength=bins).astype(float)
    gap = np.abs(
        np.bincount(index, weights=confidence, minlength=bins)
        - np.bincount(index, weights=outcome, minlength=bins)
    )
    # sum over bins of size * |mean confidence - mean outcome|, divided by the rows
    return float(gap[size > 0].sum() / y.size)


def confidence_gap(y: np.ndarray, matrix: np.ndarray, classes: list[str]) -> float | None:
    """Mean probability stated for the predicted class minus the share of rows where it
    is right: positive when the model claims more than it achieves (overconfident),
    negative when it claims less (underconfident, e.g. probabilities flattened by a
    temperature or label smoothing at serving). The ECE cannot tell the two apart, and
    their fixes differ."""
    finite, top, stated = _stated_confidence(matrix)
    if not stated.size:
        return None
    right = np.asarray(classes)[top] == y[finite]
    return float(stated.mean() - right.mean())


def _stated_confidence(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows with finite probabilities, their predicted class (column index) and the
    probability stated for it (normalised by the row's sum): what
    :func:`confidence_gap` and its noise (:func:`confidence_gap_noise`) both read."""
    finite = np.all(np.isfinite(matrix), axis=1)
    matrix = matrix[finite]
    top = np.argmax(matrix, axis=1)
    stated = matrix[np.arange(matrix.shape[0]), top] / np.clip(matrix.sum(axis=1), 1e-12, None)
    return finite, top, stated


def confidence_gap_noise(matrix: np.ndarray) -> float | None:
    """The standard error of :func:`confidence_gap` for a model that is perfectly
    calibrated at *these* confidences: each row is right with probability c, so the
    share right has variance sum c(1-c) / n^2. A confident model on many rows has a
    tiny noise, an uncertain one on few rows a large one, which a fixed bar on the gap
    cannot say."""
    _, _, stated = _stated_confidence(matrix)
    if not stated.size:
        return None
    return float(np.sqrt(np.sum(stated * (1.0 - stated))) / stated.size)


#: simulations of a perfectly calibrated model for the ECE noise level
ECE_SIMULATIONS = 50


def calibration_noise(
    y: np.ndarray, matrix: np.ndarray, classes: list[str], bins: int = ECE_BINS, seed: int = 0
) -> float | None:
    """The ECE that a perfectly calibrated model with *these* confidences shows by chance
    on this many rows: outcomes drawn as Bernoulli(confidence), scored like
    :func:`expected_calibration_error`; the 90th percentile of ECE_SIMULATIONS draws. A
    confident model on many rows has a small noise level, an uncertain one on few rows
    a large one, which a single 1/sqrt(n) rule cannot say."""
    finite = np.all(np.isfinite(matrix), axis=1)
    y, matrix = y[finite], matrix[finite]
    if y.size < bins:
        return None
    if len(classes) == 2:
        confidence = np.clip(matrix[:, 1], 0.0, 1.0)
    else:
        confidence = np.clip(matrix[np.arange(y.size), np.argmax(matrix, axis=1)], 0.0, 1.0)
    edges = np.quantile(confidence, np.linspace(0, 1, bins + 1)[1:-1])
    index = np.searchsorted(edges, confidence, side="right")
    size = np.bincount(index, minlength=bins).astype(float)
    total_confidence = np.bincount(index, weights=confidence, minlength=bins)
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(ECE_SIMULATIONS):
        outcome = (rng.random(y.size) < confidence).astype(float)
        gap = np.abs(total_confidence - np.bincount(index, weights=outcome, minlength=bins))
        draws.append(gap[size > 0].sum() / y.size)
    return float(np.quantile(draws, 0.9))


def _f1_at(positive: np.ndarray, score: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """F1 of the positive class when predicting it at ``score >= t``, for every t."""
    predicted = score[None, :] >= thresholds[:, None]
    tp = (predicted & positive[None, :]).sum(axis=1).astype(float)
    n_pred = predicted.sum(axis=1).astype(float)
    n_true = float(positive.sum())
    denominator = n_pred + n_true
    return np.divide(2 * tp, denominator, out=np.zeros_like(tp), where=denominator > 0)


def threshold_analysis(
    y: np.ndarray, matrix: np.ndarray, classes: list[str]
) -> tuple[float, float, float] | None:
    """(best threshold, F1 at 0.5, F1 at best) for the minority class of a binary task.

    A diagnostic signal only: a real system would tune the threshold on validation
    data, never on the test split.
    """
    if len(classes) != 2:
        return None
    finite = np.all(np.isfinite(matrix), axis=1)
    y, matrix = y[finite], matrix[finite]
    counts = [np.count_nonzero(y == c) for c in classes]
    if min(counts) == 0:
        return None
    minority = 0 if counts[0] < counts[1] else 1
    positive = y == classes[minority]
    score = matrix[:, minority]
    at_default = float(_f1_at(positive, score, np.array([0.5]))[0])
    f1 = _f1_at(positive, score, THRESHOLDS)
    best = int(np.argmax(f1))
    return float(THRESHOLDS[best]), at_default, float(f1[best])


def _distribution(pred: np.ndarray) -> dict[str, float]:
    if pred.size == 0:
        return {}
    shares = pd.Series(pred, dtype=object).value_counts(normalize=True, sort=True)
    out = {str(k): float(v) for k, v in shares.iloc[:MAX_DISTRIBUTION_KEYS].items()}
    if len(shares) > MAX_DISTRIBUTION_KEYS:
        out["<other>"] = float(shares.iloc[MAX_DISTRIBUTION_KEYS:].sum())
    return out


# --------------------------------------------------------------------------- regression


def _regression_scores(y_true: Any, y_pred: Any) -> tuple[dict[str, float], np.ndarray, np.ndarray]:
    y, pred = _regression_arrays(y_true, y_pred)
    if y.size != pred.size:
        raise ValueError(f"y has {y.size} rows but the predictions have {pred.size}")
    scores = {
        "n_rows": float(y.size),
        "nan_predictions": float(np.count_nonzero(~np.isfinite(pred))),
        "missing_labels": float(np.count_nonzero(~np.isfinite(y))),
    }
    keep = np.isfinite(y) & np.isfinite(pred)
    y, pred = y[keep], pred[keep]
    if y.size:
        error = pred - y
        scores.update(
            r2=_r2(y, pred),
            rmse=float(np.sqrt(np.mean(error**2))),
            mae=float(np.mean(np.abs(error))),
        )
    return scores, y, pred


# --------------------------------------------------------------------------- public API


def _infer_classes(y: Any, proba: Any) -> list[Any] | None:
    """scikit-learn's ``classes_`` convention (sorted labels) when ``y`` holds exactly as
    many classes as ``proba`` has columns; else None (probability metrics skipped)."""
    values = pd.Series(np.asarray(y, dtype=object).ravel()).dropna().unique()
    n_columns = np.shape(proba)[1] if np.ndim(proba) == 2 else 2
    try:
        ordered = sorted(values)
    except TypeError:
        return None
    if len(ordered) != n_columns:
        logger.warning("classes not given and not inferable; probability metrics skipped")
        return None
    return ordered


def _answer_set(pred: np.ndarray, y_train: Any) -> dict[str, float]:
    """What set a regressor's test predictions are drawn from: ``distinct`` (how many
    different values it predicts) and, with the training targets, ``in_train_targets``
    (the share of predictions that equal one of them exactly) and
    ``train_target_distinct`` (how many different training targets there are).

    A regressor averages or weighs its training targets and lands between them; a
    classifier fitted on a numeric target (each value a class) can only answer with a
    training target. For a model whose flavour says neither (a pyfunc), these are the
    only trace of a task mixed up at fitting (``wrong_task_type``)."""
    found = {"distinct": float(np.unique(pred).size)}
    if y_train is None:
        return found
    train = _as_float(y_train)
    train = np.unique(train[np.isfinite(train)])
    if not train.size:
        return found
    found["train_target_distinct"] = float(train.size)
    found["in_train_targets"] = float(np.mean(np.isin(np.round(pred, 9), np.round(train, 9))))
    return found


def summarize_performance(
    *,
    task: str,
    y_test: Any,
    pred_test: Any,
    proba_test: Any = None,
    classes: Any = None,
    y_train: Any = None,
    pred_train: Any = None,
    proba_train: Any = None,
) -> PerformanceSummary:
    """Scores on test (and train when given) plus the test prediction distribution.

    ``classes`` names the columns of ``proba_*`` in order (``predict_proba``'s
    ``classes_``); when it is missing the sorted labels of ``y_test`` are assumed if
    their number matches the columns, else probability metrics are skipped. NaN predictions count as
    wrong for classification and are left out of regression metrics; either way their
    number is reported as ``scores[split]["nan_predictions"]``.
    """
    classification = is_classification(task)
    metric = main_metric(task)
    if classes is None and proba_test is not None and classification:
        classes = _infer_classes(y_test, proba_test)
    class_keys = None
    if classes is not None:
        class_keys = [str(k) for k in label_keys(np.asarray(classes, dtype=object).ravel())]
    out: dict[str, Any] = {"metric": metric, "scores": {}}
    splits = [("test", y_test, pred_test, proba_test)]
    if y_train is not None and pred_train is not None:
        splits.append(("train", y_train, pred_train, proba_train))
    for split, y_true, y_pred, proba in splits:
        if classification:
            scores, y, pred, matrix = _classification_scores(y_true, y_pred, proba, class_keys)
            if split == "test":
                out["prediction_distribution"] = _distribution(pred)
                out["output_range"] = fractional_range(y_pred)
                if matrix is not None and y.size:
                    out["calibration_error"] = expected_calibration_error(y, matrix, class_keys)
                    out["calibration_noise"] = calibration_noise(y, matrix, class_keys)
                    out["confidence_gap"] = confidence_gap(y, matrix, class_keys)
                    out["confidence_gap_noise"] = confidence_gap_noise(matrix)
                    threshold = threshold_analysis(y, matrix, class_keys)
                    if threshold is not None:
                        out["best_threshold"], out["f1_at_default"], out["f1_at_best"] = threshold
            else:
                out["train_prediction_distribution"] = _distribution(pred)
        else:
            scores, y, pred = _regression_scores(y_true, y_pred)
            if pred.size:
                stats = {"mean": float(np.mean(pred)), "std": float(np.std(pred))}
                if split == "test":
                    stats.update(_answer_set(pred, y_train))
                out.setdefault("prediction_stats", {})[split] = stats
            if split == "test" and y.size > 1:
                spread = float(np.std(y))
                out["prediction_spread_ratio"] = (
                    float(np.std(pred)) / spread if spread > 0 else None
                )
        out["scores"][split] = {k: v for k, v in scores.items() if np.isfinite(v)}
        value = scores.get(metric)
        if value is not None and np.isfinite(value):
            out[f"{split}_score"] = float(value)
    return PerformanceSummary(**out)


#: a segment is one value of a categorical feature holding at least this share / count
MIN_SEGMENT_SHARE = 0.05
MIN_SEGMENT_ROWS = 30
#: ... or, on a small test split, at least this many rows holding at least this share: a
#: site that is a quarter of 90 test rows is 23 rows, too important to leave unscored
#: (the rule tests its error against the other rows' for significance); 10 rows is the
#: size of the smallest site of a survey's 60-row test split
MIN_SMALL_SEGMENT_ROWS = 10
MIN_SMALL_SEGMENT_SHARE = 0.15
MAX_SEGMENT_VALUES = 20
MAX_SEGMENTS = 5


def segment_errors(
    frame: pd.DataFrame, *, task: str, y_true: Any, y_pred: Any, features: list[str]
) -> list[SegmentScore]:
    """Error per value of each low-cardinality categorical feature on test.

    Deepchecks' Weak Segments search reports only the single weakest corner, often a
    small one; a whole category on which the model fails (a country, a sales channel)
    is the more actionable finding, so every sizeable category is scored directly.
    Each segment also carries the error of the best constant guess within it (see
    :class:`SegmentScore`), so that a segment whose targets spread wider is not taken
    for one the model fails on.
    """
    y_true, y_pred = np.asarray(y_true, dtype=object), np.asarray(y_pred, dtype=object)
    if len(frame) != len(y_true) or len(y_true) < 2 * MIN_SMALL_SEGMENT_ROWS:
        return []
    classification = is_classification(task)
    if classification:
        truth = label_keys(y_true)
        wrong = truth != label_keys(y_pred)
        errors = wrong.astype(float)
    else:
        truth = pd.to_numeric(pd.Series(y_true), errors="coerce").to_numpy(dtype=float)
        guess = pd.to_numeric(pd.Series(y_pred), errors="coerce").to_numpy(dtype=float)
        errors = np.abs(truth - guess)
    finite = np.isfinite(errors)
    if not finite.any():
        return []
    overall = float(np.mean(errors[finite]))
    overall_baseline = _constant_guess_error(truth[finite], classification)
    found = []
    for feature in features:
        if feature not in frame:
            continue
        values = frame[feature].astype("string").fillna("<missing>").to_numpy()
        uniques, codes, counts = np.unique(values, return_inverse=True, return_counts=True)
        if not 2 <= len(uniques) <= MAX_SEGMENT_VALUES:
            continue
        categories = _category_aggregates(codes, len(uniques), finite, errors, truth,
                                          classification)
        for index, value in enumerate(uniques):
            member = (codes == index) & finite
            n = int(member.sum())
            share = n / len(values)
            large = n >= MIN_SEGMENT_ROWS and share >= MIN_SEGMENT_SHARE
            if not large and (n < MIN_SMALL_SEGMENT_ROWS or share < MIN_SMALL_SEGMENT_SHARE):
                continue
            rest = finite & ~member
            found.append(
                SegmentScore(
                    feature=str(feature),
                    value=str(value),
                    share=round(n / len(values), 4),
                    n_rows=n,
                    error=round(float(np.mean(errors[member])), 6),
                    overall_error=round(overall, 6),
                    baseline_error=round(categories[index][3], 6),
                    overall_baseline_error=round(overall_baseline, 6),
                    error_std=_rounded_std(errors[member]),
                    rest_error_std=_rounded_std(errors[rest]),
                    **_siblings(categories, index),
                )
            )
    found.sort(key=lambda s: (-(s.error - s.overall_error) * s.share, s.feature, s.value))
    return found[:MAX_SEGMENTS]


def _constant_guess_error(truth: np.ndarray, classification: bool) -> float:
    """The error of the best constant guess on these rows, in :func:`segment_errors`'
    units: one minus the majority class's share, or the mean absolute deviation from the
    median (the constant that minimises the absolute error)."""
    if classification:
        _, counts = np.unique(truth, return_counts=True)
        return float(1.0 - counts.max() / counts.sum())
    return float(np.mean(np.abs(truth - np.median(truth))))


def _rounded_std(values: np.ndarray) -> float | None:
    """Sample standard deviation (ddof 1), rounded like the errors; None under 2 rows."""
    return round(float(np.std(values, ddof=1)), 6) if values.size >= 2 else None


def _category_aggregates(
    codes: np.ndarray,
    n_values: int,
    finite: np.ndarray,
    errors: np.ndarray,
    truth: np.ndarray,
    classification: bool,
) -> list[tuple[int, float, float, float]]:
    """(rows, summed error, rows x constant-guess error, constant-guess error) of every
    category of a feature, on rows with a finite error; one pass over the rows plus one
    constant guess per category (at most MAX_SEGMENT_VALUES), which the segment itself
    reuses as its ``baseline_error``. A category whose constant guess is exact counts
    no rows towards its siblings' aggregates (first three entries 0)."""
    out = []
    for index in range(n_values):
        member = (codes == index) & finite
        n = int(member.sum())
        baseline = _constant_guess_error(truth[member], classification) if n else 0.0
        if baseline <= 0:
            # a constant guess is exact (one row, one target value): no skill to measure
            out.append((0, 0.0, 0.0, baseline))
            continue
        out.append((n, float(errors[member].sum()), n * baseline, baseline))
    return out


def _siblings(categories: list[tuple[int, float, float, float]], index: int) -> dict[str, Any]:
    """The sibling aggregates of :class:`SegmentScore` for category ``index``."""
    n = sum(c[0] for i, c in enumerate(categories) if i != index)
    if n == 0:
        return {}
    error = sum(c[1] for i, c in enumerate(categories) if i != index) / n
    baseline = sum(c[2] for i, c in enumerate(categories) if i != index) / n
    return {
        "sibling_n_rows": n,
        "sibling_error": round(error, 6),
        "sibling_baseline_error": round(baseline, 6),
    }
