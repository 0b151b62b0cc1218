"""The Deepchecks layer: the only code in deepfix that imports Deepchecks.

Importing this package first disables Deepchecks' anonymous telemetry (it phones home
at import otherwise) and applies :mod:`mlflow_deepfix.checks._compat`, which makes
Deepchecks 0.19.1 import and run on today's numpy / pandas / scikit-learn / setuptools.
Then :func:`run_checks` runs Deepchecks' default tabular suites and returns one
:class:`~mlflow_deepfix.schemas.CheckOutcome` per check; :data:`CHECK_CATALOG` says what
each outcome's numbers mean.
"""

import os

os.environ.setdefault("DISABLE_DEEPCHECKS_ANONYMOUS_TELEMETRY", "1")

from mlflow_deepfix.checks import _compat

_compat.apply()

from mlflow_deepfix.checks._catalog import (
    CHECK_CATALOG,
    DEEPCHECKS_CATEGORY,
    SUITES,
    CheckSpec,
)
from mlflow_deepfix.checks._runner import CheckInputs, run_checks

__all__ = ["CHECK_CATALOG", "DEEPCHECKS_CATEGORY", "SUITES", "CheckInputs", "CheckSpec",
           "run_checks"]
