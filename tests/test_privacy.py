"""Privacy levels (CONTRACT.md section 2, ``privacy``): planted unique values must not
appear in any artifact, tag, metric, param or log line of the run, in either level,
while the model crash they cause still becomes a finding."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import mlflow
import numpy as np
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient
from sklearn.linear_model import LogisticRegression

from mlflow_deepfix.privacy import REDACTED, Scrubber, round_significant

PLANTED_TEXT = "ZQ-CUSTOMER-00512"
PLANTED_NUMBER = 987654.000123
#: forms the planted number could take once printed
PLANTED_NUMBER_FORMS = ("987654.000123", "987654.00012", "9.87654000123e+05", "987654.0001")


def _frames(seed: int = 0):
    rng = np.random.default_rng(seed)
    n = 400
    frame = pd.DataFrame(
        {
            "amount": rng.normal(100, 10, n),
            "code": rng.integers(0, 50, n).astype(float),
            "score": rng.normal(0, 1, n),
        }
    )
    frame["label"] = (frame["score"] + rng.normal(0, 0.5, n) > 0).astype(int)
    train, test = frame.iloc[:250].reset_index(drop=True), frame.iloc[250:].reset_index(drop=True)
    test.loc[7, "amount"] = PLANTED_NUMBER
    # one cell holds a customer id: the model cannot convert it and crashes
    test["code"] = test["code"].astype(object)
    test.loc[3, "code"] = PLANTED_TEXT
    return train, test


def _leaks(text: str) -> list[str]:
    return [p for p in (PLANTED_TEXT, *PLANTED_NUMBER_FORMS) if p in text]


@pytest.mark.parametrize("level", ["default", "strict"])
def test_planted_values_never_leave_the_evaluation(tracking_uri, tmp_path, caplog, capfd, level):
    train, test = _frames()
    model = LogisticRegression(max_iter=500).fit(train.drop(columns=["label"]), train["label"])
    with mlflow.start_run(run_name="train"):
        # no signature: the raw sklearn error (which quotes the bad cell) reaches deepfix
        info = mlflow.sklearn.log_model(model, name="model", serialization_format="cloudpickle",
                                        pip_requirements=["scikit-learn"])
    caplog.set_level(logging.INFO)
    with mlflow.start_run() as run:
        result = mlflow.models.evaluate(
            info.model_uri,
            test,
            targets="label",
            model_type="classifier",
            evaluators=["deepfix"],
            evaluator_config={"deepfix": {"train_data": train, "privacy": level}},
        )
    client = MlflowClient()
    stored = client.get_run(run.info.run_id)
    root = Path(stored.info.artifact_uri.removeprefix("file://"))
    texts = {str(p): p.read_text(encoding="utf-8", errors="replace") for p in root.rglob("*") if p.is_file()}
    assert any(p.endswith("deepfix/artifact_data.json") for p in texts)
    texts["tags"] = json.dumps(stored.data.tags)
    texts["metrics"] = json.dumps(stored.data.metrics)
    texts["params"] = json.dumps(stored.data.params)
    texts["logs"] = "\n".join(r.getMessage() for r in caplog.records)
    out, err = capfd.readouterr()
    texts["stdout/stderr"] = out + err
    leaked = {where: _leaks(text) for where, text in texts.items() if _leaks(text)}
    assert not leaked, leaked

    # the crash is still diagnosed, from counts and dtypes rather than the value
    artifact = json.loads(next(t for p, t in texts.items() if p.endswith("artifact_data.json")))
    failures = artifact["runtime_failures"]
    assert failures and failures[0]["exception_type"] == "ValueError"
    assert failures[0]["given_types"]["code"] == "object"
    if level == "strict":
        assert failures[0]["message"] == "(hidden: privacy=strict)"
        columns = artifact["dataset"]["test"]["columns"]
        assert all(c["min"] is None and c["max"] is None for c in columns)
    else:
        assert REDACTED in failures[0]["message"]
        assert "could not convert" in failures[0]["message"]
        amount = next(c for c in artifact["dataset"]["test"]["columns"] if c["name"] == "amount")
        # a robust quantile rounded to 3 significant digits, not the planted row's value
        assert amount["max"] == round_significant(amount["max"])
        assert abs(amount["max"] - PLANTED_NUMBER) > 1
    findings = json.loads(next(t for p, t in texts.items() if p.endswith("findings.json")))
    assert findings["findings"], "the crash must be a finding"
    top = findings["findings"][0]
    assert top["category"] == "data_type_issues", [f["category"] for f in findings["findings"]]
    assert "'code' (object, 1 non-numeric value" in top["evidence"][0]["detail"]
    assert result.metrics["deepfix_findings_count"] >= 1


def test_scrubber_removes_quoted_literals_and_cell_values_but_keeps_column_names():
    frame = pd.DataFrame(
        {"city name": ["Springfield", "Shelbyville", "North Haverbrook"], "x": [1.5, 2.0, 987654.000123]}
    )
    scrubber = Scrubber([frame])
    text = "could not convert string to float: 'secret' in column 'city name' (North Haverbrook, 987654.000123, 2 rows)"
    cleaned = scrubber.scrub(text, exception=True)
    assert "secret" not in cleaned and "North Haverbrook" not in cleaned and "987654" not in cleaned
    assert "'city name'" in cleaned and "2 rows" in cleaned
    # outside exception text, quoted literals stay unless they are cells
    assert scrubber.scrub("the model's 'NoneType' x", exception=True) == f"the model's '{REDACTED}' x"
    assert scrubber.scrub("a note about 'threshold' and Springfield") == f"a note about 'threshold' and {REDACTED}"


def test_round_significant():
    assert round_significant(987654.000123) == 988000.0
    assert round_significant(0.00123456) == 0.00123
    assert round_significant(None) is None and round_significant(0.0) == 0.0
    assert round_significant(float("inf")) == float("inf")


def test_privacy_key_is_validated():
    from mlflow_deepfix import DeepfixConfigError
    from mlflow_deepfix.config import parse_config

    assert parse_config({"privacy": "strict"}).privacy == "strict"
    assert parse_config({}).privacy == "default"
    with pytest.raises(DeepfixConfigError, match="privacy.*one of \\['default', 'strict'\\]"):
        parse_config({"privacy": "paranoid"})
