"""What kind of values a column holds: numeric, categorical, text, mixed types,
and which columns are inferred categorical. Per distinct value, not per row."""

from __future__ import annotations

import datetime as _dt
from typing import Any

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

#: integer columns with at most this many distinct values (and at most
#: ``_CAT_MAX_UNIQUE_SHARE`` of the rows) are inferred categorical
_CAT_MAX_UNIQUE = 10
_CAT_MAX_UNIQUE_SHARE = 0.05


def _is_integral(values: np.ndarray) -> bool:
    finite = values[np.isfinite(values)]
    return finite.size > 0 and bool(np.all(finite == np.round(finite)))


def _is_object_like(dtype: Any) -> bool:
    return dtype == object or ptypes.is_string_dtype(dtype)


def _is_plain_numeric(dtype: Any) -> bool:
    return (
        ptypes.is_numeric_dtype(dtype)
        and not ptypes.is_bool_dtype(dtype)
        and not ptypes.is_complex_dtype(dtype)
        and not isinstance(dtype, pd.CategoricalDtype)
    )


def _family(value: Any) -> str:
    """The broad Python type of one value; a mix of families is a data-type problem."""
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, (int, float, np.integer, np.floating)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (_dt.date, _dt.datetime, np.datetime64, pd.Timestamp)):
        return "datetime"
    if isinstance(value, bytes):
        return "bytes"
    return type(value).__name__


def _value_counts(series: pd.Series) -> pd.Series:
    """Counts of the non-missing distinct values, most frequent first."""
    try:
        counts = series.value_counts(dropna=True, sort=True)
    except TypeError:  # unhashable values (lists, dicts): count their text
        counts = series.dropna().astype(str).value_counts(sort=True)
    if isinstance(series.dtype, pd.CategoricalDtype):
        counts = counts[counts > 0]
    return counts


def _numeric_view(series: pd.Series, kind: str) -> np.ndarray | None:
    """The column as float64 (NaN where missing), or None when it is not numeric."""
    dtype = series.dtype
    try:
        if ptypes.is_bool_dtype(dtype) or _is_plain_numeric(dtype):
            return series.to_numpy(dtype=float, na_value=np.nan)
        if ptypes.is_datetime64_any_dtype(dtype):
            return None
        if kind == "numeric" and _is_object_like(dtype):
            return pd.to_numeric(series, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    except (TypeError, ValueError):
        return None
    return None


def _association_view(series: pd.Series, kind: str) -> np.ndarray | None:
    """Numeric values for a rank correlation (datetimes as epoch ns), else None."""
    if kind in ("numeric",):
        return _numeric_view(series, kind)
    if kind == "datetime":
        try:
            values = (
                series.to_numpy(dtype="datetime64[ns]")
                if series.dt.tz is None
                else (
                    series.dt.tz_convert("UTC")
                    .dt.tz_localize(None)
                    .to_numpy(dtype="datetime64[ns]")
                )
            )
            out = values.astype("int64").astype(float)
            out[np.isnat(values)] = np.nan
            return out
        except (TypeError, ValueError, AttributeError):
            return None
    return None


def _kind(series: pd.Series, is_cat: bool, families: dict[str, int] | None) -> str:
    dtype = series.dtype
    if ptypes.is_bool_dtype(dtype):
        return "boolean"
    if ptypes.is_datetime64_any_dtype(dtype):
        return "datetime"
    if isinstance(dtype, pd.CategoricalDtype):
        return "categorical"
    if ptypes.is_complex_dtype(dtype) or ptypes.is_timedelta64_dtype(dtype):
        return "other"
    if _is_plain_numeric(dtype):
        return "categorical" if is_cat else "numeric"
    if _is_object_like(dtype):
        if is_cat:
            return "categorical"
        families = families or {}
        if not families:
            return "other"
        dominant = max(families, key=families.__getitem__)
        return {
            "number": "numeric",
            "string": "text",
            "bool": "boolean",
            "datetime": "datetime",
        }.get(dominant, "other")
    return "other"


def _families(counts: pd.Series, dtype: Any) -> dict[str, int]:
    """Rows per value family; numeric-looking strings count as ``number``."""
    if len(counts) == 0:
        return {}
    values = pd.Series(counts.index, dtype=object)
    if (ptypes.is_string_dtype(dtype) and dtype != object) or ptypes.infer_dtype(
        values, skipna=True
    ) == "string":
        families = pd.Series("string", index=values.index, dtype=object)
    else:
        families = values.map(_family).astype(object)
    is_string = (families == "string").to_numpy()
    if is_string.any():
        looks_numeric = pd.to_numeric(values[is_string], errors="coerce").notna().to_numpy()
        idx = np.flatnonzero(is_string)[looks_numeric]
        families.iloc[idx] = "number"
    totals = pd.Series(counts.to_numpy(), index=families.to_numpy()).groupby(level=0).sum()
    return {str(k): int(v) for k, v in totals.items() if v > 0}


def infer_cat_features(frame: pd.DataFrame, feature_names: list[str]) -> list[str]:
    """Categorical features of ``frame``, by a simple documented rule.

    A feature is categorical when its dtype is object, string, category or bool, or when
    it holds integers (int dtype, or float whose values are all whole numbers) with at
    most 10 distinct values that are also at most 5% of its non-missing rows. Datetimes
    and other numbers are not categorical.
    """
    categorical = []
    for name in feature_names:
        if name not in frame.columns:
            continue
        series = frame[name]
        dtype = series.dtype
        if (
            _is_object_like(dtype)
            or isinstance(dtype, pd.CategoricalDtype)
            or ptypes.is_bool_dtype(dtype)
        ):
            categorical.append(name)
            continue
        if not _is_plain_numeric(dtype):
            continue
        values = series.to_numpy(dtype=float, na_value=np.nan)
        if not (ptypes.is_integer_dtype(dtype) or _is_integral(values)):
            continue
        n_obs = int(np.count_nonzero(~np.isnan(values)))
        n_unique = int(series.nunique(dropna=True))
        if n_obs and n_unique <= _CAT_MAX_UNIQUE and n_unique <= _CAT_MAX_UNIQUE_SHARE * n_obs:
            categorical.append(name)
    return categorical
