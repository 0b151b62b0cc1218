"""Pins ../shared/CONTRACT.md: config keys, category ids, metric and tag names, the
findings.json shape, the status rule and the entry point. A failure here means a
breaking change to the public contract."""

from __future__ import annotations

from importlib.metadata import entry_points

import pandas as pd
import pytest

from mlflow_deepfix.config import DeepfixConfig, parse_config
from mlflow_deepfix.errors import DeepfixConfigError
from mlflow_deepfix.mlflow_io import contract_metrics, contract_tags
from mlflow_deepfix.schemas import (
    CATEGORY_LAYERS,
    Diagnosis,
    Evidence,
    Finding,
    Reference,
    compute_status,
)

CONFIG_KEYS = [
    "train_data", "eval_data", "suites", "modality", "text_col", "image_col", "cat_features", "index_col",
    "datetime_col", "sample_size", "seed", "provider", "llm", "kb", "fail_on", "cache", "privacy",
    "sensitive_features",
    # added since the contract (issue 12 A): measured harm, on by default
    "interventions",
    # added since the contract (issue 12 E): the learned calibration switch, on by default
    "calibration",
]
CATEGORIES = {
    "data": ["missing_values", "data_type_issues", "duplicate_samples", "conflicting_labels",
             "target_leakage", "identifier_leakage", "constant_feature", "outliers",
             "class_imbalance"],
    "split": ["train_test_overlap", "label_drift", "feature_drift", "prediction_drift",
              "unseen_categories", "temporal_leakage", "split_size_mismatch", "schema_mismatch",
              # added since the contract (version 0.2.0)
              "spurious_correlation"],
    "model": ["overfitting", "underfitting", "degenerate_predictions", "poor_calibration",
              "decision_threshold", "weak_segment", "preprocessing_mismatch", "wrong_task_type",
              "unused_features",
              # added since the contract (version 0.2.0)
              "fragile_predictions", "overconfident_slice", "group_disparity",
              "training_divergence", "training_stalled"],
}
METRICS = [
    "deepfix_findings_count", "deepfix_critical_count", "deepfix_high_count",
    "deepfix_medium_count", "deepfix_low_count", "deepfix_checks_run",
    "deepfix_checks_not_passed", "deepfix_checks_errored", "deepfix_duration_seconds",
]
#: CONTRACT.md section 3, then deepfix.summary (added in issue 17, README "Tags")
TAGS = ["deepfix.status", "deepfix.top_finding", "deepfix.provider", "deepfix.version",
        "deepfix.summary"]


def test_config_keys_and_defaults():
    assert list(DeepfixConfig.model_fields) == CONFIG_KEYS
    config = parse_config({})
    assert config.suites == ("data_integrity", "train_test_validation", "model_evaluation")
    assert config.seed == 0 and config.provider == "rules" and config.fail_on == "critical"
    assert config.train_data is None and config.kb is None
    assert config.cache is True
    assert config.privacy == "default"
    assert config.interventions is True
    assert config.calibration is True
    assert parse_config({"calibration": False}).calibration is False


def test_eval_data_is_a_table_and_anything_else_is_refused_naming_it():
    """CONTRACT.md section 2: eval_data (issue 13 A) takes the full evaluation table; a
    value of another type is refused naming the key, the type received and what is
    accepted (Spark tables themselves are covered in tests/test_spark.py)."""
    frame = pd.DataFrame({"x": [1, 2], "y": [0, 1]})
    assert parse_config({"eval_data": frame}).eval_data is frame
    assert parse_config({}).eval_data is None
    with pytest.raises(DeepfixConfigError) as raised:
        parse_config({"eval_data": [1, 2, 3]})
    message = str(raised.value)
    assert "eval_data" in message and "[1, 2, 3]" in message
    assert "Spark DataFrame" in message and "SparkDataset" in message
    assert "unknown key" not in message


def test_llm_options_are_those_of_the_contract():
    config = parse_config({"llm": {"base_url": "http://127.0.0.1:1", "model": "m",
                                   "api_key_env": "KEY", "n": 3, "timeout": 5, "temperature": 0}})
    assert config.llm.n == 3 and config.llm.api_key_env == "KEY"
    with pytest.raises(DeepfixConfigError, match="api_key"):
        parse_config({"llm": {"api_key": "sk-secret"}})


def test_kb_accepts_false_path_url_and_collection():
    assert parse_config({"kb": False}).kb is False
    kb = parse_config({"kb": {"path": "/tmp/kb", "collection": "c"}}).kb
    assert kb.path == "/tmp/kb" and kb.collection == "c"
    assert parse_config({"kb": {"url": "http://127.0.0.1:6333"}}).kb.url


@pytest.mark.parametrize(
    ("raw", "named"),
    [
        ({"nope": 1}, "'nope'"),
        ({"seed": "x"}, "seed"),
        ({"fail_on": "info"}, "fail_on"),
        ({"modality": "audio"}, "modality"),
        ({"suites": []}, "suites"),
        ({"cat_features": "a"}, "cat_features"),
        ({"provider": "not-a-provider"}, "provider"),
        ({"train_data": [1, 2]}, "train_data"),
        ({"sensitive_features": "sex"}, "sensitive_features"),
        ({"sensitive_features": []}, "sensitive_features"),
    ],
)
def test_bad_config_names_the_key(raw, named):
    with pytest.raises(DeepfixConfigError) as error:
        parse_config(raw)
    assert named in str(error.value)


def test_category_ids_and_layers():
    expected = {c: layer for layer, ids in CATEGORIES.items() for c in ids}
    assert CATEGORY_LAYERS == expected
    assert list(CATEGORY_LAYERS) == [c for ids in CATEGORIES.values() for c in ids]


def _finding(category, severity, rank=1):
    return Finding(
        rank=rank, category=category, layer=CATEGORY_LAYERS[category], title="t",
        severity=severity, confidence=0.5, explanation="e", fixes=["f"],
        evidence=[Evidence(source="dataset", detail="d", value=0.1)],
        references=[Reference(title="r", source="doc")],
    )


def test_findings_json_shape():
    diagnosis = Diagnosis(status="fail", modality="tabular", task="binary_classification",
                          findings=[_finding("train_test_overlap", "critical")])
    doc = diagnosis.model_dump(mode="json")
    assert {"schema_version", "status", "modality", "task", "findings", "checks", "timings"} <= set(doc)
    assert doc["schema_version"] == "1"
    assert set(doc["findings"][0]) >= {
        "rank", "category", "layer", "title", "severity", "confidence", "evidence",
        "explanation", "fixes", "references",
    }
    assert set(doc["findings"][0]["evidence"][0]) == {"source", "check", "detail", "value"}
    assert set(doc["timings"]) == {"checks_seconds", "diagnosis_seconds", "total_seconds"}


def test_unknown_category_and_out_of_range_confidence_are_rejected():
    with pytest.raises(ValueError, match="unknown category"):
        Finding(category="bad_category", layer="data", title="t", severity="high",
                confidence=0.5, explanation="e")
    with pytest.raises(ValueError):
        Finding(category="outliers", layer="data", title="t", severity="low", confidence=1.5,
                explanation="e")


@pytest.mark.parametrize(
    ("severities", "fail_on", "status"),
    [
        ([], "critical", "pass"),
        (["low", "info"], "critical", "pass"),
        (["medium"], "critical", "warn"),
        (["high"], "critical", "warn"),
        (["critical"], "critical", "fail"),
        (["high"], "high", "fail"),
        (["medium"], "high", "warn"),
        (["low"], "low", "fail"),
        (["info"], "low", "pass"),
    ],
)
def test_status_rule(severities, fail_on, status):
    findings = [_finding("outliers", s, i + 1) for i, s in enumerate(severities)]
    assert compute_status(findings, fail_on) == status


def test_metric_and_tag_names():
    diagnosis = Diagnosis(status="warn", modality="tabular", task="regression",
                          findings=[_finding("outliers", "medium")])
    assert list(contract_metrics(diagnosis)) == METRICS
    tags = contract_tags(diagnosis)
    assert list(tags) == TAGS
    assert tags["deepfix.top_finding"] == "outliers"
    assert tags["deepfix.summary"] == "warn · 0 critical · 0 high"
    empty = Diagnosis(status="pass", modality="tabular", task="regression")
    assert contract_tags(empty)["deepfix.top_finding"] == "none"
    assert contract_tags(empty)["deepfix.summary"] == "pass · 0 critical · 0 high"


@pytest.mark.parametrize(
    ("severities", "status", "top", "summary"),
    [
        # a deliberate refinement of CONTRACT.md's "category of the rank-1 finding":
        # only a finding at or above medium is named, so a passing version with a low
        # finding does not read as a problem in the registry
        (["low", "info"], "pass", "none", "pass · 0 critical · 0 high"),
        (["medium", "low"], "warn", "outliers", "warn · 0 critical · 0 high"),
        (["high", "critical", "critical"], "fail", "outliers", "fail · 2 critical · 1 high"),
        (["info", "low", "high"], "warn", "feature_drift", "warn · 0 critical · 1 high"),
        ([], "pass", "none", "pass · 0 critical · 0 high"),
    ],
)
def test_top_finding_names_the_best_ranked_finding_at_or_above_medium(
        severities, status, top, summary):
    categories = ["outliers", "missing_values", "feature_drift"]
    findings = [_finding(categories[i], s, i + 1) for i, s in enumerate(severities)]
    diagnosis = Diagnosis(status=status, modality="tabular", task="regression",
                          findings=findings)
    tags = contract_tags(diagnosis)
    assert tags["deepfix.top_finding"] == top
    assert tags["deepfix.summary"] == summary


def test_entry_point_registers_the_evaluator():
    from mlflow.models.evaluation.evaluator_registry import _model_evaluation_registry

    names = {e.name: e.value for e in entry_points(group="mlflow.model_evaluator")}
    assert names.get("deepfix") == "mlflow_deepfix.evaluator:DeepfixEvaluator"
    _model_evaluation_registry.register_entrypoints()
    evaluator = _model_evaluation_registry.get_evaluator("deepfix")
    assert evaluator.can_evaluate(model_type="classifier", evaluator_config={})
    assert evaluator.can_evaluate(model_type="regressor", evaluator_config={})
    assert not evaluator.can_evaluate(model_type="text", evaluator_config={})


def test_no_top_level_agents_module_is_shipped():
    import importlib.util

    import deepfix_agents

    assert deepfix_agents.__name__ == "deepfix_agents"
    spec = importlib.util.find_spec("agents")
    # A namespace portion from a source checkout's cwd is not a shipped module; a regular
    # package named `agents` must never come from this project.
    assert spec is None or spec.origin is None or "deepfix" not in str(spec.origin)
