"""Measured harm of a split that mixes time: the chronological-vs-random refit.

When the evaluation names a time-ordering column (``datetime_col``) and some test rows
are dated before the latest training row (a random, partly random or reversed split of
time-ordered data), the share of such rows says nothing about harm: a label that does
not change with time loses nothing to a random split, one that drifts (a trend, a
recording practice that changed) is flattered by it. The date's rank association with
the label only sees monotone trends, so this measures the harm directly:

a clone of the model (or the interventions' surrogate, see
:func:`~mlflow_deepfix.testing.interventions._template`) is refitted on the earliest
rows of the pooled train and test rows and scored on the latest ones (the split the
model will meet in use), and refitted on :data:`N_RANDOM` seeded random splits of the
same sizes (what the evaluation did). ``score_before`` is the random splits' mean
score, ``score_after`` the chronological score, so ``change`` < 0 is how much the
random split flatters the model. ``noise`` is the standard error of that change: the
spread of one split's score (the larger of the random splits' standard deviation and
the chronological score's bootstrap standard error over its test rows), times
``sqrt(1 + 1/N_RANDOM)``.

Exact copies of a pooled row (same date, features and label: rows shared by the splits)
are kept once, so that a train/test overlap does not pass for a dependence on time.

Bounded: a seeded sample of at most :data:`MAX_POOL_ROWS` pooled rows, and its own
wall-clock budget (:data:`BUDGET_SECONDS`; the refits not started by then are skipped,
and the measurement left out). Never raises: a failure is logged and nothing returned.
"""

from __future__ import annotations

import logging
import time
import warnings
from typing import Any

import numpy as np
import pandas as pd

from mlflow_deepfix.schemas import DatasetSummary, Intervention
from mlflow_deepfix.testing.interventions import (
    MAX_TRAIN_ROWS,
    N_BOOTSTRAP,
    _round,
    _Scorer,
    _str_keys,
    _template,
    refit_inputs,
)
from mlflow_deepfix.testing.stats import is_classification, sample_index

logger = logging.getLogger(__name__)

#: pooled (train + test) rows the refits use at most (seeded sample): the refit's
#: training part stays near the interventions' MAX_TRAIN_ROWS
MAX_POOL_ROWS = int(MAX_TRAIN_ROWS * 1.25)
#: random splits of the same sizes the chronological one is compared with
N_RANDOM = 4
#: wall-clock budget of the measurement's refits (1 + N_RANDOM)
BUDGET_SECONDS = 6.0
#: each part of a split needs this many rows
MIN_ROWS = 20
#: the chronological test part's share of the pooled rows is the evaluation's own test
#: share, kept within these bounds (a 3% test split would score on a handful of rows)
TEST_SHARE = (0.1, 0.5)


def _order(values: pd.Series) -> np.ndarray | None:
    """Sortable float keys of a time-ordering column (NaN where unreadable), or None."""
    if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        return pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            dates = pd.to_datetime(values, errors="coerce", utc=True)
        except (TypeError, ValueError, OverflowError):
            return None
    keys = dates.astype("int64").to_numpy(dtype=float)
    keys[dates.isna().to_numpy()] = np.nan
    return keys


def time_split_gap(
    inputs: Any,
    config: Any,
    test: pd.DataFrame,
    train: pd.DataFrame | None,
    dataset: DatasetSummary,
    cat_features: list[str],
) -> list[Intervention]:
    """The ``time_split`` intervention for an evaluation (empty when it does not apply);
    never raises."""
    comparison = dataset.comparison
    column = inputs.datetime_col or dataset.datetime_col
    if (
        train is None
        or not column
        or comparison is None
        or not comparison.test_before_train_fraction
        or column not in train.columns
        or column not in test.columns
    ):
        return []
    try:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1):
            found = measure_time_split(
                **refit_inputs(inputs, config.seed, train, test, cat_features), column=column
            )
    except Exception as error:  # noqa: BLE001 - measurements are optional evidence
        logger.warning("time split failed: %s: %s", type(error).__name__, error)
        return []
    return [found] if found is not None else []


def measure_time_split(
    *,
    task: str,
    target: str,
    features: list[str],
    cat_features: list[str],
    train: pd.DataFrame,
    test: pd.DataFrame,
    column: str,
    adapter: Any,
    seed: int,
    budget_seconds: float = BUDGET_SECONDS,
) -> Intervention | None:
    """Chronological vs random refits of the pooled rows (see the module docstring)."""
    from sklearn.base import clone

    started = time.perf_counter()
    if any(c not in train.columns or c not in test.columns for c in [*features, target]):
        return None
    pool = pd.concat(
        [
            train[[*features, target, column] if column not in features else [*features, target]],
            test[[*features, target, column] if column not in features else [*features, target]],
        ],
        ignore_index=True,
    )
    keys = _order(pool[column])
    if keys is None:
        return None
    # rows copied between the splits (same date, features and label) would flatter every
    # random split: that is train_test_overlap's harm, measured elsewhere, so one copy stays
    readable = np.isfinite(keys) & pool[target].notna().to_numpy()
    readable &= ~pool.duplicated().to_numpy()
    pool, keys = pool[readable].reset_index(drop=True), keys[readable]
    rows = sample_index(len(pool), MAX_POOL_ROWS, seed)
    pool, keys = pool.iloc[rows].reset_index(drop=True), keys[rows]
    order = np.argsort(keys, kind="mergesort")
    pool = pool.iloc[order].reset_index(drop=True)
    n = len(pool)
    share = min(max(len(test) / (len(train) + len(test)), TEST_SHARE[0]), TEST_SHARE[1])
    n_test = round(n * share)
    if n_test < MIN_ROWS or n - n_test < MIN_ROWS:
        return None

    X, y = pool[features], pool[target].to_numpy()
    template, used = _template(adapter, task, features, cat_features, pool, seed)
    classification = is_classification(task)
    y_fit = _str_keys(y) if used == "surrogate" and classification else y
    scorer = _Scorer(task, y)
    deadline = started + budget_seconds

    def score(train_idx: np.ndarray, test_idx: np.ndarray) -> tuple[float, np.ndarray] | None:
        if time.perf_counter() > deadline:
            return None
        y_train = y_fit[train_idx]
        if classification and len(np.unique(_str_keys(y_train))) < 2:
            return None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = clone(template).fit(X.iloc[train_idx], y_train)
                pred = scorer.encode(np.asarray(model.predict(X.iloc[test_idx])))
        except Exception as error:  # noqa: BLE001
            logger.warning("time split: refit failed: %s: %s", type(error).__name__, error)
            return None
        return scorer.score(pred, y=scorer.y[test_idx]), pred

    everything = np.arange(n)
    chrono = score(everything[: n - n_test], everything[n - n_test :])
    if chrono is None or not np.isfinite(chrono[0]):
        return None
    rng = np.random.default_rng(seed)
    randoms = []
    for _ in range(N_RANDOM):
        shuffled = rng.permutation(n)
        result = score(np.sort(shuffled[n_test:]), np.sort(shuffled[:n_test]))
        if result is not None and np.isfinite(result[0]):
            randoms.append(result[0])
    if len(randoms) < 2:
        logger.info("time split: fewer than 2 random refits within the budget")
        return None
    chrono_score, chrono_pred = chrono
    y_late = scorer.y[n - n_test :]
    boot = np.random.default_rng(seed + 1)
    draws = np.asarray(
        [
            scorer.score(chrono_pred[r], y=y_late[r])
            for r in (boot.integers(0, n_test, n_test) for _ in range(N_BOOTSTRAP))
        ]
    )
    draws = draws[np.isfinite(draws)]
    se_chrono = float(np.std(draws)) if draws.size else 0.0
    sd_random = float(np.std(randoms, ddof=1))
    noise = max(sd_random, se_chrono) * float(np.sqrt(1 + 1 / len(randoms)))
    random_score = float(np.mean(randoms))
    return Intervention(
        kind="time_split",
        category="temporal_leakage",
        target=column,
        metric="f1_macro" if classification else "r2",
        score_before=_round(random_score),
        score_after=_round(chrono_score),
        noise=_round(noise),
        n_rows=n,
        seconds=round(time.perf_counter() - started, 3),
        model_used=used,
        values={
            "n_test": float(n_test),
            "n_random": float(len(randoms)),
            "random_sd": _round(sd_random) or 0.0,
            "chrono_se": _round(se_chrono) or 0.0,
        },
        detail=(
            f"refitted on the earliest {n - n_test} of {n} pooled rows (ordered by {column!r}) "
            f"and scored on the latest {n_test}: {chrono_score:.3f}; on {len(randoms)} random "
            f"splits of the same sizes: {random_score:.3f} (sd {sd_random:.3f})"
        ),
    )
