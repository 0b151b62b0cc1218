"""The architecture contracts of ``pyproject.toml`` (``[tool.importlinter]``) hold, and bite.

The real tree must pass ``lint-imports``. For every contract, a small fixture tree in
``tmp_path`` with the same package names gets a deliberate violation derived from the
contract's own definition (read from ``pyproject.toml``), and import-linter must report
it; so removing or weakening a contract (dropping a layer, a forbidden module, an
ancestor) makes one of these tests fail.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: import-linter depends on tomli there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"
LINT = "from importlinter.cli import lint_imports_command; lint_imports_command()"


def _linter_toml() -> str:
    """The ``[tool.importlinter]`` part of pyproject.toml, verbatim."""
    lines = PYPROJECT.read_text(encoding="utf-8").splitlines()
    kept, inside = [], False
    for line in lines:
        if line.startswith("["):
            inside = line.strip() in ("[tool.importlinter]", "[[tool.importlinter.contracts]]")
        if inside:
            kept.append(line)
    return "\n".join(kept) + "\n"


SETTINGS = tomllib.loads(_linter_toml())["tool"]["importlinter"]
CONTRACTS = {contract["id"]: contract for contract in SETTINGS["contracts"]}


def _layer_modules(layer: str) -> list[str]:
    return [name.strip() for name in layer.replace(":", "|").split("|")]


def _ignored() -> list[tuple[str, str]]:
    """Every ``ignore_imports`` entry as (importer, imported)."""
    return [
        tuple(part.strip() for part in line.split("->"))
        for contract in SETTINGS["contracts"]
        for line in contract.get("ignore_imports", [])
    ]


def _named_modules() -> set[str]:
    """Every module a contract names (layers, sources, forbidden, ancestors, ignores)."""
    names: set[str] = set(SETTINGS["root_packages"])
    for contract in SETTINGS["contracts"]:
        for layer in contract.get("layers", []):
            names.update(_layer_modules(layer))
        names.update(contract.get("source_modules", []))
        names.update(contract.get("forbidden_modules", []))
        names.update(contract.get("ancestors", []))
    for importer, imported in _ignored():
        names.update((importer, imported))
    return {name for name in names if "*" not in name}


class Tree:
    """A fixture tree holding every module the contracts name, each importing nothing
    but the imports the contracts explicitly ignore (they must match something)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.imports: dict[str, list[str]] = {}
        for name in sorted(_named_modules()):
            self.add(name)
        for importer, imported in _ignored():
            self.add_import(importer, imported)

    def _path(self, module: str) -> Path:
        return self.root.joinpath(*module.split(".")) / "__init__.py"

    def add(self, module: str) -> None:
        parts = module.split(".")
        for depth in range(1, len(parts) + 1):
            self.imports.setdefault(".".join(parts[:depth]), [])

    def add_import(self, importer: str, imported: str) -> None:
        self.add(importer)
        self.add(imported)
        self.imports[importer].append(imported)

    def lint(self, contract_id: str) -> subprocess.CompletedProcess:
        for module, imported in self.imports.items():
            path = self._path(module)  # every module a package: simplest valid layout
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(f"import {name}\n" for name in imported), encoding="utf-8")
        config = self.root / "pyproject.toml"
        config.write_text(_linter_toml(), encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": str(self.root)}
        return subprocess.run(
            [sys.executable, "-c", LINT, str(config), "--contract", contract_id, "--no-cache"],
            check=False,
            cwd=self.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )


def _broken(result: subprocess.CompletedProcess) -> bool:
    return result.returncode == 1 and "BROKEN" in result.stdout


def _missing(expected: list[str], result: subprocess.CompletedProcess) -> list[str]:
    """Expected report lines absent from the output (which wraps long lines)."""
    output = " ".join(result.stdout.split())
    return [line for line in expected if line not in output]


def test_the_real_tree_keeps_every_contract():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "agents")])}
    result = subprocess.run(
        [sys.executable, "-c", LINT, str(PYPROJECT), "--no-cache"],
        check=False,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in result.stdout


def test_the_contracts_cover_the_issue():
    """The contracts the architecture promises exist (a deleted one fails here)."""
    types = {cid: contract["type"] for cid, contract in CONTRACTS.items()}
    assert types == {
        "flow-layers": "layers",
        "no-circles": "acyclic_siblings",
        "image-features-leaf": "forbidden",
        "agents-no-deepchecks": "forbidden",
        "kb-no-checks": "forbidden",
        "checks-no-agents": "forbidden",
        "schemas-leaf": "forbidden",
        "intervals-leaf": "forbidden",
    }
    assert SETTINGS["include_external_packages"] is True
    layers = [_layer_modules(layer) for layer in CONTRACTS["flow-layers"]["layers"]]
    order = [module for layer in layers for module in layer]
    # the flow, read from the top: output above diagnosis above testing above inputs
    # above config; the entry points above everything
    flow = [
        "mlflow_deepfix.evaluator",
        "mlflow_deepfix.report",
        "mlflow_deepfix.diagnosis",
        "mlflow_deepfix.testing",
        "mlflow_deepfix.checks",
        "mlflow_deepfix.inputs",
        "mlflow_deepfix.config",
        "mlflow_deepfix.schemas",
    ]
    assert [order.index(m) for m in flow] == sorted(order.index(m) for m in flow)
    assert {"mlflow_deepfix.cli", "mlflow_deepfix.gate", "mlflow_deepfix.bench"} <= set(layers[0])
    forbidden = {cid: set(c.get("forbidden_modules", [])) for cid, c in CONTRACTS.items()}
    assert {"mlflow_deepfix.checks", "mlflow_deepfix.mlflow_io", "deepchecks"} <= forbidden[
        "agents-no-deepchecks"
    ]
    assert "mlflow_deepfix.checks" in forbidden["kb-no-checks"]
    assert "deepfix_agents" in forbidden["checks-no-agents"]
    assert {"mlflow_deepfix.*", "deepfix_agents", "kb_builder"} <= forbidden["schemas-leaf"]
    # the statistics both the testing step and the rules use import nothing of ours either
    assert {"mlflow_deepfix.*", "deepfix_agents", "kb_builder"} <= forbidden["intervals-leaf"]


def test_the_fixture_tree_without_violations_keeps_every_contract(tmp_path):
    tree = Tree(tmp_path)
    for contract_id in CONTRACTS:
        result = tree.lint(contract_id)
        assert result.returncode == 0, (contract_id, result.stdout + result.stderr)


def test_layers_contract_reports_a_lower_layer_importing_a_higher_one(tmp_path):
    contract = CONTRACTS["flow-layers"]
    layers = [_layer_modules(layer) for layer in contract["layers"]]
    tree = Tree(tmp_path)
    expected = []
    for upper, lower in itertools.pairwise(layers):
        # every module of the lower layer imports one of the layer above it
        for module in lower:
            tree.add_import(module, upper[0])
            expected.append(f"{module} is not allowed to import {upper[0]}")
    for layer in layers:  # independent siblings (`|`) must not import each other
        if "|" in " | ".join(layer) and len(layer) > 1:
            tree.add_import(layer[0], layer[1])
            expected.append(f"{layer[0]} is not allowed to import {layer[1]}")
    result = tree.lint("flow-layers")
    assert _broken(result), result.stdout + result.stderr
    assert not _missing(expected, result), result.stdout


def test_acyclic_contract_reports_a_circle_in_each_ancestor(tmp_path):
    tree = Tree(tmp_path)
    for ancestor in CONTRACTS["no-circles"]["ancestors"]:
        tree.add_import(f"{ancestor}.circle_a", f"{ancestor}.circle_b")
        tree.add_import(f"{ancestor}.circle_b", f"{ancestor}.circle_a")
    result = tree.lint("no-circles")
    assert _broken(result), result.stdout + result.stderr
    for ancestor in CONTRACTS["no-circles"]["ancestors"]:
        assert not _missing([f"No cycles are allowed in {ancestor}."], result), result.stdout


@pytest.mark.parametrize(
    "contract_id",
    [cid for cid, contract in CONTRACTS.items() if contract["type"] == "forbidden"],
)
def test_forbidden_contract_reports_each_forbidden_import(tmp_path, contract_id):
    contract = CONTRACTS[contract_id]
    tree = Tree(tmp_path)
    expected = []
    for source in contract["source_modules"]:
        for forbidden in contract["forbidden_modules"]:
            if forbidden.endswith(".*"):  # any module in that package: a new one here
                target = reported = forbidden[:-2] + ".violation_target"
            elif forbidden in SETTINGS["root_packages"]:  # a submodule of our package
                target, reported = f"{forbidden}.violation_target", forbidden
            else:  # an external package
                target = reported = forbidden
            tree.add_import(source, target)
            expected.append(f"{source} is not allowed to import {reported}")
    result = tree.lint(contract_id)
    assert _broken(result), result.stdout + result.stderr
    assert not _missing(expected, result), result.stdout


RULES_DIR = ROOT / "agents" / "deepfix_agents" / "rules"


def _rule_modules_imported(path: Path) -> set[str]:
    """The public rule modules (``deepfix_agents.rules.<name>`` without a leading
    underscore) that ``path`` imports anywhere, at module level or inside a function."""
    import ast

    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
    found = set()
    for parts in (name.split(".") for name in names):
        if parts[:2] == ["deepfix_agents", "rules"] and len(parts) > 2 and not parts[2].startswith("_"):
            found.add(parts[2])
    return found


def test_private_rule_helpers_import_no_rule():
    """Readings several rules share (the baseline ladder, sampling noise, a target's
    shift, ...) live in private ``rules/_*.py`` modules so that a rule can use them
    without importing another rule; a helper that imported a rule back would bring
    the cross-rule imports (and the lazy imports that dodge their circles) back."""
    helpers = sorted(p for p in RULES_DIR.glob("_*.py") if p.name != "__init__.py")
    assert any(p.name == "_ladder.py" for p in helpers)
    offenders = {p.name: sorted(_rule_modules_imported(p)) for p in helpers}
    assert {name: mods for name, mods in offenders.items() if mods} == {}


def test_the_import_scan_sees_a_rule_imported_inside_a_function(tmp_path):
    """The scan above reads imports inside functions too (the lazy kind)."""
    probe = tmp_path / "_probe.py"
    probe.write_text(
        "def f():\n    from deepfix_agents.rules.underfitting import at_chance\n"
        "from deepfix_agents.rules._noise import sampling_noise\n",
        encoding="utf-8",
    )
    assert _rule_modules_imported(probe) == {"underfitting"}
