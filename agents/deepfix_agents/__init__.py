"""deepfix_agents: the diagnosis engine of mlflow-deepfix.

Analyzers (one per artifact source) run in parallel and emit signals; rules (one per
contract category, each with its documentation) score them; the cross-artifact
reasoner folds symptoms into root causes and ranks them. Everything here reads typed
artifact data only (``mlflow_deepfix.schemas``), never raw rows, MLflow or Deepchecks.
"""

from __future__ import annotations

from deepfix_agents.analyzers import ANALYZERS, Analyzer, register_analyzer
from deepfix_agents.coordinator import RulesDiagnosis, diagnose_with_rules, run_analyzers
from deepfix_agents.reasoner import reason
from deepfix_agents.rules import RULES, Rule, register_rule
from deepfix_agents.signals import Signal

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
