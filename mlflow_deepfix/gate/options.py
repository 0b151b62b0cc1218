"""The gate's call checked at the boundary: options, data frames, and the deepfix
evaluator config, all refused with a :class:`DeepfixInputError` *before* a run starts."""

from __future__ import annotations

import logging
import math
import os
from typing import Any

import pandas as pd

from mlflow_deepfix.config import FAIL_ON, parse_config
from mlflow_deepfix.errors import DeepfixInputError
from mlflow_deepfix.inputs.tables import TABLE_EXTENSIONS, load_table

logger = logging.getLogger(__name__)

MODEL_TYPES = ("classifier", "regressor")


def _as_frame(value: Any, *, name: str) -> pd.DataFrame:
    if isinstance(value, pd.DataFrame):
        return value
    if isinstance(value, (str, os.PathLike)):
        return load_table(value, name=name)
    frame = getattr(value, "df", None)  # mlflow.data datasets
    if isinstance(frame, pd.DataFrame):
        return frame
    raise DeepfixInputError(
        f"{name} must be a pandas DataFrame, an mlflow.data dataset or a path to a "
        f"{'/'.join(e[1:] for e in TABLE_EXTENSIONS)} file; got {type(value).__name__}."
    )


def _check_target(frame: pd.DataFrame, target: str, *, name: str) -> None:
    if len(frame) == 0:
        raise DeepfixInputError(f"{name} is empty (0 rows); the gate needs labelled rows.")
    if target not in frame.columns:
        shown = ", ".join(map(str, list(frame.columns)[:12]))
        more = "..." if frame.shape[1] > 12 else ""
        raise DeepfixInputError(
            f"{name} has no target column {target!r}. Columns found: {shown}{more}."
        )


def _check_rate(value: float | None, name: str) -> None:
    if value is None:
        return
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not (math.isfinite(value) and 0.0 <= value <= 1.0)
    ):
        raise DeepfixInputError(f"{name} must be a number between 0 and 1; got {value!r}.")


def _check_options(
    *,
    targets: Any,
    model_type: str | None,
    fail_on: str,
    promote_to: str | None,
    baseline_uri: str | None,
    max_negative_flip_rate: float | None,
    min_repair_rate: float | None,
    tolerance: float | None,
) -> None:
    if not isinstance(targets, str) or not targets:
        raise DeepfixInputError(
            f"targets must be the name of the label column (a non-empty str); got {targets!r}."
        )
    if model_type is not None and model_type not in MODEL_TYPES:
        raise DeepfixInputError(f"model_type must be one of {MODEL_TYPES}; got {model_type!r}.")
    if fail_on not in FAIL_ON:
        raise DeepfixInputError(f"fail_on must be one of {list(FAIL_ON)}; got {fail_on!r}.")
    if promote_to is not None and (not isinstance(promote_to, str) or not promote_to.strip()):
        raise DeepfixInputError(f"promote_to must be a non-empty alias name; got {promote_to!r}.")
    _check_rate(max_negative_flip_rate, "max_negative_flip_rate")
    _check_rate(min_repair_rate, "min_repair_rate")
    if baseline_uri is None:
        for value, option in (
            (max_negative_flip_rate, "max_negative_flip_rate"),
            (min_repair_rate, "min_repair_rate"),
            (tolerance, "tolerance"),
        ):
            if value is not None:
                raise DeepfixInputError(
                    f"{option}={value!r} needs a baseline to compare with; pass baseline_uri "
                    "(e.g. 'models:/my-model@champion')."
                )
    if tolerance is not None and (
        isinstance(tolerance, bool)
        or not isinstance(tolerance, (int, float))
        or not math.isfinite(tolerance)
        or tolerance < 0
    ):
        raise DeepfixInputError(f"tolerance must be a finite number >= 0; got {tolerance!r}.")


def _deepfix_config(
    evaluator_config: dict | None, fail_on: str, train: pd.DataFrame | None
) -> dict:
    if evaluator_config is None:
        evaluator_config = {}
    if not isinstance(evaluator_config, dict):
        raise DeepfixInputError(
            f"evaluator_config must be a dict of deepfix options; got "
            f"{type(evaluator_config).__name__}."
        )
    config = dict(evaluator_config)
    if set(config) == {"deepfix"} and isinstance(config["deepfix"], dict):
        config = dict(config["deepfix"])
    if "fail_on" in config and config["fail_on"] != fail_on:
        logger.warning(
            "evaluator_config fail_on=%r is replaced by the gate's fail_on=%r",
            config["fail_on"],
            fail_on,
        )
    config["fail_on"] = fail_on
    if train is not None:
        config["train_data"] = train
    elif config.get("train_data") is not None:
        config["train_data"] = _as_frame(config["train_data"], name="train_data")
    parse_config(config)  # refuse bad options now, before a run is started
    return config
