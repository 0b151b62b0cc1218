"""Behaviour probes end to end: real ``mlflow.models.evaluate`` runs on a sqlite store,
real Deepchecks, the shipped scenarios of the four 0.2.0 categories."""

from __future__ import annotations

import mlflow
import pytest

from mlflow_deepfix import DeepfixInputError
from mlflow_deepfix.bench.scenarios import get_scenario


def _evaluate(data, **config):
    with mlflow.start_run() as run:
        info = mlflow.sklearn.log_model(
            data.model, name="model", serialization_format="cloudpickle",
            input_example=data.train[data.feature_names].head(3), pip_requirements=["scikit-learn"],
        )
        mlflow.models.evaluate(
            info.model_uri, data.test, targets=data.target, model_type=data.model_type,
            evaluators=["deepfix"],
            evaluator_config={"deepfix": {"train_data": data.train, "kb": False, **data.config,
                                          **config}},
        )
    load = mlflow.artifacts.load_dict
    findings = load(f"runs:/{run.info.run_id}/deepfix/findings.json")
    artifact = load(f"runs:/{run.info.run_id}/deepfix/artifact_data.json")
    report = mlflow.artifacts.load_text(f"runs:/{run.info.run_id}/deepfix/report.html")
    return findings, artifact, report


def test_group_disparity_with_a_column_the_model_never_reads(tracking_uri):
    data = get_scenario("group_disparity.classification_underrepresented_group").build(0)
    findings, artifact, report = _evaluate(data)
    top = findings["findings"][0]
    assert top["category"] == "group_disparity" and top["severity"] in ("medium", "high", "critical")
    (item,) = artifact["fairness"]["features"]
    assert item["feature"] == "group" and item["model_sees_it"] is False
    # the column was kept aside: the model (fitted without it) never crashed on it
    assert artifact["runtime_failures"] == []
    assert item["equalized_odds_low"] > 0
    assert "Group disparities" in report and "<svg" in report


def test_without_sensitive_features_nothing_about_groups_is_reported(tracking_uri):
    data = get_scenario("group_disparity.classification_underrepresented_group").build(0)
    config = {k: v for k, v in data.config.items() if k != "sensitive_features"}
    data = type(data)(data.train, data.test.drop(columns=["group"]), data.target, data.model,
                      data.model_type, config)
    findings, artifact, report = _evaluate(data)
    assert artifact["fairness"] is None
    assert all(f["category"] != "group_disparity" for f in findings["findings"])
    assert "Group disparities" not in report


def test_a_sensitive_column_missing_from_data_is_a_clear_error(tracking_uri):
    data = get_scenario("group_disparity.classification_underrepresented_group").build(0)
    with pytest.raises(DeepfixInputError, match="sensitive_features.*'gender'"):
        _evaluate(data, sensitive_features=["gender"])


def test_spurious_correlation_end_to_end(tracking_uri):
    data = get_scenario("spurious_correlation.diabetes_lab_batch_ridge").build(0)
    findings, artifact, report = _evaluate(data)
    top = findings["findings"][0]
    assert top["category"] == "spurious_correlation" and top["layer"] == "split"
    assert "'batch_reading'" in top["title"]
    assert artifact["spurious"]["features"][0]["feature"] == "batch_reading"
    assert "Feature–label relations" in report


def test_fragile_predictions_end_to_end(tracking_uri):
    data = get_scenario("fragile_predictions.loan_branch_code_as_number").build(0)
    findings, artifact, _ = _evaluate(data)
    top = findings["findings"][0]
    assert top["category"] == "fragile_predictions" and "'branch_code'" in top["title"]
    assert artifact["robustness"]["n_rows"] == 500
    assert artifact["robustness"]["features"][0]["feature"] == "branch_code"


def test_overconfident_slice_end_to_end_and_deterministic(tracking_uri):
    data = get_scenario("overconfident_slice.crm_boosted_stumps_partner_veterans").build(0)
    first, artifact, report = _evaluate(data)
    again, _, _ = _evaluate(data)
    top = first["findings"][0]
    assert top["category"] == "overconfident_slice" and "channel = partner and tenure_years >" in top["title"]
    assert artifact["confidence"]["slices"][0]["kind"] == "overconfident"
    assert "Confidence by slice" in report and "claimed vs observed" in report

    def key(doc):
        return [(f["category"], f["severity"], f["title"], f["confidence"]) for f in doc["findings"]]

    assert key(first) == key(again)
