"""A pyfunc that hides a classifier fitted on a count target, end to end: a real
``mlflow.models.evaluate`` run on a sqlite store, real Deepchecks. Its metadata says
nothing about its kind; only the set its predictions are drawn from (every one a
training target) shows the task mixed up at fitting (``wrong_task_type``)."""

from __future__ import annotations

import mlflow
import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor


class _Served(mlflow.pyfunc.PythonModel):
    """Predictions only, as a team's serving wrapper returns them."""

    def __init__(self, model, features):
        self.model, self.features = model, features

    def predict(self, context, model_input: pd.DataFrame, params=None) -> np.ndarray:
        return np.asarray(self.model.predict(model_input[self.features]), dtype=float)


def _counts(seed=0, n=700):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({f"x{i}": rng.normal(size=n) for i in range(4)})
    frame["visits"] = np.clip(np.round(20 + 6 * frame.x0 + 4 * frame.x1 + rng.normal(0, 2, n)),
                              0, None)
    return frame.iloc[:500].reset_index(drop=True), frame.iloc[500:].reset_index(drop=True)


def _evaluate(estimator):
    train, test = _counts()
    features = ["x0", "x1", "x2", "x3"]
    estimator.fit(train[features], train["visits"])
    with mlflow.start_run() as run:
        info = mlflow.pyfunc.log_model(name="model", python_model=_Served(estimator, features),
                                       input_example=train[features].head(3),
                                       pip_requirements=["scikit-learn", "pandas"])
        mlflow.models.evaluate(info.model_uri, test, targets="visits", model_type="regressor",
                               evaluators=["deepfix"],
                               evaluator_config={"deepfix": {"train_data": train, "kb": False}})
    return mlflow.artifacts.load_dict(f"runs:/{run.info.run_id}/deepfix/findings.json")


def test_a_pyfunc_classifier_on_a_count_target_is_named(tracking_uri):
    findings = _evaluate(RandomForestClassifier(n_estimators=30, random_state=0))
    found = {f["category"]: f for f in findings["findings"]}
    assert "wrong_task_type" in found
    finding = found["wrong_task_type"]
    assert finding["severity"] in ("high", "critical")
    assert "classifier on a regression task" in finding["title"]
    assert any("are one of the" in e["detail"] for e in finding["evidence"])


def test_a_pyfunc_regressor_on_the_same_target_is_not(tracking_uri):
    findings = _evaluate(RandomForestRegressor(n_estimators=30, random_state=0))
    assert all(f["category"] != "wrong_task_type" for f in findings["findings"])


class _ProbabilityOfOne(mlflow.pyfunc.PythonModel):
    """A serving wrapper that returns ``predict_proba(X)[:, 1]`` as its prediction."""

    def __init__(self, model, features):
        self.model, self.features = model, features

    def predict(self, context, model_input: pd.DataFrame, params=None) -> np.ndarray:
        return self.model.predict_proba(model_input[self.features])[:, 1]


def test_s55_a_pyfunc_returning_the_probability_of_class_1_is_told_how_to_return_labels(
        tracking_uri):
    """A real classifier behind a pyfunc that returns P(class 1): the outputs are not
    labels (critical, every classification score is wrong), and the finding says what
    they look like and how to return labels, instead of "use a classifier"."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    frame = load_breast_cancer(as_frame=True).frame
    frame.columns = [c.replace(" ", "_") for c in frame.columns]
    features = [c for c in frame.columns if c != "target"]
    train, test = frame.iloc[::2].reset_index(drop=True), frame.iloc[1::2].reset_index(drop=True)
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000))
    model.fit(train[features], train["target"])
    with mlflow.start_run() as run:
        info = mlflow.pyfunc.log_model(name="model", python_model=_ProbabilityOfOne(model, features),
                                       pip_requirements=["scikit-learn", "pandas"])
        mlflow.models.evaluate(info.model_uri, test, targets="target", model_type="classifier",
                               evaluators=["deepfix"],
                               evaluator_config={"deepfix": {"train_data": train, "kb": False}})
    findings = mlflow.artifacts.load_dict(f"runs:/{run.info.run_id}/deepfix/findings.json")
    top = findings["findings"][0]
    assert top["category"] == "wrong_task_type" and top["severity"] == "critical"
    assert "between 0 and 1" in top["title"] and "probability of class 1" in top["title"]
    assert "predict_proba(X)[:, 1]" in top["fixes"][0]
