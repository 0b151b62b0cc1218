"""Public imports survive the layout change: old module names are deprecation aliases of
the same module objects, ``mlflow_deepfix.gate`` stays callable, and the entry point,
the CLI and the bench package resolve where users have them."""

from __future__ import annotations

import importlib
import sys

import pytest

import mlflow_deepfix
from mlflow_deepfix import _moved


@pytest.mark.parametrize(("old", "new"), sorted(_moved.MOVED.items()))
def test_old_module_name_warns_and_is_the_same_module(old, new):
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {new}"):
        aliased = importlib.import_module(old)
    assert aliased is importlib.import_module(new)
    assert aliased.__spec__.name == new  # the real module keeps its own spec


def test_scenarios_submodules_are_aliased_too_so_the_registry_is_loaded_once():
    sys.modules.pop("mlflow_deepfix.scenarios._base", None)
    with pytest.warns(DeprecationWarning, match="mlflow_deepfix.scenarios._base moved"):
        old_base = importlib.import_module("mlflow_deepfix.scenarios._base")
    from mlflow_deepfix.bench.scenarios import _base, all_scenarios

    assert old_base is _base
    sys.modules.pop("mlflow_deepfix.scenarios", None)
    with pytest.warns(DeprecationWarning):
        old_package = importlib.import_module("mlflow_deepfix.scenarios")
    assert old_package.all_scenarios is all_scenarios


def test_unmoved_names_are_not_aliased():
    assert _moved.new_name("mlflow_deepfix.schemas") is None
    assert _moved.new_name("mlflow_deepfix.scenariosx") is None
    assert _moved.new_name("mlflow_deepfix.stats.labels") == "mlflow_deepfix.testing.stats.labels"


def test_gate_is_both_a_callable_module_and_the_function():
    from mlflow_deepfix.gate import GateResult, gate, load_table  # noqa: F401

    module = mlflow_deepfix.gate
    assert callable(module) and module.__name__ == "mlflow_deepfix.gate"
    assert module.__signature__.parameters["model_uri"]
    with pytest.raises(mlflow_deepfix.DeepfixInputError, match="targets must be"):
        module("models:/m/1", None, targets="")  # refused before anything is loaded


def test_entry_point_cli_and_bench_resolve():
    from importlib.metadata import entry_points

    (evaluator,) = [e for e in entry_points(group="mlflow.model_evaluator") if e.name == "deepfix"]
    assert evaluator.value == "mlflow_deepfix.evaluator:DeepfixEvaluator"
    assert evaluator.load().__name__ == "DeepfixEvaluator"

    from mlflow_deepfix.cli import build_parser

    commands = build_parser()._subparsers._group_actions[0].choices
    assert {"bench", "kb", "gate"} <= set(commands)

    from mlflow_deepfix import bench
    from mlflow_deepfix.bench import runner

    assert bench.run_bench is runner.run_bench
