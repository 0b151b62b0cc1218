"""The tabular tests: Deepchecks' tabular suites and the baseline ladder side by side,
the dataset statistics, and the performance summary."""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd

from mlflow_deepfix.config import DeepfixConfig
from mlflow_deepfix.inputs import EvalInputs
from mlflow_deepfix.schemas import PerformanceSummary
from mlflow_deepfix.testing.predictions import Predictions

logger = logging.getLogger(__name__)


def tabular_tests(
    inputs: EvalInputs,
    config: DeepfixConfig,
    test: pd.DataFrame,
    train: pd.DataFrame | None,
    predictions: Predictions,
    cat_features: list[str],
    importances: dict[str, float],
    *,
    adapter,
    model_skip_reason: str | None,
    notes: list[str],
    progress: bool,
):
    """Deepchecks' tabular suites, the baseline ladder and the dataset statistics:
    (checks, baselines, dataset summary, segment frame, segment features)."""
    from mlflow_deepfix.checks import MAX_CHECK_FEATURES, CheckInputs, cap_note, run_checks
    from mlflow_deepfix.testing.baselines import baseline_ladder
    from mlflow_deepfix.testing.stats import summarize_dataset

    target, feature_names = inputs.target, inputs.feature_names
    test_columns = set(test.columns)
    train_columns = set(train.columns) if train is not None else test_columns
    shared = [c for c in feature_names if c in test_columns and c in train_columns]
    if len(shared) > MAX_CHECK_FEATURES:
        notes.append(cap_note(len(shared), MAX_CHECK_FEATURES, by_importance=bool(importances)))
    # Deepchecks refuses an index or date column that is also a feature; the model's use of
    # such a column is diagnosed from our statistics (identifier_leakage) instead.
    index_col, datetime_col = inputs.index_col, inputs.datetime_col
    for key, column in (("index_col", index_col), ("datetime_col", datetime_col)):
        if column is not None and column in shared:
            notes.append(
                f"{key}={column!r} is also a model feature: Deepchecks' index/date leakage "
                "checks were skipped for it."
            )
    index_col = None if index_col in shared else index_col
    datetime_col = None if datetime_col in shared else datetime_col
    # Deepchecks sees bounded, stratified samples; statistics and performance see all rows
    checks_test, checks_train, checks_predictions = _bounded_for_checks(
        test, train, predictions, inputs, config.seed, notes
    )
    check_inputs = CheckInputs(
        train=checks_train,
        test=checks_test,
        label=target,
        task=inputs.task,
        feature_names=shared,
        cat_features=[c for c in cat_features if c in shared],
        model=adapter,
        index_col=index_col,
        datetime_col=datetime_col,
        feature_importance=importances or None,
        model_skip_reason=model_skip_reason,
        predictions=_by_split(checks_predictions.test, checks_predictions.train),
        probabilities=_by_split(checks_predictions.proba_test, checks_predictions.proba_train),
    )
    checks_started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="deepfix-testing") as pool:
        baselines_future = None
        if train is not None and len(train) >= 20:
            baselines_future = pool.submit(
                _one_thread(baseline_ladder),
                train,
                test,
                label=target,
                task=inputs.task,
                feature_names=[c for c in feature_names if c in train.columns],
                cat_features=cat_features,
                seed=config.seed,
            )
        checks = run_checks(
            check_inputs,
            config.suites,
            sample_size=config.sample_size,
            seed=config.seed,
            progress=progress,
        )
        baselines = baselines_future.result() if baselines_future is not None else []
    logger.info("deepfix checks done in %.1fs", time.perf_counter() - checks_started)

    dataset = summarize_dataset(
        inputs.train,
        inputs.test,
        label=target,
        task=inputs.task,
        feature_names=feature_names,
        cat_features=cat_features,
        index_col=inputs.index_col,
        datetime_col=inputs.datetime_col,
        seed=config.seed,
    )
    return checks, baselines, dataset, test, [c for c in cat_features if c in shared]


def _one_thread(function):
    """``function`` with OpenMP on one thread: it runs beside the check pool, which
    already uses every core (see :mod:`mlflow_deepfix.native_threads`)."""
    from mlflow_deepfix.native_threads import one_native_thread

    def run(*args, **kwargs):
        with one_native_thread():
            return function(*args, **kwargs)

    return run


def _bounded_for_checks(
    test: pd.DataFrame,
    train: pd.DataFrame | None,
    predictions: Predictions,
    inputs: EvalInputs,
    seed: int,
    notes: list[str],
) -> tuple[pd.DataFrame, pd.DataFrame | None, Predictions]:
    """Each split cut to at most ``CHECKS_MAX_ROWS`` seeded, label-stratified rows (with
    the matching predictions) for Deepchecks, so its cost stops growing with the table."""
    from mlflow_deepfix.testing.stats import sampling

    views: dict[str, pd.DataFrame | None] = {"test": test, "train": train}
    bounded = Predictions(**vars(predictions))
    sampled = []
    for split, frame in (("test", test), ("train", train)):
        if frame is None or len(frame) <= sampling.CHECKS_MAX_ROWS:
            continue
        labels = frame[inputs.target] if inputs.task != "regression" else None
        index = sampling.stratified_index(labels, len(frame), sampling.CHECKS_MAX_ROWS, seed)
        views[split] = frame.iloc[index].reset_index(drop=True)
        for name in (split, f"proba_{split}"):
            values = getattr(predictions, name)
            setattr(bounded, name, None if values is None else values[index])
        sampled.append(f"{len(index):,} of {len(frame):,} {split} rows")
    if sampled:
        notes.append(
            "Deepchecks' suites saw a seeded, label-stratified sample of "
            + " and ".join(sampled)
            + "; deepfix's own statistics and the performance figures cover every row."
        )
    return views["test"], views["train"], bounded


def _by_split(test: np.ndarray | None, train: np.ndarray | None) -> dict[str, np.ndarray] | None:
    found = {k: v for k, v in (("test", test), ("train", train)) if v is not None}
    return found or None


def performance_summary(
    inputs: EvalInputs,
    test: pd.DataFrame,
    train: pd.DataFrame | None,
    predictions: Predictions,
) -> PerformanceSummary:
    from mlflow_deepfix.testing.performance import summarize_performance

    if predictions.test is None:
        return PerformanceSummary()
    classes = None
    if inputs.adapter is not None and inputs.adapter.classes_ is not None:
        classes = list(inputs.adapter.classes_)
    train_args = {}
    if train is not None and predictions.train is not None:
        train_args = dict(
            y_train=train[inputs.target].to_numpy(),
            pred_train=predictions.train,
            proba_train=predictions.proba_train,
        )
    return summarize_performance(
        task=inputs.task,
        y_test=test[inputs.target].to_numpy(),
        pred_test=predictions.test,
        proba_test=predictions.proba_test,
        classes=classes,
        **train_args,
    )
