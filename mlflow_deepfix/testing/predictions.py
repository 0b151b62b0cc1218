"""One prediction pass per split, shared by performance, checks and the report; a model
that crashes is captured as runtime information (a finding), not raised."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import pandas as pd

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
    if frame is None:
        return None
    return frame[frame[target].notna()].reset_index(drop=True)


def predict_all(
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
