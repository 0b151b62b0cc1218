"""Errors raised at the boundary, each naming the problem and the fix.

They subclass :class:`mlflow.exceptions.MlflowException` (``INVALID_PARAMETER_VALUE``)
so that ``mlflow.evaluate`` callers see them like MLflow's own argument errors, and
:class:`ValueError` so that plain Python code can catch them without importing MLflow.
"""

from __future__ import annotations

from mlflow.exceptions import MlflowException
from mlflow.protos.databricks_pb2 import INVALID_PARAMETER_VALUE


class DeepfixError(MlflowException, ValueError):
    """Base class of every error deepfix raises on purpose."""

    def __init__(self, message: str):
        super().__init__(message, error_code=INVALID_PARAMETER_VALUE)


class DeepfixConfigError(DeepfixError):
    """``evaluator_config["deepfix"]`` holds an unknown key or a value of the wrong type."""


class DeepfixInputError(DeepfixError):
    """The data or model given to the evaluator cannot be evaluated as it is."""


class ModelOutputError(ValueError):
    """The model returned something that is not one prediction per row (a 2-D array, a
    wrong length, None, a frame of several columns). Not raised to the user: the testing
    step records it as a crash, which the diagnosis reports as ``wrong_task_type``."""

    def __init__(self, message: str, shape: tuple[int, ...] = ()):
        super().__init__(message)
        self.shape = tuple(int(n) for n in shape)
