"""Step 4 of the flow: :class:`ArtifactData` -> :class:`Diagnosis`.

Runs the deterministic rules engine (``deepfix_agents``), grounds its findings in the
knowledge base, applies the optional LLM layer (which falls back to the rules
engine's findings on any failure) and computes the contract status.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future
from typing import Any

from mlflow_deepfix.config import DeepfixConfig
from mlflow_deepfix.schemas import ArtifactData, CheckSummary, Diagnosis, compute_status

logger = logging.getLogger(__name__)


def diagnose(
    artifact: ArtifactData, config: DeepfixConfig, *, kb: Future | None = None
) -> tuple[Diagnosis, dict[str, Any]]:
    """Return the diagnosis and extras for the output step (metrics, tags, report context).

    ``kb`` is the knowledge base being opened in the background
    (:func:`deepfix_agents.grounding.prefetch_kb`), if the caller started it early.
    """
    from deepfix_agents import diagnose_with_rules
    from deepfix_agents.grounding import ground

    result = diagnose_with_rules(artifact, calibration=config.calibration)
    notes: list[str] = []
    if result.analyzer_errors:
        notes.append(
            "Some analyzers failed and were skipped: "
            + "; ".join(f"{k} ({v[:120]})" for k, v in sorted(result.analyzer_errors.items()))
        )
    findings, kb_note = ground(result.findings, config.kb, kb)
    if kb_note:
        notes.append(kb_note)
    extra: dict[str, Any] = {"metrics": {}, "tags": {}, "report_context": {"footer": []}}
    provider = "rules"
    if config.provider != "rules":
        from deepfix_agents.llm import review_with_llm

        outcome = review_with_llm(artifact, findings, config)
        findings, provider = outcome.findings, outcome.provider
        notes.extend(outcome.notes)
        extra["metrics"].update(outcome.metrics)
        extra["report_context"]["footer"].extend(outcome.footer)
        extra["report_context"].setdefault("sections", []).extend(outcome.sections)
    diagnosis = Diagnosis(
        status=compute_status(findings, config.fail_on),
        modality=artifact.modality,
        task=artifact.task,
        findings=findings,
        checks=[
            CheckSummary(name=c.name, suite=c.suite, outcome=c.outcome, value=c.value)
            for c in artifact.checks
        ],
        provider=provider,
        notes=notes,
        analyzer_errors=result.analyzer_errors,
    )
    return diagnosis, extra
