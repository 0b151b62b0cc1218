"""A library of small ML workflows, each with one planted bug, for ``deepfix bench``.

Every scenario builds (deterministically, from a seed) a train split, a test split and
a fitted scikit-learn model, and names the contract category (CONTRACT.md section 5)
a good diagnosis should rank first; clean controls name none. The library covers
every category at least twice, with different datasets and magnitudes, so a score
on it says how well an engine (the rules, or an LLM provider) finds root causes.

    >>> from mlflow_deepfix.bench.scenarios import all_scenarios, get_scenario
    >>> data = get_scenario("train_test_overlap.breast_cancer_40pct").build(0)

Register your own with :func:`register` (or the :func:`scenario` decorator).
"""

from __future__ import annotations

from importlib import import_module

from mlflow_deepfix.bench.scenarios._base import (
    Scenario,
    ScenarioData,
    lookup,
    register,
    registered,
    scenario,
)

#: Importing these modules registers their scenarios, in this (stable) order: the
#: layers of CONTRACT.md section 5, then the clean controls, then the text and image
#: scenarios (each module with its own clean controls), the behaviour ones, and the
#: deep-learning ones (torch CNN, MiniLM; registered only when those are installed).
SCENARIO_MODULES = ("data", "split", "model", "clean", "text", "image", "behaviour", "deep")
for _module in SCENARIO_MODULES:
    import_module(f"mlflow_deepfix.bench.scenarios.{_module}")

__all__ = [
    "Scenario",
    "ScenarioData",
    "all_scenarios",
    "get_scenario",
    "register",
    "scenario",
    "select",
]


def all_scenarios() -> list[Scenario]:
    """Every registered scenario: the shipped ones in a stable order (data, split,
    model layers, clean controls, then text and image), followed by any registered later."""
    return registered()


def get_scenario(scenario_id: str) -> Scenario:
    """The scenario with id ``scenario_id``; ``KeyError`` naming close ids otherwise."""
    return lookup(scenario_id)


def select(patterns: list[str] | tuple[str, ...] | None = None) -> list[Scenario]:
    """Scenarios whose id contains any of ``patterns`` (all of them when empty).

    Raises ``ValueError`` when a pattern matches nothing, so that a typo on the command
    line does not silently benchmark an empty set.
    """
    scenarios = all_scenarios()
    if not patterns:
        return scenarios
    chosen = []
    for pattern in patterns:
        hits = [s for s in scenarios if pattern in s.id]
        if not hits:
            raise ValueError(
                f"scenario pattern {pattern!r} matches no scenario id; "
                f"ids look like {scenarios[0].id!r} (see `deepfix bench --list`)"
            )
        chosen.extend(h for h in hits if h not in chosen)
    return [s for s in scenarios if s in chosen]
