"""How impact scores become severities, and how findings are ranked.

Documented and testable on purpose (DeepFix ranks with LLM prose; we rank with numbers):

* **Severity** comes from the strongest signal's ``score`` through fixed bands:
  ``>= 0.8`` critical, ``>= 0.6`` high, ``>= 0.4`` medium, ``>= 0.2`` low, else info.
  Info-level hypotheses are not reported as findings.
* **Confidence** combines the best signal of each independent source (dataset
  statistics, Deepchecks, model metadata, baselines, runtime) with a noisy-OR:
  ``1 - prod(1 - c_source)``. Two sources that agree make a finding surer than either.
* **Rank** sorts by ``SEVERITY_WEIGHT[severity] * confidence`` (descending), then by
  severity, then by layer along the debugging ladder (data before split before model:
  upstream causes explain downstream symptoms), then by category id, so equal inputs
  always give the same order.
"""

from __future__ import annotations

from collections.abc import Iterable

from mlflow_deepfix.schemas import CATEGORIES, CATEGORY_LAYERS, Finding, severity_rank

SEVERITY_BANDS: tuple[tuple[float, str], ...] = (
    (0.8, "critical"),
    (0.6, "high"),
    (0.4, "medium"),
    (0.2, "low"),
)
SEVERITY_WEIGHT = {"critical": 1.0, "high": 0.75, "medium": 0.5, "low": 0.25, "info": 0.1}
LAYER_ORDER = {"data": 0, "split": 1, "model": 2}


def severity_for(score: float) -> str:
    for threshold, severity in SEVERITY_BANDS:
        if score >= threshold:
            return severity
    return "info"


def combine_confidence(confidences: Iterable[float]) -> float:
    remaining = 1.0
    for confidence in confidences:
        remaining *= 1.0 - min(max(confidence, 0.0), 1.0)
    return round(1.0 - remaining, 4)


def rank_key(finding: Finding) -> tuple:
    return (
        -round(SEVERITY_WEIGHT[finding.severity] * finding.confidence, 6),
        severity_rank(finding.severity),
        LAYER_ORDER[CATEGORY_LAYERS[finding.category]],
        CATEGORIES.index(finding.category),
        finding.title,
    )


def rank(findings: list[Finding]) -> list[Finding]:
    """Sort findings by :func:`rank_key` and number them 1..n without gaps."""
    ordered = sorted(findings, key=rank_key)
    return [f.model_copy(update={"rank": i}) for i, f in enumerate(ordered, start=1)]
