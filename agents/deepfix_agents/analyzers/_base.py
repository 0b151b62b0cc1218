"""Analyzers: one per artifact source, run in parallel by the coordinator.

An analyzer turns one part of the artifact data into :class:`Signal` objects. The
built-in analyzers are thin: each asks every registered rule for the signals of its
source (``Rule.detect_<source>``), so detection logic stays next to each rule's
documentation. Third-party analyzers may compute signals any way they like.
"""

from __future__ import annotations

import logging
from typing import ClassVar

from deepfix_agents.signals import Signal
from mlflow_deepfix.schemas import ArtifactData

logger = logging.getLogger(__name__)


class AnalyzerError(RuntimeError):
    """Some rules of an analyzer raised; the signals of the others are kept."""

    def __init__(self, message: str, signals: list[Signal]):
        super().__init__(message)
        self.signals = signals


class Analyzer:
    """Base class: ``id``, ``description`` and ``analyze(artifact) -> list[Signal]``."""

    id: ClassVar[str]
    description: ClassVar[str]

    def analyze(self, artifact: ArtifactData) -> list[Signal]:
        raise NotImplementedError


class RuleSourceAnalyzer(Analyzer):
    """Collects the signals that every registered rule detects from one ``source``."""

    source: ClassVar[str]

    def analyze(self, artifact: ArtifactData) -> list[Signal]:
        from deepfix_agents.rules import RULES

        signals: list[Signal] = []
        failures: list[str] = []
        for rule_cls in RULES:
            try:
                signals.extend(rule_cls().detect(self.source, artifact))
            except Exception as error:  # noqa: BLE001 - one rule must not sink the analyzer
                logger.warning("rule %s failed in analyzer %s: %r", rule_cls.id, self.id, error)
                failures.append(f"{rule_cls.id}: {type(error).__name__}: {error}")
        if failures:
            raise AnalyzerError("; ".join(failures), signals)
        return signals


def validate_analyzer(cls: type) -> None:
    from deepfix_agents._registry import RegistrationError

    for field in ("id", "description"):
        if not isinstance(getattr(cls, field, None), str) or not getattr(cls, field).strip():
            raise RegistrationError(f"analyzer {cls.__name__}: class attribute {field!r} missing")
    if cls.analyze is Analyzer.analyze:
        raise RegistrationError(f"analyzer {cls.id!r} does not implement analyze()")
