"""A gradient-boosting library served through its own MLflow flavour (``mlflow.lightgbm``),
end to end through ``mlflow.models.evaluate`` on a real sqlite store.

Two packagings that the corpus (in-process scikit-learn pyfuncs) never takes:

* a native ``Booster`` (``lgb.train``) with a binary objective, whose pyfunc returns the
  probability of class 1 as its "prediction": read as probabilities, not reported as a
  regressor used for a classification task;
* an ``LGBMClassifier`` trained on pandas ``category`` columns and logged with
  ``infer_signature``, whose signature refuses its own training frame: named as a
  ``schema_mismatch`` while the diagnosis goes on through the raw model.
"""

from __future__ import annotations

import mlflow
import numpy as np
import pandas as pd
import pytest

lightgbm = pytest.importorskip("lightgbm", reason="the test extra installs lightgbm")


def _evaluate(model_uri: str, test: pd.DataFrame, train: pd.DataFrame) -> dict:
    with mlflow.start_run():
        result = mlflow.models.evaluate(
            model_uri, test, targets="label", model_type="classifier",
            evaluators=["deepfix"], evaluator_config={"deepfix": {"train_data": train}},
        )
    return result.artifacts["deepfix_findings"].content


def test_a_native_booster_with_a_binary_objective_is_read_as_probabilities(
    tracking_uri, breast_cancer_splits
):
    """``lgb.train(objective="binary")`` predicts P(class 1). Its outputs used to be
    taken for labels: a critical wrong_task_type ("use a classifier") on a healthy
    classifier. Now labels are read at 0.5, the probability checks run, and a clean
    split gets nothing above low."""
    train, test = breast_cancer_splits
    features = train.drop(columns=["label"])
    booster = lightgbm.train(
        {"objective": "binary", "verbose": -1, "seed": 0, "num_threads": 1},
        lightgbm.Dataset(features, train["label"]), num_boost_round=40,
    )
    with mlflow.start_run(run_name="train"):
        uri = mlflow.lightgbm.log_model(booster, name="model",
                                        pip_requirements=["lightgbm"]).model_uri
    content = _evaluate(uri, test, train)
    categories = {f["category"]: f["severity"] for f in content["findings"]}
    assert "wrong_task_type" not in categories, categories
    assert all(s in ("low", "info") for s in categories.values()), categories
    outcome = {c["name"]: c["outcome"] for c in content["checks"]}
    assert outcome["Roc Report"] in ("passed", "not_passed")  # probabilities were found


def test_a_regressor_on_class_labels_is_still_the_wrong_task(tracking_uri, breast_cancer_splits):
    """The booster's objective, not the range of its output, makes it a probability:
    a regression booster on the same 0/1 labels also answers within [0, 1] and stays
    the wrong-task bug."""
    train, test = breast_cancer_splits
    features = train.drop(columns=["label"])
    booster = lightgbm.train(
        {"objective": "regression", "verbose": -1, "seed": 0, "num_threads": 1},
        lightgbm.Dataset(features, train["label"].astype(float)), num_boost_round=40,
    )
    with mlflow.start_run(run_name="train"):
        uri = mlflow.lightgbm.log_model(booster, name="model",
                                        pip_requirements=["lightgbm"]).model_uri
    content = _evaluate(uri, test, train)
    assert content["findings"][0]["category"] == "wrong_task_type"


def _category_frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "income": rng.lognormal(10, 0.5, n),
        "age": rng.integers(18, 80, n),
        "region": pd.Categorical(rng.choice(["north", "south", "east", "west"], n)),
        "plan": pd.Categorical(rng.choice(["basic", "plus"], n)),
    })
    logit = (np.log(frame["income"]) - 10) * 2 + (frame["region"] == "north") - 0.02 * (
        frame["age"] - 50)
    frame["label"] = (logit + rng.normal(scale=0.7, size=n) > 0).astype(int)
    return frame


def test_category_columns_behind_an_inferred_signature(tracking_uri):
    """``mlflow.lightgbm`` with ``infer_signature`` on category columns: the signature
    refuses the model's own frame. The finding names the columns at medium; the raw
    LGBMClassifier predicts the rest, so a leak planted beside it is the top finding."""
    train, test = _category_frame(700, seed=0), _category_frame(300, seed=1)
    rng = np.random.default_rng(2)
    for frame in (train, test):
        frame["refund_issued"] = frame["label"] + rng.normal(scale=0.15, size=len(frame))
    features = train.drop(columns=["label"])
    model = lightgbm.LGBMClassifier(n_estimators=60, random_state=0, verbose=-1,
                                    n_jobs=1).fit(features, train["label"])
    signature = mlflow.models.infer_signature(features, model.predict(features))
    with mlflow.start_run(run_name="train"):
        uri = mlflow.lightgbm.log_model(model, name="model", signature=signature,
                                        pip_requirements=["lightgbm"]).model_uri
    content = _evaluate(uri, test, train)
    by_category = {f["category"]: f for f in content["findings"]}
    assert content["findings"][0]["category"] == "target_leakage"
    assert "refund_issued" in content["findings"][0]["title"]
    schema = by_category["schema_mismatch"]
    assert schema["severity"] == "medium"
    assert "region" in schema["title"] and "plan" in schema["title"]
