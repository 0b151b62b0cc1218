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
