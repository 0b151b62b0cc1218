"""One probability pass gives labels too, only for models whose predict is
argmax(predict_proba) by definition; the labels equal the model's own predict."""

from __future__ import annotations

import mlflow.pyfunc
import mlflow.sklearn
import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from mlflow_deepfix.inputs.model_adapter import ModelAdapter
from mlflow_deepfix.testing.predictions import predict_via_proba


class _ThresholdForest(RandomForestClassifier):
    """A subclass that moves the decision threshold: predict != argmax(proba)."""

    def predict(self, X):
        return self.classes_[(self.predict_proba(X)[:, 1] > 0.8).astype(int)]


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=3000, n_features=6, n_classes=3, n_informative=4,
                               random_state=0)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(6)])
    return frame, np.array(["a", "b", "c"])[y]


def _adapter(model, data, tmp_path, **save_kwargs):
    frame, y = data
    model.fit(frame, y)
    path = tmp_path / "model"
    mlflow.sklearn.save_model(model, str(path), serialization_format="cloudpickle",
                              pip_requirements=[], **save_kwargs)
    pyfunc = mlflow.pyfunc.load_model(str(path))
    return ModelAdapter(pyfunc, list(frame.columns), is_classifier=True)


@pytest.mark.parametrize("make", [
    lambda: RandomForestClassifier(n_estimators=10, random_state=0),
    lambda: make_pipeline(StandardScaler(), HistGradientBoostingClassifier(max_iter=20)),
])
def test_labels_from_probabilities_equal_the_models_predict(make, data, tmp_path):
    adapter = _adapter(make(), data, tmp_path)
    assert adapter.labels_follow_proba
    labels, proba = predict_via_proba(adapter, data[0])
    np.testing.assert_array_equal(labels, adapter.predict(data[0]))
    np.testing.assert_allclose(proba, adapter.predict_proba(data[0]))


@pytest.mark.parametrize("make, kwargs", [
    (lambda: LogisticRegression(max_iter=300), {}),  # predict via decision_function
    (lambda: RandomForestClassifier(n_estimators=5, random_state=0),
     {"pyfunc_predict_fn": "predict_proba"}),  # the pyfunc serves probabilities
    (lambda: _ThresholdForest(n_estimators=5, random_state=0), {}),  # overrides predict
])
def test_other_models_predict_the_usual_way(make, kwargs, data, tmp_path):
    adapter = _adapter(make(), data, tmp_path, **kwargs)
    assert not adapter.labels_follow_proba
    assert predict_via_proba(adapter, data[0]) is None


# ------------------------------------------------------------ bounded samples for checks


def test_stratified_index_keeps_class_shares_and_is_seeded():
    from mlflow_deepfix.testing.stats.sampling import stratified_index

    rng = np.random.default_rng(0)
    labels = pd.Series(rng.choice(["a", "b", "rare"], size=100_000, p=[0.7, 0.2995, 0.0005]))
    index = stratified_index(labels, len(labels), 5_000, seed=3)
    assert len(index) == 5_000 and np.all(np.diff(index) > 0)
    full = labels.value_counts(normalize=True)
    sample = labels.iloc[index].value_counts(normalize=True)
    assert abs(sample["a"] - full["a"]) < 1e-3 and abs(sample["b"] - full["b"]) < 1e-3
    assert sample.get("rare", 0) > 0  # a rare class keeps at least one row
    np.testing.assert_array_equal(index, stratified_index(labels, len(labels), 5_000, seed=3))
    assert not np.array_equal(index, stratified_index(labels, len(labels), 5_000, seed=4))
    np.testing.assert_array_equal(stratified_index(labels, 10, 5_000, seed=0), np.arange(10))
    with_nan = pd.Series([1.0, np.nan] * 50)
    assert len(stratified_index(with_nan, 100, 10, seed=0)) == 10
    assert len(stratified_index(None, 100, 10, seed=0)) == 10
