"""The diagnosis engine's framework: the common contract over every registered rule and
analyzer, registration validation, scoring, symptom folding and resilience."""

from __future__ import annotations

import pytest

from deepfix_agents import ANALYZERS, RULES, Analyzer, Rule, reason, run_analyzers
from deepfix_agents._registry import RegistrationError
from deepfix_agents.rules._base import interp
from deepfix_agents.scoring import combine_confidence, rank, severity_for
from deepfix_agents.signals import Signal
from mlflow_deepfix.schemas import (
    CATEGORIES,
    ArtifactData,
    DatasetSummary,
    Evidence,
    SplitStats,
)


def _artifact(**kwargs) -> ArtifactData:
    dataset = DatasetSummary(target="y", test=SplitStats(name="test", n_rows=100, n_columns=3))
    return ArtifactData(task="binary_classification", dataset=dataset, **kwargs)


def test_every_contract_category_has_exactly_one_rule():
    assert sorted(RULES.ids()) == sorted(CATEGORIES)


@pytest.mark.parametrize("category", CATEGORIES)
def test_rule_documentation_is_complete(category):
    rule = RULES.get(category)
    for field in ("name", "detects", "why", "example", "severity_policy"):
        assert len(getattr(rule, field).strip()) >= 20, (category, field)
    assert rule.fixes and all(len(f) >= 20 for f in rule.fixes)
    assert rule.id not in rule.explains
    assert all(c in CATEGORIES for c in rule.explains)
    assert rule().layer in ("data", "split", "model")


@pytest.mark.parametrize("category", CATEGORIES)
def test_rules_are_silent_on_empty_artifact_data(category):
    artifact = _artifact()
    rule = RULES.get(category)()
    for source in ("dataset", "deepchecks", "model", "baseline", "runtime"):
        signals = rule.detect(source, artifact)
        assert all(s.category == category for s in signals)
        assert all(s.score < 0.4 for s in signals), (category, source, signals)


def test_registration_validates_rules():
    class NoDocs(Rule):
        id = "outliers"

        def detect_dataset(self, artifact):
            return []

    with pytest.raises(RegistrationError, match="documentation"):
        RULES.register(NoDocs)

    class UnknownCategory(Rule):
        id = "astrology"

    with pytest.raises(RegistrationError, match="not a contract category"):
        RULES.register(UnknownCategory)

    class Duplicate(RULES.get("outliers")):
        pass

    with pytest.raises(RegistrationError, match="already registered"):
        RULES.register(Duplicate)


def test_analyzer_registry_holds_the_builtins_and_validates():
    assert {"dataset", "deepchecks", "model", "baseline", "runtime"} <= set(ANALYZERS.ids())

    class Lazy(Analyzer):
        id = "lazy"
        description = "does nothing"

    with pytest.raises(RegistrationError, match="analyze"):
        ANALYZERS.register(Lazy)


def test_a_failing_analyzer_is_recorded_and_the_others_go_on():
    class Exploding(Analyzer):
        id = "exploding"
        description = "always raises"

        def analyze(self, artifact):
            raise RuntimeError("boom")

    ANALYZERS.register(Exploding)
    try:
        signals, errors = run_analyzers(_artifact())
    finally:
        ANALYZERS.unregister("exploding")
    assert errors == {"exploding": "RuntimeError: boom"}
    assert isinstance(signals, list)


def test_scoring_bands_and_confidence():
    assert [severity_for(s) for s in (0.85, 0.6, 0.45, 0.2, 0.1)] == [
        "critical", "high", "medium", "low", "info",
    ]
    assert combine_confidence([0.5, 0.5]) == pytest.approx(0.75)
    assert combine_confidence([]) == 0.0
    assert interp(0.5, ((0.0, 0.0), (1.0, 1.0))) == pytest.approx(0.5)
    assert interp(-1, ((0.0, 0.2), (1.0, 1.0))) == 0.2
    assert interp(5, ((0.0, 0.2), (1.0, 0.9))) == 0.9


def _signal(category, score, confidence=0.8, source="dataset", **facts):
    return Signal(
        category=category, source=source, score=score, confidence=confidence,
        evidence=Evidence(source=source, detail=f"{category} seen", value=score), facts=facts,
    )


def test_one_finding_per_root_cause_with_all_evidence():
    signals = [
        _signal("train_test_overlap", 0.9, share=0.4),
        _signal("train_test_overlap", 0.85, 0.7, source="deepchecks", share=0.4),
    ]
    findings = reason(signals, _artifact())
    assert [f.category for f in findings] == ["train_test_overlap"]
    assert len(findings[0].evidence) == 2
    assert findings[0].confidence == pytest.approx(combine_confidence([0.8, 0.7]))


def test_causes_absorb_their_symptoms():
    signals = [
        _signal("class_imbalance", 0.7, label="1", share=0.03),
        _signal("degenerate_predictions", 0.85, source="model", label="0", share=1.0),
    ]
    findings = reason(signals, _artifact())
    assert [f.category for f in findings] == ["class_imbalance"]
    top = findings[0]
    assert top.severity == "critical"  # takes the symptom's severity
    assert any("symptom (degenerate_predictions)" in e.detail for e in top.evidence)


def test_a_weak_cause_does_not_absorb():
    signals = [
        _signal("class_imbalance", 0.25, label="1", share=0.1),
        _signal("degenerate_predictions", 0.85, source="model", label="0", share=1.0),
    ]
    categories = [f.category for f in reason(signals, _artifact())]
    assert categories == ["degenerate_predictions", "class_imbalance"]


def test_info_level_hypotheses_are_not_reported():
    assert reason([_signal("outliers", 0.1)], _artifact()) == []


def test_ranking_is_by_severity_times_confidence_then_layer():
    signals = [
        _signal("unused_features", 0.3, 0.9, source="model"),
        _signal("missing_values", 0.65, 0.9, column="a", share=0.5),
        _signal("train_test_overlap", 0.9, 0.95, share=0.4),
        _signal("constant_feature", 0.3, 0.9),
    ]
    findings = reason(signals, _artifact())
    assert [f.category for f in findings][:2] == ["train_test_overlap", "missing_values"]
    assert [f.rank for f in findings] == list(range(1, len(findings) + 1))
    low = [f.category for f in findings if f.severity == "low"]
    assert low == ["constant_feature", "unused_features"]  # data layer before model layer
    assert rank(list(reversed(findings))) == findings
