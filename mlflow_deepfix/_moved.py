"""Deprecation aliases for the modules that moved when the package was grouped by step
(``mlflow_deepfix.scenarios`` -> ``mlflow_deepfix.bench.scenarios``, ...).

Why an import hook rather than one stub file per old name: the old names keep working
for submodules too (``import mlflow_deepfix.scenarios._base``) and each resolves to the
*same* module object as the new name, so registries (scenarios, rules) are never loaded
twice. Importing an old name emits a :class:`DeprecationWarning` naming the new one.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from types import ModuleType

#: old module name -> new module name (submodules follow their package)
MOVED: dict[str, str] = {
    "mlflow_deepfix.scenarios": "mlflow_deepfix.bench.scenarios",
    "mlflow_deepfix.stats": "mlflow_deepfix.testing.stats",
    "mlflow_deepfix.baselines": "mlflow_deepfix.testing.baselines",
    "mlflow_deepfix.performance": "mlflow_deepfix.testing.performance",
    "mlflow_deepfix.model_info": "mlflow_deepfix.testing.model_info",
    "mlflow_deepfix.crash": "mlflow_deepfix.testing.crash",
    "mlflow_deepfix.content": "mlflow_deepfix.testing.content",
    "mlflow_deepfix.content_testing": "mlflow_deepfix.testing.content.runner",
    "mlflow_deepfix.text_features": "mlflow_deepfix.testing.content.text_features",
    "mlflow_deepfix.image_features": "mlflow_deepfix.testing.content.image_features",
    "mlflow_deepfix.model_adapter": "mlflow_deepfix.inputs.model_adapter",
    "mlflow_deepfix.verification": "mlflow_deepfix.gate.verification",
    "mlflow_deepfix.gate_cli": "mlflow_deepfix.gate.cli",
}


def new_name(old: str) -> str | None:
    """The module's current name, or None when ``old`` did not move."""
    for prefix, target in MOVED.items():
        if old == prefix or old.startswith(prefix + "."):
            return target + old[len(prefix) :]
    return None


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec) -> ModuleType:
        warnings.warn(
            f"{spec.name} moved to {self.target}; import it from there "
            "(the old name will be removed in a future release).",
            DeprecationWarning,
            stacklevel=2,
        )
        module = importlib.import_module(self.target)
        self._spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # the import system stamped the alias spec on the real module: put its own back
        module.__spec__ = self._spec


class _AliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        moved_to = new_name(fullname)
        if moved_to is None:
            return None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(moved_to))


def install() -> None:
    """Register the alias finder once, ahead of the path finders: a checkout that had
    the old layout keeps e.g. ``mlflow_deepfix/scenarios/__pycache__``, which the path
    finder would import as an empty namespace package."""
    if not any(isinstance(finder, _AliasFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _AliasFinder())
