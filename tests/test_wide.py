"""Wide frames: the Deepchecks checks see at most ``max_features`` columns (ranked by the
model's importance, then variance), the model still receives every column, and the
testing step says so in the notes. ``benchmarks/wide.py`` times 2,000 x 1,000."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from mlflow_deepfix.checks import CheckInputs, run_checks, select_check_features


def _wide(n_rows: int, n_features: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features)) * np.geomspace(0.1, 100.0, n_features)
    frame = pd.DataFrame(X, columns=[f"g{i}" for i in range(n_features)])
    frame["label"] = (X[:, 0] + X[:, 1] > 0).astype(int)
    return frame


def test_selection_ranks_importance_then_variance_and_keeps_column_order():
    frame = _wide(200, 30)
    features = [c for c in frame.columns if c != "label"]
    kept = select_check_features(frame, features, importance={"g0": 0.6, "g1": 0.4}, limit=5)
    # g0, g1 by importance; then the three widest columns (variance grows with the index)
    assert kept == ["g0", "g1", "g27", "g28", "g29"]
    assert select_check_features(frame, features, limit=40) == features
    frame["kind"] = np.where(frame["g3"] > 0, "a", "b")
    kept = select_check_features(frame, [*features, "kind"], limit=8)
    assert "kind" in kept and len(kept) == 8  # non-numeric columns are kept first


def test_capped_checks_see_the_top_columns_and_the_model_gets_all(tmp_path):
    import mlflow.pyfunc
    import mlflow.sklearn

    from mlflow_deepfix.inputs.model_adapter import ModelAdapter

    frame = _wide(300, 60)
    features = [c for c in frame.columns if c != "label"]
    train, test = frame.iloc[:200].reset_index(drop=True), frame.iloc[200:].reset_index(drop=True)
    model = LogisticRegression(max_iter=2000).fit(train[features], train["label"])
    mlflow.sklearn.save_model(model, str(tmp_path / "m"), serialization_format="cloudpickle",
                              pip_requirements=[])
    adapter = ModelAdapter(mlflow.pyfunc.load_model(str(tmp_path / "m")), features,
                           is_classifier=True)
    importance = dict(zip(features, np.abs(model.coef_[0]) / np.abs(model.coef_[0]).sum()))
    inputs = CheckInputs(train=train, test=test, label="label", task="binary_classification",
                         feature_names=features, cat_features=[], model=adapter,
                         feature_importance=importance)
    outcomes = {o.name: o for o in run_checks(
        inputs, ["data_integrity", "train_test_validation", "model_evaluation"],
        sample_size=None, seed=0, progress=False, max_features=10)}
    kept = set(select_check_features(test, features, importance=importance, limit=10))
    assert {"g0", "g1"} <= kept and len(kept) == 10
    errored = {n: o.reason for n, o in outcomes.items() if o.outcome == "errored"}
    assert not errored, errored
    # the model ran on every column: inference time was measured, performance computed
    assert outcomes["Model Inference Time"].outcome == "passed"
    assert outcomes["Train Test Performance"].outcome in ("passed", "not_passed")
    drift = outcomes["Feature Drift"].values
    assert drift and set(drift) <= kept, sorted(set(drift) - kept)


@pytest.mark.parametrize("limit", [1, 3])
def test_tiny_limits_still_give_a_valid_selection(limit):
    frame = _wide(50, 10)
    features = [c for c in frame.columns if c != "label"]
    kept = select_check_features(frame, features, limit=limit)
    assert len(kept) == limit and set(kept) <= set(features)
