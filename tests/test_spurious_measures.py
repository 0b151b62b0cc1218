"""The spurious-correlation measures on real data: a shortcut of a multiclass label read
through a numeric feature, and the choice of features for a model without native
importances (testing/spurious.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.datasets import load_iris, load_wine
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from mlflow_deepfix.testing.spurious import association, measure_spurious


def _spur16_shortcut(frame: pd.DataFrame, codes: np.ndarray, *, seed: int, noise: float,
                     name: str, n_train: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Train/test split with a numeric column that follows the label code in training and
    is drawn from the same values, independently of the label, in the test split (the
    link broken, the marginal kept)."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(frame))
    train, test = frame.iloc[order[:n_train]].copy(), frame.iloc[order[n_train:]].copy()
    shortcut = np.round(50 + 10 * (codes[order[:n_train]] + rng.normal(0, noise, n_train)), 3)
    train[name] = shortcut
    test[name] = rng.choice(shortcut, len(test), replace=True)
    return train.reset_index(drop=True), test.reset_index(drop=True)


def test_spur16_a_broken_multiclass_shortcut_on_a_numeric_feature_is_measured_as_broken():
    data = load_iris(as_frame=True).frame
    features = [c for c in data.columns if c != "target"] + ["batch_reading"]
    train, test = _spur16_shortcut(data, data["target"].to_numpy(), seed=0, noise=0.3,
                                   name="batch_reading", n_train=105)
    model = HistGradientBoostingClassifier(random_state=0).fit(train[features], train["target"])
    summary = measure_spurious(lambda f: model.predict(f[features]), train, test,
                               target="target", task="multiclass_classification",
                               feature_names=features, cat_features=[], seed=0)
    by_name = {f.feature: f for f in summary.features}
    shortcut = by_name["batch_reading"]
    # nearly unique raw values coded one by one read ~0.5 on both splits whatever the
    # link; binned with the training edges the link reads strong in training, ~0 in test
    assert shortcut.association_train > 0.6
    assert shortcut.association_test < 0.2
    assert shortcut.change_high < 0
    # a real (stable) relation is not called broken
    petal = by_name["petal length (cm)"]
    assert petal.association_train > 0.5 and petal.change_high > 0


def test_spur16_binned_association_has_no_chance_level_for_an_unrelated_feature():
    data = load_iris(as_frame=True).frame
    y = data["target"]
    shuffled = pd.Series(np.random.default_rng(1).permutation(y.to_numpy()))
    x = data["sepal width (cm)"]
    related = association(x, y, categorical=False, task="multiclass_classification")
    unrelated = association(x, shuffled, categorical=False, task="multiclass_classification")
    assert related > 0.15
    assert unrelated < 0.05  # the raw-value codes read about as much as the real link
    assert association(data["petal length (cm)"], y, categorical=False,
                       task="multiclass_classification") > 0.6


def test_a_categorical_feature_with_missing_values_is_measured_missing_as_a_level():
    """Missing values are one more level: a column missing exactly where the label is 1
    carries the label (it failed the probe before: factorize coded missing as -1)."""
    y = pd.Series([0, 1] * 50)
    x = pd.Series(np.where(y == 1, None, "a"), dtype=object)
    x.iloc[:10] = "b"
    value = association(x, y, categorical=True, task="binary_classification", positive=1)
    assert 0.5 < value <= 1.0
    unrelated = pd.Series(["a", None] * 50, dtype=object)
    shuffled = pd.Series([0, 0, 1, 1] * 25)
    assert association(unrelated, shuffled, categorical=True, task="binary_classification",
                       positive=1) < 0.05


def test_spur16_features_without_importances_are_ranked_by_association_not_by_name():
    data = load_wine(as_frame=True).frame
    # upper-case names sort before the shortcut: by name alone it was never measured
    data = data.rename(columns={c: c.upper() for c in data.columns if c != "target"})
    binary = (data["target"] == 0).astype(int).to_numpy()
    data["target"] = binary
    features = [c for c in data.columns if c != "target"] + ["device_score"]
    assert len(features) > 10
    train, test = _spur16_shortcut(data, binary, seed=2, noise=0.3, name="device_score",
                                   n_train=125)
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500)).fit(
        train[features], train["target"])
    summary = measure_spurious(lambda f: model.predict(f[features]), train, test,
                               target="target", task="binary_classification",
                               feature_names=features, cat_features=[], importances=None,
                               classes=[0, 1], seed=0)
    measured = {f.feature for f in summary.features}
    assert len(measured) == 10
    assert "device_score" in measured
    shortcut = next(f for f in summary.features if f.feature == "device_score")
    assert shortcut.association_train > 0.3 and shortcut.change_high < 0
