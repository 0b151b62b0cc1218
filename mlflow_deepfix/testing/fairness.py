"""Group disparities for the columns the user names in ``sensitive_features``.

Nothing here runs without that key: deepfix does not guess which columns describe
people. For each named column (categorical as is; a numeric one with many values cut
into quartiles) the evaluation rows are grouped and, per group, the model's selection
rate (binary: share predicted positive), accuracy, true and false positive rates
(binary; multiclass: one class against the rest, plus the macro recall) or mean
absolute error, mean prediction and mean residual (regression) are measured with
Wilson (proportions) or normal (means) intervals.

Between the best and worst group of each metric we report the gap and the lower end of
its 95% interval (Newcombe's hybrid score interval for a difference of proportions),
so a small group's noisy rate is not read as a disparity. Groups under
:data:`MIN_GROUP_ROWS` rows are listed but left out of the gaps. The metrics are the
usual ones (demographic parity difference, equalized odds difference = the larger of
the TPR and FPR gaps, as in fairlearn), computed here with numpy: a few proportions
do not justify a dependency, and the intervals are not part of fairlearn's API.

Multiclass gaps are taken one class against the rest (the class with the largest
lower end counts) and regression gaps are differences of means (MAE, and the mean
residual: a group the model systematically under-predicts) with Welch intervals; both
widen the interval for the number of groups and classes compared (Bonferroni), so the
extremes of many noisy groups are not read as a gap.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from mlflow_deepfix.schemas import FairnessSummary, GroupDisparity, GroupStats
from mlflow_deepfix.intervals import Z95 as Z
from mlflow_deepfix.intervals import wilson

MIN_GROUP_ROWS = 30
MAX_GROUPS = 20


def newcombe_low(x1: int, n1: int, x2: int, n2: int, z: float = Z) -> float:
    """Lower bound of the (two-sided, ``z``) interval of p1 - p2 (Newcombe's method 10)."""
    p1, p2 = x1 / n1, x2 / n2
    l1, _ = wilson(x1, n1, z)
    _, u2 = wilson(x2, n2, z)
    return (p1 - p2) - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)


def bonferroni_z(comparisons: int) -> float:
    """The normal quantile of a 95% family-wise interval over ``comparisons`` tests:
    taking the best and worst of k groups (and of several classes) is k(k-1)/2 tests,
    and the plain 1.96 would read the extremes of noise as a gap."""
    from scipy.stats import norm

    return float(norm.ppf(1 - 0.025 / max(1, comparisons)))


def _mean_gap_low(a: np.ndarray, b: np.ndarray, z: float) -> float:
    """Lower end of the interval of mean(a) - mean(b) (Welch's standard error)."""
    se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    return float(a.mean() - b.mean() - z * se)


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
    classes_text = sorted({str(v) for v in classes} if classes is not None
                          else set(true_text)) if task == "multiclass_classification" else []
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
            truth, guess = y_true[mask].astype(float), y_pred[mask].astype(float)
            errors = np.abs(truth - guess)
            half = Z * float(errors.std(ddof=1)) / math.sqrt(n)
            item.mae = round(float(errors.mean()), 4)
            item.mae_low, item.mae_high = round(item.mae - half, 4), round(item.mae + half, 4)
            item.selection_rate = round(float(guess.mean()), 4)
            item.mean_target = round(float(truth.mean()), 4)
            item.mean_residual = round(float((guess - truth).mean()), 4)
            c.update(errors=errors, residuals=guess - truth)
        else:
            c.update(_class_counts(true_text[mask], pred_text[mask], classes_text))
            recalls = [c[f"tp:{k}"] / c[f"pos:{k}"] for k in classes_text if c[f"pos:{k}"]]
            item.macro_recall = round(float(np.mean(recalls)), 4) if recalls else None
        stats.append(item)
        counts[str(level)] = c
    result = GroupDisparity(
        feature=name, model_sees_it=sees, groups=stats, small_groups=small,
        min_group_rows=MIN_GROUP_ROWS,
    )
    if len(stats) < 2:
        return result
    if task == "regression":
        return _regression_gaps(result, counts, y_true, y_pred)
    # binary keeps the plain 95% interval it has been scored with; multiclass widens it
    # for the pairs of groups compared (its per-class gaps multiply the comparisons)
    pairs = len(counts) * (len(counts) - 1) // 2
    acc = _gap(counts, "right", "n", Z if binary else bonferroni_z(pairs))
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
    elif task == "multiclass_classification":
        _multiclass_gaps(result, counts, classes_text)
    return result


def _class_counts(truth: np.ndarray, guess: np.ndarray, classes: list[str]) -> dict:
    """One-vs-rest counts per class: positives, selections, true and false positives."""
    out = {}
    for k in classes:
        actual, selected = truth == k, guess == k
        out.update({f"pos:{k}": int(actual.sum()), f"neg:{k}": int((~actual).sum()),
                    f"sel:{k}": int(selected.sum()), f"tp:{k}": int((selected & actual).sum()),
                    f"fp:{k}": int((selected & ~actual).sum())})
    return out


def _multiclass_gaps(result: GroupDisparity, counts: dict, classes: list[str]) -> None:
    """Equalized odds and demographic parity one class against the rest: per class the
    recall (TPR) and FPR gaps between groups with >= 10 rows of that class (or of the
    others), and the selection-rate gap; the class with the largest lower end is kept.
    The intervals are widened for the pairs of groups and the classes compared."""
    k = len(counts)
    z = bonferroni_z(k * (k - 1) // 2 * max(1, len(classes)))
    result.z = round(z, 3)
    best_eo, best_dp = None, None
    for cls in classes:
        tpr = _gap({g: v for g, v in counts.items() if v[f"pos:{cls}"] >= 10},
                   f"tp:{cls}", f"pos:{cls}", z)
        fpr = _gap({g: v for g, v in counts.items() if v[f"neg:{cls}"] >= 10},
                   f"fp:{cls}", f"neg:{cls}", z)
        for gap in (tpr, fpr):
            if gap[1] is not None and (best_eo is None or gap[1] > best_eo[0][1]):
                best_eo = (gap, cls)
        dp = _gap(counts, f"sel:{cls}", "n", z)
        if dp[1] is not None:
            base = _gap(counts, f"pos:{cls}", "n", z)[0] or 0.0
            if best_dp is None or dp[1] - base > best_dp[0][1] - best_dp[1]:
                best_dp = (dp, base, cls)
    if best_eo is not None:
        (gap, low, _, _), cls = best_eo
        result.equalized_odds_difference, result.equalized_odds_low = gap, low
        result.worst_class = cls
    if best_dp is not None:
        result.demographic_parity_difference, result.demographic_parity_low = best_dp[0][:2]
        result.base_rate_difference = round(best_dp[1], 4)
        result.worst_class = result.worst_class or best_dp[2]


def _regression_gaps(result: GroupDisparity, counts: dict, y_true, y_pred) -> GroupDisparity:
    """MAE gap between the worst and best group and the gap in mean residual (a group
    the model systematically under- or over-predicts), each with the lower end of a
    Welch interval widened for the pairs of groups compared."""
    k = len(counts)
    z = bonferroni_z(k * (k - 1) // 2)
    result.z = round(z, 3)
    scored = np.concatenate([v["errors"] for v in counts.values()])
    result.mae_overall = round(float(scored.mean()), 4)
    result.target_std = round(float(np.std(np.asarray(y_true, float), ddof=1)), 4)
    mae = {g: v["errors"].mean() for g, v in counts.items()}
    worst, best = max(mae, key=lambda g: (mae[g], g)), min(mae, key=lambda g: (mae[g], g))
    result.worst_group, result.best_group = worst, best
    result.mae_difference = round(float(mae[worst] - mae[best]), 4)
    result.mae_difference_low = round(
        _mean_gap_low(counts[worst]["errors"], counts[best]["errors"], z), 4)
    bias = {g: v["residuals"].mean() for g, v in counts.items()}
    high, low = max(bias, key=lambda g: (bias[g], g)), min(bias, key=lambda g: (bias[g], g))
    result.bias_difference = round(float(bias[high] - bias[low]), 4)
    result.bias_difference_low = round(
        _mean_gap_low(counts[high]["residuals"], counts[low]["residuals"], z), 4)
    return result


def _gap(counts: dict[str, dict], hits: str, total: str, z: float = Z):
    """(gap, lower bound of its interval, higher group, lower group) between the groups
    with the highest and lowest rate of ``hits / total``."""
    rated = {k: v[hits] / v[total] for k, v in counts.items() if v[total] > 0}
    if len(rated) < 2:
        return None, None, None, None
    high = max(rated, key=lambda k: (rated[k], k))
    low = min(rated, key=lambda k: (rated[k], k))
    a, b = counts[high], counts[low]
    bound = newcombe_low(a[hits], a[total], b[hits], b[total], z)
    return round(rated[high] - rated[low], 4), round(bound, 4), high, low
