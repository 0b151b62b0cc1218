"""Labels: which tasks are classification, label values as stable string keys, and
the label distribution/statistics of a split."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

#: task names understood here: the contract's three, plus MLflow's ``model_type`` words
_TASK_IS_CLASSIFICATION = {
    "binary_classification": True,
    "multiclass_classification": True,
    "classifier": True,
    "regression": False,
    "regressor": False,
}
#: label_distribution keeps this many classes; the rest are summed under ``<other>``
_MAX_LABEL_KEYS = 100


def is_classification(task: str) -> bool:
    """True for a classification task; raises for an unknown task name."""
    try:
        return _TASK_IS_CLASSIFICATION[task]
    except (KeyError, TypeError):
        raise ValueError(
            f"task={task!r} is not supported; accepted: "
            + ", ".join(repr(t) for t in _TASK_IS_CLASSIFICATION)
        ) from None


def _label_key(value: Any) -> str | None:
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        number = float(value)
        if np.isnan(number):
            return None
        if np.isfinite(number) and number.is_integer() and abs(number) < 1e15:
            return str(int(number))
        return repr(number)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def label_keys(values: Any) -> np.ndarray:
    """Labels as comparable strings (object array, ``None`` where missing).

    ``1``, ``1.0``, ``np.int64(1)`` and ``"1"`` all become ``"1"``, so labels read with
    different dtypes in train, test and predictions (an int column that gained a NaN and
    became float, say) still compare equal. Works on distinct values only: fast.
    """
    if isinstance(values, pd.Series):
        series = values
    else:
        array = np.asarray(values)
        series = pd.Series(array.ravel() if array.ndim != 1 else array)
    try:
        codes, uniques = pd.factorize(series, use_na_sentinel=True)
    except TypeError:  # unhashable values (lists, dicts): use their text
        codes, uniques = pd.factorize(
            series.map(lambda v: v if pd.api.types.is_scalar(v) else repr(v)), use_na_sentinel=True
        )
    keys = np.empty(len(uniques) + 1, dtype=object)
    if ptypes.infer_dtype(uniques, skipna=False) == "string":  # the common case, in C
        keys[:-1] = np.asarray(uniques, dtype=object)
    else:
        keys[:-1] = [_label_key(u) for u in uniques]
    keys[-1] = None
    return keys[codes]  # code -1 (missing) picks the trailing None


def _distribution(keys: np.ndarray) -> dict[str, float]:
    if len(keys) == 0:
        return {}
    shares = pd.Series(keys, dtype=object).value_counts(normalize=True, sort=True)
    out = {str(k): float(v) for k, v in shares.iloc[:_MAX_LABEL_KEYS].items()}
    if len(shares) > _MAX_LABEL_KEYS:
        out["<other>"] = float(shares.iloc[_MAX_LABEL_KEYS:].sum())
    return out


def _label_stats(label: pd.Series) -> dict[str, float]:
    values = pd.to_numeric(label, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return {}
    q = np.quantile(finite, [0.01, 0.5, 0.99])
    # robust extremes (see columns.ROBUST_EXTREMES): never the value of a single row
    low, high = np.quantile(finite, (0.005, 0.995))
    return {
        "mean": float(finite.mean()),
        "std": float(finite.std(ddof=1)) if finite.size > 1 else 0.0,
        "min": float(low),
        "max": float(high),
        "q01": float(q[0]),
        "q50": float(q[1]),
        "q99": float(q[2]),
    }
