"""Row identity without raw rows: per-column canonical forms and row hashes, the basis
of duplicate, conflicting-label and train/test overlap measures."""

from __future__ import annotations

import numpy as np
import pandas as pd
from pandas.api import types as ptypes
from pandas.util import hash_pandas_object

from mlflow_deepfix.testing.stats.column_types import _is_plain_numeric
from mlflow_deepfix.testing.stats.labels import label_keys


def _canonical(series: pd.Series, as_: str) -> pd.Series:
    """The column in a form whose hash does not depend on incidental dtypes."""
    if as_ == "float":
        if ptypes.is_bool_dtype(series.dtype) or _is_plain_numeric(series.dtype):
            return pd.Series(series.to_numpy(dtype=float, na_value=np.nan))
        return pd.Series(
            pd.to_numeric(series, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        )
    if as_ == "str":
        dtype = series.dtype
        if isinstance(dtype, pd.CategoricalDtype):
            dtype = dtype.categories.dtype
        if ptypes.is_string_dtype(dtype) and dtype != object:
            # already text: only the container differs (str, string[pyarrow], category)
            return pd.Series(series.astype(object).to_numpy())
        return pd.Series(label_keys(series), dtype=object)
    return series.reset_index(drop=True)


def _hash_kind(series: pd.Series) -> str:
    dtype = series.dtype
    if ptypes.is_bool_dtype(dtype) or _is_plain_numeric(dtype):
        return "float"
    if isinstance(dtype, pd.CategoricalDtype) and _is_plain_numeric(dtype.categories.dtype):
        return "float"
    if ptypes.is_datetime64_any_dtype(dtype):
        return "native"
    return "str"


def _joint_hash_kind(*columns: pd.Series) -> str:
    kinds = {_hash_kind(c) for c in columns}
    if len(kinds) == 1:
        return kinds.pop()
    if kinds == {"float", "str"}:
        # numbers stored as text on one side: compare as numbers when they all parse
        for column in columns:
            if _hash_kind(column) == "str":
                parsed = pd.to_numeric(column, errors="coerce")
                if int(parsed.notna().sum()) != int(column.notna().sum()):
                    return "str"
        return "float"
    return "str"


def _row_hashes(frame: pd.DataFrame, columns: list[str], kinds: dict[str, str]) -> np.ndarray:
    if not columns:
        return np.zeros(len(frame), dtype=np.uint64)
    canonical = pd.DataFrame({i: _canonical(frame[c], kinds[c]) for i, c in enumerate(columns)})
    try:
        return hash_pandas_object(canonical, index=False).to_numpy()
    except TypeError:  # unhashable cell values
        return hash_pandas_object(canonical.astype(str), index=False).to_numpy()
