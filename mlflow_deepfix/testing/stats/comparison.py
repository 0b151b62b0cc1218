"""Train vs test (:class:`SplitComparison`): overlap, dtype changes, unseen
categories, time order."""

from __future__ import annotations

import logging
import warnings
from typing import Any

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from mlflow_deepfix.schemas import SplitComparison
from mlflow_deepfix.testing.stats.column_types import _is_object_like
from mlflow_deepfix.testing.stats.labels import is_classification, label_keys
from mlflow_deepfix.testing.stats.rows import _joint_hash_kind, _row_hashes

logger = logging.getLogger(__name__)


def _dtype_family(dtype: Any) -> str:
    if isinstance(dtype, pd.CategoricalDtype):
        return "category"
    if ptypes.is_bool_dtype(dtype):
        return "bool"
    if ptypes.is_integer_dtype(dtype):
        return "int"
    if ptypes.is_float_dtype(dtype):
        return "float"
    if ptypes.is_datetime64_any_dtype(dtype):
        return "datetime"
    if _is_object_like(dtype):
        return "string"
    return str(dtype)


def _stored_kind(dtype: Any) -> str:
    """What a model reads a column as: integers and floats are both numbers. An integer
    column turns float64 the moment one value is missing, or after any arithmetic;
    every numeric model reads both the same way, so that alone is no schema change
    (and it is not the cause of a drift found beside it). Where a model's signature
    does refuse it, the crash says so (``RuntimeFailure``)."""
    family = _dtype_family(dtype)
    return "number" if family in ("int", "float") else family


def _unseen_fraction(train: pd.Series, test: pd.Series) -> float:
    """Share of test rows holding a non-missing value never seen in train (values
    compared through :func:`label_keys`, so ``1`` and ``1.0`` are the same)."""
    if len(test) == 0:
        return 0.0
    try:
        seen = set(label_keys(pd.Series(pd.unique(train.dropna().to_numpy()), dtype=object)))
        test_values = pd.unique(test.dropna().to_numpy())
    except TypeError:  # unhashable values: compare every row's key
        seen = set(label_keys(train))
        keys = label_keys(test)
        return float(np.mean([k is not None and k not in seen for k in keys]))
    test_keys = label_keys(pd.Series(test_values, dtype=object))
    new = [v for v, k in zip(test_values, test_keys) if k is not None and k not in seen]
    if not new:
        return 0.0
    return float(test.isin(new).mean())


def _to_datetime(series: pd.Series) -> pd.Series:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return pd.to_datetime(series, errors="coerce", utc=True)
        except (TypeError, ValueError, OverflowError):
            return pd.Series(pd.NaT, index=series.index, dtype="datetime64[ns, UTC]")


def compare_splits(
    train: pd.DataFrame,
    test: pd.DataFrame,
    *,
    label: str,
    task: str,
    feature_names: list[str],
    cat_features: list[str],
    datetime_col: str | None,
) -> SplitComparison:
    """How ``test`` relates to ``train``: shared rows, schema, unseen values, dates.

    Rows are compared through a 64-bit hash of their features, after numbers are cast
    to float (so ``int64`` 1 equals ``float64`` 1.0) and text and categories to plain
    strings; a column holding numbers on one side and numeric text on the other is
    compared as numbers.
    """
    for arg, value in (("train", train), ("test", test)):
        if not isinstance(value, pd.DataFrame):
            raise TypeError(f"{arg} must be a pandas DataFrame, got {type(value).__name__}")
    classification = is_classification(task)
    out: dict[str, Any] = {
        "test_to_train_ratio": len(test) / len(train) if len(train) else 0.0,
    }
    train_columns, test_columns = list(train.columns), list(test.columns)
    in_train, in_test = set(train_columns), set(test_columns)
    out["columns_only_in_train"] = [c for c in train_columns if c not in in_test]
    out["columns_only_in_test"] = [c for c in test_columns if c not in in_train]
    common = [c for c in train_columns if c in in_test]
    out["dtype_mismatches"] = {
        c: f"{train[c].dtype} -> {test[c].dtype}"
        for c in common
        if _stored_kind(train[c].dtype) != _stored_kind(test[c].dtype)
    }

    common_set = set(common)
    features = [c for c in feature_names if c in common_set and c != label]
    if features and len(train) and len(test):
        kinds = {c: _joint_hash_kind(train[c], test[c]) for c in features}
        train_hash = _row_hashes(train, features, kinds)
        test_hash = _row_hashes(test, features, kinds)
        out["overlap_fraction"] = float(pd.Series(test_hash).isin(train_hash).mean())

    unseen = {}
    for column in cat_features or []:
        if column in set(common) and column != label:
            share = _unseen_fraction(train[column], test[column])
            if share > 0:
                unseen[column] = share
    out["unseen_category_fraction"] = unseen
    if classification and label in set(common):
        out["unseen_label_fraction"] = _unseen_fraction(train[label], test[label])

    if datetime_col and datetime_col in train.columns and datetime_col in test.columns:
        train_dates = _to_datetime(train[datetime_col])
        test_dates = _to_datetime(test[datetime_col]).dropna()
        latest = train_dates.max()
        if len(test_dates) and not pd.isna(latest):
            out["test_before_train_fraction"] = float((test_dates < latest).mean())
    elif datetime_col:
        logger.warning("datetime_col %r is not in both splits; date checks skipped", datetime_col)
    return SplitComparison(**out)
