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

The other form, a relation that holds *only inside one slice* (a watermark one site put
on its positive cases), is looked for within the training sample: per level of a
categorical column (a site, a source), the association inside and outside it with a
bootstrap interval of the difference; when the model's decisions outside the slice
still follow the feature (predictions that change when it is shuffled there), it is
applying one source's shortcut to everyone. Nothing here compares the splits, so
ordinary drift cannot produce it.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pandas as pd

from mlflow_deepfix.schemas import FeatureAssociationShift, SliceOnlyAssociation, SpuriousSummary
from mlflow_deepfix.testing.robustness import batched_predict, headline_score

MAX_ROWS = 500
MAX_FEATURES = 10
BOOTSTRAP = 40
#: numeric features against a multiclass label: quantile bins of the training sample,
#: one per this many rows, within these bounds (nearly unique raw values as codes would
#: give every feature about the same mutual information, whatever its relation)
ROWS_PER_BIN = 25
MIN_BINS, MAX_BINS = 2, 8


def _codes(values: pd.Series) -> np.ndarray:
    """Integer codes of a column's values, a missing value being one more level (pandas
    3's ``astype(str)`` keeps it missing, and factorize's -1 for it broke the counts: a
    categorical column with missing values failed the whole probe)."""
    return pd.factorize(values.astype(str), sort=True, use_na_sentinel=False)[0]


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


def _nmi_binned(x: np.ndarray, y: np.ndarray) -> float:
    """:func:`_nmi` less its chance level (the Miller-Madow bias of the plug-in mutual
    information, ``(bins - 1)(classes - 1) / 2n`` nats), floored at zero: for binned
    numeric features, whose bin count would otherwise set the reading."""
    x, y = np.asarray(x), np.asarray(y)
    if x.size == 0:
        return 0.0
    ny = int(y.max()) + 1
    joint = np.bincount(x * ny + y, minlength=(int(x.max()) + 1) * ny)
    cx, cy = np.bincount(x), np.bincount(y)
    hx, hy = _entropy(cx), _entropy(cy)
    denominator = np.sqrt(hx * hy)
    if denominator <= 0:
        return 0.0
    chance = (np.count_nonzero(cx) - 1) * (np.count_nonzero(cy) - 1) / (2.0 * x.size)
    mi = hx + hy - _entropy(joint) - chance
    return float(max(mi, 0.0) / denominator)


def bin_edges(x: pd.Series) -> np.ndarray:
    """Inner quantile edges of a numeric feature (from the training sample; reused on
    the evaluation sample so both splits are coded alike)."""
    xs = pd.to_numeric(x, errors="coerce").to_numpy(dtype=float)
    xs = xs[np.isfinite(xs)]
    if xs.size == 0:
        return np.array([])
    bins = int(np.clip(xs.size // ROWS_PER_BIN, MIN_BINS, MAX_BINS))
    return np.unique(np.quantile(xs, np.linspace(0, 1, bins + 1)[1:-1]))


def _rank_corr(x: np.ndarray, y: np.ndarray) -> float:
    from mlflow_deepfix.testing.stats.association import _ranks

    rx, ry = _ranks(x), _ranks(y)
    if rx.std() == 0 or ry.std() == 0:
        return 0.0
    return float(np.corrcoef(rx, ry)[0, 1])


def encode(x: pd.Series, y: pd.Series, *, categorical: bool, task: str, positive=None,
           edges: np.ndarray | None = None):
    """(x, y, kind) as numpy arrays, once per feature and split, so that the bootstrap
    only indexes arrays: ``kind`` is ``nmi`` (codes), ``nmi_binned`` (numeric feature,
    multiclass label: quantile bins with the given ``edges``, else the feature's own),
    ``spearman`` or ``somers``."""
    if categorical:
        return _codes(x), _codes(y), "nmi"
    if task == "multiclass_classification":
        xs = pd.to_numeric(x, errors="coerce").to_numpy(dtype=float)
        keep = np.isfinite(xs)
        edges = bin_edges(x) if edges is None else edges
        codes_y = _codes(y)[keep]
        return np.searchsorted(edges, xs[keep], side="right"), codes_y, "nmi_binned"
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
    if kind == "nmi_binned":
        return _nmi_binned(xs, ys)
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
    important features (model-native importances; features without one are ranked by
    their association with the label in the training sample, then by name)."""
    from mlflow_deepfix.testing.stats.sampling import sample_index

    rng = np.random.default_rng(seed)
    tr = train.iloc[sample_index(len(train), max_rows, seed)].reset_index(drop=True)
    te = test.iloc[sample_index(len(test), max_rows, seed + 1)].reset_index(drop=True)
    positive = None
    if task == "binary_classification":
        labels = sorted({str(v) for v in pd.concat([train[target], test[target]])})
        positive = str(classes[1]) if classes is not None and len(classes) == 2 else labels[-1]
    shared = [f for f in feature_names if f in tr.columns and f in te.columns]

    def is_categorical(name: str) -> bool:
        return name in cat_features or not pd.api.types.is_numeric_dtype(tr[name].dtype)

    # a model without native importances (or a tie among them) would otherwise measure
    # the first features by name: rank by the model-free association in training instead
    strength = {
        f: abs(association(tr[f], tr[target], categorical=is_categorical(f), task=task,
                           positive=positive))
        for f in shared
    }
    ranked = sorted(
        shared, key=lambda f: (-(importances or {}).get(f, 0.0), -round(strength[f], 6), f)
    )[:MAX_FEATURES]

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
        categorical = is_categorical(name)
        edges = bin_edges(tr[name]) if not categorical else None
        xa, ya, kind = encode(tr[name], tr[target], categorical=categorical, task=task,
                              positive=positive, edges=edges)
        xb, yb, _ = encode(te[name], te[target], categorical=categorical, task=task,
                           positive=positive, edges=edges)
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
    slice_only = _slice_only(predict, tr, te, target=target, task=task, ranked=ranked,
                             cat_features=cat_features, positive=positive, seed=seed)
    return SpuriousSummary(
        n_rows_train=len(tr), n_rows_test=len(te), metric=metric, features=found,
        typical_importance_gap=round(float(np.median(gaps)), 4) if gaps else 0.0,
        slice_only=slice_only,
    )


# --------------------------------------------------------------------------- slice-only

#: slice columns: categoricals with this many levels at most, levels with this many
#: rows (inside and outside) in the training sample at least
MAX_SLICE_LEVELS = 8
MIN_SLICE_ROWS = 40
#: features tested for a slice-only relation (the most important ones)
MAX_SLICE_FEATURES = 5
#: |association| inside at least, and outside at most, for a slice-only relation, and
#: the least lower end of the interval of |inside| - |outside| (a feature merely
#: stronger in one slice is not slice-only)
MIN_INSIDE = 0.3
MAX_OUTSIDE = 0.15
MIN_DIFFERENCE = 0.25


def _slice_only(predict, tr: pd.DataFrame, te: pd.DataFrame, *, target: str, task: str,
                ranked: list[str], cat_features: list[str], positive, seed: int):
    """Features tied to the label inside one slice of the training sample and not
    outside it, with the model's reliance on them outside the slice (evaluation rows).

    A real interaction (a lab value that matters only for one group) is learned where
    it holds and left alone elsewhere: the reliance outside stays near zero and nothing
    is reported. A shortcut of one source (a watermark one site put on its positives)
    applied to every row makes the model's decisions outside the slice follow a value
    that carries nothing there: that share of changed decisions is the harm."""
    columns = [c for c in cat_features if c in tr.columns and c in te.columns and c != target]
    slices = []
    for column in columns:
        counts = tr[column].astype(str).value_counts()
        if not 2 <= len(counts) <= MAX_SLICE_LEVELS:
            continue
        slices.extend((column, str(v)) for v, n in counts.items()
                      if n >= MIN_SLICE_ROWS and len(tr) - n >= MIN_SLICE_ROWS)
    # numeric features, coded flags included (a 0/1 watermark is inferred categorical)
    features = [f for f in ranked[:MAX_SLICE_FEATURES]
                if pd.api.types.is_numeric_dtype(tr[f].dtype)
                and not pd.api.types.is_bool_dtype(tr[f].dtype)]
    if not slices or not features:
        return []
    tests = len(slices) * len(features)
    z = float(NormalDist().inv_cdf(1 - 0.025 / tests))
    # each feature and the label encoded once; slices only index the arrays
    y_all = tr[target]
    kind = "nmi" if task == "multiclass_classification" else (
        "spearman" if task == "regression" else "somers")
    if kind == "nmi":
        y_coded = _codes(y_all).astype(float)
    elif kind == "spearman":
        y_coded = pd.to_numeric(y_all, errors="coerce").to_numpy(dtype=float)
    else:
        y_coded = (y_all.astype(str).to_numpy() == str(positive)).astype(float)
    encoded = {}
    for name in features:
        x = pd.to_numeric(tr[name], errors="coerce").to_numpy(dtype=float)
        keep = np.isfinite(x) & np.isfinite(y_coded)
        if kind == "nmi":
            x = np.where(keep, x, 0.0)
            x = pd.factorize(x, sort=True)[0]
        encoded[name] = (x, keep)
    y_int = y_coded.astype(int) if kind == "nmi" else y_coded
    as_text = {column: tr[column].astype(str).to_numpy() for column, _ in slices}
    candidates = []
    for i, (column, value) in enumerate(slices):
        inside_all = as_text[column] == value
        for k, name in enumerate(features):
            if name == column:
                continue
            x, keep = encoded[name]
            inside, outside = inside_all & keep, ~inside_all & keep
            xi, yi = x[inside], y_int[inside]
            xo, yo = x[outside], y_int[outside]
            if xi.size < MIN_SLICE_ROWS or xo.size < MIN_SLICE_ROWS:
                continue
            a_in, a_out = association_of(xi, yi, kind), association_of(xo, yo, kind)
            if abs(a_in) < MIN_INSIDE or abs(a_out) > MAX_OUTSIDE:
                continue
            boot = np.random.default_rng([seed, 1000 + i, k])
            diffs = []
            for _ in range(BOOTSTRAP):
                a = boot.integers(0, xi.size, xi.size)
                b = boot.integers(0, xo.size, xo.size)
                diffs.append(abs(association_of(xi[a], yi[a], kind))
                             - abs(association_of(xo[b], yo[b], kind)))
            low = (abs(a_in) - abs(a_out)) - z * float(np.std(diffs, ddof=1))
            if low >= MIN_DIFFERENCE:
                candidates.append((column, value, name, a_in, a_out, low, int(inside_all.sum())))
    if not candidates:
        return []
    # the model's reliance on each candidate, inside and outside the slice (evaluation)
    rng = np.random.default_rng([seed, 7])
    plain = te.drop(columns=[target])
    copies, masks = [plain], []
    for column, value, name, *_ in candidates:
        inside = te[column].astype(str).to_numpy() == value
        shuffled = plain.copy()
        values = plain[name].to_numpy(copy=True)
        for part in (inside, ~inside):
            where = np.flatnonzero(part)
            values[where] = values[where[rng.permutation(where.size)]]
        shuffled[name] = values
        copies.append(shuffled)
        masks.append(inside)
    outputs = batched_predict(predict, copies)
    spread = float(pd.to_numeric(te[target], errors="coerce").std() or 1.0)
    out = []
    for (column, value, name, a_in, a_out, low, n_in), inside, changed in zip(
            candidates, masks, outputs[1:]):
        if task == "regression":
            moved = np.abs(np.asarray(changed, float) - np.asarray(outputs[0], float)) / spread
        else:
            moved = (np.asarray(changed).astype(str) != np.asarray(outputs[0]).astype(str))
        moved = moved.astype(float)
        out.append(SliceOnlyAssociation(
            feature=name, slice_feature=column, slice_value=value, n_inside=n_in,
            n_outside=len(tr) - n_in, association_inside=round(a_in, 4),
            association_outside=round(a_out, 4), difference_low=round(float(low), 4),
            reliance_outside=round(float(moved[~inside].mean()) if (~inside).any() else 0.0, 4),
            reliance_inside=round(float(moved[inside].mean()) if inside.any() else 0.0, 4),
            marginal_shift=round(marginal_shift(tr[name], te[name], categorical=False), 4),
        ))
    out.sort(key=lambda s: (-s.reliance_outside, s.feature, s.slice_feature))
    return out
