"""Training data recovered from MLflow run lineage: the dataset that the model's run
logged with ``context="training"``, read through the one table reader
(:func:`mlflow_deepfix.inputs.tables.load_table`). A source that cannot be loaded is
not an error here: the train/test checks are skipped and the note says why."""

from __future__ import annotations

import logging
import os
from typing import Any

import pandas as pd

from mlflow_deepfix.errors import DeepfixInputError
from mlflow_deepfix.inputs.tables import load_table

logger = logging.getLogger(__name__)


def training_data_from_lineage(model: Any, target: str) -> tuple[pd.DataFrame | None, str]:
    """The dataset that the model's run logged with ``context="training"``, if loadable."""
    run_id = getattr(getattr(model, "metadata", None), "run_id", None)
    if not run_id:
        return None, "the model has no source run"
    import mlflow
    from mlflow.data import get_source

    try:
        run = mlflow.get_run(run_id)
    except Exception as error:  # noqa: BLE001 - a deleted/foreign run is not an error for us
        return None, f"the model's run {run_id} could not be read ({type(error).__name__})"
    inputs = getattr(run.inputs, "dataset_inputs", None) or []
    training = [
        d
        for d in inputs
        if any(t.key == "mlflow.data.context" and t.value == "training" for t in d.tags)
    ]
    if not training:
        return None, f"the model's run {run_id} logged no dataset with context='training'"
    for dataset_input in training:
        name = dataset_input.dataset.name
        try:
            location = get_source(dataset_input).load()
        except Exception:  # noqa: BLE001 - code-defined sources cannot be loaded by design
            continue
        if not isinstance(location, (str, os.PathLike)):
            continue
        try:
            frame = load_table(location, name=f"training dataset {name!r}")
        except DeepfixInputError as error:  # unknown extension, missing or unreadable file
            logger.debug("training data from lineage not loaded: %s", error)
            continue
        if target in frame.columns:
            return frame, f"training dataset {name!r} logged on run {run_id}"
    return None, (
        f"the model's run {run_id} logged a training dataset, but its source cannot be "
        "loaded (log it with mlflow.data.from_pandas(df, source='<path or URI>'), or pass "
        "train_data in evaluator_config)"
    )
