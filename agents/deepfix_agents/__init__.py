"""deepfix_agents: the diagnosis engine of mlflow-deepfix.

Analyzers (one per artifact source) run in parallel and emit signals; rules (one per
contract category, each with its documentation) score them; the cross-artifact
reasoner folds symptoms into root causes and ranks them. Everything here reads typed
artifact data only (``mlflow_deepfix.schemas``), never raw rows, MLflow or Deepchecks.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from deepfix_agents.analyzers import ANALYZERS, Analyzer, register_analyzer
    from deepfix_agents.coordinator import RulesDiagnosis, diagnose_with_rules, run_analyzers
    from deepfix_agents.reasoner import reason
    from deepfix_agents.rules import RULES, Rule, register_rule
    from deepfix_agents.signals import Signal

#: public name -> module that defines it; imported on first use (PEP 562), so that
#: ``mlflow_deepfix.config`` can import ``deepfix_agents.llm._config`` without loading
#: the rules engine, and ``import mlflow_deepfix`` stays as fast as it was
_EXPORTS = {
    "ANALYZERS": "deepfix_agents.analyzers",
    "Analyzer": "deepfix_agents.analyzers",
    "register_analyzer": "deepfix_agents.analyzers",
    "RulesDiagnosis": "deepfix_agents.coordinator",
    "diagnose_with_rules": "deepfix_agents.coordinator",
    "run_analyzers": "deepfix_agents.coordinator",
    "reason": "deepfix_agents.reasoner",
    "RULES": "deepfix_agents.rules",
    "Rule": "deepfix_agents.rules",
    "register_rule": "deepfix_agents.rules",
    "Signal": "deepfix_agents.signals",
}


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'deepfix_agents' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "ANALYZERS",
    "RULES",
    "Analyzer",
    "Rule",
    "RulesDiagnosis",
    "Signal",
    "diagnose_with_rules",
    "reason",
    "register_analyzer",
    "register_rule",
    "run_analyzers",
]
