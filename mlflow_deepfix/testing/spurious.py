"""Spurious correlations: a feature whose link to the label holds in training but not in
the evaluation data.

Ordinary drift moves a feature's *distribution*; a spurious correlation breaks its
*relation to the label* while the distribution may stay the same (a watermark that
marked one class in the training photos, a hospital code that coincided with the
outcome in last year's data). So, for the most important features, this module
measures on bounded seeded samples of both splits:

* the model-free association with the label in each split (signed Somers' D
  ``2 AUC - 1`` for binary labels, Spearman for regression, normalised mutual
  information for categoricals and multiclass labels) and a 95% interval of its change
  (bootstrap standard error, Bonferroni-widened for the number of features tested);
* the feature's marginal shift (Kolmogorov-Smirnov statistic, or total variation
  distance for categoricals), so drift can be told apart;
* how much the model's score drops when the feature is shuffled, on each split: a
  model that leans on the feature in training but gains nothing from it (or loses) on
  the evaluation data is paying for a relation that no longer holds.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pandas as pd

from mlflow_deepfix.schemas import FeatureAssociationShift, SpuriousSummary
from mlflow_deepfix.testing.robustness import batched_predict, headline_score

MAX_ROWS = 500
MAX_FEATURES = 10
BOOTSTRAP = 40


def _codes(values: pd.Series) -> np.ndarray:
    return pd.factorize(values.astype(str), sort=True)[0]


def _entropy(counts: np.ndarray) -> float:
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log(p)).sum())


def _nmi(x: np.ndarray, y: np.ndarray) -> float:
    """Mutual information / sqrt(H(x) H(y)) of two code vectors (numpy only: this runs
    inside the bootstrap)."""
    x, y = np.asarray(x), np.asarray(y)
    ny = int(y.max()) + 1 if y.size else 1
    joint = np.bincount(x * ny + y, minlength=(int(x.max()) + 1) * ny if x.size else 1)
    hx, hy = _entropy(np.bincount(x)), _entropy(np.bincount(y))
    denominator = np.sqrt(hx * hy)
    mi = hx + hy - _entropy(joint)
    return float(max(mi, 0.0) / denominator) if denominator > 0 else 0.0


def _rank_corr(x: np.ndarray, y: np.ndarray) -> float:
    from mlflow_deepfix.testing.stats.association import _ranks

    rx, ry = _ranks(x), _ranks(y)
    if rx.std() == 0 or ry.std() == 0:
        return 0.0
    return float(np.corrcoef(rx, ry)[0, 1])


def encode(x: pd.Series, y: pd.Series, *, categorical: bool, task: str, positive=None):
    """(x, y, kind) as numpy arrays, once per feature and split, so that the bootstrap
    only indexes arrays: ``kind`` is ``nmi`` (codes), ``spearman`` or ``somers``."""
    if categorical or task == "multiclass_classification":
        codes_x = _codes(x)
        return codes_x, _codes(y), "nmi"
    xs = pd.to_numeric(x, errors="coerce").to_numpy(dtype=float)
    if task == "regression":
        ys = pd.to_numeric(y, errors="coerce").to_numpy(dtype=float)
    else:
        ys = (y.astype(str).to_numpy() == str(positive)).astype(float)
    keep = np.isfinite(xs) & np.isfinite(ys)
    return xs[keep], ys[keep], "spearman" if task == "regression" else "somers"


def association_of(xs: np.ndarray, ys: np.ndarray, kind: str) -> float:
    """Signed Somers' D ``2 AUC - 1`` (binary label), Spearman (regression) or normalised
    mutual information (categoricals, multiclass) of encoded arrays."""
    if kind == "nmi":
        return _nmi(xs, ys)
    if xs.size < 10:
        return 0.0
    if kind == "spearman":
        return _rank_corr(xs, ys)
    n_pos, n_neg = ys.sum(), (1 - ys).sum()
    if n_pos == 0 or n_neg == 0:
        return 0.0
    from mlflow_deepfix.testing.stats.association import _ranks

    ranks = _ranks(xs)
    auc = (ranks[ys == 1].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)
    return float(2 * auc - 1)


def association(x: pd.Series, y: pd.Series, *, categorical: bool, task: str, positive=None) -> float:
    """The association of ``x`` with the label ``y`` (see :func:`association_of`)."""
    return association_of(*encode(x, y, categorical=categorical, task=task, positive=positive))


def marginal_shift(a: pd.Series, b: pd.Series, *, categorical: bool) -> float:
    """KS statistic (numeric) or total variation distance (categorical)."""
    if categorical:
        pa = a.astype(str).value_counts(normalize=True)
        pb = b.astype(str).value_counts(normalize=True)
        keys = pa.index.union(pb.index)
        return float(0.5 * np.abs(pa.reindex(keys, fill_value=0) - pb.reindex(keys, fill_value=0)).sum())
    xa = np.sort(pd.to_numeric(a, errors="coerce").dropna().to_numpy(dtype=float))
    xb = np.sort(pd.to_numeric(b, errors="coerce").dropna().to_numpy(dtype=float))
    if xa.size == 0 or xb.size == 0:
        return 0.0
    grid = np.concatenate([xa, xb])
    cdf_a = np.searchsorted(xa, grid, side="right") / xa.size
    cdf_b = np.searchsorted(xb, grid, side="right") / xb.size
    return float(np.abs(cdf_a - cdf_b).max())


def measure_spurious(
    predict,
    train: pd.DataFrame,
    test: pd.DataFrame,
    *,
    target: str,
    task: str,
    feature_names: list[str],
    cat_features: list[str],
    importances: dict[str, float] | None = None,
    classes: list | None = None,
    seed: int = 0,
    max_rows: int = MAX_ROWS,
) -> SpuriousSummary:
    """Association with the label and shuffle importance, per split, for the most
    important features (model-native importances, else every feature up to the cap)."""
    from mlflow_deepfix.testing.stats.sampling import sample_index

    rng = np.random.default_rng(seed)
    tr = train.iloc[sample_index(len(train), max_rows, seed)].reset_index(drop=True)
    te = test.iloc[sample_index(len(test), max_rows, seed + 1)].reset_index(drop=True)
    positive = None
    if task == "binary_classification":
        labels = sorted({str(v) for v in pd.concat([train[target], test[target]])})
        positive = str(classes[1]) if classes is not None and len(classes) == 2 else labels[-1]
    shared = [f for f in feature_names if f in tr.columns and f in te.columns]
    ranked = sorted(shared, key=lambda f: (-(importances or {}).get(f, 0.0), f))[:MAX_FEATURES]

    # shuffle importance: per split, the sample and one shuffled copy per feature go to
    # the model in one call
    base, importance = {}, {name: {} for name in ranked}
    for split, frame in (("train", tr), ("test", te)):
        plain = frame.drop(columns=[target])
        copies = [plain]
        for name in ranked:
            shuffled = plain.copy()
            shuffled[name] = plain[name].to_numpy()[rng.permutation(len(plain))]
            copies.append(shuffled)
        outputs = batched_predict(predict, copies)
        y = frame[target].to_numpy()
        base[split] = headline_score(task, y, outputs[0])[1]
        for name, output in zip(ranked, outputs[1:]):
            importance[name][split] = base[split] - headline_score(task, y, output)[1]
    metric = "r2" if task == "regression" else "accuracy"

    z = float(NormalDist().inv_cdf(1 - 0.025 / max(len(ranked), 1)))
    found = []
    for position, name in enumerate(ranked):
        categorical = name in cat_features or not pd.api.types.is_numeric_dtype(tr[name].dtype)
        xa, ya, kind = encode(tr[name], tr[target], categorical=categorical, task=task, positive=positive)
        xb, yb, _ = encode(te[name], te[target], categorical=categorical, task=task, positive=positive)
        a_train, a_test = association_of(xa, ya, kind), association_of(xb, yb, kind)
        changes = []
        boot = np.random.default_rng([seed, position])
        for _ in range(BOOTSTRAP):
            i = boot.integers(0, len(xa), len(xa))
            j = boot.integers(0, len(xb), len(xb))
            changes.append(association_of(xb[j], yb[j], kind) - association_of(xa[i], ya[i], kind))
        # normal interval from the bootstrap standard error, widened for the number of
        # features tested (Bonferroni): ten features at 95% each would otherwise show a
        # "broken" relation by chance in four evaluations out of ten
        spread = z * float(np.std(changes, ddof=1))
        low, high = (a_test - a_train) - spread, (a_test - a_train) + spread
        found.append(
            FeatureAssociationShift(
                feature=name,
                association_train=round(a_train, 4),
                association_test=round(a_test, 4),
                change_low=round(float(low), 4),
                change_high=round(float(high), 4),
                marginal_shift=round(marginal_shift(tr[name], te[name], categorical=categorical), 4),
                importance_train=round(importance[name]["train"], 4),
                importance_test=round(importance[name]["test"], 4),
            )
        )
    found.sort(key=lambda f: (-(f.importance_train - f.importance_test), f.feature))
    gaps = [importance[n]["train"] - importance[n]["test"] for n in ranked]
    return SpuriousSummary(
        n_rows_train=len(tr), n_rows_test=len(te), metric=metric, features=found,
        typical_importance_gap=round(float(np.median(gaps)), 4) if gaps else 0.0,
    )
