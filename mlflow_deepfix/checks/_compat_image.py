"""Make ``deepchecks.vision`` (0.19.1) import and run on today's stack, without torchvision.

Why: ``deepchecks/vision/__init__.py`` imports ``vision_data/simple_classification_data.py``,
which starts with ``from torchvision.datasets import VisionDataset`` and turns an
ImportError into "torchvision is not installed". torchvision is not installable beside
CPU torch 2.13 (its PyPI wheel raises ``RuntimeError: operator torchvision::nms does not
exist`` at import, which is not even an ImportError), and deepfix needs nothing from it:
``VisionDataset`` is only the base class of ``SimpleClassificationDataset``
(``classification_dataset_from_directory``), which deepfix never uses.

So, with the import hook of :mod:`mlflow_deepfix.checks._compat` (same ``SourceEdit`` /
``Patch`` machinery, same line-preserving edits, same ``STATE`` record):

* ``torchvision_optional`` -- in that one module, a failing torchvision import (for any
  reason) falls back to ``torch.utils.data.Dataset`` as ``VisionDataset``. Nothing is put
  in ``sys.modules``: no fake ``torchvision`` that other libraries would find when they
  probe for it. Applied always: when torchvision imports, the edited code does exactly
  what the original does.
* ``numpy2_aliases_vision`` -- numpy 2 removed ``np.NINF``; Image Property Outliers uses it
  (feature-detected, like the tabular numpy fixes).

The tabular patches (:func:`mlflow_deepfix.checks._compat.apply`) are applied first: the
vision checks share Deepchecks' core modules with them (weak segments, drift, PPS).
Neither albumentations nor imgaug is needed: only ``deepchecks.vision.datasets`` imports
them, and deepfix never imports that package.

:func:`apply` is called lazily, by the image path only: importing ``deepchecks.vision``
imports torch, which the tabular path must not.
"""

from __future__ import annotations

import logging
import os
import threading

from mlflow_deepfix.checks import _compat
from mlflow_deepfix.checks._compat import Patch, SourceEdit

logger = logging.getLogger(__name__)

_VISION = "deepchecks.vision"
_SIMPLE_DATA = f"{_VISION}.vision_data.simple_classification_data"

IMAGE_PATCHES: tuple[Patch, ...] = (
    Patch(
        name="torchvision_optional",
        answers="torchvision does not install beside CPU torch 2.13 (RuntimeError 'operator "
        "torchvision::nms does not exist'); deepchecks.vision imports it only for the base "
        "class of SimpleClassificationDataset, which deepfix does not use",
        needed=lambda: True,
        edits=(
            SourceEdit(
                _SIMPLE_DATA,
                r"except ImportError as error:\n(\s*)raise ImportError\('torchvision is not "
                r"installed\. Please install torchvision>=0\.11\.3 '\n\s*'in order to use the "
                r"requested functionality\.'\) from error",
                "except Exception:  # deepfix: torchvision missing or broken\n"
                r"\1from torch.utils.data import Dataset as VisionDataset  # only a base class"
                "\n"
                r"\1# deepfix: SimpleClassificationDataset is never used by deepfix",
            ),
        ),
    ),
    Patch(
        name="numpy2_aliases_vision",
        answers="numpy 2.0 (NEP 52) removed np.NINF (Image Property Outliers)",
        needed=_compat._numpy_lacks_aliases,
        edits=(
            SourceEdit(f"{_VISION}.checks.data_integrity.abstract_property_outliers",
                       r"\bnp\.NINF\b", "-np.inf"),
        ),
    ),
)

#: modules imported while the hook is installed (plus every edited module)
_MODULES = (_VISION, f"{_VISION}.checks", f"{_VISION}.suites")

_lock = threading.Lock()
_applied = False


def apply() -> None:
    """Patch and import ``deepchecks.vision``. Idempotent and thread-safe.

    Must run before anything else imports ``deepchecks.vision`` (source edits cannot
    reach modules already loaded; a warning says so).
    """
    global _applied
    if _applied:
        return
    with _lock:
        if _applied:
            return
        os.environ.setdefault("DISABLE_DEEPCHECKS_ANONYMOUS_TELEMETRY", "1")
        _compat.apply()
        needed = _compat.install(
            IMAGE_PATCHES, _MODULES, log=logger,
            preloaded_warning="deepchecks compat: %s already imported before the image checks "
            "patched it; the vision checks may fail",
        )
        _applied = True
        logger.debug("deepchecks compat (vision): applied %s", [p.name for p in needed])
