"""Turn a Deepchecks ``CheckResult`` into a small, typed ``CheckOutcome``.

Deepchecks results carry raw rows, DataFrames of samples and plotly figures; deepfix
keeps only numbers and short texts (``value``, ``values``, ``details``, conditions),
whose meaning per check is documented in :mod:`mlflow_deepfix.checks._catalog`. Each
condenser takes the result's ``value`` and returns ``(value, values, details)``.
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from mlflow_deepfix.checks._catalog import MAX_VALUES
from mlflow_deepfix.schemas import CheckOutcome, ConditionResult

Condensed = tuple[float | None, dict[str, float], dict[str, str]]
_STATUS = {"PASS": "PASS", "WARN": "WARN", "FAIL": "FAIL", "ERROR": "ERROR"}


def _num(x: Any) -> float | None:
    """A finite float, or None (NaN, inf, None and non-numbers are dropped)."""
    try:
        value = float(x)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _clean(mapping: Mapping[Any, Any], worst_first: bool = True) -> dict[str, float]:
    """Finite numbers only, keys as str, at most MAX_VALUES (the highest ones)."""
    items = [(str(k), v) for k, v in ((k, _num(v)) for k, v in mapping.items()) if v is not None]
    items.sort(key=lambda kv: kv[1], reverse=worst_first)
    return dict(items[:MAX_VALUES])


def _max(values: Any, default: float | None = 0.0) -> float | None:
    numbers = [v for v in (_num(x) for x in values) if v is not None]
    return max(numbers) if numbers else default


# --------------------------------------------------------------------- data integrity


def _is_single_value(v: dict) -> Condensed:
    single = {col: 1.0 for col, n in v.items() if _num(n) is not None and n <= 1}
    return float(len(single)), single, {}


def _per_column_ratio(v: dict) -> Condensed:
    ratios = _clean({col: r for col, r in v.items() if (_num(r) or 0) > 0})
    return _max(ratios.values()), ratios, {}


def _mixed_nulls(v: dict) -> Condensed:
    values: dict[str, float] = {}
    for col, markers in v.get("columns", {}).items():
        if markers:
            values[str(col)] = float(len(markers))
            values[f"null_fraction_{col}"] = float(
                sum(_num(m.get("percent")) or 0.0 for m in markers.values())
            )
    counts = [n for k, n in values.items() if not k.startswith("null_fraction_")]
    return _max(counts), values, {}


def _mixed_data_types(v: dict) -> Condensed:
    rare = {
        col: min(_num(info.get("strings")) or 0.0, _num(info.get("numbers")) or 0.0)
        for col, info in v.items()
        if info
    }
    rare = _clean(rare)
    return _max(rare.values()), rare, {}


def _string_mismatch(v: dict) -> Condensed:
    values: dict[str, float] = {}
    for col, forms in v.get("columns", {}).items():
        if forms:
            values[str(col)] = float(len(forms))
            values[f"variant_fraction_{col}"] = float(
                sum(_num(var.get("percent")) or 0.0 for variants in forms.values()
                    for var in variants)
            )
    total = sum(n for k, n in values.items() if not k.startswith("variant_fraction_"))
    return float(total), values, {}


def _scalar(v: Any) -> Condensed:
    return _num(v), {}, {}


def _timing(v: Any) -> Condensed:
    """A clock reading: kept in ``values`` rather than ``value`` (which findings.json
    lists), so that identical inputs give byte-identical findings apart from timings."""
    seconds = _num(v)
    return None, ({"seconds_per_row": seconds} if seconds is not None else {}), {}


def _string_length(v: dict) -> Condensed:
    ratios = {}
    for col, info in v.items():
        n = _num(info.get("n_samples")) or 0.0
        outliers = sum(_num(o.get("n_samples")) or 0.0 for o in info.get("outliers", []))
        if n and outliers:
            ratios[col] = outliers / n
    ratios = _clean(ratios)
    return _max(ratios.values()), ratios, {}


def _conflicting_labels(v: dict) -> Condensed:
    return (_num(v.get("percent_of_conflicting_samples")),
            {"n_groups": float(len(v.get("samples_indices", [])))}, {})


def _outliers(v: Any) -> Condensed:
    probabilities = np.asarray(v, dtype=float)
    probabilities = probabilities[np.isfinite(probabilities)]
    if probabilities.size == 0:
        return None, {}, {}
    return (
        float(np.mean(probabilities >= 0.7)),
        {"max_probability": float(probabilities.max()),
         "fraction_above_0.9": float(np.mean(probabilities >= 0.9)),
         "n_samples": float(probabilities.size)},
        {},
    )


def _pps(v: dict) -> Condensed:
    scores = _clean(v)
    return _max(scores.values()), scores, {}


def _feature_correlation(v: pd.DataFrame) -> Condensed:
    matrix = v if isinstance(v, pd.DataFrame) else pd.DataFrame()
    pairs: dict[str, float] = {}
    n_above = 0
    columns = list(matrix.columns)
    for i, a in enumerate(columns):
        for b in columns[i + 1:]:
            value = _num(matrix.loc[a, b]) if b in matrix.index else None
            if value is None:
                continue
            n_above += value > 0.9  # signed, as the condition counts
            if abs(value) >= 0.5:
                pairs[f"{a} | {b}"] = abs(value)
    return float(n_above), _clean(pairs), {}


# ---------------------------------------------------------------- train test validation


def _size_comparison(v: dict) -> Condensed:
    train, test = _num(v.get("Train")) or 0.0, _num(v.get("Test")) or 0.0
    return (test / train if train else None), {"train_size": train, "test_size": test}, {}


def _new_label(v: dict) -> Condensed:
    n = _num(v.get("n_samples")) or 0.0
    new = _num(v.get("n_new_labels_samples")) or 0.0
    return (new / n if n else 0.0), {"n_new_labels": float(len(v.get("new_labels", [])))}, {}


def _new_category(v: pd.DataFrame) -> Condensed:
    values: dict[str, float] = {}
    if isinstance(v, pd.DataFrame) and len(v):
        for col, row in v.iterrows():
            ratio = _num(row.get("Ratio of New Categories"))
            if ratio:
                values[str(col)] = ratio
                values[f"n_new_{col}"] = _num(row.get("# New Categories")) or 0.0
    ratios = [r for k, r in values.items() if not k.startswith("n_new_")]
    return _max(ratios), values, {}


def _string_mismatch_comparison(v: dict) -> Condensed:
    counts = {str(col): float(len(forms)) for col, forms in v.items() if forms}
    return float(sum(counts.values())), counts, {}


def _samples_mix(v: dict) -> Condensed:
    return _num(v.get("ratio")), {}, {}


def _pps_change(v: dict) -> Condensed:
    train, test = v.get("train", {}), v.get("test", {})
    diffs = [abs((_num(train.get(c)) or 0.0) - (_num(test.get(c)) or 0.0))
             for c in set(train) | set(test)]
    values = {f"train_{k}": s for k, s in _clean(train).items()}
    values.update({f"test_{k}": s for k, s in _clean(test).items()})
    return _max(diffs), values, {}


def _feature_drift(v: dict) -> Condensed:
    scores = _clean({col: info.get("Drift score") for col, info in v.items()})
    details = {f"method_{col}": str(info.get("Method")) for col, info in v.items()
               if str(col) in scores}
    return _max(scores.values()), scores, details


def _drift(v: dict) -> Condensed:
    return _num(v.get("Drift score")), {}, {"method": str(v.get("Method", ""))}


def _multivariate_drift(v: dict) -> Condensed:
    values = {"domain_classifier_auc": _num(v.get("domain_classifier_auc")) or 0.0}
    importance = _clean(v.get("domain_classifier_feature_importance") or {})
    values.update({k: s for k, s in importance.items() if s > 0})
    return _num(v.get("domain_classifier_drift_score")), values, {}


# ------------------------------------------------------------------- model evaluation


def _train_test_performance(v: pd.DataFrame) -> Condensed:
    if not isinstance(v, pd.DataFrame) or v.empty:
        return None, {}, {}
    frame = v.copy()
    frame["Class"] = frame["Class"].astype(object).where(frame["Class"].notna(), "")
    pivot = frame.pivot_table(index=["Metric", "Class"], columns="Dataset", values="Value",
                              aggfunc="mean")
    degradations = []
    if {"Train", "Test"} <= set(pivot.columns):
        for train, test in zip(pivot["Train"], pivot["Test"]):
            if _num(train) is not None and _num(test) is not None and train != 0:
                degradations.append((train - test) / abs(train))
    means = frame.groupby(["Dataset", "Metric"])["Value"].mean()
    values = {f"{split.lower()}_{metric}": float(x) for (split, metric), x in means.items()
              if _num(x) is not None}
    return _max(degradations, None), values, {}


def _roc(v: dict) -> Condensed:
    aucs = {f"auc_{k}": _num(x) for k, x in v.items() if _num(x) is not None}
    return (min(aucs.values()) if aucs else None), aucs, {}


def _confusion_matrix(v: pd.DataFrame) -> Condensed:
    if not isinstance(v, pd.DataFrame) or v.empty:
        return None, {}, {}
    matrix = v.to_numpy(dtype=float)
    total = matrix.sum()
    if not total:
        return None, {}, {}
    predicted = matrix.sum(axis=0) / total
    actual = matrix.sum(axis=1)
    values = {"accuracy": float(np.trace(matrix) / total) if matrix.shape[0] == matrix.shape[1]
              else 0.0}
    for j, cls in enumerate(v.columns):
        values[f"predicted_share_{cls}"] = float(predicted[j])
    for i, cls in enumerate(v.index):
        if actual[i] and cls in list(v.columns):
            values[f"recall_{cls}"] = float(matrix[i, list(v.columns).index(cls)] / actual[i])
    return float(predicted.max()), values, {}


def _simple_model(v: dict) -> Condensed:
    from deepchecks.utils.metrics import get_gain

    values: dict[str, float] = {}
    gains = []
    perfect = v.get("scorers_perfect", {})
    for metric, scores in v.get("scores", {}).items():
        per_class = list(scores.values()) if "Origin" not in scores else [scores]
        origin = [_num(s.get("Origin")) for s in per_class]
        simple = [_num(s.get("Simple")) for s in per_class]
        pairs = [(o, s) for o, s in zip(origin, simple) if o is not None and s is not None]
        if not pairs:
            continue
        best = _num(perfect.get(metric))
        metric_gains = [get_gain(s, o, best, 50) for o, s in pairs] if best is not None else []
        values[f"model_{metric}"] = float(np.mean([o for o, _ in pairs]))
        values[f"simple_{metric}"] = float(np.mean([s for _, s in pairs]))
        if metric_gains:
            values[f"gain_{metric}"] = float(np.mean(metric_gains))
            gains.append(values[f"gain_{metric}"])
    return (min(gains) if gains else None), values, {}


def _weak_segments(v: dict) -> Condensed:
    segments = v.get("weak_segments_list")
    average = _num(v.get("avg_score"))
    if not isinstance(segments, pd.DataFrame) or segments.empty or average is None:
        return None, {}, {}
    weakest = segments.iloc[0]
    score = _num(weakest.iloc[0])
    metric = str(segments.columns[0]).removesuffix(" Score")
    parts = [f"{weakest.get('Feature1')} in {weakest.get('Feature1 Range')}"]
    if str(weakest.get("Feature2", "")) not in ("", "nan", "None"):
        parts.append(f"{weakest.get('Feature2')} in {weakest.get('Feature2 Range')}")
    values = {"average_score": average}
    if score is not None:
        values["weakest_score"] = score
    size = _num(weakest.get("% of Data"))
    if size is not None:
        values["weakest_segment_fraction"] = size / 100.0 if size > 1 else size
    drop = (average - score) / abs(average) if score is not None and average else None
    # Deepchecks formats ranges with repr(); numpy 2 makes those "np.float64(0.5)".
    description = strip_numpy_reprs(" and ".join(parts))
    return drop, values, {"metric": metric, "weakest_segment": description}


def _calibration(v: dict) -> Condensed:
    scores = {f"brier_{k}": _num(x) for k, x in v.items() if _num(x) is not None}
    return _max(scores.values(), None), scores, {}


def _regression_errors(v: dict) -> Condensed:
    rmse = _num(v.get("RMSE"))
    mean = _num(v.get("Mean Prediction Error"))
    values = {"rmse": rmse, "mean_error": mean,
              "median_error": _num(v.get("Median Prediction Error")),
              "kurtosis": _num(v.get("Kurtosis Value"))}
    ratio = abs(mean) / rmse if rmse and mean is not None else None
    return ratio, {k: x for k, x in values.items() if x is not None}, {}


def _unused_features(v: dict) -> Condensed:
    unused = v.get("unused features", {})
    high = list(unused.get("high variance", []))
    values = {"n_used": float(len(v.get("used features", []))),
              "n_unused_high_variance": float(len(high)),
              "n_unused_low_variance": float(len(unused.get("low variance", [])))}
    return float(len(high)), values, {"unused_high_variance": ", ".join(map(str, high))}


def _boosting_overfit(v: dict) -> Condensed:
    test, train = list(v.get("test", [])), list(v.get("train", []))
    if not test:
        return None, {}, {}
    best, last = max(test), test[-1]
    values = {"test_score": float(last), "best_test_score": float(best)}
    if train:
        values["train_score"] = float(train[-1])
    decline = (best - last) / abs(best) if best else 0.0
    return float(decline), values, {}


CONDENSERS: dict[str, Callable[[Any], Condensed]] = {
    "Is Single Value": _is_single_value,
    "Special Characters": _per_column_ratio,
    "Mixed Nulls": _mixed_nulls,
    "Mixed Data Types": _mixed_data_types,
    "String Mismatch": _string_mismatch,
    "Data Duplicates": _scalar,
    "String Length Out Of Bounds": _string_length,
    "Conflicting Labels": _conflicting_labels,
    "Outlier Sample Detection": _outliers,
    "Feature Label Correlation": _pps,
    "Feature Feature Correlation": _feature_correlation,
    "Identifier Label Correlation": _pps,
    "Datasets Size Comparison": _size_comparison,
    "New Label Train Test": _new_label,
    "New Category Train Test": _new_category,
    "String Mismatch Comparison": _string_mismatch_comparison,
    "Date Train Test Leakage Duplicates": _scalar,
    "Date Train Test Leakage Overlap": _scalar,
    "Index Train Test Leakage": _scalar,
    "Train Test Samples Mix": _samples_mix,
    "Feature Label Correlation Change": _pps_change,
    "Feature Drift": _feature_drift,
    "Label Drift": _drift,
    "Multivariate Drift": _multivariate_drift,
    "Train Test Performance": _train_test_performance,
    "Roc Report": _roc,
    "Confusion Matrix Report": _confusion_matrix,
    "Prediction Drift": _drift,
    "Simple Model Comparison": _simple_model,
    "Weak Segments Performance": _weak_segments,
    "Calibration Score": _calibration,
    "Regression Error Distribution": _regression_errors,
    "Unused Features": _unused_features,
    "Boosting Overfit": _boosting_overfit,
    "Model Inference Time": _timing,
}


#: numpy >= 2 scalar reprs (NEP 51) that Deepchecks formats into texts with repr() or
#: str() of containers: ``np.int64(1)``, ``np.float64(0.5)``, ``np.str_('a')``,
#: ``np.True_``; the argument may be a quoted string holding parentheses
_NUMPY_SCALAR_REPR = re.compile(
    r"\bnp\.(?:u?int\d*|float\d*|complex\d*|longdouble|clongdouble|str_|bytes_|bool_?|"
    r"datetime64|timedelta64|void)\("
    r"(b?'(?:[^'\\]|\\.)*'|b?\"(?:[^\"\\]|\\.)*\"|[^()]*)\)"
)
_NUMPY_BOOL_REPR = re.compile(r"\bnp\.(True|False)_\b")


def strip_numpy_reprs(text: str) -> str:
    """``np.int64(1)`` -> ``1``, ``np.float64(0.5)`` -> ``0.5``, ``np.str_('a')`` ->
    ``'a'``, ``np.True_`` -> ``True``: how numpy < 2 printed them, and how the report
    should read (numpy 2 changed scalar reprs, Deepchecks did not follow)."""
    text = _NUMPY_SCALAR_REPR.sub(lambda m: m.group(1).strip(), text)
    return _NUMPY_BOOL_REPR.sub(r"\1", text)


#: Deepchecks writes line breaks into some condition texts as HTML; the report escapes
#: every string, so they would show as literal tags
_HTML_BREAK = re.compile(r"\s*</?br\s*/?>\s*", re.IGNORECASE)


def conditions_of(result: Any, suffix: str = "") -> list[ConditionResult]:
    """Each condition's name, PASS/WARN/FAIL/ERROR status and details (plain text)."""
    out = []
    for condition in getattr(result, "conditions_results", None) or []:
        status = _STATUS.get(str(getattr(condition.category, "name", condition.category)),
                             "ERROR")
        details = _HTML_BREAK.sub(" ", str(condition.details or ""))
        out.append(ConditionResult(name=strip_numpy_reprs(f"{condition.name}{suffix}"),
                                   status=status, details=strip_numpy_reprs(details)))
    return out


def outcome_of(conditions: list[ConditionResult]) -> tuple[str, str | None]:
    """``not_passed`` when a condition warns or fails; ``errored`` when one could not be
    evaluated; else ``passed`` (also for checks without conditions)."""
    if any(c.status in ("WARN", "FAIL") for c in conditions):
        return "not_passed", None
    errors = [c for c in conditions if c.status == "ERROR"]
    if errors:
        return "errored", f"condition {errors[0].name!r} errored: {errors[0].details}"
    return "passed", None


def to_outcome(name: str, suite: str, result: Any, seconds: float, condensed: Condensed,
               suffix: str = "", *, drop_missing: bool = False) -> CheckOutcome:
    """A :class:`CheckOutcome` from a condenser's ``(value, values, details)`` and the
    result's conditions; the one place all three runners (tabular, NLP, vision) build
    outcomes. ``drop_missing`` leaves out ``values`` entries that are not numbers."""
    value, values, details = condensed
    if drop_missing:
        values = {k: x for k, x in values.items() if _num(x) is not None}
    details = {k: strip_numpy_reprs(str(text)) for k, text in details.items()}
    conditions = conditions_of(result, suffix)
    outcome, reason = outcome_of(conditions)
    return CheckOutcome(
        name=name, suite=suite, outcome=outcome, value=_num(value),
        values={k: float(x) for k, x in values.items()}, details=details,
        conditions=conditions, reason=reason, duration_seconds=round(seconds, 4),
    )


def condense(name: str, suite: str, result: Any, seconds: float,
             suffix: str = "") -> CheckOutcome:
    """One Deepchecks tabular ``CheckResult`` -> :class:`CheckOutcome`."""
    return to_outcome(name, suite, result, seconds, CONDENSERS[name](result.value), suffix)


def log_run(label: str, outcomes: list[CheckOutcome], started: float,
            log: logging.Logger) -> None:
    """One INFO line per run of a suite: how many checks, how long, outcomes counted."""
    counts = pd.Series([o.outcome for o in outcomes]).value_counts()
    log.info("deepfix %s: %d checks in %.1f s (%s)", label, len(outcomes),
             time.perf_counter() - started, ", ".join(f"{k} {v}" for k, v in counts.items()))
