"""End to end through ``mlflow.models.evaluate`` with a real sqlite store and real
Deepchecks runs: the outputs of CONTRACT.md section 3, the acceptance cases of the
evaluator issue, and bad input."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import mlflow
import numpy as np
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from mlflow_deepfix import DeepfixConfigError, DeepfixInputError
from tests.conftest import log_model

CONTRACT_METRICS = {
    "deepfix_findings_count",
    "deepfix_critical_count",
    "deepfix_high_count",
    "deepfix_medium_count",
    "deepfix_low_count",
    "deepfix_checks_run",
    "deepfix_checks_not_passed",
    "deepfix_checks_errored",
    "deepfix_duration_seconds",
}
CONTRACT_TAGS = {"deepfix.status", "deepfix.top_finding", "deepfix.provider", "deepfix.version"}


def _forest(train):
    features = train.drop(columns=["label"])
    return RandomForestClassifier(n_estimators=30, random_state=0).fit(features, train["label"])


def _evaluate(model_uri, test, config, *, evaluate=None):
    evaluate = evaluate or mlflow.models.evaluate
    with mlflow.start_run() as run:
        result = evaluate(
            model_uri,
            test,
            targets="label",
            model_type="classifier",
            evaluators=["deepfix"],
            evaluator_config={"deepfix": config},
        )
    return run.info.run_id, result


def _deepfix_outputs(run_id):
    client = MlflowClient()
    run = client.get_run(run_id)
    artifacts = {a.path for a in client.list_artifacts(run_id, "deepfix")}
    tags = {k: v for k, v in run.data.tags.items() if k.startswith("deepfix.")}
    metrics = {k: v for k, v in run.data.metrics.items() if k.startswith("deepfix_")}
    return artifacts, tags, metrics


@pytest.fixture
def overlap_case(tracking_uri, breast_cancer_splits):
    train, test = breast_cancer_splits
    n_copied = int(0.4 * len(test))
    test = pd.concat(
        [test.iloc[: len(test) - n_copied], train.sample(n=n_copied, random_state=0)]
    ).reset_index(drop=True)
    model_uri = log_model(_forest(train), train.drop(columns=["label"]))
    return model_uri, train, test


def test_overlap_is_rank_one_and_outputs_follow_the_contract(overlap_case):
    model_uri, train, test = overlap_case
    run_id, result = _evaluate(model_uri, test, {"train_data": train})

    findings = result.artifacts["deepfix_findings"].content
    assert findings["findings"][0]["category"] == "train_test_overlap"
    top = findings["findings"][0]
    assert top["severity"] == "critical"
    assert "40%" in top["title"] or "39%" in top["title"] or "41%" in top["title"]
    assert any(e["check"] == "Train Test Samples Mix" for e in top["evidence"])
    assert [f["rank"] for f in findings["findings"]] == list(range(1, len(findings["findings"]) + 1))
    assert findings["status"] == "fail"

    artifacts, tags, metrics = _deepfix_outputs(run_id)
    assert artifacts == {
        "deepfix/findings.json",
        "deepfix/artifact_data.json",
        "deepfix/report.html",
    }
    assert CONTRACT_TAGS <= set(tags)
    assert tags["deepfix.status"] == "fail"
    assert tags["deepfix.top_finding"] == "train_test_overlap"
    assert tags["deepfix.provider"] == "rules"
    assert CONTRACT_METRICS <= set(metrics)
    assert CONTRACT_METRICS <= set(result.metrics)
    assert metrics["deepfix_critical_count"] >= 1
    assert metrics["deepfix_findings_count"] == len(findings["findings"])
    assert metrics["deepfix_checks_run"] > 10
    assert metrics["deepfix_checks_errored"] == 0

    stored = mlflow.artifacts.load_dict(f"runs:/{run_id}/deepfix/findings.json")
    assert stored["findings"][0]["category"] == "train_test_overlap"
    assert set(stored["timings"]) == {"checks_seconds", "diagnosis_seconds", "total_seconds"}
    html = mlflow.artifacts.load_text(f"runs:/{run_id}/deepfix/report.html")
    assert "train_test_overlap" in html and "<script src" not in html
    artifact_data = mlflow.artifacts.load_dict(f"runs:/{run_id}/deepfix/artifact_data.json")
    assert artifact_data["dataset"]["comparison"]["overlap_fraction"] == pytest.approx(0.4, abs=0.02)


def test_clean_split_has_no_finding_above_low(tracking_uri, breast_cancer_splits):
    train, test = breast_cancer_splits
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500))
    model.fit(train.drop(columns=["label"]), train["label"])
    model_uri = log_model(model, train.drop(columns=["label"]))
    run_id, result = _evaluate(model_uri, test, {"train_data": train})
    findings = result.artifacts["deepfix_findings"].content
    severe = [f for f in findings["findings"] if f["severity"] not in ("low", "info")]
    assert severe == [], severe
    assert findings["status"] == "pass"
    assert result.metrics["deepfix_checks_errored"] == 0


def test_deprecated_mlflow_evaluate_and_combined_evaluators(overlap_case):
    model_uri, train, test = overlap_case
    with mlflow.start_run():
        result = mlflow.evaluate(
            model_uri,
            test,
            targets="label",
            model_type="classifier",
            evaluators=["default", "deepfix"],
            evaluator_config={"deepfix": {"train_data": train, "suites": ["train_test_validation"]}},
        )
    assert "accuracy_score" in result.metrics  # the default evaluator ran
    assert result.metrics["deepfix_findings_count"] >= 1
    assert result.artifacts["deepfix_findings"].content["findings"][0]["category"] == (
        "train_test_overlap"
    )


def test_without_train_data_train_test_checks_are_skipped(tracking_uri, breast_cancer_splits):
    train, test = breast_cancer_splits
    model_uri = log_model(_forest(train), train.drop(columns=["label"]))
    run_id, result = _evaluate(model_uri, test, {"suites": ["train_test_validation"]})
    findings = result.artifacts["deepfix_findings"].content
    assert findings["checks"], "checks are listed even when skipped"
    assert all(c["outcome"] == "skipped" for c in findings["checks"])
    assert any("no training data" in n.lower() for n in findings["notes"] + _notes(run_id))
    html = mlflow.artifacts.load_text(f"runs:/{run_id}/deepfix/report.html")
    assert "no training data" in html.lower()


def _notes(run_id):
    return mlflow.artifacts.load_dict(f"runs:/{run_id}/deepfix/artifact_data.json")["notes"]


def test_training_data_is_found_through_run_lineage(tracking_uri, breast_cancer_splits, tmp_path):
    train, test = breast_cancer_splits
    path = tmp_path / "train.parquet"
    train.to_parquet(path)
    features = train.drop(columns=["label"])
    with mlflow.start_run():
        dataset = mlflow.data.from_pandas(train, source=str(path), targets="label", name="train")
        mlflow.log_input(dataset, context="training")
        info = mlflow.sklearn.log_model(
            _forest(train), name="model", input_example=features.head(3),
            serialization_format="cloudpickle", pip_requirements=["scikit-learn"],
        )
    run_id, result = _evaluate(info.model_uri, test, {"suites": ["train_test_validation"]})
    notes = _notes(run_id)
    assert any("logged on run" in n for n in notes), notes
    checks = result.artifacts["deepfix_findings"].content["checks"]
    assert any(c["outcome"] != "skipped" for c in checks)


def _no_deepfix_output(run_id):
    artifacts, tags, metrics = _deepfix_outputs(run_id)
    return not artifacts and not tags and not metrics


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"trian_data": None}, "unknown key 'trian_data'"),
        ({"fail_on": "severe"}, "fail_on"),
        ({"suites": ["everything"]}, "suites"),
        ({"sample_size": "many"}, "sample_size"),
        ({"datetime_col": "when"}, "'when' is not a column"),
        ({"modality": "image"}, "needs image_col='<column>'"),
        ({"text_col": "mean radius", "image_col": "mean area"}, "one modality per call"),
        ({"modality": "tabular", "text_col": "mean radius"}, "contradicts text_col"),
    ],
)
def test_bad_config_is_rejected_before_any_output(overlap_case, config, message):
    model_uri, train, test = overlap_case
    with mlflow.start_run() as run, pytest.raises((DeepfixConfigError, DeepfixInputError)) as error:
        mlflow.models.evaluate(
            model_uri, test, targets="label", model_type="classifier",
            evaluators=["deepfix"], evaluator_config={"deepfix": {"train_data": train, **config}},
        )
    assert message in str(error.value)
    assert _no_deepfix_output(run.info.run_id)


def test_train_data_without_target_column_is_a_clear_error(overlap_case):
    model_uri, train, test = overlap_case
    with mlflow.start_run() as run, pytest.raises(DeepfixInputError) as error:
        mlflow.models.evaluate(
            model_uri, test, targets="label", model_type="classifier", evaluators=["deepfix"],
            evaluator_config={"deepfix": {"train_data": train.drop(columns=["label"])}},
        )
    assert "no target column 'label'" in str(error.value)
    assert _no_deepfix_output(run.info.run_id)


def test_empty_train_frame_is_a_clear_error(overlap_case):
    model_uri, train, test = overlap_case
    with mlflow.start_run(), pytest.raises(DeepfixInputError, match="empty"):
        mlflow.models.evaluate(
            model_uri, test, targets="label", model_type="classifier", evaluators=["deepfix"],
            evaluator_config={"deepfix": {"train_data": train.iloc[:0]}},
        )


def test_all_nan_column_becomes_a_missing_values_finding(tracking_uri, breast_cancer_splits):
    train, test = breast_cancer_splits
    train, test = train.copy(), test.copy()
    for frame in (train, test):
        frame["sensor"] = np.nan
    from sklearn.impute import SimpleImputer

    features = train.drop(columns=["label"])
    model = make_pipeline(SimpleImputer(), RandomForestClassifier(n_estimators=20, random_state=0))
    model.fit(features, train["label"])
    model_uri = log_model(model, features)
    run_id, result = _evaluate(model_uri, test, {"train_data": train})
    findings = result.artifacts["deepfix_findings"].content["findings"]
    missing = [f for f in findings if f["category"] == "missing_values"]
    assert missing and "sensor" in missing[0]["title"]


def test_predict_crash_becomes_a_finding_in_a_completed_run(tracking_uri, breast_cancer_splits):
    train, test = breast_cancer_splits
    model_uri = log_model(_forest(train), train.drop(columns=["label"]))
    broken = test.drop(columns=["mean radius", "worst area"])
    run_id, result = _evaluate(model_uri, broken, {"train_data": train})
    findings = result.artifacts["deepfix_findings"].content
    assert findings["findings"][0]["category"] == "schema_mismatch"
    assert "mean radius" in json.dumps(findings["findings"][0])
    artifacts, tags, metrics = _deepfix_outputs(run_id)
    assert len(artifacts) == 3 and tags["deepfix.status"] == "fail"


def _category_frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "size": rng.normal(size=n),
        "weight": rng.normal(size=n),
        "colour": pd.Categorical(rng.choice(["red", "green", "blue"], n)),
        "shape": pd.Categorical(rng.choice(["round", "square"], n)),
    })
    logit = 1.5 * frame["size"] - frame["weight"] + (frame["colour"] == "red") * 1.2
    frame["label"] = (logit + rng.normal(scale=0.8, size=n) > 0).astype(int)
    return frame


def _log_with_inferred_signature(model, features):
    signature = mlflow.models.infer_signature(features, model.predict(features))
    return log_model(model, features, signature=signature)


def test_a_signature_that_refuses_pandas_categories_is_named_and_the_diagnosis_goes_on(
    tracking_uri,
):
    """A model trained on pandas ``category`` columns, logged with ``infer_signature``:
    MLflow records them as strings and then refuses the same frame at predict time. The
    finding names the columns and the fix; the evidence keeps MLflow's reason (it used
    to be cut off behind a printed copy of the data) and no rows. deepfix predicts with
    the raw model instead, so a real bug beside it (test rows copied from training) is
    still found, and nothing is folded into the signature finding."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    train, test = _category_frame(600, seed=0), _category_frame(200, seed=1)
    test = pd.concat([test.iloc[:120], train.iloc[:80]], ignore_index=True)
    model = HistGradientBoostingClassifier(categorical_features="from_dtype", random_state=0)
    model.fit(train.drop(columns=["label"]), train["label"])
    model_uri = _log_with_inferred_signature(model, train.drop(columns=["label"]))
    run_id, result = _evaluate(model_uri, test, {"train_data": train})
    content = result.artifacts["deepfix_findings"].content
    by_category = {f["category"]: f for f in content["findings"]}
    schema = by_category["schema_mismatch"]
    assert schema["severity"] == "medium"  # serving breaks; no prediction is worse
    assert "colour" in schema["title"] and "shape" in schema["title"]
    assert "CategoricalDtype" in schema["fixes"][0] and "astype(str)" in schema["fixes"][0]
    assert "raw model" in schema["explanation"]
    runtime = " ".join(e["detail"] for e in schema["evidence"] if e["source"] == "runtime")
    assert "Can not safely convert category" in runtime
    assert "rows x" not in runtime and "square" not in runtime  # no printed frame
    assert not any(e["detail"].startswith("symptom") for e in schema["evidence"])
    overlap = by_category["train_test_overlap"]
    assert content["findings"].index(overlap) == 0, [f["category"] for f in content["findings"]]
    performance = [c for c in content["checks"] if c["name"] == "Train Test Performance"]
    assert performance and performance[0]["outcome"] in ("passed", "not_passed")
    skipped = {c["name"] for c in content["checks"] if c["outcome"] == "skipped"}
    assert not skipped & {"Simple Model Comparison", "Weak Segments Performance",
                          "Calibration Score", "Roc Report"}, skipped  # the model checks ran
    artifacts, tags, _ = _deepfix_outputs(run_id)
    assert len(artifacts) == 3 and tags["deepfix.status"] == "fail"
    report = (Path(mlflow.artifacts.download_artifacts(run_id=run_id, artifact_path="deepfix"))
              / "report.html").read_text()
    assert 'data-note="served-by-raw-model"' in report


def test_a_refusal_the_raw_model_cannot_get_round_stays_a_crash(tracking_uri):
    """Where the raw model cannot read the category columns either (it was trained on
    other columns' types), nothing is bypassed: the refusal is the crash it always was."""
    from sklearn.linear_model import LogisticRegression

    train, test = _category_frame(300, seed=0), _category_frame(100, seed=1)
    features = train.drop(columns=["label"]).assign(
        colour=lambda f: f["colour"].astype(str), shape=lambda f: f["shape"].astype(str)
    )
    numeric = features[["size", "weight"]]
    model = LogisticRegression().fit(numeric, train["label"])
    signature = mlflow.models.infer_signature(
        train.drop(columns=["label"]), model.predict(numeric)
    )
    model_uri = log_model(model, numeric, signature=signature)
    _run_id, result = _evaluate(model_uri, test, {"train_data": train})
    top = result.artifacts["deepfix_findings"].content["findings"][0]
    assert top["category"] == "schema_mismatch" and top["severity"] == "critical"
    assert "cannot be trusted" in top["explanation"] or "signature first" in top["explanation"]


def test_same_inputs_same_findings(overlap_case):
    model_uri, train, test = overlap_case
    config = {"train_data": train, "seed": 3}
    first = _evaluate(model_uri, test, config)[1].artifacts["deepfix_findings"].content
    second = _evaluate(model_uri, test, config)[1].artifacts["deepfix_findings"].content
    for doc in (first, second):
        doc.pop("timings")
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)


def test_tabular_path_does_not_import_torch(tmp_path):
    script = textwrap.dedent(
        f"""
        import sys, warnings
        warnings.simplefilter("ignore")
        import mlflow
        from sklearn.datasets import load_breast_cancer
        from sklearn.tree import DecisionTreeClassifier
        mlflow.set_tracking_uri("sqlite:///{tmp_path / 'm.db'}")
        mlflow.set_experiment(experiment_id=mlflow.create_experiment(
            "torch-free", artifact_location="{(tmp_path / 'artifacts').as_uri()}"))
        frame = load_breast_cancer(as_frame=True).frame.rename(columns={{"target": "label"}})
        train, test = frame.iloc[:400], frame.iloc[400:]
        model = DecisionTreeClassifier(max_depth=3).fit(train.drop(columns="label"), train["label"])
        with mlflow.start_run():
            info = mlflow.sklearn.log_model(model, name="m", serialization_format="cloudpickle",
                                            pip_requirements=["scikit-learn"])
            mlflow.models.evaluate(info.model_uri, test, targets="label", model_type="classifier",
                evaluators=["deepfix"], evaluator_config={{"deepfix": {{"train_data": train,
                "suites": ["data_integrity"], "kb": False}}}})
        banned = [m for m in ("torch", "sentence_transformers") if m in sys.modules]
        print("BANNED", banned)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "BANNED []" in done.stdout
