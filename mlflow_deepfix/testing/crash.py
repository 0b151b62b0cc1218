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

from mlflow_deepfix.schemas import RuntimeFailure

_MAX_MESSAGE = 600


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


def capture_failure(
    stage: str,
    error: BaseException,
    *,
    frame: pd.DataFrame,
    expected_columns: list[str],
    model: Any = None,
) -> RuntimeFailure:
    """Describe ``error`` raised while ``stage`` ran on ``frame`` (no row values kept)."""
    numeric = frame.select_dtypes(include=[np.number])
    nan_counts = {str(c): int(n) for c, n in frame.isna().sum().items() if n}
    inf_counts: dict[str, int] = {}
    if numeric.shape[1]:
        per_column = np.isinf(numeric.to_numpy(dtype=float)).sum(axis=0)
        inf_counts = {str(c): int(n) for c, n in zip(numeric.columns, per_column) if n}
    message = str(error).strip().replace("\n", " ")
    if len(message) > _MAX_MESSAGE:
        message = message[: _MAX_MESSAGE - 3] + "..."
    return RuntimeFailure(
        stage=stage,
        exception_type=type(error).__name__,
        message=message,
        expected_columns=[str(c) for c in expected_columns],
        given_columns=[str(c) for c in frame.columns],
        expected_types=_signature_types(model),
        given_types={str(c): str(t) for c, t in frame.dtypes.items()},
        shape=list(frame.shape),
        nan_counts=nan_counts,
        inf_counts=inf_counts,
    )
