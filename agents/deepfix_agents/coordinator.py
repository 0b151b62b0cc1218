"""Runs the analyzers in parallel and hands their signals to the reasoner.

A bounded thread pool (the analyzers are light: they read artifact data, the heavy
work happened in the testing step). An analyzer that raises is recorded by name and
the others go on; signals are put back in registry order so the result does not
depend on thread scheduling.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from deepfix_agents.analyzers import ANALYZERS, AnalyzerError
from deepfix_agents.reasoner import reason
from deepfix_agents.signals import Signal
from mlflow_deepfix.schemas import ArtifactData, Finding

logger = logging.getLogger(__name__)

MAX_WORKERS = 4


@dataclass
class RulesDiagnosis:
    findings: list[Finding]
    signals: list[Signal]
    analyzer_errors: dict[str, str] = field(default_factory=dict)


def run_analyzers(artifact: ArtifactData) -> tuple[list[Signal], dict[str, str]]:
    analyzers = [cls() for cls in ANALYZERS]
    results: dict[str, list[Signal]] = {}
    errors: dict[str, str] = {}
    with ThreadPoolExecutor(max_workers=MAX_WORKERS, thread_name_prefix="deepfix-analyzer") as pool:
        futures = {a.id: pool.submit(a.analyze, artifact) for a in analyzers}
        for analyzer_id, future in futures.items():
            try:
                results[analyzer_id] = list(future.result())
            except AnalyzerError as error:
                results[analyzer_id] = error.signals
                errors[analyzer_id] = str(error)
            except Exception as error:  # noqa: BLE001 - recorded, the others go on
                logger.warning("analyzer %s failed: %r", analyzer_id, error)
                results[analyzer_id] = []
                errors[analyzer_id] = f"{type(error).__name__}: {error}"
    signals = [s for a in analyzers for s in results.get(a.id, [])]
    return signals, errors


def diagnose_with_rules(artifact: ArtifactData, *, calibration: bool = False) -> RulesDiagnosis:
    """The deterministic, offline engine: analyzers -> reasoner.

    ``calibration=True`` lets the learned calibration (:mod:`deepfix_agents.calibration`)
    set the findings' confidence, severity and order; their evidence and explanations
    stay the rules'. The evaluator turns it on unless the user's config says
    ``calibration: false``; this function defaults to the rules alone, which is what the
    corpus fits the calibration on. It applies to tabular artifacts only: the corpus it
    was fitted on is tabular, and on text or image data its category priors are an
    extrapolation (a colour cast's feature drift, measured on image properties, was
    demoted to low by a calibration that never saw one), so those keep the rules' own.
    """
    signals, errors = run_analyzers(artifact)
    findings = reason(signals, artifact)
    if calibration and artifact.modality == "tabular":
        from deepfix_agents.calibration import calibrate_findings

        findings = calibrate_findings(findings, signals)
    return RulesDiagnosis(findings=findings, signals=signals, analyzer_errors=errors)
