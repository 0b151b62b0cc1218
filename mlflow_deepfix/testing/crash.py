"""Runtime information captured when the model crashes (seed: crane-llm.txt).

A stack trace from deep inside a model or Deepchecks tells a user little. What does
help is the runtime picture next to it: the columns and dtypes the model expects
versus those it was given, the shape, NaN/inf counts, and the exception itself. The
diagnosis engine turns this :class:`RuntimeFailure` into a finding
(``schema_mismatch``, ``data_type_issues``, ``missing_values`` ...).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from mlflow_deepfix.errors import ModelOutputError
from mlflow_deepfix.inputs.model_adapter import category_refusal
from mlflow_deepfix.schemas import RuntimeFailure

_MAX_MESSAGE = 600
#: MLflow's pyfunc wraps a refused input as ``Failed to enforce schema of data '<the
#: whole frame, printed>' with schema '<signature>'. Error: <the reason>``
_MLFLOW_SCHEMA_PREFIX = "Failed to enforce schema of data "
_MLFLOW_SCHEMA_REASON = "'. Error: "


def condensed_message(error: BaseException) -> str:
    """The exception text, kept to what explains the crash, on one line.

    MLflow's schema enforcement prints the whole input frame ahead of its reason, so
    the first 600 characters were rows of the user's data and the reason ("Incompatible
    input types for column sex ...") was cut off. That message keeps only its reason;
    the signature is recorded apart (``expected_types``). Any other long message keeps
    its head and its tail, where Python libraries put the cause.
    """
    message = " ".join(str(error).split())
    if message.startswith(_MLFLOW_SCHEMA_PREFIX) and _MLFLOW_SCHEMA_REASON in message:
        reason = message.rsplit(_MLFLOW_SCHEMA_REASON, 1)[1]
        message = f"Failed to enforce schema (the model signature refused the data): {reason}"
    if len(message) > _MAX_MESSAGE:
        head = _MAX_MESSAGE // 2
        message = message[:head] + " ... " + message[-(_MAX_MESSAGE - head - 5):]
    return message


def _signature_types(model: Any) -> dict[str, str]:
    signature = getattr(getattr(model, "metadata", None), "signature", None)
    inputs = getattr(signature, "inputs", None)
    try:
        return {
            spec.name: str(getattr(spec.type, "name", spec.type))
            for spec in inputs.inputs
            if getattr(spec, "name", None)
        }
    except Exception:  # noqa: BLE001 - tensor signatures have no per-column types
        return {}


_NUMERIC_TYPES = ("double", "float", "long", "integer", "int", "number")


def _non_numeric_counts(
    frame: pd.DataFrame, expected_types: dict[str, str], reference: pd.DataFrame | None
) -> dict[str, int]:
    """Per text column, the values that are not numbers, where numbers were expected: the
    signature says so, the training column is numeric, or the column mixes both."""
    counts: dict[str, int] = {}
    for index, dtype in enumerate(frame.dtypes):
        name = str(frame.columns[index])
        if pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype):
            continue
        if pd.api.types.is_datetime64_any_dtype(dtype):
            continue
        column = frame.iloc[:, index]
        present = column.notna()
        numbers = pd.to_numeric(column.where(present), errors="coerce").notna()
        n_text = int((present & ~numbers).sum())
        if not n_text:
            continue
        expected = expected_types.get(name, "").lower()
        trained_numeric = (
            reference is not None
            and name in reference.columns
            and pd.api.types.is_numeric_dtype(reference[name].dtype)
            and not pd.api.types.is_bool_dtype(reference[name].dtype)
        )
        if expected.startswith(_NUMERIC_TYPES) or trained_numeric or numbers.any():
            counts[name] = n_text
    return counts


def _unseen_counts(frame: pd.DataFrame, reference: pd.DataFrame | None) -> dict[str, int]:
    """Per non-numeric column, the rows holding a value the training data never had."""
    if reference is None:
        return {}
    counts: dict[str, int] = {}
    for index, dtype in enumerate(frame.dtypes):
        name = str(frame.columns[index])
        if pd.api.types.is_numeric_dtype(dtype) or name not in reference.columns:
            continue
        try:
            seen = set(reference[name].dropna().astype(str))
            values = frame.iloc[:, index].dropna().astype(str)
        except (TypeError, ValueError):
            continue
        n_new = int((~values.isin(seen)).sum())
        if n_new:
            counts[name] = n_new
    return counts


def capture_failure(
    stage: str,
    error: BaseException,
    *,
    frame: pd.DataFrame,
    expected_columns: list[str],
    model: Any = None,
    reference: pd.DataFrame | None = None,
) -> RuntimeFailure:
    """Describe ``error`` raised while ``stage`` ran on ``frame`` (no row values kept).

    ``reference`` is the training split's features, when there is one: columns numeric
    there but text here, and categories it never had, are counted as evidence.
    """
    numeric = frame.select_dtypes(include=[np.number])
    nan_counts = {str(c): int(n) for c, n in frame.isna().sum().items() if n}
    inf_counts: dict[str, int] = {}
    if numeric.shape[1]:
        per_column = np.isinf(numeric.to_numpy(dtype=float)).sum(axis=0)
        inf_counts = {str(c): int(n) for c, n in zip(numeric.columns, per_column) if n}
    message = condensed_message(error)
    expected_types = _signature_types(model)
    refusal = category_refusal(error, frame)
    return RuntimeFailure(
        stage=stage,
        exception_type=type(error).__name__,
        message=message,
        expected_columns=[str(c) for c in expected_columns],
        given_columns=[str(c) for c in frame.columns],
        expected_types=expected_types,
        given_types={str(c): str(t) for c, t in frame.dtypes.items()},
        shape=list(frame.shape),
        nan_counts=nan_counts,
        inf_counts=inf_counts,
        non_numeric_counts=_non_numeric_counts(frame, expected_types, reference),
        unseen_counts=_unseen_counts(frame, reference),
        output_shape=list(error.shape) if isinstance(error, ModelOutputError) else [],
        category_refusal=refusal,
        refused_category_columns=_refused_columns(refusal, frame, expected_types),
    )


def _refused_columns(refusal: str, frame: pd.DataFrame, expected_types: dict[str, str]) -> list[str]:
    """The ``category`` columns an MLflow packaging refused (``refusal``, see
    :func:`~mlflow_deepfix.inputs.model_adapter.category_refusal`): for a signature,
    those it stores as string; for the xgboost flavour's DMatrix, every one."""
    if not refusal:
        return []
    return [
        str(name)
        for name, dtype in frame.dtypes.items()
        if isinstance(dtype, pd.CategoricalDtype)
        and (refusal == "xgboost_dmatrix" or str(expected_types.get(str(name), "")).lower() == "string")
    ]
