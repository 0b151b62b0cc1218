"""Association of a column with the target (rank correlation / Somers' D / normalised
mutual information), computed on a seeded sample: the signal behind label-like
columns (target leakage)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.metrics import normalized_mutual_info_score

from mlflow_deepfix.testing.stats.labels import label_keys

#: fewest non-missing values for monotonicity or an association to mean anything
_MIN_ROWS = 20
#: at most this many classes get a one-vs-rest association (the most frequent ones)
_MAX_ASSOC_CLASSES = 20


def _ranks(x: np.ndarray) -> np.ndarray:
    """Average ranks (ties share their mean rank), as ``scipy.stats.rankdata`` but
    several times faster on this stack."""
    order = np.argsort(x, kind="quicksort")
    ordered = x[order]
    change = np.empty(x.size, dtype=bool)
    change[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=change[1:])
    starts = np.flatnonzero(change)
    ends = np.append(starts[1:], x.size)
    ranks = np.empty(x.size, dtype=float)
    ranks[order] = np.repeat((starts + ends - 1) / 2.0 + 1.0, ends - starts)
    return ranks


def _pearson_columns(x: np.ndarray, targets: np.ndarray) -> float:
    """max |Pearson| of vector ``x`` with each column of ``targets``."""
    xc = x - x.mean()
    sx = np.sqrt((xc * xc).sum())
    if sx == 0:
        return 0.0
    tc = targets - targets.mean(axis=0)
    st = np.sqrt((tc * tc).sum(axis=0))
    ok = st > 0
    if not ok.any():
        return 0.0
    corr = (xc @ tc[:, ok]) / (sx * st[ok])
    return float(np.clip(np.nanmax(np.abs(corr)), 0.0, 1.0))


def _somers_d(ranks: np.ndarray, codes: np.ndarray, classes: np.ndarray) -> float:
    """max over ``classes`` of |2 AUC - 1| (Somers' D) of the ranked feature against
    each one-vs-rest indicator. Unlike Spearman against a 0/1 label (at most ~0.87), it
    reaches 1 when the feature separates a class perfectly: the leakage signal."""
    n = ranks.size
    n_codes = int(codes.max()) + 1 if codes.size else 0
    positives = np.bincount(codes, minlength=n_codes)[classes].astype(float)
    rank_sums = np.bincount(codes, weights=ranks, minlength=n_codes)[classes]
    ok = (positives > 0) & (positives < n)
    if not ok.any():
        return 0.0
    positives, rank_sums = positives[ok], rank_sums[ok]
    auc = (rank_sums - positives * (positives + 1) / 2.0) / (positives * (n - positives))
    return float(np.clip(np.max(np.abs(2.0 * auc - 1.0)), 0.0, 1.0))


class _Target:
    """The label of the association sample, prepared once for every column."""

    def __init__(self, y: pd.Series, classification: bool):
        self.classification = classification
        if classification:
            keys = label_keys(y)
            codes, uniques = pd.factorize(pd.Series(keys, dtype=object), use_na_sentinel=True)
            self.valid = codes >= 0
            self.codes = codes
            freq = np.bincount(codes[self.valid], minlength=len(uniques))
            top = np.argsort(-freq, kind="stable")[:_MAX_ASSOC_CLASSES]
            # a class of a handful of rows makes |2 AUC - 1| of pure noise large
            n_valid = int(self.valid.sum())
            sizeable = (freq[top] >= _MIN_ROWS) & (n_valid - freq[top] >= _MIN_ROWS)
            if sizeable.any():
                top = top[sizeable]
            if len(uniques) == 2:
                top = top[:1]
            self.classes = top
            self.n_classes = len(uniques)
        else:
            values = pd.to_numeric(y, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
            self.valid = np.isfinite(values)
            self.values = values
            self.value_ranks = _ranks(values) if self.valid.all() else None
            codes = np.full(len(values), -1, dtype=np.int64)
            if self.valid.sum() > 0:
                binned = pd.qcut(values[self.valid], q=10, labels=False, duplicates="drop")
                codes[self.valid] = np.asarray(binned, dtype=np.int64)
            self.codes = codes
            self.n_classes = len(np.unique(codes[self.valid]))

    def rank_association(self, x: np.ndarray) -> float | None:
        mask = self.valid & ~np.isnan(x)
        if mask.sum() < _MIN_ROWS:
            return None
        ranks = _ranks(x[mask])
        if self.classification:
            return _somers_d(ranks, self.codes[mask], self.classes)
        return _pearson_columns(
            ranks, (self.value_ranks if mask.all() else _ranks(self.values[mask]))[:, None]
        )

    def nmi(self, x: pd.Series) -> float | None:
        mask = self.valid
        if mask.sum() < _MIN_ROWS:
            return None
        try:
            codes, _ = pd.factorize(x[mask], use_na_sentinel=False)
        except TypeError:
            codes, _ = pd.factorize(x[mask].astype(str), use_na_sentinel=False)
        if len(np.unique(codes)) < 2:
            return 0.0
        return float(normalized_mutual_info_score(self.codes[mask], codes))
