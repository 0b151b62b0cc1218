"""Measured harm: how much a suspected cause costs *this* model on *this* data.

A pattern in the data (a feature that predicts the label well, values far from the bulk)
says nothing about harm by itself: heavy-tailed incomes are outliers that no model
minds, and a strong real feature looks like a leak. So the testing step measures:

* ``chance_level``: the model's main score against chance, from its own test
  predictions (classification: the same predictions scored against permuted labels;
  regression: against predicting the training mean). Always run; it is cheap.
* ``drop_feature``: a clone of the model refitted on a seeded sample with one suspect
  feature neutralised (held at its training median/mode, so that every pipeline still
  finds its columns), against the clone refitted as is. A leak is confirmed when the
  score collapses without it.
* ``drop_noise_features``: the same refit with every feature that shows no label
  association beyond noise on train (when there are several, see
  :func:`noise_candidates`) held at its median/mode: a model that fits collected noise
  wins its score back without it.
* ``impute_outliers``: the same refit with the values beyond the extreme columns'
  training fences (5 IQRs) replaced by the column's training median (what "null them and
  impute" does to a unit error or a device code; a genuine extreme value loses its
  information instead), and ``affected_rows``: the error on test rows holding such values
  against the rest, from the model's own predictions.
* ``drop_target_tail`` (regression): the same refit on the training rows whose target
  lies within the test targets' range, when the training targets' tail reaches far
  beyond it (:func:`target_tail_rows`). Training targets typed in the wrong unit (x10)
  leave a model at chance and dropping them lifts it; a natural tail that only this
  test split misses (labels unrelated to the rows leave the model at chance either way)
  changes nothing.
* ``impute_sentinel`` and ``sentinel_rows``: for a spike value (0, -999) in a numeric
  feature, the same refit with the spike replaced by the median of the other values, and
  the error on test rows holding it against the rest; the refit's record also says how
  ordinary the spike's training rows are (:mod:`~.spike_typicality`: a code sits on
  ordinary rows, a natural point mass on rows the other features tell apart).
* ``missing_rows``: the error on test rows with a gap in a feature against the rest,
  from the model's own predictions (no refit): natural gaps the model copes with cost
  nothing, a pipeline that mishandles them costs the rows that hold them.

Which refits run is decided from cheap pre-signals (dataset statistics), on a row budget
(:data:`MAX_TRAIN_ROWS`, :data:`MAX_TEST_ROWS`) and a time budget
(:data:`BUDGET_SECONDS`), so an evaluation with no suspect pattern pays only for the
chance level. A model that cannot be cloned (a pyfunc without a scikit-learn flavour)
is replaced by a *surrogate*, the baseline ladder's tree, and results say so
(``model_used``). Every change carries a ``noise`` (paired bootstrap standard error
over test rows), so that rules compare it with noise rather than with a fixed number.
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from mlflow_deepfix.schemas import DatasetSummary, Intervention
from mlflow_deepfix.testing.stats import is_classification, label_keys, sample_index

logger = logging.getLogger(__name__)

#: rows of the training split a refit uses (seeded sample)
MAX_TRAIN_ROWS = 2000
#: rows of the test split the scores use (seeded sample)
MAX_TEST_ROWS = 4000
#: wall-clock budget of all refits of one evaluation; refits not started by then are
#: skipped (and the skip is noted)
BUDGET_SECONDS = 20.0
N_BOOTSTRAP = 200
N_PERMUTATIONS = 200
#: pre-signal of a leak: a feature's association with the label on train (Somers' D,
#: |Spearman| or NMI, see ColumnStats.target_association); strong real features reach
#: it too, which is why the refit decides
LEAK_ASSOCIATION = 0.8
#: a weaker association is a leak candidate too when the model relies on the feature:
#: a post-outcome value recorded with noise (a review written after the outcome) need
#: not be near-perfect to carry the answer, and what makes it harmful is the model's
#: reliance on it, not the strength of the association. Shuffling it on evaluation rows
#: must cost the model at least WEAK_LEAK_RELIANCE of its score (the spurious probe's
#: shuffle importance, else a shuffle measured here) for the label-only test to run on it
WEAK_LEAK_ASSOCIATION = 0.6
WEAK_LEAK_RELIANCE = 0.02
#: weak features whose reliance is measured here when the probe did not cover them
MAX_WEAK_SCREENED = 3
#: features measured (label-only, shuffle, drop-and-refit): strong ones first, strongest
#: first, then weak ones the model relies on, most relied on first
MAX_LEAK_CANDIDATES = 3
#: pre-signal of harmful outliers: share of a column's rows beyond the 5-IQR fences
MIN_OUTLIER_SHARE = 0.005
MAX_OUTLIER_COLUMNS = 5
FENCE_IQR = 5.0
#: pre-signal of a disguised missing value (0, -1, -999 standing for "not measured"): a
#: numeric column whose most frequent value holds this share of rows while the column
#: is otherwise continuous (SPIKE_FACTOR times the share of its next most frequent value)
MIN_SENTINEL_SHARE = 0.02
SPIKE_FACTOR = 5.0
MIN_DISTINCT_OTHERS = 20
#: a spike at the column's minimum or maximum (where codes such as 0 and -999 land) needs
#: only EDGE_SPIKE_FACTOR times the next value's share (a 0 for a missing petal width
#: holds 2-5x the share of the commonest real width, 1.9x in some draws)
EDGE_SPIKE_FACTOR = 1.5
#: an integer-coded column (a 1-7 scale) with 3-20 other values: its commonest value is
#: a candidate when it lies outside the contiguous range of the other values (0 stored
#: for "no answer" on a 1-7 scale) and holds this share
MIN_ORDINAL_OTHERS = 3
MIN_ORDINAL_SHARE = 0.1
MAX_SENTINEL_COLUMNS = 5
#: of which at most this many found only by the relaxed edge or scale tests are refitted
#: (the costly part; the relaxed tests also pass natural point masses, a 0 count or no
#: deductible): those whose rows the model predicts worst, in noise units, a comparison
#: that costs no refit
MAX_RELAXED_COLUMNS = 2
#: a spike holding this share is the column's majority (a natural point mass more often
#: than a code): tested after the others
MAJORITY_SHARE = 0.5
#: affected-row comparisons need this many affected test rows
MIN_AFFECTED_ROWS = 10
#: pre-signal of a training-target tail (regression): the training targets' maximum lies
#: this many times further from their median than the test targets' maximum does (the
#: rules ask 2.5, at the 99th percentile and at the maximum: ``outliers.target_tail``)
TARGET_TAIL_REACH = 2.0
#: the tail refit drops at most this share of the sampled training rows: a tail is a few
#: rows, and a refit on a fraction of them would measure the rows lost instead
MAX_TAIL_SHARE = 0.2
#: ``missing_rows`` is measured for at most this many features (those with the most
#: gaps on test), plus once over rows with a gap in any feature
MAX_MISSING_COLUMNS = 3
#: pre-signal of collected noise: a feature's label association on train within this
#: many standard errors of zero (about 1/sqrt(n_train) for Somers' D or Spearman) is
#: indistinguishable from a column unrelated to the label
NOISE_UNITS = 2.5
#: ... and only when there are several such columns (real tables have a few weak ones),
#: making up this share of the measured features, while at least MIN_SIGNAL_COLUMNS
#: features relate to the label beyond noise: otherwise the labels, not the columns, are
#: the problem and a refit without them has nothing left to learn from
MIN_NOISE_COLUMNS = 8
MIN_NOISE_SHARE = 0.25
MIN_SIGNAL_COLUMNS = 2


# --------------------------------------------------------------------------- scoring


class _Scorer:
    """The main metric on integer-coded labels, fast enough to bootstrap.

    Classification: macro F1 over the classes present in ``y`` (as
    :func:`mlflow_deepfix.performance.score_main_metric`); regression: R².
    """

    def __init__(self, task: str, y: Any):
        self.classification = is_classification(task)
        if self.classification:
            keys = _str_keys(y)
            self._codes: dict[str, int] = {}
            self.y = self.encode_keys(keys)
        else:
            self.y = _floats(y)

    def encode_keys(self, keys: np.ndarray) -> np.ndarray:
        out = np.empty(keys.size, dtype=np.int64)
        for i, key in enumerate(keys):
            out[i] = self._codes.setdefault(key, len(self._codes))
        return out

    def encode(self, predictions: Any) -> np.ndarray:
        if self.classification:
            return self.encode_keys(_str_keys(predictions))
        return _floats(predictions)

    def score(self, pred: np.ndarray, rows: np.ndarray | None = None, y=None) -> float:
        y = self.y if y is None else y
        if rows is not None:
            y, pred = y[rows], pred[rows]
        if self.classification:
            k = len(self._codes) + 1
            tp = np.bincount(y[y == pred], minlength=k).astype(float)
            n_true = np.bincount(y, minlength=k).astype(float)
            n_pred = np.bincount(pred, minlength=k).astype(float)
            present = n_true > 0
            denominator = (n_true + n_pred)[present]
            f1 = np.divide(2 * tp[present], denominator, out=np.zeros(present.sum()),
                           where=denominator > 0)
            return float(f1.mean()) if f1.size else float("nan")
        keep = np.isfinite(y) & np.isfinite(pred)
        y, pred = y[keep], pred[keep]
        if y.size < 2:
            return float("nan")
        total = float(((y - y.mean()) ** 2).sum())
        if total == 0:
            return 0.0
        return 1.0 - float(((y - pred) ** 2).sum()) / total

    def error(self, pred: np.ndarray, rows: np.ndarray) -> float:
        """Error of single rows, averaged: share wrong (classification) or mean absolute
        error in units of the target's standard deviation (regression)."""
        y, p = self.y[rows], pred[rows]
        if self.classification:
            return float(np.mean(y != p))
        scale = float(np.nanstd(self.y)) or 1.0
        keep = np.isfinite(y) & np.isfinite(p)
        return float(np.mean(np.abs(y[keep] - p[keep])) / scale) if keep.any() else float("nan")

    def paired_noise(self, before: np.ndarray, after: np.ndarray, seed: int) -> float:
        """Bootstrap standard error of ``score(after) - score(before)`` over test rows."""
        rng = np.random.default_rng(seed)
        n = self.y.size
        diffs = []
        for _ in range(N_BOOTSTRAP):
            rows = rng.integers(0, n, n)
            diffs.append(self.score(after, rows) - self.score(before, rows))
        diffs = np.asarray(diffs)
        diffs = diffs[np.isfinite(diffs)]
        return float(np.std(diffs)) if diffs.size else float("nan")


def _str_keys(values: Any) -> np.ndarray:
    keys = label_keys(np.asarray(values, dtype=object).ravel())
    return np.asarray(["<nan>" if pd.isna(k) else str(k) for k in keys], dtype=object)


def _floats(values: Any) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    return pd.to_numeric(pd.Series(array.ravel()), errors="coerce").to_numpy(
        dtype=float, na_value=np.nan
    )


def _round(value: float | None) -> float | None:
    return None if value is None or not np.isfinite(value) else round(float(value), 4)


# --------------------------------------------------------------------------- refits


@dataclass
class _Refit:
    """What a counterfactual refit needs: the template, the sampled rows and a clock."""

    template: Any
    model_used: str
    X_train: pd.DataFrame
    y_train: np.ndarray
    X_test: pd.DataFrame
    deadline: float
    skipped: list[str] = field(default_factory=list)
    _base: np.ndarray | None = None
    _base_model: Any = None

    def predict(self, change: Callable[[pd.DataFrame, pd.DataFrame], tuple] | None, what: str,
                keep: bool = False, drop_rows: np.ndarray | None = None):
        """Test predictions of the template refitted after ``change`` (None = as is),
        without the training rows ``drop_rows`` marks (a boolean mask, None = all rows);
        with ``keep``, the refitted model too (``(predictions, model)``)."""
        from sklearn.base import clone

        if time.perf_counter() > self.deadline:
            self.skipped.append(what)
            return None
        X_train, X_test, y_train = self.X_train, self.X_test, self.y_train
        if change is not None:
            X_train, X_test = change(X_train.copy(), X_test.copy())
        if drop_rows is not None:
            X_train, y_train = X_train.loc[~drop_rows], y_train[~drop_rows]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = clone(self.template).fit(X_train, y_train)
                predictions = np.asarray(model.predict(X_test))
        except Exception as error:
            logger.warning("intervention %s: refit failed: %s: %s", what, type(error).__name__, error)
            return None
        return (predictions, model) if keep else predictions

    def paired(self, change: Callable[[pd.DataFrame, pd.DataFrame], tuple] | None, what: str,
               drop_rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray] | None:
        """Test predictions of the refit as is and of the refit after ``change`` /
        without ``drop_rows`` (see :meth:`predict`), or None when either is missing."""
        base = self.base()
        if base is None:
            return None
        after = self.predict(change, what, drop_rows=drop_rows)
        return None if after is None else (base, after)

    def base(self) -> np.ndarray | None:
        if self._base is None:
            fitted = self.predict(None, "base refit", keep=True)
            if fitted is not None:
                self._base, self._base_model = fitted
        return self._base

    def train_score(self, scorer: _Scorer, model: Any, X_train: pd.DataFrame) -> float | None:
        """A refitted model's score on its own (sampled) training rows."""
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                pred = np.asarray(model.predict(X_train))
        except Exception as error:  # noqa: BLE001
            logger.warning("train score failed: %s: %s", type(error).__name__, error)
            return None
        y = scorer.encode(self.y_train)
        return scorer.score(scorer.encode(pred), y=y)


def _template(adapter: Any, task: str, features: list[str], cat_features: list[str],
              train: pd.DataFrame, seed: int) -> tuple[Any, str] | None:
    """A clone-able copy of the user's model, else the ladder's tree as a surrogate."""
    from sklearn.base import clone

    raw = getattr(adapter, "raw_model", None)
    if raw is not None and hasattr(raw, "fit") and hasattr(raw, "get_params"):
        try:
            clone(raw)
            return raw, "clone"
        except Exception as error:
            logger.info("the model cannot be cloned (%s); a surrogate is used", error)
    from mlflow_deepfix.testing.baselines import _rungs, _split_columns

    numeric, categorical = _split_columns(train, features, set(cat_features))
    rungs = dict(_rungs(is_classification(task), seed, numeric, categorical))
    return rungs["tree"], "surrogate"


# --------------------------------------------------------------------------- planning


def _associated(dataset: DatasetSummary) -> list[tuple[str, float]]:
    """(feature, association with the label on train) for every feature that is not
    index-like (identifier_leakage judges those) and reaches WEAK_LEAK_ASSOCIATION."""
    if dataset.train is None:
        return []
    features = set(dataset.feature_names)
    return [
        (c.name, float(c.target_association))
        for c in dataset.train.columns
        if c.name in features
        and not c.monotonic
        and c.target_association is not None
        and c.target_association >= WEAK_LEAK_ASSOCIATION
    ]


def leak_candidates(dataset: DatasetSummary, reliance: dict[str, float] | None = None,
                    max_candidates: int = MAX_LEAK_CANDIDATES) -> list[tuple[str, float]]:
    """Features to measure as possible leaks (not index-like ones: identifier_leakage
    judges those): every feature whose association with the label on train reaches
    LEAK_ASSOCIATION, strongest first, then features reaching WEAK_LEAK_ASSOCIATION that
    the model relies on (``reliance``: what shuffling the feature on evaluation rows costs
    its score, at least WEAK_LEAK_RELIANCE), most relied on first."""
    found = _associated(dataset)
    strong = sorted((t for t in found if t[1] >= LEAK_ASSOCIATION), key=lambda t: (-t[1], t[0]))
    reliance = reliance or {}
    weak = sorted(
        (t for t in found
         if t[1] < LEAK_ASSOCIATION and reliance.get(t[0], 0.0) >= WEAK_LEAK_RELIANCE),
        key=lambda t: (-reliance[t[0]], -t[1], t[0]),
    )
    return (strong + weak)[:max_candidates]


def weak_unscreened(dataset: DatasetSummary, reliance: dict[str, float]) -> list[tuple[str, float]]:
    """Weak-association features whose reliance nobody measured yet (the spurious probe
    covers the most important features only), strongest first, at most MAX_WEAK_SCREENED."""
    found = [(name, value) for name, value in _associated(dataset)
             if name not in reliance and value < LEAK_ASSOCIATION]
    return sorted(found, key=lambda t: (-t[1], t[0]))[:MAX_WEAK_SCREENED]


def outlier_candidates(dataset: DatasetSummary) -> list[str]:
    """Numeric features with at least MIN_OUTLIER_SHARE of rows beyond 5 IQRs in a split."""
    features = set(dataset.feature_names)
    share: dict[str, float] = {}
    for split in (dataset.train, dataset.test):
        if split is None:
            continue
        for c in split.columns:
            if c.name in features and c.kind == "numeric" and c.outlier_fraction:
                share[c.name] = max(share.get(c.name, 0.0), c.outlier_fraction)
    chosen = [n for n, s in share.items() if s >= MIN_OUTLIER_SHARE]
    return sorted(chosen, key=lambda n: (-share[n], n))[:MAX_OUTLIER_COLUMNS]


def noise_candidates(dataset: DatasetSummary) -> list[str]:
    """Non-constant features whose label association on train is within noise of zero
    (below NOISE_UNITS / sqrt(n_train)), when there are several of them (see
    MIN_NOISE_COLUMNS, MIN_NOISE_SHARE) and other features relate to the label; else []."""
    train = dataset.train
    if train is None or train.n_rows < 20:
        return []
    features = set(dataset.feature_names)
    bound = NOISE_UNITS / train.n_rows**0.5
    measured = [
        c for c in train.columns
        if c.name in features and c.target_association is not None and c.n_unique > 1
    ]
    noise = sorted(c.name for c in measured if c.target_association < bound)
    signal = sum(c.target_association >= bound for c in measured)
    if (
        len(noise) < MIN_NOISE_COLUMNS
        or len(noise) < MIN_NOISE_SHARE * len(measured)
        or signal < MIN_SIGNAL_COLUMNS
    ):
        return []
    return noise


def sentinel_candidates(train: pd.DataFrame, features: list[str]) -> list[tuple[str, float, float]]:
    """(column, value, share) of numeric features where one value is a spike in an
    otherwise continuous column: a code standing for a missing measurement, or a genuine
    point mass (zero income): the impute-and-refit tells which.

    A spike is the commonest value holding >= MIN_SENTINEL_SHARE of a column with more
    than MIN_DISTINCT_OTHERS other values and SPIKE_FACTOR times the next value's share
    (EDGE_SPIKE_FACTOR when it is the column's minimum or maximum); or, in an
    integer-coded column with MIN_ORDINAL_OTHERS..MIN_DISTINCT_OTHERS other values that
    fill a contiguous range, the commonest value lying outside that range. At most
    MAX_SENTINEL_COLUMNS, largest share first, the edge and scale spikes after the 5x
    spikes, majority spikes last (of the edge and scale spikes, only MAX_RELAXED_COLUMNS
    are refitted: those whose test rows are predicted worst)."""
    return [t[:3] for t in _sentinel_candidates(train, features)]


def _sentinel_candidates(train: pd.DataFrame, features: list[str]) -> list[tuple[str, float, float, str]]:
    """:func:`sentinel_candidates` with how each spike was found: "spike" (5x the next
    value), "edge" (1.5x at the minimum or maximum) or "scale" (outside an integer
    scale). Natural point masses (no deductible, a zero count) pass the edge and scale
    tests too, so the rule asks a measured harm of those."""
    found = []
    for column in features:
        if column not in train.columns or not pd.api.types.is_numeric_dtype(train[column]):
            continue
        if pd.api.types.is_bool_dtype(train[column]):
            continue
        counts = train[column].value_counts(dropna=True)
        if len(counts) < 2:
            continue
        n = float(train[column].notna().sum())
        value = float(counts.index[0])
        top, runner_up = counts.iloc[0] / n, counts.iloc[1] / n
        others = np.asarray(counts.index[1:], dtype=float)
        edge = value < others.min() or value > others.max()
        if len(counts) >= MIN_DISTINCT_OTHERS + 1:
            if top >= MIN_SENTINEL_SHARE and top >= SPIKE_FACTOR * runner_up:
                found.append((column, value, float(top), "spike"))
            elif edge and top >= MIN_SENTINEL_SHARE and top >= EDGE_SPIKE_FACTOR * runner_up:
                found.append((column, value, float(top), "edge"))
        elif (
            len(others) >= MIN_ORDINAL_OTHERS
            and edge
            and top >= MIN_ORDINAL_SHARE
            and _contiguous_integers(others)
        ):
            found.append((column, value, float(top), "scale"))
    ranked = sorted(found, key=lambda t: (t[2] >= MAJORITY_SHARE, t[3] != "spike", -t[2], t[0]))
    return ranked[:MAX_SENTINEL_COLUMNS]


def _is_scale(values: pd.Series) -> bool:
    """An integer-coded scale: few distinct whole numbers filling their range."""
    distinct = np.unique(values.to_numpy(dtype=float))
    return MIN_ORDINAL_OTHERS <= len(distinct) <= MIN_DISTINCT_OTHERS and _contiguous_integers(distinct)


def _contiguous_integers(values: np.ndarray) -> bool:
    """Whole numbers filling their range (1..7 with none skipped)."""
    if not np.all(np.isfinite(values)) or not np.all(values == np.round(values)):
        return False
    return len(np.unique(values)) == int(values.max() - values.min()) + 1


# --------------------------------------------------------------------------- public API


def training_sample(train: pd.DataFrame, seed: int) -> pd.DataFrame:
    """The seeded sample of training rows (at most :data:`MAX_TRAIN_ROWS`, indexed
    0..n-1) that every refit and training-side measurement reads: one definition, so a
    re-measurement of one cached section (``benchmarks/refresh_pool.py``) draws the same
    rows."""
    return train.iloc[sample_index(len(train), MAX_TRAIN_ROWS, seed)].reset_index(drop=True)


def refit_inputs(inputs: Any, seed: int, train: pd.DataFrame | None, test: pd.DataFrame,
                 cat_features: Any) -> dict[str, Any]:
    """The keyword arguments every refitting measurement shares (this module's
    :func:`run_interventions`, :func:`~mlflow_deepfix.testing.time_split.measure_time_split`):
    one place that says which columns are features (every input column but the target)
    and which model is cloned, so two measurements cannot disagree about either."""
    return {
        "task": inputs.task,
        "target": inputs.target,
        "features": [c for c in inputs.feature_names if c != inputs.target],
        "cat_features": list(cat_features),
        "train": train,
        "test": test,
        "adapter": inputs.adapter,
        "seed": seed,
    }


def run_interventions(**kwargs: Any) -> tuple[list[Intervention], list[str]]:
    """Run the chance-level measurement and the refits the pre-signals call for (see
    :func:`_run_interventions` for the arguments), with native thread pools limited to
    one thread: refits of small samples gain nothing from OpenMP/BLAS threads, and on a
    busy machine their spin-waiting made a 1 s refit take tens of seconds."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return _run_interventions(**kwargs)


def _run_interventions(
    *,
    task: str,
    target: str,
    features: list[str],
    cat_features: list[str],
    train: pd.DataFrame | None,
    test: pd.DataFrame,
    pred_test: np.ndarray,
    dataset: DatasetSummary,
    adapter: Any,
    seed: int,
    budget_seconds: float = BUDGET_SECONDS,
    reliance: dict[str, float] | None = None,
) -> tuple[list[Intervention], list[str]]:
    """Run the chance-level measurement and the refits the pre-signals call for.

    ``reliance``: what shuffling each feature on evaluation rows costs the model's score
    (the spurious probe's shuffle importance), used to pick weak leak candidates.

    Returns the interventions and plain-language notes (what was skipped and why).
    Never raises on bad data: a measurement that fails is left out and logged.
    """
    notes: list[str] = []
    rows = sample_index(len(test), MAX_TEST_ROWS, seed)
    test_rows = test.iloc[rows].reset_index(drop=True)
    scorer = _Scorer(task, test_rows[target].to_numpy())
    pred = scorer.encode(np.asarray(pred_test)[rows] if len(pred_test) == len(test) else pred_test)
    if pred.size != scorer.y.size:
        return [], ["Interventions skipped: predictions and test rows do not line up."]
    results: list[Intervention] = []
    started = time.perf_counter()
    try:
        results.append(_chance_level(scorer, pred, task, train, target, test_rows, seed))
    except Exception as error:
        logger.warning("chance level failed: %s: %s", type(error).__name__, error)

    if train is not None and dataset.comparison is not None and dataset.comparison.overlap_fraction > 0:
        try:
            shared = _overlap_rows(scorer, pred, train, test_rows, features, seed)
            if shared is not None:
                results.append(shared)
        except Exception as error:  # noqa: BLE001
            logger.warning("overlap rows failed: %s: %s", type(error).__name__, error)

    try:
        results.extend(_missing_rows(scorer, pred, test_rows, features, seed))
    except Exception as error:  # noqa: BLE001
        logger.warning("missing rows failed: %s: %s", type(error).__name__, error)

    _shuffle_reads(adapter, test_rows, features, task, seed, results)

    if not scorer.classification:
        inverted = _invert_log_target(scorer, pred, seed)
        if inverted is not None:
            results.append(inverted)

    reliance = dict(reliance or {})
    shuffled: dict[str, Intervention] = {}
    if train is not None:
        # weak features the probe did not cover: one shuffled prediction pass each
        for column, association in weak_unscreened(dataset, reliance):
            if column not in test_rows.columns:
                continue
            permuted = _permute_feature(adapter, scorer, pred, test_rows, features, column,
                                        association, seed)
            if permuted is not None and permuted.change is not None:
                shuffled[column] = permuted
                reliance[column] = -permuted.change
    leaks = leak_candidates(dataset, reliance)
    extremes = [c for c in outlier_candidates(dataset) if c in test_rows.columns]
    sentinels = (
        [t for t in _sentinel_candidates(train, features) if t[0] in test_rows.columns]
        if train is not None
        else []
    )
    noise = [c for c in noise_candidates(dataset) if c in test_rows.columns]
    train_rows = (
        training_sample(train, seed) if train is not None and target in train.columns else None
    )
    tail = (
        target_tail_rows(train_rows[target], test_rows[target])
        if train_rows is not None and not scorer.classification
        else None
    )
    if train_rows is not None and len(train) >= 20 and (
            leaks or extremes or sentinels or noise or tail is not None):
        present = [c for c in features if c in train.columns and c in test_rows.columns]
        if len(present) == len(features):
            template, used = _template(adapter, task, features, cat_features, train_rows, seed)
            y_train = train_rows[target].to_numpy()
            if used == "surrogate" and is_classification(task):
                y_train = _str_keys(y_train)
            refit = _Refit(
                template=template,
                model_used=used,
                X_train=train_rows[features],
                y_train=y_train,
                X_test=test_rows[features],
                deadline=time.perf_counter() + budget_seconds,
            )
            if used == "surrogate":
                notes.append(
                    "The model cannot be cloned and refitted (no scikit-learn flavour), so "
                    "counterfactual refits used a surrogate (a depth-limited tree from the "
                    "baseline ladder) in its place."
                )
            for column, association in leaks:
                signature = _label_only(train_rows, target, features, column, association,
                                        is_classification(task))
                if signature is not None:
                    results.append(signature)
                permuted = shuffled.get(column) or _permute_feature(
                    adapter, scorer, pred, test_rows, features, column, association, seed
                )
                if permuted is not None:
                    results.append(permuted)
                result = _drop_feature(refit, scorer, column, association, results, seed)
                if result is not None:
                    results.append(result)
            if extremes:
                results.extend(_outliers(refit, scorer, pred, train_rows, test_rows, extremes, seed))
            if sentinels:
                results.extend(_sentinels(refit, scorer, pred, test_rows, sentinels, seed))
            if noise:
                dropped = _drop_noise(refit, scorer, noise, seed)
                if dropped is not None:
                    results.append(dropped)
            if tail is not None:
                trimmed = _drop_target_tail(refit, scorer, tail, target, seed)
                if trimmed is not None:
                    results.append(trimmed)
            if refit.skipped:
                notes.append(
                    f"Interventions skipped after the {budget_seconds:.0f}s budget: "
                    + ", ".join(refit.skipped)
                    + "."
                )
        else:
            notes.append("Interventions skipped: a model feature is missing from a split.")
    logger.info(
        "deepfix interventions: %d in %.1fs", len(results), time.perf_counter() - started
    )
    return results, notes


def _shuffle_reads(adapter, test_rows, features, task, seed, results) -> None:
    """Every model input shuffled alone, in one batched prediction (see
    :mod:`mlflow_deepfix.testing.feature_reads`): which inputs the model reads at all."""
    from mlflow_deepfix.testing.feature_reads import shuffle_reads

    try:
        reads = shuffle_reads(adapter, test_rows, features, task, seed)
        if reads is not None:
            results.append(reads)
    except Exception as error:  # noqa: BLE001
        logger.warning("shuffle reads failed: %s: %s", type(error).__name__, error)


def _chance_level(scorer, pred, task, train, target, test_rows, seed) -> Intervention:
    """Classification: the model's predictions scored against permuted labels (chance
    keeps the model's own prediction mix). Regression: R² of predicting the training
    mean. ``values["p_value"]``: share of chance scores at least as good as the model's
    (classification) or the one-sided bootstrap share of the gain <= 0 (regression)."""
    started = time.perf_counter()
    model_score = scorer.score(pred)
    rng = np.random.default_rng(seed)
    if scorer.classification:
        chance = np.asarray(
            [scorer.score(pred, y=rng.permutation(scorer.y)) for _ in range(N_PERMUTATIONS)]
        )
        chance_score, noise = float(chance.mean()), float(chance.std())
        p_value = float((1 + np.sum(chance >= model_score)) / (1 + chance.size))
        detail = "model predictions scored against shuffled labels"
    else:
        mean = float(np.nanmean(_floats(train[target]))) if train is not None else float(
            np.nanmean(scorer.y)
        )
        dummy = np.full(scorer.y.size, mean)
        chance_score = scorer.score(dummy)
        n = scorer.y.size
        gains = []
        for _ in range(N_BOOTSTRAP):
            rows = rng.integers(0, n, n)
            gains.append(scorer.score(pred, rows) - scorer.score(dummy, rows))
        gains = np.asarray(gains)
        gains = gains[np.isfinite(gains)]
        noise = float(gains.std()) if gains.size else float("nan")
        p_value = float(np.mean(gains <= 0)) if gains.size else float("nan")
        detail = "model vs predicting the training mean"
    return Intervention(
        kind="chance_level",
        category="underfitting",
        metric="f1_macro" if scorer.classification else "r2",
        score_before=_round(chance_score),
        score_after=_round(model_score),
        noise=_round(noise),
        n_rows=int(scorer.y.size),
        seconds=round(time.perf_counter() - started, 3),
        model_used="predictions",
        values={"p_value": round(p_value, 4)},
        detail=detail,
    )


def _neutralise(column: str, value: Any):
    def change(X_train: pd.DataFrame, X_test: pd.DataFrame):
        X_train[column] = value
        X_test[column] = value
        return X_train, X_test

    return change


def _typical(series: pd.Series) -> Any:
    numeric = pd.to_numeric(series, errors="coerce")
    if pd.api.types.is_numeric_dtype(series) and numeric.notna().any():
        return float(numeric.median())
    mode = series.dropna().mode()
    return mode.iloc[0] if len(mode) else series.iloc[0]


def _refit_comparison(
    refit, scorer, base, after, *, seed: int, started: float, **fields
) -> Intervention:
    """One counterfactual refit as an :class:`Intervention`: the refit clone's score with
    the suspected cause left in (``base``) and taken out (``after``), with the paired
    noise of the difference, so every refit is reported the same way."""
    base_codes, after_codes = scorer.encode(base), scorer.encode(after)
    return Intervention(
        metric="f1_macro" if scorer.classification else "r2",
        score_before=_round(scorer.score(base_codes)),
        score_after=_round(scorer.score(after_codes)),
        noise=_round(scorer.paired_noise(base_codes, after_codes, seed)),
        n_rows=len(refit.X_train),
        seconds=round(time.perf_counter() - started, 3),
        model_used=refit.model_used,
        **fields,
    )


def _drop_feature(refit, scorer, column, association, results, seed) -> Intervention | None:
    started = time.perf_counter()
    pair = refit.paired(_neutralise(column, _typical(refit.X_train[column])), f"drop {column!r}")
    if pair is None:
        return None
    base, after = pair
    chance = next((r for r in results if r.kind == "chance_level"), None)
    return _refit_comparison(
        refit, scorer, base, after, seed=seed, started=started,
        kind="drop_feature",
        category="target_leakage",
        target=column,
        values={
            "association": round(association, 4),
            **({"chance": chance.score_before} if chance and chance.score_before is not None else {}),
        },
        detail=f"refit with {column!r} held at its training median/mode",
    )


def _drop_noise(refit, scorer, columns, seed) -> Intervention | None:
    """A refit with every noise candidate (no label association beyond noise on train)
    held at its training median/mode, against the refit as is: a model that fits the
    noise columns (a flexible learner on few rows, a distance over every column) gains
    its score back without them; one that ignores them changes nothing. ``values`` also
    hold the refit's score on its own training rows with and without them
    (``train_before``/``train_after``: how much of the train/test gap they make)."""
    started = time.perf_counter()
    base = refit.base()
    if base is None:
        return None

    def neutralise(X_train: pd.DataFrame, X_test: pd.DataFrame):
        for column in columns:
            value = _typical(refit.X_train[column])
            X_train[column] = value
            X_test[column] = value
        return X_train, X_test

    fitted = refit.predict(neutralise, f"drop {len(columns)} noise columns", keep=True)
    if fitted is None:
        return None
    after, model = fitted
    values: dict[str, float] = {"n_columns": float(len(columns))}
    before_fit = refit.train_score(scorer, refit._base_model, refit.X_train)
    after_fit = refit.train_score(scorer, model, neutralise(refit.X_train.copy(), refit.X_test.iloc[:0].copy())[0])
    if before_fit is not None and after_fit is not None and np.isfinite([before_fit, after_fit]).all():
        values.update(train_before=_round(before_fit), train_after=_round(after_fit))
    return _refit_comparison(
        refit, scorer, base, after, seed=seed, started=started,
        kind="drop_noise_features",
        category="unused_features",
        target=",".join(columns),
        values=values,
        detail=(
            f"refit with the {len(columns)} features that show no label association beyond "
            "noise on train held at their training median/mode"
        ),
    )


def _r2_fit(design: np.ndarray, y: np.ndarray) -> float:
    design = np.column_stack([np.ones(len(y)), design])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    residual = y - design @ coef
    total = float(((y - y.mean()) ** 2).sum())
    return 1.0 - float((residual**2).sum()) / total if total > 0 else 0.0


#: most frequent levels of a text column that the label-only test encodes, one indicator
#: each beside the most frequent level (the baseline): the row's categorical information
#: at a bounded number of predictors (each one raises the chance bar the test reads)
LABEL_ONLY_MAX_LEVELS = 10
#: ... and only levels holding this share of the rows: a level on 2 % of the rows can
#: explain at most about that share of anything, while it costs the test a predictor's
#: worth of chance R² (p / n) and of its noise (sqrt(2p) / n), so on a small table many
#: rare levels would take away the power to give any verdict
LABEL_ONLY_MIN_LEVEL_SHARE = 0.05


def _numeric_matrix(frame: pd.DataFrame) -> np.ndarray:
    """Every column of ``frame`` as standardised numbers: numeric columns as they are
    (gaps at the median), text columns (fewer than half of their values read as numbers)
    as indicators of their most frequent levels (:data:`LABEL_ONLY_MAX_LEVELS` of those
    on :data:`LABEL_ONLY_MIN_LEVEL_SHARE` of the rows or more, beside the commonest as the
    baseline; rarer levels go with the baseline). Constant columns are dropped.

    Until stop 53 text columns were read as numbers too, which made them gaps, then
    constants, then nothing: "nothing else in the row explains this feature" was tested
    on the numeric columns alone, and on a mostly categorical table (two numeric columns
    beside four categorical ones) the label-only test had too few columns to say
    anything, so a post-outcome column below the blatant association went unreported."""
    parsed = frame.apply(pd.to_numeric, errors="coerce").replace([np.inf, -np.inf], np.nan)
    parts: list[np.ndarray] = []
    for column in frame.columns:
        present = frame[column].notna()
        if present.any() and parsed[column][present].notna().mean() < 0.5:
            levels = frame[column].astype(str).where(present, "<missing>")
            counts = levels.value_counts()
            counts = counts[counts >= LABEL_ONLY_MIN_LEVEL_SHARE * len(levels)]
            common = counts.index[1 : LABEL_ONLY_MAX_LEVELS + 1]
            parts.extend((levels == level).to_numpy(dtype=float) for level in common)
        else:
            values = parsed[column]
            parts.append(values.fillna(values.median()).fillna(0.0).to_numpy(dtype=float))
    if not parts:
        return np.empty((len(frame), 0))
    values = np.column_stack(parts)
    # a constant column is dropped by its range, not its standard deviation: the mean of
    # n copies of one float need not equal it, so a constant's std could come out as
    # 1e-16 and the column stayed, as noise, counted among the predictors
    keep = np.ptp(values, axis=0) > 0
    kept = values[:, keep]
    return (kept - kept.mean(axis=0)) / kept.std(axis=0)


def _label_only(train_rows, target, features, column, association, classification):
    """Is the feature's information about the label shared with any other feature?

    A value recorded after the outcome (or computed from the label) is the label plus
    noise: once the label is known, nothing else in the row tells anything about it. A
    real feature shares causes with other features, so they explain part of what the
    label leaves unexplained. Measured on the training sample with least squares:
    ``r2_label`` (the feature from the label alone), ``r2_full`` (label + every other
    feature, text columns as indicators of their common levels: :func:`_numeric_matrix`),
    and ``shared`` = (r2_full - r2_label) / (1 - r2_label), against ``chance`` = what
    that many random predictors explain on that many rows.
    """
    started = time.perf_counter()
    x = pd.to_numeric(train_rows[column], errors="coerce")
    if x.notna().sum() < 50 or x.nunique() < 3:
        return None
    keep = x.notna().to_numpy()
    x = x.to_numpy(dtype=float)[keep]
    if classification:
        label = pd.get_dummies(_str_keys(train_rows[target].to_numpy()[keep])).to_numpy(dtype=float)[:, 1:]
    else:
        label = _floats(train_rows[target].to_numpy()[keep]).reshape(-1, 1)
        label = np.column_stack([label, label**2]) if np.isfinite(label).all() else None
        if label is None:
            return None
    others = [c for c in features if c != column]
    other = _numeric_matrix(train_rows.loc[keep, others]) if others else np.empty((len(x), 0))
    if other.shape[1] == 0:
        return None
    r2_label = _r2_fit(label, x)
    r2_full = _r2_fit(np.column_stack([label, other]), x)
    left = max(1.0 - r2_label, 1e-9)
    shared = max(r2_full - r2_label, 0.0) / left
    chance = other.shape[1] / max(len(x) - label.shape[1] - 1, 1)
    return Intervention(
        kind="label_only_feature",
        category="target_leakage",
        target=column,
        metric="shared_r2",
        score_before=_round(chance),
        score_after=_round(shared),
        n_rows=len(x),
        seconds=round(time.perf_counter() - started, 3),
        model_used="predictions",
        values={
            "association": round(association, 4),
            "r2_label": round(r2_label, 4),
            "r2_full": round(r2_full, 4),
            "n_other": float(other.shape[1]),
        },
        detail=(
            f"share of {column!r} that the label leaves unexplained and the other features "
            "explain (after), vs what as many random features explain (before)"
        ),
    )


def _permute_feature(adapter, scorer, pred, test_rows, features, column, association, seed):
    """The user's model itself (no refit) on test rows with ``column`` shuffled: how much
    of its score rests on that one feature."""
    started = time.perf_counter()
    shuffled = test_rows[features].copy()
    rng = np.random.default_rng(seed)
    shuffled[column] = shuffled[column].to_numpy()[rng.permutation(len(shuffled))]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            after = scorer.encode(adapter.predict(shuffled))
    except Exception as error:
        logger.warning("permuting %r failed: %s: %s", column, type(error).__name__, error)
        return None
    if after.size != pred.size:
        return None
    return Intervention(
        kind="permute_feature",
        category="target_leakage",
        target=column,
        metric="f1_macro" if scorer.classification else "r2",
        score_before=_round(scorer.score(pred)),
        score_after=_round(scorer.score(after)),
        noise=_round(scorer.paired_noise(pred, after, seed)),
        n_rows=int(pred.size),
        seconds=round(time.perf_counter() - started, 3),
        model_used="predictions",
        values={"association": round(association, 4)},
        detail=f"the model's own predictions with {column!r} shuffled across test rows",
    )


def _affected(scorer, pred, affected, *, kind, category, target, seed, started, detail):
    """Error on affected test rows (after) vs the rest (before), with a bootstrap noise."""
    n_affected = int(affected.sum())
    if not MIN_AFFECTED_ROWS <= n_affected <= affected.size - MIN_AFFECTED_ROWS:
        return None
    rest_rows, hit_rows = np.flatnonzero(~affected), np.flatnonzero(affected)
    rng = np.random.default_rng(seed)
    boot = [
        scorer.error(pred, rng.choice(hit_rows, hit_rows.size))
        - scorer.error(pred, rng.choice(rest_rows, rest_rows.size))
        for _ in range(N_BOOTSTRAP)
    ]
    return Intervention(
        kind=kind,
        category=category,
        target=target,
        metric="error_rate" if scorer.classification else "mae_over_std",
        score_before=_round(scorer.error(pred, rest_rows)),
        score_after=_round(scorer.error(pred, hit_rows)),
        noise=_round(float(np.nanstd(boot))),
        n_rows=n_affected,
        seconds=round(time.perf_counter() - started, 3),
        model_used="predictions",
        detail=detail,
    )


#: predictions above this cannot be log-scale values of a real target (expm1 overflows)
MAX_LOG_PREDICTION = 50.0


def _invert_log_target(scorer, pred, seed) -> Intervention | None:
    """The model's own predictions, scored as they are (before) and after ``expm1``
    (after): a model trained on log1p(target) and served without the inverse transform
    predicts the log of the answer, and the inverse makes it right."""
    started = time.perf_counter()
    finite = pred[np.isfinite(pred)]
    y = scorer.y[np.isfinite(scorer.y)]
    if finite.size < 10 or y.size < 10 or finite.max() > MAX_LOG_PREDICTION or y.min() < 0:
        return None
    inverted = np.expm1(pred)
    return Intervention(
        kind="invert_target_transform",
        category="preprocessing_mismatch",
        target="expm1",
        metric="r2",
        score_before=_round(scorer.score(pred)),
        score_after=_round(scorer.score(inverted)),
        noise=_round(scorer.paired_noise(pred, inverted, seed)),
        n_rows=int(pred.size),
        seconds=round(time.perf_counter() - started, 3),
        model_used="predictions",
        detail="the model's test predictions scored as served (before) and after expm1 (after)",
    )


def _overlap_rows(scorer, pred, train, test_rows, features, seed) -> Intervention | None:
    """Test rows whose features also appear in train (after) vs the others (before): a
    copy the model memorised is predicted better, which is how overlap inflates the score.
    Natural repeats (discrete survey answers) with their own labels are not."""
    started = time.perf_counter()
    present = [c for c in features if c in train.columns and c in test_rows.columns]
    if not present:
        return None
    seen = set(pd.util.hash_pandas_object(train[present].astype(str), index=False).to_numpy())
    hashes = pd.util.hash_pandas_object(test_rows[present].astype(str), index=False).to_numpy()
    shared = np.fromiter((h in seen for h in hashes), dtype=bool, count=len(hashes))
    return _affected(
        scorer, pred, shared, kind="overlap_rows", category="train_test_overlap",
        target="*", seed=seed, started=started,
        detail="error on test rows whose features also appear in train (after) vs the rest",
    )


def _missing_rows(scorer, pred, test_rows, features, seed) -> list[Intervention]:
    """Test rows with a gap (after) vs the rest (before), per feature with the most gaps
    (:data:`MAX_MISSING_COLUMNS`) and, when several features have gaps, over rows with
    a gap in any of them (``target="*"``). The harm measurement of gaps that needs no
    refit: the model's own predictions say whether the rows with gaps cost it."""
    present = [c for c in features if c in test_rows.columns]
    if not present:
        return []
    gaps = test_rows[present].isna()
    counts = gaps.sum(axis=0)
    counts = counts[counts > 0].sort_values(ascending=False, kind="stable")
    out = []
    for column in list(counts.index[:MAX_MISSING_COLUMNS]):
        started = time.perf_counter()
        measured = _affected(
            scorer, pred, gaps[column].to_numpy(), kind="missing_rows",
            category="missing_values", target=str(column), seed=seed, started=started,
            detail=f"error on test rows where {column!r} is missing (after) vs the rest (before)",
        )
        if measured is not None:
            out.append(measured)
    if len(counts) > 1:
        started = time.perf_counter()
        measured = _affected(
            scorer, pred, gaps.any(axis=1).to_numpy(), kind="missing_rows",
            category="missing_values", target="*", seed=seed, started=started,
            detail="error on test rows with a gap in any feature (after) vs the rest (before)",
        )
        if measured is not None:
            out.append(measured)
    return out


def _sentinels(refit, scorer, pred, test_rows, sentinels, seed) -> list[Intervention]:
    """Rows holding the spike value vs the rest, and a refit with the spike replaced by
    the median of the column's other values (what an imputer would have done)."""
    measured = []
    for column, value, share, found_as in sentinels:
        started = time.perf_counter()
        hit = pd.to_numeric(test_rows[column], errors="coerce").to_numpy(dtype=float) == value
        rows = _affected(
            scorer, pred, hit, kind="sentinel_rows", category="missing_values",
            target=column, seed=seed, started=started,
            detail=f"error on test rows where {column!r} == {value:g} (after) vs the rest (before)",
        )
        measured.append((column, value, share, found_as, rows))
    # the refits go to every 5x spike and to the MAX_RELAXED_COLUMNS edge / scale spikes
    # whose rows are predicted worst relative to the rest (in noise units)
    relaxed_order = sorted(
        (i for i, m in enumerate(measured) if m[3] != "spike"),
        key=lambda i: (-_worse_units(measured[i][4]), i),
    )
    refitted = set(relaxed_order[:MAX_RELAXED_COLUMNS])
    out = []
    for i, (column, value, share, found_as, rows) in enumerate(measured):
        # 1.0: found by the edge or scale test, which natural point masses pass too
        relaxed = 0.0 if found_as == "spike" else 1.0
        if relaxed and i not in refitted:
            continue
        if rows is not None:
            rows.values.update(value=value, share=round(share, 4), relaxed=relaxed)
            out.append(rows)
        others = pd.to_numeric(refit.X_train[column], errors="coerce")
        rest = others[(others != value) & others.notna()]
        fill = float(rest.median())
        if len(rest) and fill == value:
            # the median of values on both sides of the spike can be the spike itself
            # (0 amid -1..1): imputing it would change nothing, so take the nearest
            # observed value below the median instead
            fill = float(np.quantile(rest.to_numpy(dtype=float), 0.5, method="lower"))
        q25, q75 = np.percentile(rest, [25, 75]) if len(rest) else (0.0, 0.0)
        iqr = max(float(q75 - q25), 1e-12)
        # how far the spike sits outside the range of the other values, in their IQRs
        # (0 inside the range): a code like 0 for a blood pressure sits far outside; on
        # an integer scale (1..7) the next step (0) is not detached
        step = 1.0 if len(rest) and _is_scale(rest) else 0.0
        gap = (
            max(float(rest.min()) - value - step, value - float(rest.max()) - step, 0.0) / iqr
            if len(rest) else 0.0
        )
        if rows is not None:
            rows.values.update(gap=round(gap, 4))
        ordinary = _typicality(refit, column, value, seed)

        def impute(X_train, X_test, column=column, value=value, fill=fill):
            for frame in (X_train, X_test):
                frame[column] = pd.to_numeric(frame[column], errors="coerce").replace(value, fill)
            return X_train, X_test

        started = time.perf_counter()
        base = refit.base()
        after = refit.predict(impute, f"impute {column!r}") if base is not None else None
        if after is None:
            continue
        out.append(
            _refit_comparison(
                refit, scorer, base, after, seed=seed, started=started,
                kind="impute_sentinel",
                category="missing_values",
                target=column,
                values={"value": value, "share": round(share, 4), "gap": round(gap, 4),
                        "fill": fill, "relaxed": relaxed, **ordinary},
                detail=f"refit with {column!r} == {value:g} replaced by {fill:g} (the median of the rest)",
            )
        )
    return out


def _typicality(refit, column: str, value: float, seed: int) -> dict[str, float]:
    """How ordinary the spike's training rows are (:mod:`spike_typicality`), within the
    refits' time budget; {} when skipped or not measurable."""
    from mlflow_deepfix.testing.spike_typicality import spike_typicality

    if time.perf_counter() > refit.deadline:
        refit.skipped.append(f"typicality of {column!r} == {value:g}")
        return {}
    try:
        return spike_typicality(refit.X_train, column, value, seed) or {}
    except Exception as error:  # noqa: BLE001 - the refit still measures the spike
        logger.warning("spike typicality of %r failed: %s: %s", column,
                       type(error).__name__, error)
        return {}


def _worse_units(rows: Intervention | None) -> float:
    """How much worse a spike's rows are predicted than the rest, in noise units
    (-inf when too few rows to compare)."""
    if rows is None or rows.change is None:
        return float("-inf")
    return float(rows.change) / max(float(rows.noise or 0.0), 1e-6)


def _fences(series: pd.Series) -> tuple[float, float] | None:
    values = pd.to_numeric(series, errors="coerce").replace([np.inf, -np.inf], np.nan).dropna()
    if values.size < 10:
        return None
    q25, q75 = np.percentile(values, [25, 75])
    iqr = q75 - q25
    if iqr <= 0:
        return None
    return float(q25 - FENCE_IQR * iqr), float(q75 + FENCE_IQR * iqr)


def target_tail_rows(y_train: Any, y_test: Any) -> np.ndarray | None:
    """The training rows (a boolean mask over ``y_train``) whose regression target lies
    above every test target, when the training targets' maximum reaches
    :data:`TARGET_TAIL_REACH` times further from their median than the test maximum from
    the test median; None without such a tail, or when it holds more than
    :data:`MAX_TAIL_SHARE` of the rows (then it is no tail but a different population).

    Those are the values the rules' target-tail reading blames for a model at chance
    (``outliers.target_tail``); a refit without them is what measures that blame."""
    train, test = _floats(y_train), _floats(y_test)
    finite_test = test[np.isfinite(test)]
    if np.isfinite(train).sum() < 20 or finite_test.size < MIN_AFFECTED_ROWS:
        return None
    top = float(finite_test.max())
    reach_test = top - float(np.median(finite_test))
    reach_train = float(np.nanmax(train)) - float(np.nanmedian(train))
    if reach_test <= 0 or reach_train < TARGET_TAIL_REACH * reach_test:
        return None
    with np.errstate(invalid="ignore"):
        tail = train > top
    if not tail.any() or tail.sum() > MAX_TAIL_SHARE * train.size:
        return None
    return tail


def _drop_target_tail(refit, scorer, tail, target, seed) -> Intervention | None:
    """A refit without the training rows whose target lies beyond the test targets'
    range (:func:`target_tail_rows`), against the refit on every row.

    ``values`` also hold the chance level without the tail (``chance_after``: the test
    score of predicting the mean of the kept training targets) and the noise of the
    refit's lead over it (``noise_after``, paired bootstrap). Whether the refit left
    chance is read against these, not against the chance measurement of the model as
    it is: a model pulled far off by x10 targets scores R2 -20, and the noise of that
    score (and of any change from it) would hide a refit at 0.3 against a chance of 0."""
    started = time.perf_counter()
    pair = refit.paired(None, "drop the training-target tail", drop_rows=tail)
    if pair is None:
        return None
    base, after = pair
    kept_mean = float(np.nanmean(_floats(refit.y_train)[~tail]))
    after_codes = scorer.encode(after)
    mean_codes = np.full(after_codes.shape, kept_mean)
    return _refit_comparison(
        refit, scorer, base, after, seed=seed, started=started,
        kind="drop_target_tail",
        category="outliers",
        target=target,
        values={
            "n_dropped": float(tail.sum()),
            "chance_after": _round(scorer.score(mean_codes)),
            "noise_after": _round(scorer.paired_noise(mean_codes, after_codes, seed)),
        },
        detail=(
            f"refit without the {int(tail.sum())} training rows whose {target!r} lies above "
            "every test value"
        ),
    )


def _outliers(refit, scorer, pred, train_rows, test_rows, columns, seed) -> list[Intervention]:
    """Affected rows vs the rest (the model's own predictions) and an impute-and-refit."""
    started = time.perf_counter()
    fences = {c: f for c in columns if (f := _fences(train_rows[c])) is not None}
    if not fences:
        return []
    out: list[Intervention] = []
    affected = np.zeros(len(test_rows), dtype=bool)
    for column, (low, high) in fences.items():
        values = pd.to_numeric(test_rows[column], errors="coerce").to_numpy(dtype=float)
        with np.errstate(invalid="ignore"):
            affected |= (values < low) | (values > high)
    target = ",".join(sorted(fences))
    n_affected = int(affected.sum())
    if MIN_AFFECTED_ROWS <= n_affected <= len(test_rows) - MIN_AFFECTED_ROWS:
        rest_rows, hit_rows = np.flatnonzero(~affected), np.flatnonzero(affected)
        error_rest, error_hit = scorer.error(pred, rest_rows), scorer.error(pred, hit_rows)
        rng = np.random.default_rng(seed)
        boot = []
        for _ in range(N_BOOTSTRAP):
            a = rng.choice(hit_rows, hit_rows.size)
            b = rng.choice(rest_rows, rest_rows.size)
            boot.append(scorer.error(pred, a) - scorer.error(pred, b))
        out.append(
            Intervention(
                kind="affected_rows",
                category="outliers",
                target=target,
                metric="error_rate" if scorer.classification else "mae_over_std",
                score_before=_round(error_rest),
                score_after=_round(error_hit),
                noise=_round(float(np.nanstd(boot))),
                n_rows=n_affected,
                seconds=round(time.perf_counter() - started, 3),
                model_used="predictions",
                detail="error on test rows beyond the 5-IQR fences (after) vs the rest (before)",
            )
        )

    medians = {c: float(pd.to_numeric(train_rows[c], errors="coerce").median()) for c in fences}

    def clip(X_train: pd.DataFrame, X_test: pd.DataFrame):
        for column, (low, high) in fences.items():
            for frame in (X_train, X_test):
                values = pd.to_numeric(frame[column], errors="coerce")
                frame[column] = values.mask((values < low) | (values > high), medians[column])
        return X_train, X_test

    started = time.perf_counter()
    base = refit.base()
    after = refit.predict(clip, "impute outliers") if base is not None else None
    if after is not None:
        out.append(
            _refit_comparison(
                refit, scorer, base, after, seed=seed, started=started,
                kind="impute_outliers",
                category="outliers",
                target=target,
                detail="refit with values beyond the training 5-IQR fences replaced by the median",
            )
        )
    return out
