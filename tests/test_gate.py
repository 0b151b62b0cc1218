"""The promotion gate and fix verification (issue 6).

End-to-end tests run against a real ``mlflow server`` process (sqlite backend, one
worker) started by a module fixture on a free loopback port, so that every registry
call (versions, tags, aliases) goes over HTTP as it does in a CI job. The arithmetic of
the repair rate and negative flip rate is checked against a hand computation on the
same predictions.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import mlflow
import numpy as np
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

from mlflow_deepfix import DeepfixError, DeepfixInputError
from mlflow_deepfix.cli import main
from mlflow_deepfix.gate import (
    build_thresholds,
    check_thresholds,
    gate,
    infer_model_type,
    load_table,
    resolve_model,
)
from mlflow_deepfix.gate.verification import (
    compare_findings,
    correct_mask,
    flip_rates,
    main_metrics,
    verify_fix,
)

SERVER_START_TIMEOUT = 180

# --------------------------------------------------------------------------- unit


def test_flip_rates_match_a_hand_count():
    y = np.array([0, 1, 1, 0, 1, 0, 1, 1])
    baseline = np.array([0, 0, 1, 1, 1, 0, 0, 1])  # wrong at 1, 3, 6
    candidate = np.array([0, 1, 1, 0, 0, 0, 0, 1])  # repairs 1 and 3, breaks 4
    result = verify_fix(
        y,
        baseline,
        candidate,
        task="binary_classification",
        baseline_categories=["underfitting", "class_imbalance"],
        candidate_categories=["class_imbalance", "poor_calibration"],
    )
    assert (result.n_baseline_wrong, result.n_repaired) == (3, 2)
    assert (result.n_baseline_correct, result.n_broken) == (5, 1)
    assert result.repair_rate == pytest.approx(2 / 3)
    assert result.negative_flip_rate == pytest.approx(1 / 5)
    assert result.baseline_metrics == {"accuracy": pytest.approx(5 / 8)}
    assert result.candidate_metrics == {"accuracy": pytest.approx(6 / 8)}
    assert result.findings_resolved == ["underfitting"]
    assert result.findings_introduced == ["poor_calibration"]
    metrics = result.metrics()
    assert metrics["deepfix_repair_rate"] == pytest.approx(2 / 3)
    assert metrics["deepfix_negative_flip_rate"] == pytest.approx(0.2)
    assert metrics["deepfix_baseline_accuracy"] == pytest.approx(0.625)
    assert metrics["deepfix_candidate_accuracy"] == pytest.approx(0.75)
    assert metrics["deepfix_findings_resolved"] == 1.0
    assert metrics["deepfix_findings_introduced"] == 1.0


def test_undefined_rates_are_none_and_not_logged():
    y = np.array(["a", "b", "a"])
    perfect = y.copy()
    repair, nfr, counts = flip_rates(
        correct_mask(y, perfect, task="multiclass_classification"), np.array([True, False, True])
    )
    assert repair is None and nfr == pytest.approx(1 / 3)
    assert counts == {"baseline_wrong": 0, "baseline_correct": 3, "repaired": 0, "broken": 1}
    result = verify_fix(y, np.array(["b", "a", "b"]), perfect, task="multiclass_classification")
    assert result.negative_flip_rate is None and result.repair_rate == 1.0
    assert "deepfix_negative_flip_rate" not in result.metrics()


def test_labels_compare_across_dtypes():
    # models and file readers disagree on label dtypes: 1, 1.0 and "1" are one label
    mask = correct_mask(
        np.array([1, 0, 1]), np.array([1.0, 1.0, 1.0]), task="binary_classification"
    )
    assert mask.tolist() == [True, False, True]
    mask = correct_mask(np.array(["1", "0"]), np.array([1, 0]), task="binary_classification")
    assert mask.tolist() == [True, True]


def test_regression_correct_means_within_tolerance():
    y = np.array([10.0, 20.0, 30.0, 40.0])
    baseline = np.array([11.0, 25.0, 30.5, 48.0])  # errors 1, 5, 0.5, 8 -> median 3
    candidate = np.array([14.0, 21.0, 30.0, 41.0])  # errors 4, 1, 0, 1
    result = verify_fix(y, baseline, candidate, task="regression")
    assert result.tolerance == pytest.approx(3.0)  # the baseline's median absolute error
    # baseline correct at 0 and 2; candidate correct at 1, 2, 3
    assert result.repair_rate == pytest.approx(2 / 2)
    assert result.negative_flip_rate == pytest.approx(1 / 2)
    explicit = verify_fix(y, baseline, candidate, task="regression", tolerance=4.0)
    assert explicit.tolerance == 4.0  # every candidate error is <= 4: nothing breaks
    assert explicit.repair_rate == pytest.approx(1.0)
    assert explicit.negative_flip_rate == pytest.approx(0.0)
    assert set(result.candidate_metrics) == {"r2", "rmse"}
    assert result.candidate_metrics["rmse"] == pytest.approx(np.sqrt((16 + 1 + 0 + 1) / 4))
    assert main_metrics(y, y, task="regression")["r2"] == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: verify_fix([1, 0], [1], [1, 0], task="binary_classification"), "same length"),
        (lambda: verify_fix([1], [1], [1], task="ranking"), "task must be one of"),
        (lambda: correct_mask([1.0], [2.0], task="regression", tolerance=-1), "tolerance"),
        (lambda: verify_fix([], [], [], task="regression"), "at least one row"),
    ],
)
def test_verification_refuses_bad_arguments(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_compare_findings_is_a_set_difference():
    assert compare_findings(["a", "b", "b"], ["b", "c"]) == (["a"], ["c"])


@pytest.mark.parametrize(
    ("fail_on", "metrics"),
    [
        ("critical", {"deepfix_critical_count"}),
        ("high", {"deepfix_critical_count", "deepfix_high_count"}),
        ("low", {f"deepfix_{s}_count" for s in ("critical", "high", "medium", "low")}),
    ],
)
def test_thresholds_follow_fail_on(fail_on, metrics):
    thresholds = build_thresholds(fail_on)
    assert set(thresholds) == metrics
    counts = {f"deepfix_{s}_count": 0.0 for s in ("critical", "high", "medium", "low")}
    assert check_thresholds(thresholds, counts) == []
    failures = check_thresholds(thresholds, {**counts, "deepfix_critical_count": 2.0})
    assert len(failures) == 1 and "deepfix_critical_count" in failures[0]


def test_rate_thresholds_use_mlflow_metric_thresholds():
    thresholds = build_thresholds("critical", max_negative_flip_rate=0.05, min_repair_rate=0.5)
    base = {"deepfix_critical_count": 0.0}
    ok = {**base, "deepfix_negative_flip_rate": 0.05, "deepfix_repair_rate": 0.5}
    assert check_thresholds(thresholds, ok) == []
    bad = {**base, "deepfix_negative_flip_rate": 0.06, "deepfix_repair_rate": 0.4}
    failures = check_thresholds(thresholds, bad)
    assert len(failures) == 2
    assert any("deepfix_negative_flip_rate" in f for f in failures)
    assert any("deepfix_repair_rate" in f for f in failures)


def test_model_type_is_inferred_from_model_or_labels(breast_cancer_splits):
    train, _ = breast_cancer_splits
    forest = RandomForestClassifier(n_estimators=3, random_state=0)
    forest.fit(train.drop(columns=["label"]), train["label"])

    class Wrapped:  # a pyfunc-like object exposing the raw model
        def get_raw_model(self):
            return forest

    assert infer_model_type(Wrapped(), pd.Series([0.5, 1.5])) == "classifier"
    assert infer_model_type(object(), pd.Series(["yes", "no"])) == "classifier"
    assert infer_model_type(object(), pd.Series([0.5, 1.25, 3.0])) == "regressor"
    assert infer_model_type(object(), pd.Series([0, 1, 2, 1])) == "classifier"
    with pytest.raises(DeepfixInputError, match="model_type"):
        infer_model_type(object(), pd.Series(range(100)))


def test_load_table_reads_csv_and_parquet_and_refuses_the_rest(tmp_path):
    frame = pd.DataFrame({"x": [1.0, 2.0], "y": [0, 1]})
    frame.to_csv(tmp_path / "d.csv", index=False)
    frame.to_parquet(tmp_path / "d.parquet")
    pd.testing.assert_frame_equal(load_table(tmp_path / "d.csv"), frame)
    pd.testing.assert_frame_equal(load_table(tmp_path / "d.parquet"), frame)
    (tmp_path / "bad.parquet").write_text("not parquet")
    with pytest.raises(DeepfixInputError, match="cannot read .* as parquet"):
        load_table(tmp_path / "bad.parquet")
    with pytest.raises(DeepfixInputError, match="unsupported file extension '.xlsx'"):
        load_table(tmp_path / "d.xlsx")
    with pytest.raises(DeepfixInputError, match="file not found"):
        load_table(tmp_path / "missing.csv")


def test_gate_is_exported_lazily():
    code = (
        "import sys, mlflow_deepfix; assert 'mlflow_deepfix.gate' not in sys.modules; "
        "g = mlflow_deepfix.gate; assert callable(g); "
        "from mlflow_deepfix import gate; assert gate is g; print('ok')"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120
    )
    assert out.stdout.strip() == "ok", out.stderr
    assert "gate" in __import__("mlflow_deepfix").__all__


# --------------------------------------------------------------------------- server


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.fixture(scope="module")
def mlflow_server(tmp_path_factory):
    """A real ``mlflow server`` (sqlite backend, one worker) on a free loopback port."""
    root = tmp_path_factory.mktemp("mlflow-server")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = open(root / "server.log", "w")  # noqa: SIM115 - closed below
    command = [
        sys.executable,
        "-m",
        "mlflow",
        "server",
        "--backend-store-uri",
        f"sqlite:///{root / 'mlflow.db'}",
        "--default-artifact-root",
        str(root / "artifacts"),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        "1",
    ]
    env = {
        **os.environ,
        "MLFLOW_DISABLE_TELEMETRY": "true",
        "DO_NOT_TRACK": "true",
        # no background job runner: one process less (~240 MB) that the tests never use
        "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false",
    }
    # its own process group, so that the server and the workers it spawns stop together
    process = subprocess.Popen(
        command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
    )
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while not _healthy(url):
            if process.poll() is not None:
                raise RuntimeError(
                    f"mlflow server exited with {process.returncode}: "
                    + (root / "server.log").read_text()[-2000:]
                )
            if time.monotonic() > deadline:
                raise RuntimeError("mlflow server did not answer /health in time")
            time.sleep(0.5)
        yield url
    finally:
        _stop_group(process)
        log.close()


def _stop_group(process: subprocess.Popen) -> None:
    """SIGTERM the server's process group, then SIGKILL whatever of it is left."""
    for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue


@pytest.fixture(scope="module")
def registry(mlflow_server):
    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(mlflow_server)
    mlflow.set_experiment("deepfix-gate-tests")
    yield mlflow_server
    if mlflow.active_run():
        mlflow.end_run()
    mlflow.set_tracking_uri(previous)


def _register(model, train, name):
    features = train.drop(columns=["label"])
    model.fit(features, train["label"])
    with mlflow.start_run(run_name=f"train {name}"):
        info = mlflow.sklearn.log_model(
            model,
            name="model",
            input_example=features.head(3),
            serialization_format="cloudpickle",
            registered_model_name=name, pip_requirements=["scikit-learn"],
        )
    return info.registered_model_version, model


@pytest.fixture(scope="module")
def models(registry, breast_cancer_splits):
    """Versions of ``bc-gate``: v1 a decision stump (the champion), v2 a scaled logistic
    regression (a real improvement), v3 a forest whose training set holds 40% of the
    test rows (a planted bug the gate must refuse)."""
    train, test = breast_cancer_splits
    stump_version, stump = _register(
        DecisionTreeClassifier(max_depth=1, random_state=0), train, "bc-gate"
    )
    logreg_version, logreg = _register(
        make_pipeline(StandardScaler(), LogisticRegression(max_iter=500)), train, "bc-gate"
    )
    copied = test.sample(frac=0.4, random_state=0)
    leaky_train = pd.concat([train, copied]).reset_index(drop=True)
    leaky_version, _ = _register(
        RandomForestClassifier(n_estimators=10, random_state=0), leaky_train, "bc-gate"
    )
    MlflowClient().set_registered_model_alias("bc-gate", "champion", str(stump_version))
    return {
        "stump": (str(stump_version), stump),
        "logreg": (str(logreg_version), logreg),
        "leaky": (str(leaky_version), leaky_train),
    }


def _version(name, version):
    return MlflowClient().get_model_version(name, version)


def _alias(name, alias):
    return str(MlflowClient().get_model_version_by_alias(name, alias).version)


# --------------------------------------------------------------------------- input errors


def test_missing_model_exits_2_without_a_run(
    registry, models, breast_cancer_splits, tmp_path, capsys
):
    _, test = breast_cancer_splits
    test.to_csv(tmp_path / "test.csv", index=False)
    runs_before = len(mlflow.search_runs(search_all_experiments=True))
    for uri in (
        "models:/bc-gate/99",
        "models:/no-such-model@champion",
        "runs:/0123456789abcdef/model",
    ):
        code = main(
            [
                "gate",
                "--tracking-uri",
                registry,
                "--model-uri",
                uri,
                "--data",
                str(tmp_path / "test.csv"),
                "--target",
                "label",
            ]
        )
        assert code == 2, uri
        err = capsys.readouterr().err
        assert err.startswith("deepfix gate: error:") and uri in err
        assert err.count("\n") == 1 and "Traceback" not in err
    assert len(mlflow.search_runs(search_all_experiments=True)) == runs_before


def test_bad_data_file_and_missing_target_exit_2(
    registry, models, breast_cancer_splits, tmp_path, capsys
):
    _, test = breast_cancer_splits
    uri = f"models:/bc-gate/{models['logreg'][0]}"
    (tmp_path / "broken.parquet").write_bytes(b"PAR1 this is not parquet")
    test.drop(columns=["label"]).to_parquet(tmp_path / "unlabelled.parquet")
    cases = {
        str(tmp_path / "broken.parquet"): "cannot read",
        str(tmp_path / "missing.csv"): "file not found",
        str(tmp_path / "data.txt"): "unsupported file extension",
        str(tmp_path / "unlabelled.parquet"): "no target column 'label'",
    }
    (tmp_path / "data.txt").write_text("x")
    for path, message in cases.items():
        code = main(
            [
                "gate",
                "--tracking-uri",
                registry,
                "--model-uri",
                uri,
                "--data",
                path,
                "--target",
                "label",
            ]
        )
        err = capsys.readouterr().err
        assert code == 2, path
        assert message in err and err.count("\n") == 1 and "Traceback" not in err
    # options that cannot work together are usage errors too
    with pytest.raises(DeepfixInputError, match="needs a baseline"):
        gate(uri, test, targets="label", max_negative_flip_rate=0.1)
    with pytest.raises(DeepfixInputError, match="needs a registered model version"):
        gate(
            f"runs:/{_version('bc-gate', models['logreg'][0]).run_id}/model",
            test,
            targets="label",
            promote_to="champion",
        )
    with pytest.raises(DeepfixError, match="suites"):
        gate(uri, test, targets="label", evaluator_config={"suites": ["everything"]})
    # argparse refuses out-of-range rates with its own exit code 2
    with pytest.raises(SystemExit) as exit_info:
        main(["gate", "--model-uri", uri, "--data", "x.csv", "--target", "label", "--max-nfr", "2"])
    assert exit_info.value.code == 2


def test_baseline_that_cannot_predict_is_an_input_error(registry, models, breast_cancer_splits):
    train, test = breast_cancer_splits
    wider = train.assign(extra=np.arange(len(train), dtype=float))  # a column data lacks
    version, _ = _register(DecisionTreeClassifier(max_depth=1, random_state=0), wider, "bc-other")
    runs_before = len(mlflow.search_runs(search_all_experiments=True))
    with pytest.raises(DeepfixInputError, match="baseline_uri: the model cannot predict on data"):
        gate(
            f"models:/bc-gate/{models['logreg'][0]}",
            test,
            targets="label",
            baseline_uri=f"models:/bc-other/{version}",
        )
    assert len(mlflow.search_runs(search_all_experiments=True)) == runs_before


def test_alias_uri_resolves_to_its_version(registry, models):
    ref = resolve_model("models:/bc-gate@champion")
    assert (ref.name, ref.version) == ("bc-gate", models["stump"][0])
    assert ref.pinned_uri == f"models:/bc-gate/{models['stump'][0]}"
    assert not resolve_model("runs:/abc/model").registered


# --------------------------------------------------------------------------- end to end

#: one suite keeps each deepfix evaluation to seconds; the gate logic is the same
FAST = {"suites": ["data_integrity"]}


def test_gate_pass_tags_the_version_and_moves_the_alias(registry, models, breast_cancer_splits):
    train, test = breast_cancer_splits
    version = models["logreg"][0]
    result = gate(
        f"models:/bc-gate/{version}",
        test,
        targets="label",
        train_data=train,
        promote_to="staging",
        evaluator_config=FAST,
        experiment="deepfix-gate-runs",
    )

    assert result.passed and result.promoted_to == "staging"
    assert result.failures == [] and result.blocking_findings == []
    assert result.status in ("pass", "warn")
    assert _alias("bc-gate", "staging") == version
    assert _alias("bc-gate", "champion") == models["stump"][0]  # only the asked alias moves

    tags = _version("bc-gate", version).tags
    findings = mlflow.artifacts.load_dict(f"runs:/{result.run_id}/deepfix/findings.json")
    assert tags["deepfix.run_id"] == result.run_id
    assert tags["deepfix.status"] == findings["status"] == result.status
    # a passing version shows nothing alarming: top_finding names only a finding at or
    # above medium (README "Outputs"), and the summary leads with the gate's status
    serious = [f for f in findings["findings"] if f["severity"] in ("critical", "high", "medium")]
    assert tags["deepfix.top_finding"] == (serious[0]["category"] if serious else "none")
    assert tags["deepfix.summary"] == f"{result.status} · 0 critical · 0 high"

    run = MlflowClient().get_run(result.run_id)
    assert mlflow.get_experiment(run.info.experiment_id).name == "deepfix-gate-runs"
    assert run.data.tags["deepfix.gate.result"] == "passed"
    assert run.data.tags["deepfix.gate.model_uri"] == f"models:/bc-gate/{version}"
    assert run.data.metrics["deepfix_gate_passed"] == 1.0
    assert run.data.metrics["deepfix_critical_count"] == 0.0
    html = mlflow.artifacts.load_text(f"runs:/{result.run_id}/deepfix/report.html")
    assert "Promotion gate" in html and "Fix verification" not in html


def test_gate_fail_exits_1_and_leaves_the_alias(
    registry, models, tmp_path, breast_cancer_splits, capsys
):
    _, test = breast_cancer_splits
    version, leaky_train = models["leaky"]
    test.to_parquet(tmp_path / "test.parquet")
    leaky_train.to_csv(tmp_path / "train.csv", index=False)
    code = main(
        [
            "gate",
            "--tracking-uri",
            registry,
            "--model-uri",
            f"models:/bc-gate/{version}",
            "--data",
            str(tmp_path / "test.parquet"),
            "--train-data",
            str(tmp_path / "train.csv"),
            "--target",
            "label",
            "--model-type",
            "classifier",
            "--promote-to",
            "champion",
            "--suites",
            "train_test_validation",
        ]
    )
    out = capsys.readouterr().out
    assert code == 1, out
    assert "deepfix gate FAILED" in out
    assert "[critical] train_test_overlap" in out and "first fix:" in out
    assert "Alias 'champion' was not moved" in out
    assert _alias("bc-gate", "champion") == models["stump"][0]
    tags = _version("bc-gate", version).tags
    assert tags["deepfix.status"] == "fail"
    assert tags["deepfix.top_finding"] == "train_test_overlap"
    assert re.fullmatch(r"fail · [1-9]\d* critical · \d+ high", tags["deepfix.summary"])
    run = MlflowClient().get_run(tags["deepfix.run_id"])
    assert run.data.tags["deepfix.gate.result"] == "failed"
    assert run.data.metrics["deepfix_gate_passed"] == 0.0
    assert run.data.metrics["deepfix_critical_count"] >= 1


def _hand_rates(y, baseline_pred, candidate_pred):
    """Repair rate and NFR counted directly, without mlflow_deepfix.gate.verification."""
    repaired = broken = wrong = right = 0
    for truth, old, new in zip(y, baseline_pred, candidate_pred):
        if old != truth:
            wrong += 1
            repaired += new == truth
        else:
            right += 1
            broken += new != truth
    return repaired / wrong, broken / right


def _categories(run_id):
    findings = mlflow.artifacts.load_dict(f"runs:/{run_id}/deepfix/findings.json")
    return {f["category"] for f in findings["findings"]}


def test_baseline_comparison_matches_a_hand_computation(registry, models, breast_cancer_splits):
    train, test = breast_cancer_splits
    stump_version, stump = models["stump"]
    logreg_version, logreg = models["logreg"]
    features = test.drop(columns=["label"])
    y = test["label"].tolist()
    repair, nfr = _hand_rates(
        y, stump.predict(features).tolist(), logreg.predict(features).tolist()
    )
    assert 0 < repair < 1 and 0 < nfr < 0.05  # the data make both rates informative

    result = gate(
        f"models:/bc-gate/{logreg_version}",
        test,
        targets="label",
        train_data=train,
        baseline_uri="models:/bc-gate@champion",
        max_negative_flip_rate=0.05,
        min_repair_rate=0.5,
        promote_to="champion",
        evaluator_config=FAST,
    )

    assert result.passed, result.summary()
    assert result.baseline.version == stump_version
    check = result.verification
    assert check.repair_rate == pytest.approx(repair)
    assert check.negative_flip_rate == pytest.approx(nfr)
    assert check.baseline_metrics["accuracy"] == pytest.approx(
        np.mean(stump.predict(features) == y)
    )
    assert check.candidate_metrics["accuracy"] == pytest.approx(
        np.mean(logreg.predict(features) == y)
    )

    baseline_categories = _categories(result.baseline_run_id)
    candidate_categories = _categories(result.run_id)
    assert check.findings_resolved == sorted(baseline_categories - candidate_categories)
    assert check.findings_introduced == sorted(candidate_categories - baseline_categories)

    metrics = MlflowClient().get_run(result.run_id).data.metrics
    assert metrics["deepfix_repair_rate"] == pytest.approx(repair)
    assert metrics["deepfix_negative_flip_rate"] == pytest.approx(nfr)
    assert metrics["deepfix_baseline_accuracy"] == pytest.approx(check.baseline_metrics["accuracy"])
    assert metrics["deepfix_candidate_accuracy"] == pytest.approx(
        check.candidate_metrics["accuracy"]
    )
    assert metrics["deepfix_findings_resolved"] == len(check.findings_resolved)
    assert metrics["deepfix_findings_introduced"] == len(check.findings_introduced)
    baseline_run = MlflowClient().get_run(result.baseline_run_id)
    assert baseline_run.data.tags["mlflow.parentRunId"] == result.run_id
    assert baseline_run.data.tags["deepfix.gate.role"] == "baseline"

    html = mlflow.artifacts.load_text(f"runs:/{result.run_id}/deepfix/report.html")
    assert "Fix verification" in html and "repair rate" in html
    assert f"{100 * repair:.1f}%" in html and f"{100 * nfr:.1f}%" in html
    assert _alias("bc-gate", "champion") == logreg_version
    tags = _version("bc-gate", logreg_version).tags
    assert float(tags["deepfix.negative_flip_rate"]) == pytest.approx(nfr, abs=1e-4)


def test_rate_thresholds_refuse_through_the_cli(
    registry, models, breast_cancer_splits, tmp_path, capsys
):
    _, test = breast_cancer_splits
    test.to_csv(tmp_path / "test.csv", index=False)
    champion_before = _alias("bc-gate", "champion")
    code = main(
        [
            "gate",
            "--tracking-uri",
            registry,
            "--model-uri",
            f"models:/bc-gate/{models['logreg'][0]}",
            "--data",
            str(tmp_path / "test.csv"),
            "--target",
            "label",
            "--baseline",
            f"models:/bc-gate/{models['stump'][0]}",
            "--max-nfr",
            "0.01",
            "--min-repair-rate",
            "0.9",
            "--promote-to",
            "champion",
            "--suites",
            "data_integrity",
        ]
    )
    out = capsys.readouterr().out
    assert code == 1, out
    assert "deepfix_negative_flip_rate" in out and "deepfix_repair_rate" in out
    assert "repair rate 73.7% (14/19), negative flip rate 1.3% (2/152)" in out
    assert _alias("bc-gate", "champion") == champion_before


def test_text_model_is_gated_through_the_cli_with_text_col(registry, tmp_path, capsys):
    """A text classifier whose training set holds 40% of the evaluation reviews: the CLI's
    --text-col makes the gate evaluate it as text and refuse it on the overlap."""
    from sklearn.model_selection import train_test_split

    from mlflow_deepfix.bench.scenarios._text_data import make_reviews, text_model

    frame = make_reviews(700, seed=0).drop(columns=["topic"])
    train, test = train_test_split(frame, test_size=0.3, random_state=0)
    train = pd.concat([train, test.sample(frac=0.4, random_state=0)]).reset_index(drop=True)
    model = text_model(0).fit(train[["review"]], train["sentiment"])
    with mlflow.start_run(run_name="train text"):
        info = mlflow.sklearn.log_model(
            model, name="model", serialization_format="cloudpickle",
            registered_model_name="reviews-gate", pip_requirements=["scikit-learn"],
        )
    test.to_csv(tmp_path / "test.csv", index=False)
    train.to_csv(tmp_path / "train.csv", index=False)
    code = main(
        [
            "gate", "--tracking-uri", registry,
            "--model-uri", f"models:/reviews-gate/{info.registered_model_version}",
            "--data", str(tmp_path / "test.csv"), "--train-data", str(tmp_path / "train.csv"),
            "--target", "sentiment", "--model-type", "classifier", "--text-col", "review",
        ]
    )
    out = capsys.readouterr().out
    assert code == 1, out
    assert "[critical] train_test_overlap" in out
    tags = _version("reviews-gate", info.registered_model_version).tags
    findings = mlflow.artifacts.load_dict(f"runs:/{tags['deepfix.run_id']}/deepfix/findings.json")
    assert findings["modality"] == "text"
