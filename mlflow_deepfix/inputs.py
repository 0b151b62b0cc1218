"""Step 2 of the flow: MLflow's evaluation dataset + config -> validated :class:`EvalInputs`.

Everything a user can get wrong about the *call* is caught here with a message naming
the problem and the fix (wrong target, empty frame, unknown column in the config),
before any check runs, so a bad call never leaves a half-written run. Problems that
are *findings* rather than call errors (an all-NaN column, columns that differ between
splits, a model whose predict raises) are let through and diagnosed later.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from mlflow_deepfix.config import DeepfixConfig
from mlflow_deepfix.errors import DeepfixInputError
from mlflow_deepfix.model_adapter import ModelAdapter, resolve_feature_names

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


def _frame_from_dataset(dataset: Any) -> tuple[pd.DataFrame, str]:
    """Rebuild features + labels from MLflow's ``_EvaluationDataset``."""
    target = getattr(dataset, "targets_name", None)
    if not target:
        raise DeepfixInputError(
            "deepfix needs labels: pass targets='<label column>' to mlflow.models.evaluate."
        )
    features = dataset.features_data
    if not isinstance(features, pd.DataFrame):
        names = list(getattr(dataset, "feature_names", []) or [])
        features = pd.DataFrame(np.asarray(features), columns=names or None)
    frame = features.copy()
    frame[target] = np.asarray(dataset.labels_data)
    return frame, str(target)


def _check_frame(frame: pd.DataFrame, *, name: str, target: str, hint: str) -> None:
    if len(frame) == 0:
        raise DeepfixInputError(
            f"{name} is empty (0 rows). deepfix needs at least one labelled row; {hint}"
        )
    if target not in frame.columns:
        shown = ", ".join(map(str, list(frame.columns)[:12]))
        raise DeepfixInputError(
            f"{name} has no target column {target!r} (targets={target!r}). "
            f"Columns found: {shown}{'...' if frame.shape[1] > 12 else ''}. "
            f"Include the label column under the same name as `targets`."
        )
    if frame.columns.duplicated().any():
        dupes = sorted({str(c) for c in frame.columns[frame.columns.duplicated()]})
        raise DeepfixInputError(
            f"{name} has duplicated column names {dupes}; rename them so each is unique."
        )
    if frame[target].isna().all():
        raise DeepfixInputError(
            f"{name}: every value of the target column {target!r} is missing; "
            "evaluate on labelled data."
        )


def _infer_task(model_type: str, labels: pd.Series) -> str:
    if model_type == "regressor":
        return "regression"
    n_classes = labels.dropna().nunique()
    return "binary_classification" if n_classes <= 2 else "multiclass_classification"


def _training_data_from_lineage(model: Any, target: str) -> tuple[pd.DataFrame | None, str]:
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
        frame = _read_table(location)
        if frame is not None and target in frame.columns:
            return frame, f"training dataset {name!r} logged on run {run_id}"
    return None, (
        f"the model's run {run_id} logged a training dataset, but its source cannot be "
        "loaded (log it with mlflow.data.from_pandas(df, source='<path or URI>'), or pass "
        "train_data in evaluator_config)"
    )


def _read_table(location: Any) -> pd.DataFrame | None:
    if not isinstance(location, (str, os.PathLike)):
        return None
    path = os.fspath(location)
    if path.endswith(".parquet"):
        return pd.read_parquet(path)
    if path.endswith(".csv"):
        return pd.read_csv(path)
    if path.endswith(".json"):
        return pd.read_json(path)
    return None


def _check_config_columns(config: DeepfixConfig, frames: dict[str, pd.DataFrame]) -> None:
    for key in ("index_col", "datetime_col", "text_col", "image_col"):
        column = getattr(config, key)
        if column is None:
            continue
        for name, frame in frames.items():
            if column not in frame.columns:
                raise DeepfixInputError(
                    f"evaluator_config['deepfix'][{key!r}] = {column!r} is not a column of "
                    f"{name}. Available columns: {', '.join(map(str, frame.columns[:15]))}"
                )
    if config.sensitive_features:
        test = frames["data"]
        unknown = [c for c in config.sensitive_features if c not in test.columns]
        if unknown:
            raise DeepfixInputError(
                f"evaluator_config['deepfix']['sensitive_features'] names columns that are "
                f"not in data: {unknown}. Accepted: columns of data (the model need not read "
                f"them), e.g. {list(map(str, test.columns[:15]))}"
            )
    if config.cat_features:
        test = frames["data"]
        unknown = [c for c in config.cat_features if c not in test.columns]
        if unknown:
            raise DeepfixInputError(
                f"evaluator_config['deepfix']['cat_features'] names columns that are not in "
                f"data: {unknown}. Accepted: a subset of {list(map(str, test.columns[:15]))}"
            )


def _modality(config: DeepfixConfig, model_type: str) -> tuple[str, str | None]:
    """The modality (given, or inferred from ``text_col`` / ``image_col``) and the column
    holding the raw content; contradictory settings are refused with the fix."""
    prefix = "evaluator_config['deepfix']"
    if config.text_col and config.image_col:
        raise DeepfixInputError(
            f"{prefix} sets both text_col={config.text_col!r} and image_col="
            f"{config.image_col!r}; deepfix evaluates one modality per call: keep one of them."
        )
    inferred = "text" if config.text_col else "image" if config.image_col else "tabular"
    modality = config.modality or inferred
    needed = {"text": "text_col", "image": "image_col"}.get(modality)
    if needed and getattr(config, needed) is None:
        raise DeepfixInputError(
            f"{prefix}['modality'] = {modality!r} needs {needed}='<column>' naming the column "
            f"that holds the raw {'texts' if modality == 'text' else 'images'}."
        )
    if modality != inferred:
        given = "text_col" if config.text_col else "image_col"
        raise DeepfixInputError(
            f"{prefix}['modality'] = {modality!r} contradicts {given}="
            f"{getattr(config, given)!r}; drop {given} or set modality={inferred!r}."
        )
    if modality != "tabular" and model_type != "classifier":
        raise DeepfixInputError(
            f"modality={modality!r} supports model_type='classifier' only (Deepchecks' NLP "
            f"and vision suites cover classification); got model_type={model_type!r}."
        )
    return modality, getattr(config, needed) if needed else None


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
    test, target = _frame_from_dataset(dataset)
    _check_frame(test, name="data", target=target, hint="pass a non-empty test DataFrame.")

    notes: list[str] = []
    if config.train_data is not None:
        train, train_source = config.train_data, "evaluator_config"
        _check_frame(
            train,
            name="evaluator_config['deepfix']['train_data']",
            target=target,
            hint="pass the training split or leave train_data out.",
        )
    else:
        train, why = _training_data_from_lineage(model, target)
        train_source = "run lineage" if train is not None else "none"
        if train is None:
            notes.append(f"Train/test checks skipped: no training data ({why}).")
        else:
            notes.append(f"Training data taken from the {why}.")
    frames = {"data": test} if train is None else {"data": test, "train_data": train}
    _check_config_columns(config, frames)

    modality, content_column = _modality(config, model_type)
    labels = test[target] if train is None else pd.concat([train[target], test[target]])
    task = _infer_task(model_type, labels)
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
    adapter = ModelAdapter(model, feature_names, is_classifier=task != "regression")
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
