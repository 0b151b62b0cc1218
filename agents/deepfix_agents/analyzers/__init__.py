"""Analyzer registry. Third-party analyzers register through the entry point group
``deepfix.analyzers`` (a class subclassing :class:`Analyzer`)."""

from __future__ import annotations

from deepfix_agents._registry import Registry
from deepfix_agents.analyzers._base import Analyzer, AnalyzerError, RuleSourceAnalyzer, validate_analyzer

ANALYZERS: Registry = Registry("analyzer", Analyzer, "deepfix.analyzers", validate_analyzer)
register_analyzer = ANALYZERS.register

from deepfix_agents.analyzers import builtin  # noqa: E402,F401  (registers the built-ins)

__all__ = ["ANALYZERS", "Analyzer", "AnalyzerError", "RuleSourceAnalyzer", "register_analyzer"]
