"""The gate's thresholds: MLflow :class:`~mlflow.models.MetricThreshold` objects over
the deepfix metrics (severity counts, fix-verification rates), checked with
:func:`mlflow.validate_evaluation_results`."""

from __future__ import annotations

from typing import Any

from mlflow_deepfix.gate.verification import FixVerification
from mlflow_deepfix.schemas import SEVERITY_ORDER, severity_rank


def blocking_severities(fail_on: str) -> tuple[str, ...]:
    """Severities that block promotion: ``fail_on`` and everything more urgent."""
    return SEVERITY_ORDER[: severity_rank(fail_on) + 1]


def build_thresholds(
    fail_on: str,
    *,
    max_negative_flip_rate: float | None = None,
    min_repair_rate: float | None = None,
) -> dict[str, Any]:
    """The gate's thresholds as :class:`mlflow.models.MetricThreshold` objects."""
    from mlflow.models import MetricThreshold

    thresholds = {
        f"deepfix_{severity}_count": MetricThreshold(threshold=0, greater_is_better=False)
        for severity in blocking_severities(fail_on)
    }
    if max_negative_flip_rate is not None:
        thresholds["deepfix_negative_flip_rate"] = MetricThreshold(
            threshold=float(max_negative_flip_rate), greater_is_better=False
        )
    if min_repair_rate is not None:
        thresholds["deepfix_repair_rate"] = MetricThreshold(
            threshold=float(min_repair_rate), greater_is_better=True
        )
    return thresholds


def describe_threshold(threshold: Any) -> str:
    """``"<= 0"`` / ``">= 0.5"``: a MetricThreshold as the comparison it makes."""
    return f"{'>=' if threshold.greater_is_better else '<='} {threshold.threshold:g}"


def check_thresholds(thresholds: dict[str, Any], metrics: dict[str, float]) -> list[str]:
    """Run :func:`mlflow.validate_evaluation_results`; return the failure lines."""
    import mlflow
    from mlflow.models.evaluation import EvaluationResult
    from mlflow.models.evaluation.validation import ModelValidationFailedException

    try:
        mlflow.validate_evaluation_results(
            thresholds, EvaluationResult(metrics=dict(metrics), artifacts={})
        )
    except ModelValidationFailedException as error:
        return [line for line in str(error.message).splitlines() if line.strip()]
    return []


def _drop_undefined_rates(thresholds: dict[str, Any], verification: FixVerification) -> list[str]:
    """An undefined rate cannot fail its threshold: the repair rate when the baseline
    made no mistake (nothing to repair), the NFR when it got no row right (nothing to
    break). Remove those thresholds and say so."""
    notes = []
    undefined = (
        ("deepfix_repair_rate", verification.repair_rate, "the baseline made no mistake"),
        (
            "deepfix_negative_flip_rate",
            verification.negative_flip_rate,
            "the baseline got no row right",
        ),
    )
    for metric, rate, why in undefined:
        if rate is None and metric in thresholds:
            del thresholds[metric]
            notes.append(f"{metric} threshold not checked: the rate is undefined ({why}).")
    return notes
