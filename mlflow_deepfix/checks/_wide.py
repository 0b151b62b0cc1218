"""Wide frames: which columns the Deepchecks checks see when there are too many.

Many Deepchecks checks cost time per column, some per pair of columns (Feature Feature
Correlation), and 2,000 columns (genomics, sensor arrays, one-hot exports) take minutes.
Above :data:`MAX_CHECK_FEATURES` columns the checks see only the most relevant ones: the
model's own importances first, then the columns that vary most; non-numeric columns
(few in wide tables, and the ones data-integrity checks are about) are kept first.
deepfix's own statistics still cover every column, and the model always receives all
of them; the report notes the cap.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

#: columns the Deepchecks checks see at most (our statistics see all)
MAX_CHECK_FEATURES = 100


def select_check_features(
    frame: pd.DataFrame,
    features: Sequence[str],
    *,
    importance: Mapping[str, float] | None = None,
    limit: int = MAX_CHECK_FEATURES,
) -> list[str]:
    """``features`` when they are at most ``limit``; else the ``limit`` most relevant, in
    their original order (deterministic: ties keep the column order)."""
    features = list(features)
    if len(features) <= limit:
        return features
    position = {name: i for i, name in enumerate(features)}
    importance = importance or {}
    numeric = [
        c for c in features
        if ptypes.is_numeric_dtype(frame[c].dtype) or ptypes.is_bool_dtype(frame[c].dtype)
    ]
    others = [c for c in features if c not in set(numeric)]
    kept = others[: max(limit // 4, 1)]
    if numeric:
        values = frame[numeric].to_numpy(dtype=float, na_value=np.nan)
        finite = np.where(np.isfinite(values), values, np.nan)
        with np.errstate(all="ignore"):
            variance = np.nan_to_num(np.nanvar(finite, axis=0), nan=-1.0)
        spread = dict(zip(numeric, variance.tolist()))
        ranked = sorted(
            numeric,
            key=lambda c: (-float(importance.get(c, 0.0)), -spread[c], position[c]),
        )
        kept.extend(ranked[: limit - len(kept)])
    if len(kept) < limit:  # few numeric columns: fill with the remaining others
        kept.extend([c for c in others if c not in set(kept)][: limit - len(kept)])
    chosen = set(kept)
    return [c for c in features if c in chosen]


def cap_note(n_features: int, limit: int = MAX_CHECK_FEATURES, *, by_importance: bool) -> str:
    """The report note that says the checks saw a subset of the columns."""
    basis = "the model's feature importance, then variance" if by_importance else "variance"
    return (
        f"Wide frame: {n_features} feature columns. The Deepchecks checks ran on the {limit} "
        f"most relevant ones (ranked by {basis}) to stay fast; deepfix's own statistics "
        "(missing values, types, outliers, leakage) cover all columns, and the model "
        "received all of them."
    )
