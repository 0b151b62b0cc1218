"""Step 2 of the flow: MLflow's evaluation dataset + config -> validated :class:`EvalInputs`.

Everything a user can get wrong about the *call* is caught here with a message naming
the problem and the fix (wrong target, empty frame, unknown column in the config),
before any check runs, so a bad call never leaves a half-written run. Problems that
are *findings* rather than call errors (an all-NaN column, columns that differ between
splits, a model whose predict raises) are let through and diagnosed later.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from mlflow_deepfix.config import DeepfixConfig
from mlflow_deepfix.errors import DeepfixInputError
from mlflow_deepfix.inputs.labels import stringify_labels
from mlflow_deepfix.inputs.lineage import training_data_from_lineage
from mlflow_deepfix.inputs.model_adapter import ModelAdapter, resolve_feature_names
from mlflow_deepfix.inputs.validation import (
    check_config_columns,
    check_frame,
    frame_from_dataset,
    infer_task,
    resolve_modality,
)

logger = logging.getLogger(__name__)

MODEL_TYPES = ("classifier", "regressor")


@dataclass
class EvalInputs:
    """Validated frames, target, task and model: everything the testing step needs."""

    test: pd.DataFrame
    train: pd.DataFrame | None
    target: str
    task: str
    modality: str
    feature_names: list[str]
    cat_features: list[str] | None
    model: Any
    adapter: ModelAdapter | None
    index_col: str | None = None
    datetime_col: str | None = None
    #: text/image modality: the column holding the raw text or images
    content_column: str | None = None
    #: columns to test for group disparities (may or may not be model features)
    sensitive_features: list[str] = field(default_factory=list)
    train_source: str = "none"
    notes: list[str] = field(default_factory=list)


def build_inputs(
    *, model: Any, dataset: Any, model_type: str, config: DeepfixConfig
) -> EvalInputs:
    """Validate the call and assemble :class:`EvalInputs` (raises DeepfixInputError)."""
    if model_type not in MODEL_TYPES:
        raise DeepfixInputError(
            f"model_type={model_type!r} is not supported by deepfix; accepted: {MODEL_TYPES}"
        )
    if model is None:
        raise DeepfixInputError(
            "deepfix needs the model itself (model=<URI or pyfunc>), not only predictions."
        )
    test, target = frame_from_dataset(dataset)
    raw_train = config.train_data
    # column labels of any type: text from here on, the originals kept for the model
    framed, column_labels = stringify_labels({"data": test, "train_data": raw_train})
    test, raw_train = framed["data"], framed["train_data"]
    check_frame(test, name="data", target=target, hint="pass a non-empty test DataFrame.")

    notes: list[str] = []
    if column_labels:
        notes.append(column_labels.note())
    if raw_train is not None:
        train, train_source = raw_train, "evaluator_config"
        check_frame(
            train,
            name="evaluator_config['deepfix']['train_data']",
            target=target,
            hint="pass the training split or leave train_data out.",
        )
    else:
        train, why = training_data_from_lineage(model, target)
        train_source = "run lineage" if train is not None else "none"
        if train is None:
            notes.append(f"Train/test checks skipped: no training data ({why}).")
        else:
            notes.append(f"Training data taken from the {why}.")
    frames = {"data": test} if train is None else {"data": test, "train_data": train}
    check_config_columns(config, frames)

    modality, content_column = resolve_modality(config, model_type)
    labels = test[target] if train is None else pd.concat([train[target], test[target]])
    task = infer_task(model_type, labels)

    if target in (config.sensitive_features or ()):
        raise DeepfixInputError(
            f"evaluator_config['deepfix']['sensitive_features'] contains the target "
            f"{target!r}; name the columns describing groups of people (e.g. 'sex', 'age_band')."
        )
    special = {c for c in (config.index_col, config.datetime_col) if c}
    # sensitive columns are features only when the model's signature (or fitted
    # feature names) lists them; otherwise they are kept aside, never passed to the model
    special |= set(config.sensitive_features or ())
    candidates = [c for c in test.columns if c != target and c not in special]
    feature_names = resolve_feature_names(model, candidates)
    adapter = ModelAdapter(
        model, feature_names, is_classifier=task != "regression", column_labels=column_labels
    )
    if task != "regression":
        adapter.detect_pyfunc_proba(test, test[target].dropna().to_numpy())

    return EvalInputs(
        test=test,
        train=train,
        target=target,
        task=task,
        modality=modality,
        feature_names=feature_names,
        cat_features=list(config.cat_features) if config.cat_features is not None else None,
        model=model,
        adapter=adapter,
        index_col=config.index_col,
        datetime_col=config.datetime_col,
        content_column=content_column,
        sensitive_features=list(config.sensitive_features or ()),
        train_source=train_source,
        notes=notes,
    )
