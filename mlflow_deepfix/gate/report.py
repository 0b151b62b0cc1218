"""The gate's sections of report.html ("Promotion gate", "Fix verification")."""

from __future__ import annotations

import logging
from typing import Any

from mlflow_deepfix.gate.result import ModelRef
from mlflow_deepfix.gate.thresholds import blocking_severities
from mlflow_deepfix.gate.verification import FixVerification
from mlflow_deepfix.schemas import ArtifactData, Diagnosis

logger = logging.getLogger(__name__)


def _rewrite_report(
    run_id: str,
    diagnosis: Diagnosis,
    artifact: ArtifactData,
    passed: bool,
    fail_on: str,
    thresholds: dict[str, str],
    failures: list[str],
    verification: FixVerification | None,
    baseline: ModelRef | None,
) -> None:
    """Log report.html again with a "Promotion gate" (and "Fix verification") section.

    The report is re-rendered from findings.json/artifact_data.json. An LLM provider's
    extra report sections are not kept in those files, so for an LLM diagnosis without
    a baseline the evaluator's report is left as it is (the verdict is in the tags).
    """
    from mlflow_deepfix.mlflow_io import write_report
    from mlflow_deepfix.report import render_report

    if diagnosis.provider != "rules" and verification is None:
        return
    if diagnosis.provider != "rules":
        logger.warning(
            "deepfix gate: report.html re-rendered with the fix verification; the %s "
            "provider's extra report sections are not kept",
            diagnosis.provider,
        )
    gate_rows: list[tuple[str, Any]] = [
        ("verdict", "passed" if passed else "refused"),
        ("blocking severities", ", ".join(blocking_severities(fail_on))),
    ]
    gate_rows.extend((f"threshold {name}", text) for name, text in thresholds.items())
    gate_rows.extend(("not met", line) for line in failures)
    sections = [{"title": "Promotion gate", "rows": gate_rows}]
    if verification is not None:
        rows = list(verification.rows())
        if baseline is not None:
            rows.insert(0, ("baseline", baseline.describe()))
        sections.append({"title": "Fix verification", "rows": rows})
    html = render_report(diagnosis, artifact, context={"sections": sections})
    write_report(run_id, html)
