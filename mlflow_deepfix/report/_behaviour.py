"""The report's behaviour section: one part per probe (robustness, confidence by
slice, group disparities, spurious correlations), each with a small inline chart.

Like the rest of the view model, every decision (what to show, in which order, how
many rows) is taken here; the template only lays out the values, escaped.
"""

from __future__ import annotations

from typing import Any

from mlflow_deepfix.report import _charts
from mlflow_deepfix.report._format import fmt_percent
from mlflow_deepfix.schemas import ArtifactData

TOP_N = 8


def behaviour_view(data: ArtifactData) -> dict[str, Any]:
    """Ready-to-print parts; ``None`` for a probe that did not run."""
    parts = {
        "robustness": _robustness(data),
        "confidence": _confidence(data),
        "fairness": _fairness(data),
        "spurious": _spurious(data),
    }
    parts["any"] = any(parts.values())
    return parts


def _robustness(data: ArtifactData) -> dict[str, Any] | None:
    summary = data.robustness
    if summary is None:
        return None
    rows = [(f.feature, [f.flip_rate]) for f in summary.features[:TOP_N]]
    chart = _charts.bar_chart(
        "share of predictions that flip when one input is perturbed",
        rows,
        [("flip rate", "bar-drift")],
        value_text=fmt_percent,
    )
    return {
        "summary": summary,
        "chart": chart,
        "table": [
            (f.feature, f.perturbation, fmt_percent(f.flip_rate), f.score_drop)
            for f in summary.features[:TOP_N]
        ],
        "not_perturbed": sorted(summary.not_perturbed.items())[:TOP_N],
        "n_not_perturbed": len(summary.not_perturbed),
    }


def _confidence(data: ArtifactData) -> dict[str, Any] | None:
    summary = data.confidence
    if summary is None:
        return None
    slices = summary.slices[:TOP_N]
    # what the model claims on each slice (one minus its mean confidence there) next to
    # what it achieves: the comparison the slice search makes
    rows = [
        (s.description, [1.0 - s.mean_confidence, s.rate])
        for s in slices
        if s.kind == "overconfident"
    ]
    chart = _charts.bar_chart(
        "share of confident predictions that are wrong, per slice: claimed vs observed",
        rows,
        [("claimed (1 - mean confidence)", "bar-baseline"), ("observed", "bar-drift")],
        value_text=fmt_percent,
    )
    return {"summary": summary, "chart": chart, "slices": slices}


def _fairness(data: ArtifactData) -> dict[str, Any] | None:
    summary = data.fairness
    if summary is None:
        return None
    features = []
    for item in summary.features:
        rows = [
            (g.group, [g.tpr if g.tpr is not None else g.accuracy])
            for g in item.groups[:TOP_N]
        ]
        metric = "true positive rate" if any(g.tpr is not None for g in item.groups) else "accuracy"
        chart = _charts.bar_chart(
            f"{metric} per group of {item.feature}",
            rows,
            [(metric, "bar-importance")],
            value_text=fmt_percent,
        )
        features.append({"item": item, "chart": chart, "metric": metric})
    return {"summary": summary, "features": features}


def _spurious(data: ArtifactData) -> dict[str, Any] | None:
    summary = data.spurious
    if summary is None:
        return None
    shown = summary.features[:TOP_N]
    chart = _charts.bar_chart(
        "association with the label: training vs evaluation",
        [(f.feature, [f.association_train, f.association_test]) for f in shown],
        [("training", "bar-baseline"), ("evaluation", "bar-model")],
    )
    return {"summary": summary, "chart": chart, "features": shown}
