"""Checks of the evaluate call itself: labels present, frames usable, config columns
that exist, one consistent modality. Each refusal names the problem and the fix."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from mlflow_deepfix.config import DeepfixConfig
from mlflow_deepfix.errors import DeepfixInputError


def frame_from_dataset(dataset: Any) -> tuple[pd.DataFrame, str]:
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


def check_frame(frame: pd.DataFrame, *, name: str, target: str, hint: str) -> None:
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


def infer_task(model_type: str, labels: pd.Series) -> str:
    if model_type == "regressor":
        return "regression"
    n_classes = labels.dropna().nunique()
    return "binary_classification" if n_classes <= 2 else "multiclass_classification"


def check_config_columns(config: DeepfixConfig, frames: dict[str, pd.DataFrame]) -> None:
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


def resolve_modality(config: DeepfixConfig, model_type: str) -> tuple[str, str | None]:
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
