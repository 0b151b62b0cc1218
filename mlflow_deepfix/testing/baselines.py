"""The baseline ladder: dummy -> linear -> small tree, on a sample of the training data.

From ``seeds/systematic-ml-debugging.txt``: a model must beat a trivial baseline by a
meaningful margin (else: underfitting, or a data/label problem), a simple linear model
checks that the data carries signal through a correct pipeline, and a shallow tree that
scores almost perfectly is a classic sign of target leakage. The user's model is
compared with these rungs on the same metric (:func:`mlflow_deepfix.testing.performance.
score_main_metric`), so the rungs are cheap on purpose: a seeded sample of at most
``max_rows`` training rows, ``cv`` folds, and at most ``4 * max_rows`` test rows scored.

A rung that fails is left out (and logged at warning level); the ladder never raises.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from mlflow_deepfix.schemas import BaselineResult
from mlflow_deepfix.testing.performance import main_metric, score_main_metric, segment_errors
from mlflow_deepfix.testing.stats import is_classification, label_keys

logger = logging.getLogger(__name__)

#: one-hot / ordinal encoders keep at most this many categories per column
MAX_CATEGORIES = 20
#: the tree rung: shallow enough to stay a baseline, deep enough to catch leakage
TREE_DEPTH = 4
_MISSING = "__missing__"


def _sample(frame: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    if len(frame) <= n:
        return frame
    return frame.sample(n=n, random_state=seed)


def _design(frame: pd.DataFrame, numeric: list[str], categorical: list[str]) -> pd.DataFrame:
    """Features as float64 (numbers, bools, datetimes as epoch seconds; inf -> NaN) and
    object strings (categories, with missing values as their own category)."""
    columns: dict[str, Any] = {}
    for name in numeric:
        series = frame[name]
        if ptypes.is_datetime64_any_dtype(series.dtype):
            values = (
                series.to_numpy(dtype="datetime64[ns]")
                if getattr(series.dt, "tz", None) is None
                else (
                    series.dt.tz_convert("UTC")
                    .dt.tz_localize(None)
                    .to_numpy(dtype="datetime64[ns]")
                )
            )
            array = values.astype("int64").astype(float) / 1e9
            array[np.isnat(values)] = np.nan
        elif ptypes.is_bool_dtype(series.dtype) or (
            ptypes.is_numeric_dtype(series.dtype)
            and not isinstance(series.dtype, pd.CategoricalDtype)
        ):
            array = series.to_numpy(dtype=float, na_value=np.nan, copy=True)
        else:
            array = pd.to_numeric(series, errors="coerce").to_numpy(
                dtype=float, na_value=np.nan, copy=True
            )
        array[~np.isfinite(array)] = np.nan
        columns[name] = array
    for name in categorical:
        keys = label_keys(frame[name])
        keys[pd.isna(keys)] = _MISSING
        columns[name] = keys
    return pd.DataFrame(columns, index=frame.index)


def _split_columns(
    frame: pd.DataFrame, features: list[str], cat_features: set[str]
) -> tuple[list[str], list[str]]:
    numeric, categorical = [], []
    for name in features:
        dtype = frame[name].dtype
        plain_number = (
            ptypes.is_numeric_dtype(dtype) and not isinstance(dtype, pd.CategoricalDtype)
        ) or ptypes.is_datetime64_any_dtype(dtype)
        if name in cat_features or not plain_number:
            # text that is really numbers (all values parse) stays numeric
            if name not in cat_features and dtype == object:
                parsed = pd.to_numeric(frame[name], errors="coerce")
                if int(parsed.notna().sum()) == int(frame[name].notna().sum()) > 0:
                    numeric.append(name)
                    continue
            categorical.append(name)
        else:
            numeric.append(name)
    return numeric, categorical


def _preprocessor(numeric: list[str], categorical: list[str], *, scale: bool, one_hot: bool) -> Any:
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, StandardScaler

    numeric_steps: list[tuple[str, Any]] = [
        ("impute", SimpleImputer(strategy="median", keep_empty_features=True))
    ]
    if scale:
        numeric_steps.append(("scale", StandardScaler()))
    if one_hot:
        encoder = OneHotEncoder(
            handle_unknown="infrequent_if_exist", max_categories=MAX_CATEGORIES, sparse_output=False
        )
    else:
        encoder = OrdinalEncoder(
            handle_unknown="use_encoded_value", unknown_value=-1, max_categories=MAX_CATEGORIES
        )
    transformers = []
    if numeric:
        transformers.append(("num", Pipeline(numeric_steps), numeric))
    if categorical:
        transformers.append(("cat", encoder, categorical))
    return ColumnTransformer(transformers, remainder="drop")


def _rungs(
    classification: bool, seed: int, numeric: list[str], categorical: list[str]
) -> list[tuple[str, Any]]:
    from sklearn.dummy import DummyClassifier, DummyRegressor
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.pipeline import Pipeline
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    if classification:
        dummy: Any = DummyClassifier(strategy="most_frequent")
        linear: Any = LogisticRegression(max_iter=300)
        tree: Any = DecisionTreeClassifier(max_depth=TREE_DEPTH, random_state=seed)
    else:
        dummy, linear = DummyRegressor(strategy="mean"), Ridge(alpha=1.0)
        tree = DecisionTreeRegressor(max_depth=TREE_DEPTH, random_state=seed)
    return [
        ("dummy", dummy),
        (
            "linear",
            Pipeline(
                [
                    ("prep", _preprocessor(numeric, categorical, scale=True, one_hot=True)),
                    ("model", linear),
                ]
            ),
        ),
        (
            "tree",
            Pipeline(
                [
                    ("prep", _preprocessor(numeric, categorical, scale=False, one_hot=False)),
                    ("model", tree),
                ]
            ),
        ),
    ]


def _cv_score(
    estimator: Any, X: pd.DataFrame, y: np.ndarray, *, task: str, cv: int, seed: int
) -> tuple[float | None, np.ndarray | None]:
    """(mean score over the folds, every row's out-of-fold prediction), or (None, None)
    when the folds cannot be made (a class with a single row); a fold that fails to fit
    or predict raises, and the caller leaves the rung's cross-validation out."""
    from sklearn.base import clone
    from sklearn.model_selection import KFold, StratifiedKFold

    classification = is_classification(task)
    if classification:
        smallest = int(pd.Series(y).value_counts().min())
        folds = min(cv, smallest)
        if folds < 2:
            logger.info("cross-validation skipped: the rarest class has %d row(s)", smallest)
            return None, None
        splitter: Any = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    else:
        folds = min(cv, len(y))
        if folds < 2:
            return None, None
        splitter = KFold(n_splits=folds, shuffle=True, random_state=seed)
    scores = []
    out_of_fold = np.empty(len(y), dtype=object if classification else float)
    for train_idx, valid_idx in splitter.split(X, y):
        model = clone(estimator).fit(X.iloc[train_idx], y[train_idx])
        predicted = np.asarray(model.predict(X.iloc[valid_idx]))
        out_of_fold[valid_idx] = predicted.astype(str) if classification else predicted
        scores.append(score_main_metric(task, y[valid_idx], predicted))
    finite = [s for s in scores if np.isfinite(s)]
    return (float(np.mean(finite)) if finite else None), out_of_fold


def baseline_ladder(
    train: pd.DataFrame,
    test: pd.DataFrame | None,
    *,
    label: str,
    task: str,
    feature_names: list[str],
    cat_features: list[str],
    seed: int,
    max_rows: int = 5000,
    cv: int = 3,
) -> list[BaselineResult]:
    """Three rungs (``dummy``, ``linear``, ``tree``), each with a cross-validated score
    on the training sample and a score on the test split (None when the test split
    lacks a feature or its labels), in the main metric of ``task``. The linear and tree
    rungs also record their out-of-fold errors per category of each of
    ``cat_features`` on the training sample (``train_segments``): the folds predict
    every sampled row once, so the scan costs no extra fit.

    Never raises on bad data: a rung that cannot be fitted is left out, and an empty
    list means no baseline could be computed (no usable rows, one class only, ...).
    """
    try:
        metric = main_metric(task)
    except ValueError as exc:
        logger.warning("baseline ladder skipped: %s", exc)
        return []
    if not isinstance(max_rows, int) or max_rows < 10:
        raise ValueError(f"max_rows={max_rows!r} must be an integer >= 10")
    if not isinstance(cv, int) or cv < 2:
        raise ValueError(f"cv={cv!r} must be an integer >= 2")
    try:
        prepared = _prepare(
            train,
            test,
            label=label,
            task=task,
            feature_names=feature_names,
            cat_features=cat_features,
            seed=seed,
            max_rows=max_rows,
        )
    except Exception as exc:  # noqa: BLE001 - the ladder must never stop the evaluation
        logger.warning("baseline ladder skipped: %s: %s", type(exc).__name__, exc)
        return []
    if prepared is None:
        return []
    X, y, X_test, y_test, numeric, categorical, sampled = prepared
    segment_features = [c for c in cat_features or [] if c in sampled.columns]

    results = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence and small-class warnings: expected here
        for name, estimator in _rungs(is_classification(task), seed, numeric, categorical):
            cv_score = test_score = out_of_fold = None
            try:
                cv_score, out_of_fold = _cv_score(estimator, X, y, task=task, cv=cv, seed=seed)
            except Exception as exc:  # noqa: BLE001
                logger.warning(
                    "baseline %r: cross-validation failed: %s: %s", name, type(exc).__name__, exc
                )
            if X_test is not None:
                try:
                    model = estimator.fit(X, y)
                    test_score = score_main_metric(task, y_test, model.predict(X_test))
                    test_score = test_score if np.isfinite(test_score) else None
                except Exception as exc:  # noqa: BLE001
                    logger.warning(
                        "baseline %r: fit/test failed: %s: %s", name, type(exc).__name__, exc
                    )
            if cv_score is None and test_score is None:
                continue
            scanned = name != "dummy" and out_of_fold is not None and bool(segment_features)
            segments = (
                segment_errors(
                    sampled, task=task, y_true=y, y_pred=out_of_fold, features=segment_features
                )
                if scanned
                else []
            )
            results.append(
                BaselineResult(
                    name=name,
                    metric=metric,
                    cv_score=cv_score,
                    test_score=test_score,
                    train_segments=segments,
                    train_rows=len(y) if scanned else None,
                )
            )
    return results


def _prepare(
    train: pd.DataFrame,
    test: pd.DataFrame | None,
    *,
    label: str,
    task: str,
    feature_names: list[str],
    cat_features: list[str],
    seed: int,
    max_rows: int,
) -> (
    tuple[
        pd.DataFrame,
        np.ndarray,
        pd.DataFrame | None,
        np.ndarray | None,
        list[str],
        list[str],
        pd.DataFrame,
    ]
    | None
):
    """Sampled design matrices and labels, plus the sampled training rows' features as
    given (what the per-category scan groups by, named as on test), or None (logged)
    when nothing can be fitted."""
    classification = is_classification(task)
    if label not in train.columns:
        logger.warning("baseline ladder skipped: the training data has no label column %r", label)
        return None
    features = [c for c in feature_names if c in train.columns and c != label]
    if not features:
        logger.warning("baseline ladder skipped: none of the features is in the training data")
        return None

    def labels(frame: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
        if classification:
            keys = label_keys(frame[label])
            keep = ~pd.isna(keys)
            return frame[keep], keys[keep].astype(str)
        values = pd.to_numeric(frame[label], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        keep = np.isfinite(values)
        return frame[keep], values[keep]

    train_rows, y = labels(_sample(train, max_rows, seed))
    if len(y) < 10 or (classification and np.unique(y).size < 2):
        logger.warning(
            "baseline ladder skipped: too few labelled rows or a single class in training"
        )
        return None
    numeric, categorical = _split_columns(train_rows, features, set(cat_features or []))
    X = _design(train_rows, numeric, categorical)

    X_test = y_test = None
    if test is not None:
        missing = [c for c in features if c not in test.columns]
        if missing or label not in test.columns:
            logger.warning(
                "baselines not scored on test: missing column(s) %s",
                missing + ([label] if label not in test.columns else []),
            )
        else:
            test_rows, y_test = labels(_sample(test, 4 * max_rows, seed))
            if len(y_test):
                X_test = _design(test_rows, numeric, categorical)
    return X, y, X_test, y_test, numeric, categorical, train_rows[features]
