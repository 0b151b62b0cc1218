"""Whether the rows holding a spike value are ordinary rows: the test that tells a code
for a lost value (0 or -999 written where a measurement is missing) from a natural point
mass (no income, no rain, no stolen bases), read from the training rows alone.

A real value is a fact about its row, so the other features carry it: zero rain falls on
dry, sunny days; zero children on young, unmarried women. Where the other features predict
the column (a cross-validated R^2 of the column on them, among the rows without the spike),
a classifier on those features tells a natural point mass's rows from the rest
(cross-validated AUC far above 0.5). A code is written wherever the value was lost,
whatever the row holds, so its rows are ordinary rows: the same features cannot tell
them apart (AUC within noise of 0.5), although they predict the column elsewhere.

Where the other features do not predict the column (R^2 near 0), natural point masses
are as unpredictable as codes and the test says nothing: the rule reads the AUC only
beside a predictable column.

The models are small gradient-boosted trees (they need no scaling, take gaps and read
interactions) on the interventions' seeded training sample, a few folds each: well
under a second per column at 2,000 rows.
"""

from __future__ import annotations

import logging
import warnings

import numpy as np
import pandas as pd

logger = logging.getLogger(__name__)

#: fewer spike rows (or other rows) than this and neither model is fitted
MIN_ROWS = 10
#: cross-validation folds of each model
FOLDS = 3
#: boosting rounds and leaves of the small trees: enough to read a relation, fast
MAX_ITER = 40
MAX_LEAF_NODES = 15
#: the trees read at most this many other features: those most correlated with the
#: column (the ones that carry it). At 300 features the two models took 3.3 s per spike
#: column, against 0.2 s at ten; a spike's refits share a 20 s budget with it
MAX_FEATURES = 50


def spike_typicality(
    rows: pd.DataFrame, column: str, value: float, seed: int
) -> dict[str, float] | None:
    """``{"rows_auc", "rows_auc_noise", "column_r2", "spike_rows"}`` for the spike
    ``value`` of ``column`` in the training sample ``rows`` (features only), or None when
    there are too few rows either side or no other feature.

    ``rows_auc``: cross-validated AUC of a classifier telling the spike's rows from the
    others by the other features; ``rows_auc_noise``: its standard error (Hanley and
    McNeil); ``column_r2``: cross-validated R^2 of the column on the other features,
    among the rows without the spike (how much the other features carry of its value).
    """
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
    from sklearn.metrics import r2_score, roc_auc_score
    from sklearn.model_selection import KFold, StratifiedKFold, cross_val_predict

    values = pd.to_numeric(rows[column], errors="coerce")
    spike = (values == value).to_numpy()
    rest = (~spike) & values.notna().to_numpy()
    others = _encoded(rows.drop(columns=[column]))
    if others.shape[1] == 0 or spike.sum() < MIN_ROWS or rest.sum() < MIN_ROWS:
        return None
    others = _carriers(others, values, rest)
    known = spike | rest
    X, is_spike = others[known], spike[known]
    options = {"max_iter": MAX_ITER, "max_leaf_nodes": MAX_LEAF_NODES,
               "early_stopping": False, "random_state": seed}
    folds = min(FOLDS, int(is_spike.sum()), int((~is_spike).sum()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        proba = cross_val_predict(
            HistGradientBoostingClassifier(**options), X, is_spike,
            cv=StratifiedKFold(folds, shuffle=True, random_state=seed), method="predict_proba",
        )[:, 1]
        target = values[rest].to_numpy(dtype=float)
        predicted = cross_val_predict(
            HistGradientBoostingRegressor(**options), others[rest], target,
            cv=KFold(FOLDS, shuffle=True, random_state=seed),
        )
    auc = float(roc_auc_score(is_spike, proba))
    r2 = float(r2_score(target, predicted)) if np.ptp(target) > 0 else 0.0
    return {
        "rows_auc": round(auc, 4),
        "rows_auc_noise": round(_auc_noise(auc, int(is_spike.sum()), int((~is_spike).sum())), 4),
        "column_r2": round(r2, 4),
        "spike_rows": float(is_spike.sum()),
    }


def _encoded(frame: pd.DataFrame) -> pd.DataFrame:
    """Numeric copy of ``frame``: booleans as 0/1, text and categories as their codes
    (gaps stay gaps), so the trees read every column."""
    out = {}
    for name in frame.columns:
        series = frame[name]
        if pd.api.types.is_bool_dtype(series):
            out[name] = series.astype(float)
        elif pd.api.types.is_numeric_dtype(series):
            out[name] = pd.to_numeric(series, errors="coerce").astype(float)
        else:
            codes = pd.Categorical(series.astype("string")).codes.astype(float)
            codes[codes < 0] = np.nan
            out[name] = codes
    return pd.DataFrame(out, index=frame.index).replace([np.inf, -np.inf], np.nan)


def _carriers(others: pd.DataFrame, values: pd.Series, rest: np.ndarray) -> pd.DataFrame:
    """``others`` cut to the :data:`MAX_FEATURES` columns most correlated (absolute
    Pearson, gaps left out) with the column's values on the rows without the spike, in
    their original order; all of them when there are no more."""
    if others.shape[1] <= MAX_FEATURES:
        return others
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        strength = others[rest].corrwith(values[rest]).abs().fillna(0.0)
    keep = set(strength.sort_values(ascending=False, kind="stable").index[:MAX_FEATURES])
    return others[[c for c in others.columns if c in keep]]


def _auc_noise(auc: float, n_pos: int, n_neg: int) -> float:
    """Standard error of an AUC from its class sizes (Hanley and McNeil 1982)."""
    q1, q2 = auc / (2 - auc), 2 * auc**2 / (1 + auc)
    var = (auc * (1 - auc) + (n_pos - 1) * (q1 - auc**2) + (n_neg - 1) * (q2 - auc**2)) / (
        n_pos * n_neg
    )
    return float(np.sqrt(max(var, 0.0)))
