"""The reasoner's last step (:func:`deepfix_agents.reasoner.causes_first`): at the same
severity an upstream cause is ranked ahead of a downstream symptom it explains but was
too weak to absorb; a cause measured harmless, a symptom of a different severity, or two
findings that explain each other keep the order of the scores."""

from __future__ import annotations

from deepfix_agents.reasoner import causes_first, harmless
from deepfix_agents.scoring import rank
from deepfix_agents.signals import Signal

from mlflow_deepfix.schemas import CATEGORY_LAYERS, Evidence, Finding


def _finding(category: str, severity: str, confidence: float) -> Finding:
    return Finding(
        category=category,
        layer=CATEGORY_LAYERS[category],
        title=f"{category} finding",
        severity=severity,
        confidence=confidence,
        evidence=[Evidence(source="dataset", detail=category)],
        explanation="-",
    )


def _order(findings: list[Finding], **kw) -> list[str]:
    return [f.category for f in causes_first(findings, **kw)]


def test_upstream_cause_ranks_ahead_of_the_symptom_it_explains_at_equal_severity():
    # a random split of time-stamped rows (low, 0.9) and a train/test gap (low, 0.94):
    # the scores alone put the gap first by 0.04 of confidence
    findings = [
        _finding("temporal_leakage", "low", 0.9),
        _finding("overfitting", "low", 0.94),
    ]
    assert [f.category for f in rank(findings)] == ["overfitting", "temporal_leakage"]
    ordered = causes_first(findings)
    assert [f.category for f in ordered] == ["temporal_leakage", "overfitting"]
    assert [f.rank for f in ordered] == [1, 2]


def test_the_symptom_steps_behind_its_cause_and_unrelated_findings_keep_their_place():
    """A weak segment (low, 0.9) explained by conflicting labels (low, 0.6), with shared
    rows (low, 0.85) between them in the score order: the symptom moves down to just
    behind its cause; the shared rows, which neither explains, keep their rank ahead of
    the cause instead of being pushed down by it."""
    findings = [
        _finding("weak_segment", "low", 0.9),
        _finding("train_test_overlap", "low", 0.85),
        _finding("conflicting_labels", "low", 0.6),
    ]
    assert [f.category for f in rank(findings)] == [
        "weak_segment", "train_test_overlap", "conflicting_labels"]
    assert _order(findings) == ["train_test_overlap", "conflicting_labels", "weak_segment"]


def test_a_more_severe_symptom_keeps_its_place():
    findings = [
        _finding("temporal_leakage", "low", 0.9),
        _finding("overfitting", "medium", 0.94),
    ]
    assert _order(findings) == ["overfitting", "temporal_leakage"]


def test_a_cause_measured_harmless_does_not_move_up():
    findings = [
        _finding("outliers", "low", 0.9),
        _finding("poor_calibration", "low", 0.92),
    ]
    assert _order(findings) == ["outliers", "poor_calibration"]
    assert _order(findings, harmless={"outliers"}) == ["poor_calibration", "outliers"]


def test_findings_that_explain_each_other_or_share_a_layer_keep_the_score_order():
    # feature drift and prediction drift explain each other (same layer, both ways)
    findings = [
        _finding("feature_drift", "low", 0.8),
        _finding("prediction_drift", "low", 0.95),
    ]
    assert _order(findings) == ["prediction_drift", "feature_drift"]
    # an unrelated finding between them is not reordered either
    findings = [
        _finding("conflicting_labels", "low", 0.6),
        _finding("fragile_predictions", "low", 0.8),
    ]
    assert _order(findings) == ["fragile_predictions", "conflicting_labels"]


def test_harmless_reads_the_rules_own_measurement():
    def signal(harmful: bool) -> Signal:
        return Signal(
            category="outliers",
            source="intervention",
            score=0.3,
            confidence=0.8,
            evidence=Evidence(source="intervention", detail="outlier rows vs the rest"),
            facts={"harmful": harmful},
        )

    assert harmless([signal(False)]) == {"outliers"}
    assert harmless([signal(True)]) == set()


# ---------------------------------------- outliers explain only a weak segment in their tail


def _outlier_artifact(weakest: str | None):
    from tests.test_rules_data_split import artifact, failed, num

    columns = [num("size", outlier_fraction=0.05, q50=4.3, q99=5000.0, max=6000.0)] + [
        num(f"x{i}") for i in range(4)
    ]
    checks = []
    if weakest is not None:
        check = failed("Weak Segments Performance", suite="model_evaluation")
        checks.append(check.model_copy(update={"details": {"weakest_segment": weakest}}))
    return artifact(columns, checks=checks)


def test_outliers_explain_a_weak_segment_in_the_tail_of_their_column():
    from deepfix_agents.rules import RULES

    outliers = RULES.get("outliers")()
    tail = _outlier_artifact("size in (120.5, inf)")
    assert "weak_segment" in outliers.explains_for(tail)
    low_tail = _outlier_artifact("x1 in (-inf, 0.3) and size in (-inf, 1.0)")
    assert "weak_segment" in outliers.explains_for(low_tail)


def test_outliers_do_not_explain_a_weak_segment_in_the_bulk_or_on_other_columns():
    from deepfix_agents.rules import RULES

    outliers = RULES.get("outliers")()
    bulk = _outlier_artifact("size in (4.65, 5.15)")
    assert "weak_segment" not in outliers.explains_for(bulk)
    other = _outlier_artifact("x1 in (0.5, inf)")
    assert "weak_segment" not in outliers.explains_for(other)
    # a segment that is not read as numeric intervals (or none at all): as before
    assert "weak_segment" in outliers.explains_for(_outlier_artifact("color in ['red']"))
    assert "weak_segment" in outliers.explains_for(_outlier_artifact(None))


# ------------------------------------ localised fragility explains the train/test gap it causes


def _fragile_artifact(flip_rates: list[float]):
    from tests.test_rules_data_split import artifact

    from mlflow_deepfix.schemas import FeatureFragility, RobustnessSummary

    robustness = RobustnessSummary(
        n_rows=300,
        metric="accuracy",
        flip_rate=0.3,
        score_drop=0.2,
        features=[
            FeatureFragility(
                feature=f"x{i}", kind="numeric", perturbation="noise of 5% of its spread",
                flip_rate=rate,
            )
            for i, rate in enumerate(flip_rates)
        ],
    )
    return artifact().model_copy(update={"robustness": robustness})


def test_fragility_in_one_input_absorbs_the_overfitting_it_causes():
    from deepfix_agents.reasoner import explain_symptoms

    art = _fragile_artifact([0.45, 0.02, 0.01, 0.0, 0.0])
    findings = [
        _finding("overfitting", "high", 0.88),
        _finding("fragile_predictions", "medium", 0.6),
    ]
    named = {"fragile_predictions": ("x0",)}
    out = explain_symptoms(findings, art, named)
    assert [f.category for f in out] == ["fragile_predictions"]
    assert out[0].severity == "high"  # the consequence the user suffers


def test_fragility_everywhere_does_not_absorb_overfitting():
    from deepfix_agents.reasoner import explain_symptoms

    art = _fragile_artifact([0.45, 0.4, 0.3, 0.3, 0.2])
    findings = [
        _finding("overfitting", "high", 0.88),
        _finding("fragile_predictions", "medium", 0.6),
    ]
    out = explain_symptoms(findings, art, {})
    # the model is rough everywhere: overfitting is the cause and absorbs the fragility
    assert [f.category for f in out] == ["overfitting"]
