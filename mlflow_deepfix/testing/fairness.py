"""Group disparities for the columns the user names in ``sensitive_features``.

Nothing here runs without that key: deepfix does not guess which columns describe
people. For each named column (categorical as is; a numeric one with many values cut
into quartiles) the evaluation rows are grouped and, per group, the model's selection
rate (binary: share predicted positive), accuracy, true and false positive rates
(binary) or mean absolute error (regression) are measured with Wilson intervals.

Between the best and worst group of each metric we report the gap and the lower end of
its 95% interval (Newcombe's hybrid score interval for a difference of proportions),
so a small group's noisy rate is not read as a disparity. Groups under
:data:`MIN_GROUP_ROWS` rows are listed but left out of the gaps. The metrics are the
usual ones (demographic parity difference, equalized odds difference = the larger of
the TPR and FPR gaps, as in fairlearn), computed here with numpy: a few proportions
do not justify a dependency, and the intervals are not part of fairlearn's API.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from mlflow_deepfix.schemas import FairnessSummary, GroupDisparity, GroupStats
from mlflow_deepfix.testing.confidence import wilson

MIN_GROUP_ROWS = 30
MAX_GROUPS = 20


def newcombe_low(x1: int, n1: int, x2: int, n2: int) -> float:
    """Lower bound of the 95% interval of p1 - p2 (Newcombe's method 10)."""
    p1, p2 = x1 / n1, x2 / n2
    l1, _ = wilson(x1, n1)
    _, u2 = wilson(x2, n2)
    return (p1 - p2) - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)


def _groups(column: pd.Series) -> pd.Series:
    """Group labels: categories as text; numbers with many values in quartile bands."""
    if pd.api.types.is_numeric_dtype(column.dtype) and column.nunique() > 10:
        values = pd.to_numeric(column, errors="coerce")
        edges = np.unique(np.nanpercentile(values, [0, 25, 50, 75, 100]))
        if edges.size >= 3:
            bands = pd.cut(values, edges, include_lowest=True, duplicates="drop")
            return bands.astype(str).where(values.notna(), "missing")
    return column.astype(object).where(column.notna(), "missing").astype(str)


def _positive_label(y_true: np.ndarray, classes: list | None):
    """The positive class of a binary task: the second class (as scikit-learn orders
    them), i.e. 1, True or the later label."""
    if classes is not None and len(classes) == 2:
        return str(classes[1])
    labels = sorted({str(v) for v in y_true})
    return labels[-1]


def measure_fairness(
    test: pd.DataFrame,
    *,
    target: str,
    task: str,
    predicted: np.ndarray,
    sensitive_features: list[str],
    feature_names: list[str],
    classes: list | None = None,
) -> FairnessSummary:
    """Per-group rates and the gaps between groups for every sensitive column."""
    y_true = np.asarray(test[target])
    y_pred = np.asarray(predicted)
    summaries = []
    for name in sensitive_features:
        groups = _groups(test[name])
        summaries.append(
            _disparity(name, groups, y_true, y_pred, task, classes, name in feature_names)
        )
    return FairnessSummary(n_rows=len(test), features=summaries)


def _disparity(name, groups, y_true, y_pred, task, classes, sees) -> GroupDisparity:
    binary = task == "binary_classification"
    positive = _positive_label(y_true, classes) if binary else None
    true_text, pred_text = y_true.astype(str), y_pred.astype(str)
    right = true_text == pred_text
    stats, counts, small = [], {}, []
    levels = groups.value_counts()
    for level in sorted(levels.index, key=lambda v: (-levels[v], v))[:MAX_GROUPS]:
        mask = (groups == level).to_numpy()
        n = int(mask.sum())
        if n < MIN_GROUP_ROWS:
            small.append(str(level))
            continue
        item = GroupStats(group=str(level), n_rows=n)
        c = {"n": n, "right": int(right[mask].sum())}
        item.accuracy = round(c["right"] / n, 4) if task != "regression" else None
        if task != "regression":
            item.accuracy_low, item.accuracy_high = (round(v, 4) for v in wilson(c["right"], n))
        if binary:
            selected = pred_text[mask] == positive
            actual = true_text[mask] == positive
            c.update(sel=int(selected.sum()), pos=int(actual.sum()))
            c.update(tp=int((selected & actual).sum()), fp=int((selected & ~actual).sum()))
            c["neg"] = n - c["pos"]
            item.selection_rate = round(c["sel"] / n, 4)
            item.selection_low, item.selection_high = (round(v, 4) for v in wilson(c["sel"], n))
            item.base_rate = round(c["pos"] / n, 4)
            item.tpr = round(c["tp"] / c["pos"], 4) if c["pos"] else None
            item.fpr = round(c["fp"] / c["neg"], 4) if c["neg"] else None
        elif task == "regression":
            errors = np.abs(y_true[mask].astype(float) - y_pred[mask].astype(float))
            item.mae = round(float(errors.mean()), 4)
            item.selection_rate = round(float(y_pred[mask].astype(float).mean()), 4)
        stats.append(item)
        counts[str(level)] = c
    result = GroupDisparity(
        feature=name, model_sees_it=sees, groups=stats, small_groups=small,
        min_group_rows=MIN_GROUP_ROWS,
    )
    if len(stats) < 2 or task == "regression":
        return result
    acc = _gap(counts, "right", "n")
    result.accuracy_difference, result.accuracy_difference_low = acc[0], acc[1]
    result.worst_group, result.best_group = acc[3], acc[2]
    if binary:
        dp = _gap(counts, "sel", "n")
        result.demographic_parity_difference, result.demographic_parity_low = dp[0], dp[1]
        result.base_rate_difference = _gap(counts, "pos", "n")[0]
        tpr = _gap({k: v for k, v in counts.items() if v["pos"] >= 10}, "tp", "pos")
        fpr = _gap({k: v for k, v in counts.items() if v["neg"] >= 10}, "fp", "neg")
        worst = max((tpr, fpr), key=lambda g: (g[1] if g[1] is not None else -1.0))
        if worst[0] is not None:
            result.equalized_odds_difference = max(tpr[0] or 0.0, fpr[0] or 0.0)
            result.equalized_odds_low = worst[1]
    return result


def _gap(counts: dict[str, dict], hits: str, total: str):
    """(gap, lower bound of its interval, higher group, lower group) between the groups
    with the highest and lowest rate of ``hits / total``."""
    rated = {k: v[hits] / v[total] for k, v in counts.items() if v[total] > 0}
    if len(rated) < 2:
        return None, None, None, None
    high = max(rated, key=lambda k: (rated[k], k))
    low = min(rated, key=lambda k: (rated[k], k))
    a, b = counts[high], counts[low]
    bound = newcombe_low(a[hits], a[total], b[hits], b[total])
    return round(rated[high] - rated[low], 4), round(bound, 4), high, low
