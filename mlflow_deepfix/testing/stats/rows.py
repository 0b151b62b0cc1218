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


#: rows per chunk when hashing rows: the canonical copy never holds the whole split
HASH_CHUNK_ROWS = 131_072


def _row_hashes(frame: pd.DataFrame, columns: list[str], kinds: dict[str, str]) -> np.ndarray:
    """One uint64 per row, computed chunk by chunk (same values as hashing the whole
    frame at once: the hash of a row depends on that row only)."""
    if not columns:
        return np.zeros(len(frame), dtype=np.uint64)
    out = np.empty(len(frame), dtype=np.uint64)
    for as_text in (False, True):  # unhashable cells anywhere: every chunk as text
        try:
            for start in range(0, max(len(frame), 1), HASH_CHUNK_ROWS):
                part = frame.iloc[start : start + HASH_CHUNK_ROWS]
                canonical = pd.DataFrame(
                    {i: _canonical(part[c], kinds[c]) for i, c in enumerate(columns)}
                )
                if as_text:
                    canonical = canonical.astype(str)
                out[start : start + len(part)] = hash_pandas_object(
                    canonical, index=False
                ).to_numpy()
            return out
        except TypeError:
            if as_text:
                raise
    return out
