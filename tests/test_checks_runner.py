"""run_checks: skips, resilience, determinism, exact numbers, validation, catalog.

Real Deepchecks on small generated data; the model is a real scikit-learn pipeline
(string categoricals encoded inside it) saved and loaded as an MLflow pyfunc model.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder

from mlflow_deepfix.checks import (
    CHECK_CATALOG,
    DEEPCHECKS_CATEGORY,
    SUITES,
    CheckInputs,
    run_checks,
)
from mlflow_deepfix.errors import DeepfixInputError
from mlflow_deepfix.inputs.model_adapter import ModelAdapter
from mlflow_deepfix.schemas import CATEGORY_LAYERS

FEATURES = [f"x{i}" for i in range(6)] + ["color"]


def _data(n_rows: int, seed: int) -> pd.DataFrame:
    X, y = make_classification(n_samples=n_rows, n_features=6, n_informative=4,
                               random_state=seed)
    frame = pd.DataFrame(X, columns=FEATURES[:-1])
    frame["color"] = np.where(X[:, 0] > 0, "red", "blue")
    frame["label"] = y
    return frame


def _pyfunc(model, path):
    import mlflow.pyfunc
    import mlflow.sklearn

    mlflow.sklearn.save_model(model, str(path), serialization_format="cloudpickle",
                              pip_requirements=[])
    return mlflow.pyfunc.load_model(str(path))


@pytest.fixture(scope="module")
def splits():
    frame = _data(500, seed=3)
    return frame.iloc[:350].reset_index(drop=True), frame.iloc[350:].reset_index(drop=True)


@pytest.fixture(scope="module")
def adapter(splits, tmp_path_factory):
    train, _ = splits
    model = Pipeline([
        ("pre", ColumnTransformer([("cat", OneHotEncoder(), ["color"])], remainder="passthrough")),
        ("rf", RandomForestClassifier(n_estimators=15, max_depth=5, random_state=0)),
    ]).fit(train[FEATURES], train["label"])
    return ModelAdapter(_pyfunc(model, tmp_path_factory.mktemp("m") / "model"), FEATURES,
                        is_classifier=True)


def _inputs(train, test, model, **extra) -> CheckInputs:
    return CheckInputs(train=train, test=test, label="label", task="binary_classification",
                       feature_names=FEATURES, cat_features=["color"], model=model, **extra)


def _by_name(outcomes):
    return {o.name: o for o in outcomes}


def test_without_training_data_train_test_checks_are_skipped(splits, adapter):
    _, test = splits
    outcomes = _by_name(run_checks(_inputs(None, test, adapter), SUITES, sample_size=None,
                                   seed=0, progress=False))
    pair_checks = [n for n, spec in CHECK_CATALOG.items() if spec.scope == "pair"]
    assert len(pair_checks) == 16  # 12 train_test_validation + 4 model_evaluation
    for name in pair_checks:
        assert outcomes[name].outcome == "skipped"
        assert outcomes[name].reason == "no training data"
    # single-dataset checks ran on the test split alone
    duplicates = outcomes["Data Duplicates"]
    assert duplicates.outcome == "passed"
    assert duplicates.conditions and not duplicates.conditions[0].name.endswith("(test)")
    assert outcomes["Roc Report"].outcome in ("passed", "not_passed")
    assert outcomes["Roc Report"].value > 0.7


def test_without_model_model_checks_are_skipped_with_the_reason(splits):
    train, test = splits
    reason = "the model's predict failed: ValueError: columns are missing"
    outcomes = run_checks(_inputs(train, test, None, model_skip_reason=reason), SUITES,
                          sample_size=None, seed=0, progress=False)
    for outcome in outcomes:
        if outcome.suite == "model_evaluation":
            assert (outcome.outcome, outcome.reason) == ("skipped", reason), outcome.name
        else:
            assert outcome.outcome != "errored", (outcome.name, outcome.reason)
    assert sum(o.suite == "model_evaluation" for o in outcomes) == 11


def test_classifier_without_probabilities_skips_probability_checks(splits, tmp_path):
    from sklearn.svm import LinearSVC

    train, test = splits
    numeric = FEATURES[:-1]
    model = LinearSVC(random_state=0).fit(train[numeric], train["label"])
    no_proba = ModelAdapter(_pyfunc(model, tmp_path / "svc"), numeric, is_classifier=True)
    assert not no_proba.has_proba
    inputs = CheckInputs(train=train, test=test, label="label", task="binary_classification",
                         feature_names=numeric, cat_features=[], model=no_proba)
    outcomes = _by_name(run_checks(inputs, ["model_evaluation"], sample_size=None, seed=0,
                                   progress=False))
    for name in ("Roc Report", "Calibration Score", "Weak Segments Performance"):
        assert outcomes[name].outcome == "skipped"
        assert "no class probabilities" in outcomes[name].reason
        assert no_proba.no_proba_reason in outcomes[name].reason
    assert outcomes["Confusion Matrix Report"].outcome == "passed"
    assert outcomes["Train Test Performance"].outcome in ("passed", "not_passed")


def test_one_check_raising_is_errored_and_the_others_complete(splits, adapter, monkeypatch):
    from deepchecks.tabular.checks import FeatureDrift

    def broken(self, context):
        raise RuntimeError("drift exploded")

    monkeypatch.setattr(FeatureDrift, "run_logic", broken)
    train, test = splits
    outcomes = run_checks(_inputs(train, test, adapter), ["train_test_validation"],
                          sample_size=None, seed=0, progress=False)
    drift = _by_name(outcomes)["Feature Drift"]
    assert drift.outcome == "errored"
    assert drift.reason == "RuntimeError: drift exploded"
    others = [o for o in outcomes if o.name != "Feature Drift"]
    assert len(others) == 11
    assert all(o.outcome != "errored" for o in others)
    assert _by_name(outcomes)["Label Drift"].outcome == "passed"


def test_same_seed_same_outcomes(splits, adapter):
    train, test = splits

    def run(seed):
        outcomes = run_checks(_inputs(train, test, adapter), SUITES, sample_size=200,
                              seed=seed, progress=False)
        # Model Inference Time measures the clock: only its verdict can repeat.
        return [o.model_dump(include={"name", "outcome"}) if o.name == "Model Inference Time"
                else o.model_dump(exclude={"duration_seconds"}) for o in outcomes]

    first = run(7)
    assert run(7) == first
    # sample_size=200 makes the sampled checks depend on the seed
    assert run(8) != first


def test_samples_mix_reports_the_share_of_test_rows_found_in_train():
    frame = _data(2000, seed=5)
    train = frame.iloc[:1500].reset_index(drop=True)
    fresh = frame.iloc[1500:1810].reset_index(drop=True)              # 310 new rows
    copied = train.sample(190, random_state=1).reset_index(drop=True)  # 190 leaked rows
    test = pd.concat([fresh, copied], ignore_index=True)                # 38% overlap
    outcomes = _by_name(run_checks(_inputs(train, test, None), ["train_test_validation"],
                                   sample_size=None, seed=0, progress=False))
    mix = outcomes["Train Test Samples Mix"]
    assert mix.outcome == "not_passed"
    assert mix.value == pytest.approx(0.38, abs=0.005)
    assert mix.conditions[0].status == "FAIL"


def test_conflicting_labels_share_is_exact_over_all_rows(splits):
    train, test = splits
    train = train.copy()
    # 20 rows copy the features of 20 others with the opposite label: 40 conflicting rows
    twins = train.iloc[:20].copy()
    twins["label"] = 1 - twins["label"]
    train = pd.concat([train, twins], ignore_index=True)
    outcome = _by_name(run_checks(_inputs(train, test, None), ["data_integrity"],
                                  sample_size=None, seed=0, progress=False))["Conflicting Labels"]
    assert outcome.outcome == "not_passed"
    assert outcome.values["train_value"] == pytest.approx(40 / len(train))
    assert outcome.values["test_value"] == 0.0
    assert outcome.value == pytest.approx(40 / len(train))
    assert {c.name.rsplit(" ", 1)[-1] for c in outcome.conditions} == {"(train)", "(test)"}


def test_invalid_arguments_name_the_parameter(splits):
    train, test = splits
    inputs = _inputs(train, test, None)
    with pytest.raises(DeepfixInputError, match="suites must be .*data_integrity"):
        run_checks(inputs, ["data_integrity", "everything"], sample_size=None, seed=0)
    with pytest.raises(DeepfixInputError, match="sample_size must be an int >= 100"):
        run_checks(inputs, SUITES, sample_size=10, seed=0)
    with pytest.raises(DeepfixInputError, match=r"test lacks the columns \['missing'\]"):
        run_checks(CheckInputs(train=None, test=test, label="label",
                               task="binary_classification", feature_names=["missing"],
                               cat_features=[], model=None), SUITES, sample_size=None, seed=0)
    with pytest.raises(DeepfixInputError, match="task must be one of"):
        run_checks(CheckInputs(train=None, test=test, label="label", task="classification",
                               feature_names=FEATURES, cat_features=[], model=None),
                   SUITES, sample_size=None, seed=0)


def test_catalog_covers_every_default_check_with_a_contract_category():
    from deepchecks.tabular.suites import data_integrity, model_evaluation, train_test_validation

    seen = []
    for suite, factory in (("data_integrity", data_integrity),
                           ("train_test_validation", train_test_validation),
                           ("model_evaluation", model_evaluation)):
        for check in factory().checks.values():
            spec = CHECK_CATALOG[check.name()]
            assert spec.suite == suite and spec.value
            seen.append(check.name())
    assert seen == list(CHECK_CATALOG)
    assert set(DEEPCHECKS_CATEGORY) == set(CHECK_CATALOG) - {"Model Inference Time"}
    assert set(DEEPCHECKS_CATEGORY.values()) <= set(CATEGORY_LAYERS)
