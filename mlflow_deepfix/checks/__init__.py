"""The Deepchecks layer: the only code in deepfix that imports Deepchecks.

Importing this package first disables Deepchecks' anonymous telemetry (it phones home
at import otherwise) and applies :mod:`mlflow_deepfix.checks._compat`, which makes
Deepchecks 0.19.1 import and run on today's numpy / pandas / scikit-learn / setuptools.
Then :func:`run_checks` runs Deepchecks' default tabular suites and returns one
:class:`~mlflow_deepfix.schemas.CheckOutcome` per check; :data:`CHECK_CATALOG` says what
each outcome's numbers mean. :func:`run_text_checks` and :func:`run_image_checks` do the
same with Deepchecks' NLP and vision suites; they are loaded on first use, so the tabular
path never imports torch or the NLP stack.
"""

import os

os.environ.setdefault("DISABLE_DEEPCHECKS_ANONYMOUS_TELEMETRY", "1")

from mlflow_deepfix.checks import _compat, _lazy_imports

_lazy_imports.defer_rfc3987_syntax()  # ~1-3 s of import for a format deepfix never checks
_compat.apply()

from mlflow_deepfix.checks._catalog import (
    CHECK_CATALOG,
    DEEPCHECKS_CATEGORY,
    SUITES,
    CheckSpec,
)
from mlflow_deepfix.checks._image_catalog import IMAGE_CHECK_CATALOG, IMAGE_DEEPCHECKS_CATEGORY
from mlflow_deepfix.checks._runner import CheckInputs, run_checks
from mlflow_deepfix.checks._text_catalog import TEXT_CHECK_CATALOG, TEXT_DEEPCHECKS_CATEGORY
from mlflow_deepfix.checks._wide import MAX_CHECK_FEATURES, cap_note, select_check_features

#: modality -> {check name -> the category a Deepchecks-only user would blame}
DEEPCHECKS_CATEGORY_BY_MODALITY: dict[str, dict[str, str]] = {
    "tabular": DEEPCHECKS_CATEGORY,
    "text": TEXT_DEEPCHECKS_CATEGORY,
    "image": IMAGE_DEEPCHECKS_CATEGORY,
}

__all__ = ["MAX_CHECK_FEATURES", "cap_note", "select_check_features", "CHECK_CATALOG", "DEEPCHECKS_CATEGORY", "DEEPCHECKS_CATEGORY_BY_MODALITY",
           "IMAGE_CHECK_CATALOG", "SUITES", "TEXT_CHECK_CATALOG", "CheckInputs", "CheckSpec",
           "ImageCheckInputs", "TextCheckInputs", "run_checks", "run_image_checks",
           "run_text_checks"]

_LAZY = {
    "TextCheckInputs": "mlflow_deepfix.checks._text",
    "run_text_checks": "mlflow_deepfix.checks._text",
    "ImageCheckInputs": "mlflow_deepfix.checks._image",
    "run_image_checks": "mlflow_deepfix.checks._image",
}


def __getattr__(name: str):
    """Load the text / image runners (and with them deepchecks.nlp / deepchecks.vision)
    only when asked for."""
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
