"""Statistics of one split (:class:`SplitStats`): its columns, label, duplicates and
conflicting labels."""

from __future__ import annotations

import logging
from typing import Any, Literal

import numpy as np
import pandas as pd
from pandas.util import hash_pandas_object

from mlflow_deepfix.schemas import SplitStats
from mlflow_deepfix.testing.stats.association import _Target
from mlflow_deepfix.testing.stats.columns import _column_stats
from mlflow_deepfix.testing.stats.labels import (
    _distribution,
    _label_stats,
    is_classification,
    label_keys,
)
from mlflow_deepfix.testing.stats.rows import _hash_kind, _row_hashes
from mlflow_deepfix.testing.stats.sampling import sample_index

logger = logging.getLogger(__name__)


def split_stats(
    frame: pd.DataFrame,
    *,
    name: Literal["train", "test"],
    label: str,
    task: str,
    feature_names: list[str],
    cat_features: list[str],
    seed: int = 0,
    max_rows: int = 50_000,
    target_association: bool | None = None,
) -> SplitStats:
    """Statistics of one split: every non-label column, duplicates, conflicts, label.

    ``target_association`` (default: only for the ``train`` split) adds each column's
    association with the label, in [0, 1], computed on a seeded sample of at most
    ``max_rows`` rows. Numeric and datetime columns: a rank correlation, |Spearman|
    against a regression target, |Somers' D| = |2 AUC - 1| one-vs-rest (maximum over
    the classes) against a class label, because Spearman against a 0/1 label cannot
    exceed ~0.87 even for a feature that separates the classes perfectly. Other columns:
    normalised mutual information (a regression target binned into deciles). ``summarize_dataset`` also asks for it on ``test`` when no
    training split exists, so that leakage can still be seen.
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    if name not in ("train", "test"):
        raise ValueError(f"name={name!r} is not supported; accepted: 'train', 'test'")
    if not isinstance(max_rows, int) or max_rows < 1:
        raise ValueError(f"max_rows={max_rows!r} must be a positive integer")
    classification = is_classification(task)
    n_rows = len(frame)
    cat_set = set(cat_features or [])
    features = [c for c in feature_names if c in frame.columns and c != label]
    others = [c for c in frame.columns if c != label and c not in set(features)]
    has_label = label in frame.columns
    if not has_label:
        logger.warning("split %r has no label column %r", name, label)

    if target_association is None:
        target_association = name == "train"
    sample = sample_index(n_rows, max_rows, seed)
    target = None
    if target_association and has_label and n_rows:
        target = _Target(frame[label].iloc[sample].reset_index(drop=True), classification)

    columns = []
    for column in features + others:
        series = frame[column]
        if isinstance(series, pd.DataFrame):  # duplicated column name: take the first
            series = series.iloc[:, 0]
        columns.append(
            _column_stats(series, is_cat=column in cat_set, target=target, sample=sample)
        )

    stats: dict[str, Any] = {
        "name": name,
        "n_rows": n_rows,
        "n_columns": frame.shape[1],
        "columns": columns,
    }
    if n_rows == 0:
        return SplitStats(**stats)

    kinds = {c: _hash_kind(frame[c]) for c in features}
    feature_hash = _row_hashes(frame, features, kinds)
    if has_label:
        keys = label_keys(frame[label])
        label_missing = np.array([k is None for k in keys], dtype=bool)
        label_codes, _ = pd.factorize(pd.Series(keys, dtype=object), use_na_sentinel=False)
        row_hash = hash_pandas_object(
            pd.DataFrame({"f": feature_hash, "y": label_codes}), index=False
        ).to_numpy()
        stats["label_missing_fraction"] = float(label_missing.mean())
        if features:
            pairs = pd.DataFrame({"f": feature_hash, "y": label_codes})[~label_missing]
            distinct = pairs.drop_duplicates()
            conflicted = distinct["f"][distinct["f"].duplicated(keep=False)].unique()
            stats["conflicting_label_fraction"] = float(
                np.isin(pairs["f"].to_numpy(), conflicted).sum() / n_rows
            )
        if classification:
            stats["label_distribution"] = _distribution(keys[~label_missing])
        else:
            stats["label_stats"] = _label_stats(frame[label])
    else:
        row_hash = feature_hash
    if features or has_label:
        stats["duplicate_fraction"] = float(pd.Series(row_hash).duplicated().mean())
    return SplitStats(**stats)
