"""The only code that writes to MLflow: artifacts, tags and metrics of a deepfix run.

Everything is prepared first (rendered, serialised into a temporary folder) and then
written in two calls, artifacts and then one ``log_batch`` of tags and metrics, so an
error while preparing leaves the run without any deepfix output rather than half of it.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from mlflow.entities import Metric, RunTag
from mlflow.tracking import MlflowClient

from mlflow_deepfix import __version__
from mlflow_deepfix.schemas import SEVERITY_ORDER, ArtifactData, Diagnosis, Finding

ARTIFACT_DIR = "deepfix"
FINDINGS_FILE = "findings.json"
ARTIFACT_DATA_FILE = "artifact_data.json"
REPORT_FILE = "report.html"


def contract_metrics(diagnosis: Diagnosis) -> dict[str, float]:
    """The metrics of CONTRACT.md section 3 (also returned in ``result.metrics``)."""
    metrics: dict[str, float] = {"deepfix_findings_count": float(len(diagnosis.findings))}
    for severity in SEVERITY_ORDER[:4]:
        metrics[f"deepfix_{severity}_count"] = float(
            sum(f.severity == severity for f in diagnosis.findings)
        )
    checks = diagnosis.checks
    metrics["deepfix_checks_run"] = float(sum(c.outcome != "skipped" for c in checks))
    metrics["deepfix_checks_not_passed"] = float(sum(c.outcome == "not_passed" for c in checks))
    metrics["deepfix_checks_errored"] = float(sum(c.outcome == "errored" for c in checks))
    metrics["deepfix_duration_seconds"] = round(diagnosis.timings.total_seconds, 3)
    return metrics


#: the lowest severity that ``deepfix.top_finding`` names; below it the tag says "none"
TOP_FINDING_MIN_SEVERITY = "medium"


def top_finding_tag(findings: Sequence[Finding]) -> str:
    """Category of the best-ranked finding at or above ``medium``, or ``"none"``.

    A deliberate refinement of CONTRACT.md ("category id of the rank-1 finding"): the
    registry's version list cuts tag values to a few characters, and a version that
    passed with only a ``low`` finding tagged ``outliers`` read as a problem there.
    """
    limit = SEVERITY_ORDER.index(TOP_FINDING_MIN_SEVERITY)
    serious = [f for f in findings if SEVERITY_ORDER.index(f.severity) <= limit]
    return min(serious, key=lambda f: f.rank).category if serious else "none"


def summary_tag(status: str, findings: Sequence[Finding]) -> str:
    """``deepfix.summary``: status and the two counts that block, e.g.
    ``pass · 0 critical · 0 high``; short enough for the registry's version list."""
    critical = sum(f.severity == "critical" for f in findings)
    high = sum(f.severity == "high" for f in findings)
    return f"{status} · {critical} critical · {high} high"


def verdict_tags(status: str, findings: Sequence[Finding]) -> dict[str, str]:
    """``deepfix.top_finding`` and ``deepfix.summary`` for ``status``: the same two tags
    on the evaluation run (its own status) and, from the gate, on the model version (the
    gate's status, ``fail`` when it refused the model)."""
    return {"deepfix.top_finding": top_finding_tag(findings),
            "deepfix.summary": summary_tag(status, findings)}


def contract_tags(diagnosis: Diagnosis) -> dict[str, str]:
    """The tags of CONTRACT.md section 3, plus ``deepfix.summary`` (README)."""
    verdict = verdict_tags(diagnosis.status, diagnosis.findings)
    return {
        "deepfix.status": diagnosis.status,
        "deepfix.top_finding": verdict["deepfix.top_finding"],
        "deepfix.provider": diagnosis.provider,
        "deepfix.version": __version__,
        "deepfix.summary": verdict["deepfix.summary"],
    }


def findings_json(diagnosis: Diagnosis) -> str:
    return json.dumps(diagnosis.model_dump(mode="json"), indent=2, sort_keys=False) + "\n"


def artifact_data_json(artifact: ArtifactData) -> str:
    return json.dumps(artifact.model_dump(mode="json"), indent=2, sort_keys=False) + "\n"


def write_outputs(
    run_id: str,
    *,
    diagnosis: Diagnosis,
    artifact: ArtifactData,
    report_html: str,
    metrics: dict[str, float],
    tags: dict[str, str],
    client: MlflowClient | None = None,
) -> dict[str, str]:
    """Write findings.json, artifact_data.json, report.html, tags and metrics to the run.

    ``metrics``/``tags`` are the full sets to log (see :func:`contract_metrics` and
    :func:`contract_tags`). Returns the artifact URIs keyed by file name (for MLflow's
    ``EvaluationResult``).
    """
    client = client or MlflowClient()
    with tempfile.TemporaryDirectory(prefix="deepfix-") as tmp:
        folder = Path(tmp) / ARTIFACT_DIR
        folder.mkdir()
        (folder / FINDINGS_FILE).write_text(findings_json(diagnosis), encoding="utf-8")
        (folder / ARTIFACT_DATA_FILE).write_text(artifact_data_json(artifact), encoding="utf-8")
        (folder / REPORT_FILE).write_text(report_html, encoding="utf-8")
        client.log_artifacts(run_id, str(folder), artifact_path=ARTIFACT_DIR)
    now = int(time.time() * 1000)
    client.log_batch(
        run_id,
        metrics=[Metric(k, float(v), now, 0) for k, v in metrics.items()],
        tags=[RunTag(k, str(v)) for k, v in tags.items()],
    )
    root = client.get_run(run_id).info.artifact_uri.rstrip("/")
    return {
        name: f"{root}/{ARTIFACT_DIR}/{name}"
        for name in (FINDINGS_FILE, ARTIFACT_DATA_FILE, REPORT_FILE)
    }


def write_report(run_id: str, report_html: str, *, client: MlflowClient | None = None) -> str:
    """Log ``report_html`` as ``deepfix/report.html`` of the run, replacing the one the
    evaluator wrote (used by the promotion gate to add its sections). Returns its URI."""
    client = client or MlflowClient()
    with tempfile.TemporaryDirectory(prefix="deepfix-") as tmp:
        path = Path(tmp) / REPORT_FILE
        path.write_text(report_html, encoding="utf-8")
        client.log_artifact(run_id, str(path), artifact_path=ARTIFACT_DIR)
    root = client.get_run(run_id).info.artifact_uri.rstrip("/")
    return f"{root}/{ARTIFACT_DIR}/{REPORT_FILE}"
