"""The deepfix evaluations the gate runs through :func:`mlflow.models.evaluate`: the
candidate's, and the baseline's in a nested run for fix verification."""

from __future__ import annotations

import logging
from typing import Any

import pandas as pd

from mlflow_deepfix.gate.result import ModelRef
from mlflow_deepfix.gate.verification import FixVerification, verify_fix
from mlflow_deepfix.schemas import ArtifactData, Diagnosis

logger = logging.getLogger(__name__)


def _evaluate(model: Any, frame: pd.DataFrame, targets: str, model_type: str, config: dict) -> Any:
    import mlflow

    return mlflow.models.evaluate(
        model,
        frame,
        targets=targets,
        model_type=model_type,
        evaluators=["deepfix"],
        evaluator_config={"deepfix": config},
    )


def _outputs(result: Any) -> tuple[Diagnosis, ArtifactData]:
    """The diagnosis and artifact data that the deepfix evaluator returned."""
    diagnosis = Diagnosis.model_validate(result.artifacts["deepfix_findings"].content)
    artifact = ArtifactData.model_validate(result.artifacts["deepfix_artifact_data"].content)
    return diagnosis, artifact


def _verify_against_baseline(
    baseline: ModelRef,
    baseline_model: Any,
    candidate_diagnosis: Diagnosis,
    frame: pd.DataFrame,
    targets: str,
    model_type: str,
    config: dict,
    predictions: dict[str, Any],
    *,
    task: str,
    tolerance: float | None,
) -> tuple[FixVerification, str]:
    """Evaluate the baseline in a nested run (its findings are needed for the
    resolved/introduced comparison) and compare both models' predictions."""
    import mlflow

    with mlflow.start_run(
        run_name=f"deepfix-gate baseline {baseline.describe()}",
        nested=True,
        tags={"deepfix.gate.role": "baseline", "deepfix.gate.model_uri": baseline.uri},
    ) as baseline_run:
        logger.info("deepfix gate: evaluating baseline %s", baseline.describe())
        baseline_result = _evaluate(baseline_model, frame, targets, model_type, config)
    baseline_diagnosis, _ = _outputs(baseline_result)
    verification = verify_fix(
        frame[targets].to_numpy(),
        predictions["baseline"],
        predictions["candidate"],
        task=task,
        baseline_categories=[f.category for f in baseline_diagnosis.findings],
        candidate_categories=[f.category for f in candidate_diagnosis.findings],
        tolerance=tolerance,
    )
    return verification, baseline_run.info.run_id
