"""Step 3 of the flow: :class:`EvalInputs` -> :class:`ArtifactData`.

Runs, in this order: one prediction pass per split (captured as runtime information if
the model crashes), then the Deepchecks suites and the baseline ladder side by side,
plus dataset statistics, model metadata and performance, all condensed into typed
artifact data with no raw rows.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd

from mlflow_deepfix import __version__
from mlflow_deepfix.config import DeepfixConfig
from mlflow_deepfix.crash import capture_failure
from mlflow_deepfix.inputs import EvalInputs
from mlflow_deepfix.schemas import ArtifactData, PerformanceSummary, RuntimeFailure

logger = logging.getLogger(__name__)


@dataclass
class Predictions:
    """Model outputs computed once and shared by performance, checks and the report."""

    test: np.ndarray | None = None
    train: np.ndarray | None = None
    proba_test: np.ndarray | None = None
    proba_train: np.ndarray | None = None


def _labelled(frame: pd.DataFrame | None, target: str) -> pd.DataFrame | None:
    if frame is None:
        return None
    return frame[frame[target].notna()].reset_index(drop=True)


def _predict_all(
    inputs: EvalInputs, test: pd.DataFrame, train: pd.DataFrame | None
) -> tuple[Predictions, list[RuntimeFailure]]:
    predictions, failures = Predictions(), []
    adapter = inputs.adapter

    def attempt(stage: str, call, features: pd.DataFrame):
        try:
            return call(features)
        except Exception as error:  # noqa: BLE001 - any model error becomes a finding
            logger.warning("%s failed: %s", stage, error)
            failures.append(
                capture_failure(
                    stage,
                    error,
                    frame=features,
                    expected_columns=adapter.feature_names,
                    model=inputs.model,
                )
            )
            return None

    for split, frame in (("test", test), ("train", train)):
        if frame is None:
            continue
        features = frame.drop(columns=[inputs.target])
        predicted = attempt(f"predict:{split}", adapter.predict, features)
        setattr(predictions, split, predicted)
        if predicted is not None and adapter.has_proba:
            proba = attempt(f"predict_proba:{split}", adapter.predict_proba, features)
            setattr(predictions, f"proba_{split}", proba)
    return predictions, failures


def run_testing(
    inputs: EvalInputs, config: DeepfixConfig, *, progress: bool = True
) -> tuple[ArtifactData, Predictions]:
    """Run every test of the testing step and condense the results."""
    from mlflow_deepfix.model_info import describe_model
    from mlflow_deepfix.performance import segment_errors
    from mlflow_deepfix.stats import infer_cat_features

    started = time.perf_counter()
    notes = list(inputs.notes)
    target = inputs.target
    test, train = _labelled(inputs.test, target), _labelled(inputs.train, target)
    for name, raw, kept in (("data", inputs.test, test), ("train_data", inputs.train, train)):
        if raw is not None and len(kept) < len(raw):
            notes.append(
                f"{len(raw) - len(kept)} rows of {name} without a label were left out of the "
                "model checks."
            )

    feature_names = inputs.feature_names
    cat_features = inputs.cat_features
    if cat_features is None:
        tabular = [c for c in feature_names if c in inputs.test and c != inputs.content_column]
        cat_features = infer_cat_features(inputs.test, tabular)

    contents = None
    if inputs.modality != "tabular":
        from mlflow_deepfix.content import prepare_contents

        # bad text or image cells are a call error: refuse them before the model runs
        contents = prepare_contents(
            {"test": test} if train is None else {"train": train, "test": test},
            modality=inputs.modality,
            column=inputs.content_column,
        )
    predictions, failures = _predict_all(inputs, test, train)
    predict_failed = any(f.stage.startswith("predict:") for f in failures)
    model_skip_reason = None
    if predict_failed:
        first = next(f for f in failures if f.stage.startswith("predict:"))
        model_skip_reason = f"the model's predict failed ({first.exception_type}: {first.message})"
        notes.append(f"Model checks skipped: {model_skip_reason}.")

    adapter = None if predict_failed else inputs.adapter
    if adapter is not None and not adapter.has_proba and inputs.task != "regression":
        notes.append(
            f"Probability-based checks skipped: {adapter.no_proba_reason or 'no predict_proba'}."
        )
    model_info = describe_model(inputs.model, inputs.adapter, feature_names)
    training = _training_history(inputs.model, notes)
    importances = dict(model_info.feature_importances)

    if inputs.modality == "tabular":
        checks, baselines, dataset, segment_frame, segment_features = _tabular_tests(
            inputs, config, test, train, predictions, cat_features, importances,
            adapter=adapter, model_skip_reason=model_skip_reason, notes=notes,
            progress=progress,
        )
    else:
        from mlflow_deepfix.content_testing import run_content_tests

        checks, baselines, dataset, segment_frame, segment_features = run_content_tests(
            inputs, config, test, train, contents, predictions, cat_features,
            model_skip_reason=model_skip_reason, notes=notes, progress=progress,
        )
    performance = _performance(inputs, test, train, predictions)
    if predictions.test is not None:
        performance.segments = segment_errors(
            segment_frame,
            task=inputs.task,
            y_true=test[target].to_numpy(),
            y_pred=predictions.test,
            features=segment_features,
        )

    artifact = ArtifactData(
        deepfix_version=__version__,
        task=inputs.task,
        modality=inputs.modality,
        seed=config.seed,
        sample_size=config.sample_size,
        dataset=dataset,
        checks=checks,
        model=model_info,
        performance=performance,
        baselines=baselines,
        runtime_failures=failures,
        training=training,
        notes=notes,
        checks_seconds=round(time.perf_counter() - started, 3),
    )
    logger.info("deepfix testing done in %.1fs", artifact.checks_seconds)
    return artifact, predictions


def _tabular_tests(
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
    from mlflow_deepfix.baselines import baseline_ladder
    from mlflow_deepfix.checks import CheckInputs, run_checks
    from mlflow_deepfix.stats import summarize_dataset

    target, feature_names = inputs.target, inputs.feature_names
    shared = [c for c in feature_names if c in test.columns and (train is None or c in train)]
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
    check_inputs = CheckInputs(
        train=train,
        test=test,
        label=target,
        task=inputs.task,
        feature_names=shared,
        cat_features=[c for c in cat_features if c in shared],
        model=adapter,
        index_col=index_col,
        datetime_col=datetime_col,
        feature_importance=importances or None,
        model_skip_reason=model_skip_reason,
        predictions=_by_split(predictions.test, predictions.train),
        probabilities=_by_split(predictions.proba_test, predictions.proba_train),
    )
    checks_started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="deepfix-testing") as pool:
        baselines_future = None
        if train is not None and len(train) >= 20:
            baselines_future = pool.submit(
                baseline_ladder,
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



def _training_history(model, notes: list[str]):
    """The model's training curves from its MLflow run (None, with a note, when absent
    or unreadable: the rest of the evaluation goes on)."""
    from mlflow_deepfix.training_history import read_training_history

    try:
        history, note = read_training_history(model)
    except Exception as error:  # noqa: BLE001 - a broken history must not sink the evaluation
        logger.warning("reading the training history failed: %r", error)
        history, note = None, f"Training history errored: {type(error).__name__}: {error}"[:300]
    if note:
        notes.append(note)
    return history


def _by_split(test: np.ndarray | None, train: np.ndarray | None) -> dict[str, np.ndarray] | None:
    found = {k: v for k, v in (("test", test), ("train", train)) if v is not None}
    return found or None


def _performance(
    inputs: EvalInputs,
    test: pd.DataFrame,
    train: pd.DataFrame | None,
    predictions: Predictions,
) -> PerformanceSummary:
    from mlflow_deepfix.performance import summarize_performance

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
