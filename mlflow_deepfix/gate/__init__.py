"""A promotion gate for the MLflow model registry: evaluate a model version with
deepfix, refuse it when it has blocking findings (or, against a baseline, when the fix
broke too much of what the old model got right), tag the version, and only when it
passes move a registry alias such as ``champion``.

Why here: MLflow 3 removed ``validation_thresholds`` from ``evaluate``; thresholds are
now checked with :func:`mlflow.validate_evaluation_results` over
:class:`mlflow.models.MetricThreshold` objects, which is what the gate builds from the
deepfix metrics of CONTRACT.md section 3 (``deepfix_critical_count <= 0`` for
``fail_on="critical"``, ...) and from the fix-verification metrics of
:mod:`mlflow_deepfix.gate.verification` (``deepfix_negative_flip_rate``,
``deepfix_repair_rate``).

Every problem with the call itself (unknown model, unreadable data, missing target
column, inconsistent options) raises :class:`~mlflow_deepfix.errors.DeepfixInputError`
*before* a run is started; the CLI turns it into exit code 2.

Layout: :mod:`~mlflow_deepfix.gate.options` checks the call, :mod:`~.models` resolves,
loads and predicts, :mod:`~.thresholds` builds and checks the MetricThresholds,
:mod:`~.evaluation` runs deepfix through ``mlflow.models.evaluate``,
:mod:`~.verification` compares candidate and baseline, :mod:`~.registry` tags and
promotes, :mod:`~.report` adds the gate's report sections, :mod:`~.promotion` chains
them in :func:`gate`, and :mod:`~.cli` is ``deepfix gate``.
"""

from __future__ import annotations

import inspect
import sys
import types
from typing import Any

from mlflow_deepfix.gate.models import infer_model_type, resolve_model
from mlflow_deepfix.gate.options import MODEL_TYPES
from mlflow_deepfix.gate.promotion import gate
from mlflow_deepfix.gate.registry import TAG_RUN_ID, TAG_STATUS, TAG_TOP_FINDING
from mlflow_deepfix.gate.result import GateResult, ModelRef
from mlflow_deepfix.gate.thresholds import (
    blocking_severities,
    build_thresholds,
    check_thresholds,
    describe_threshold,
)
from mlflow_deepfix.gate.verification import FixVerification, verify_fix
from mlflow_deepfix.inputs.tables import TABLE_EXTENSIONS, load_table

__all__ = [
    "MODEL_TYPES",
    "TABLE_EXTENSIONS",
    "TAG_RUN_ID",
    "TAG_STATUS",
    "TAG_TOP_FINDING",
    "FixVerification",
    "GateResult",
    "ModelRef",
    "blocking_severities",
    "build_thresholds",
    "check_thresholds",
    "describe_threshold",
    "gate",
    "infer_model_type",
    "load_table",
    "resolve_model",
    "verify_fix",
]


class _CallableModule(types.ModuleType):
    """``mlflow_deepfix.gate`` is both this module and the function: importing the
    submodule sets the package attribute ``gate`` to the module, so the module forwards
    calls to :func:`gate` and ``mlflow_deepfix.gate(...)`` works either way."""

    def __call__(self, *args: Any, **kwargs: Any) -> GateResult:
        return gate(*args, **kwargs)


__signature__ = inspect.signature(gate)
sys.modules[__name__].__class__ = _CallableModule
