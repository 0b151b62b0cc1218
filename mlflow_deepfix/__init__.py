"""mlflow-deepfix: an MLflow evaluator that says what is wrong with a model and its
data, why, and how to fix it.

Use it through MLflow::

    mlflow.models.evaluate(model_uri, test_df, targets="label", model_type="classifier",
                           evaluators=["deepfix"],
                           evaluator_config={"deepfix": {"train_data": train_df}})

The evaluator is registered under the entry point group ``mlflow.model_evaluator``;
importing this package is not needed for MLflow to find it.
"""

from __future__ import annotations

import os

# Deepchecks phones home at import unless this is set; set it before anything can
# import Deepchecks (mlflow_deepfix.checks sets it too, for direct imports).
os.environ.setdefault("DISABLE_DEEPCHECKS_ANONYMOUS_TELEMETRY", "1")

__version__ = "0.2.0"

from mlflow_deepfix import _moved  # noqa: E402
from mlflow_deepfix.config import DeepfixConfig, parse_config  # noqa: E402
from mlflow_deepfix.errors import DeepfixConfigError, DeepfixError, DeepfixInputError  # noqa: E402
from mlflow_deepfix.schemas import ArtifactData, Diagnosis, Finding  # noqa: E402

_moved.install()  # old module names (mlflow_deepfix.scenarios, ...) as deprecation aliases

__all__ = [
    "ArtifactData",
    "DeepfixConfig",
    "DeepfixConfigError",
    "DeepfixError",
    "DeepfixInputError",
    "Diagnosis",
    "Finding",
    "__version__",
    "gate",
    "parse_config",
]


def __getattr__(name: str):  # lazy: ``mlflow_deepfix.gate`` imports MLflow's registry client
    if name == "gate":
        return __import__("importlib").import_module("mlflow_deepfix.gate")
    raise AttributeError(f"module 'mlflow_deepfix' has no attribute {name!r}")
