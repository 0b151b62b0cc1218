"""One prediction pass per split, shared by performance, checks and the report; a model
that crashes is captured as runtime information (a finding), not raised."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import pandas as pd

from mlflow_deepfix.errors import ModelOutputError
from mlflow_deepfix.inputs import EvalInputs
from mlflow_deepfix.schemas import RuntimeFailure
from mlflow_deepfix.testing.crash import capture_failure

logger = logging.getLogger(__name__)


@dataclass
class Predictions:
    """Model outputs computed once and shared by performance, checks and the report."""

    test: np.ndarray | None = None
    train: np.ndarray | None = None
    proba_test: np.ndarray | None = None
    proba_train: np.ndarray | None = None


def labelled(frame: pd.DataFrame | None, target: str) -> pd.DataFrame | None:
    """The rows of ``frame`` with a label, indexed 0..n-1. When every row has one, no
    rows are copied (a boolean mask would copy the whole split)."""
    if frame is None:
        return None
    has_label = frame[target].notna()
    if has_label.all():
        return frame.reset_index(drop=True)
    return frame[has_label].reset_index(drop=True)


#: rows on which the model's own ``predict`` is called when labels come from probabilities
LABEL_CHECK_ROWS = 1_000


def predict_via_proba(adapter, features: pd.DataFrame) -> tuple[np.ndarray, np.ndarray] | None:
    """Labels and probabilities from one probability pass, for models whose ``predict``
    is ``argmax(predict_proba)`` by definition (``ModelAdapter.labels_follow_proba``).

    The pyfunc ``predict`` still runs on the first rows (schema enforcement and crashes
    surface as before) and must agree with the derived labels there; on any doubt or
    error this returns None and the caller predicts the usual way.
    """
    if adapter is None or not adapter.has_proba or not adapter.labels_follow_proba:
        return None
    try:
        head = adapter.predict(features.iloc[:LABEL_CHECK_ROWS])
        proba = adapter.predict_proba(features)
        labels = np.asarray(adapter.classes_)[np.argmax(proba, axis=1)]
    except Exception as error:  # noqa: BLE001 - the usual path records the failure
        logger.debug("predicting through probabilities failed (%s); predicting as usual", error)
        return None
    if not np.array_equal(labels[: len(head)], np.asarray(head)):
        logger.info("model predict disagrees with argmax(predict_proba); predicting as usual")
        return None
    return labels, proba


def check_output(values, n_rows: int, *, proba: bool = False) -> np.ndarray:
    """The model's output as an array of one prediction (or one probability row) per
    input row; anything else raises :class:`ModelOutputError`, which the diagnosis reports
    as ``wrong_task_type``."""
    what = "probabilities" if proba else "predictions"
    if values is None:
        raise ModelOutputError(f"the model returned None as {what} for {n_rows} rows")
    array = np.asarray(values)
    if not proba and array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    expected = 2 if proba else 1
    if array.ndim != expected or len(array) != n_rows:
        layout = "rows x classes" if proba else "one value per row"
        raise ModelOutputError(
            f"the model returned {what} of shape {array.shape} for {n_rows} rows "
            f"(expected {layout})",
            shape=array.shape,
        )
    if not proba and array.dtype == object and any(
        isinstance(v, (list, tuple, dict, np.ndarray)) for v in array[: min(n_rows, 50)]
    ):
        raise ModelOutputError(f"the model returned nested values as {what}", shape=array.shape)
    return array


def predict_all(
    inputs: EvalInputs, test: pd.DataFrame, train: pd.DataFrame | None
) -> tuple[Predictions, list[RuntimeFailure]]:
    predictions, failures = Predictions(), []
    adapter = inputs.adapter

    def without_target(frame: pd.DataFrame | None) -> pd.DataFrame | None:
        return None if frame is None else frame.drop(columns=[inputs.target])

    def attempt(stage: str, call, features: pd.DataFrame, frame: pd.DataFrame):
        try:
            return check_output(call(features), len(features), proba=stage.startswith("predict_proba"))
        except Exception as error:  # noqa: BLE001 - any model error becomes a finding
            logger.warning("%s failed: %s: %s", stage, type(error).__name__, error)
            failures.append(
                capture_failure(
                    stage,
                    error,
                    frame=without_target(frame),
                    expected_columns=adapter.feature_names,
                    model=inputs.model,
                    reference=None if stage.endswith(":train") else without_target(train),
                )
            )
            return None

    expected = list(adapter.feature_names) if adapter is not None else []
    for split, frame in (("test", test), ("train", train)):
        if frame is None:
            continue
        # The adapter hands the model exactly its feature columns when all are present,
        # so the frame is passed as is (dropping the label would copy the split); with
        # columns missing the model gets what it got before, the frame without the label.
        complete = (
            bool(expected)
            and inputs.target not in expected
            and all(c in frame.columns for c in expected)
        )
        features = frame if complete else without_target(frame)
        both = predict_via_proba(adapter, features)
        if both is not None:
            setattr(predictions, split, both[0])
            setattr(predictions, f"proba_{split}", both[1])
            continue
        predicted = attempt(f"predict:{split}", adapter.predict, features, frame)
        setattr(predictions, split, predicted)
        if predicted is not None and adapter.has_proba:
            proba = attempt(f"predict_proba:{split}", adapter.predict_proba, features, frame)
            setattr(predictions, f"proba_{split}", proba)
    if adapter is not None and adapter.signature_refusal is not None:
        failures.append(
            capture_failure(
                "predict:test",
                adapter.signature_refusal,
                frame=without_target(test),
                expected_columns=adapter.feature_names,
                model=inputs.model,
                reference=without_target(train),
            ).model_copy(update={"served_by_raw_model": True})
        )
    return predictions, failures
