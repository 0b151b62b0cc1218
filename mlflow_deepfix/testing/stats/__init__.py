"""Dataset statistics for the testing step: per column, per split and train vs test.

Why this exists next to Deepchecks: the diagnosis rules need a few cheap, exact
aggregates (duplicate share, train/test overlap, label-like association, ...) that do
not depend on Deepchecks' version, sampling or conditions, and that never contain a
single raw row, so that they can be written to ``artifact_data.json`` as they are.

Everything is vectorised. Per-column work that costs more than a pass over the column
(the target association) runs on a seeded sample of at most ``max_rows`` rows; per-value
work (types, string variants) runs on a column's distinct values, not its rows.
100k rows x 33 columns per split take a few hundred milliseconds.

Layout, by concern: :mod:`~.labels`, :mod:`~.sampling`, :mod:`~.column_types`,
:mod:`~.columns` (per-column statistics), :mod:`~.association` (column vs target),
:mod:`~.rows` (row hashing), :mod:`~.splits` (one split), :mod:`~.comparison` (train vs
test); :func:`summarize_dataset` here puts them together.
"""

from __future__ import annotations

import pandas as pd

from mlflow_deepfix.schemas import DatasetSummary
from mlflow_deepfix.testing.stats.column_types import infer_cat_features
from mlflow_deepfix.testing.stats.comparison import compare_splits
from mlflow_deepfix.testing.stats.labels import is_classification, label_keys
from mlflow_deepfix.testing.stats.sampling import sample_index
from mlflow_deepfix.testing.stats.splits import split_stats

__all__ = [
    "compare_splits",
    "infer_cat_features",
    "is_classification",
    "label_keys",
    "sample_index",
    "split_stats",
    "summarize_dataset",
]


def summarize_dataset(
    train: pd.DataFrame | None,
    test: pd.DataFrame,
    *,
    label: str,
    task: str,
    feature_names: list[str],
    cat_features: list[str] | None,
    index_col: str | None = None,
    datetime_col: str | None = None,
    seed: int = 0,
    max_rows: int = 50_000,
) -> DatasetSummary:
    """Both splits' statistics and their comparison (no raw rows).

    ``cat_features=None`` infers them with :func:`infer_cat_features` from the training
    split (or the test split when there is none). Without a training split the target
    association is computed on the test split instead.
    """
    reference = train if train is not None else test
    if cat_features is None:
        cat_features = infer_cat_features(reference, feature_names)
    common = {
        "label": label,
        "task": task,
        "feature_names": feature_names,
        "cat_features": cat_features,
        "seed": seed,
        "max_rows": max_rows,
    }
    train_stats = split_stats(train, name="train", **common) if train is not None else None
    test_stats = split_stats(test, name="test", target_association=train is None, **common)
    comparison = None
    if train is not None:
        comparison = compare_splits(
            train,
            test,
            label=label,
            task=task,
            feature_names=feature_names,
            cat_features=cat_features,
            datetime_col=datetime_col,
        )
    return DatasetSummary(
        target=label,
        feature_names=list(feature_names),
        cat_features=list(cat_features),
        index_col=index_col,
        datetime_col=datetime_col,
        train=train_stats,
        test=test_stats,
        comparison=comparison,
    )
