"""Deepchecks 0.19.1 runs every default tabular check on the installed stack.

Real Deepchecks, real scikit-learn models saved and loaded as MLflow pyfunc models, small
data. Every check of ``data_integrity``, ``train_test_validation`` and
``model_evaluation`` must run without error; the only checks allowed not to run are
listed in ``NOT_RELEVANT`` with the reason Deepchecks gives. The same file runs on the
last stack Deepchecks supported (``scripts/check_old_stack.sh``), where fewer patches
are needed.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine
from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from mlflow_deepfix.checks import CHECK_CATALOG, CheckInputs, _compat, run_checks
from mlflow_deepfix.inputs.model_adapter import ModelAdapter

ALL_SUITES = ["data_integrity", "train_test_validation", "model_evaluation"]

#: (case, check) -> words of the reason Deepchecks gives for the check not applying.
NOT_RELEVANT = {
    ("binary", "Regression Error Distribution"): "irrelevant for classification tasks",
    ("multiclass", "Regression Error Distribution"): "irrelevant for classification tasks",
    # a LogisticRegression pipeline is not a boosting model
    ("multiclass", "Boosting Overfit"): "relevant for Boosting models",
    ("regression", "Roc Report"): "irrelevant for regression tasks",
    ("regression", "Confusion Matrix Report"): "irrelevant for regression tasks",
    ("regression", "Calibration Score"): "irrelevant for regression tasks",
    ("regression", "Conflicting Labels"): "irrelevant for regression tasks",
    ("regression", "New Label Train Test"): "irrelevant for regression tasks",
}


def _deepchecks_suite_names() -> list[str]:
    from deepchecks.tabular.suites import data_integrity, model_evaluation, train_test_validation

    return [c.name() for suite in (data_integrity(), train_test_validation(), model_evaluation())
            for c in suite.checks.values()]


def _frame(loader, n_rows: int, seed: int) -> tuple[pd.DataFrame, list[str]]:
    """A bundled scikit-learn dataset, subsampled, with a categorical, an index and a
    datetime column added so that every check has something to look at."""
    X, y = loader(return_X_y=True, as_frame=True)
    rng = np.random.default_rng(seed)
    rows = rng.permutation(len(X))[:n_rows]
    frame = X.iloc[rows, :8].reset_index(drop=True)
    frame["segment"] = np.where(frame.iloc[:, 0] > frame.iloc[:, 0].median(), "high", "low")
    frame["row_id"] = np.arange(len(frame))
    frame["when"] = pd.date_range("2021-01-01", periods=len(frame), freq="D")
    frame["target"] = y.iloc[rows].to_numpy()
    features = [c for c in frame.columns if c not in ("row_id", "when", "target")]
    return frame, features


def _pyfunc(model, tmp_path, name):
    """Save the fitted model as an MLflow model and load it back as pyfunc (what the
    evaluator receives)."""
    import mlflow.pyfunc
    import mlflow.sklearn

    path = tmp_path / name
    mlflow.sklearn.save_model(model, str(path), serialization_format="cloudpickle",
                              pip_requirements=[])
    return mlflow.pyfunc.load_model(str(path))


CASES = {
    "binary": (load_breast_cancer, "binary_classification",
               lambda: GradientBoostingClassifier(n_estimators=20, random_state=0)),
    "multiclass": (load_wine, "multiclass_classification",
                   lambda: make_pipeline(StandardScaler(), LogisticRegression(max_iter=500))),
    "regression": (load_diabetes, "regression",
                   lambda: GradientBoostingRegressor(n_estimators=20, random_state=0)),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def case_outcomes(request, tmp_path_factory):
    case = request.param
    loader, task, make_model = CASES[case]
    frame, features = _frame(loader, 170 if case == "multiclass" else 300, seed=1)
    frame["segment"] = frame["segment"].map({"high": 1, "low": 0})  # numeric for the model
    train, test = frame.iloc[:200], frame.iloc[200:]
    if case == "multiclass":
        train, test = frame.iloc[:110], frame.iloc[110:]
    model = make_model().fit(train[features], train["target"])
    pyfunc = _pyfunc(model, tmp_path_factory.mktemp(case), "model")
    adapter = ModelAdapter(pyfunc, features, is_classifier=task != "regression")
    inputs = CheckInputs(train=train, test=test, label="target", task=task,
                         feature_names=features, cat_features=["segment"], model=adapter,
                         index_col="row_id", datetime_col="when")
    return case, run_checks(inputs, ALL_SUITES, sample_size=None, seed=0, progress=False)


def test_every_default_check_appears_once_in_suite_order(case_outcomes):
    _, outcomes = case_outcomes
    assert [o.name for o in outcomes] == _deepchecks_suite_names()
    assert len(outcomes) == 35


def test_every_default_check_runs_unless_not_relevant(case_outcomes):
    case, outcomes = case_outcomes
    for outcome in outcomes:
        expected = NOT_RELEVANT.get((case, outcome.name))
        if expected is None:
            assert outcome.outcome in ("passed", "not_passed"), (
                f"{case}: {outcome.name} {outcome.outcome}: {outcome.reason}")
        else:
            assert outcome.outcome == "skipped", f"{case}: {outcome.name} {outcome.outcome}"
            assert expected in outcome.reason, outcome.reason


def test_checks_that_ran_report_their_headline_number(case_outcomes):
    case, outcomes = case_outcomes
    for outcome in outcomes:
        if outcome.name == "Model Inference Time":
            # a clock reading: kept in values, out of the deterministic headline value
            assert outcome.value is None and outcome.values["seconds_per_row"] > 0, outcome
            continue
        if outcome.outcome in ("passed", "not_passed"):
            assert outcome.value is not None, f"{case}: {outcome.name} has no value"
            assert np.isfinite(outcome.value)
            assert outcome.name in CHECK_CATALOG


def test_boosting_overfit_runs_on_the_raw_boosting_model(case_outcomes):
    case, outcomes = case_outcomes
    boosting = next(o for o in outcomes if o.name == "Boosting Overfit")
    if case == "multiclass":  # a linear pipeline: Deepchecks says why it does not apply
        assert boosting.outcome == "skipped" and "LogisticRegression" in boosting.reason
    else:
        assert boosting.outcome in ("passed", "not_passed")
        assert {"train_score", "test_score", "best_test_score"} <= set(boosting.values)


# ------------------------------------------------------------------- the patches


def test_telemetry_is_disabled_by_importing_the_package():
    env = {k: v for k, v in os.environ.items() if k != "DISABLE_DEEPCHECKS_ANONYMOUS_TELEMETRY"}
    code = ("import os, mlflow_deepfix.checks\n"
            "from deepchecks.analytics import anonymous_telemetry as t\n"
            "print(os.environ['DISABLE_DEEPCHECKS_ANONYMOUS_TELEMETRY'], bool(t.ANALYTICS_DISABLED))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=300, check=True)
    assert out.stdout.split()[-2:] == ["1", "True"]


def test_patches_applied_exactly_when_the_stack_needs_them():
    import numpy
    import sklearn.metrics

    state = _compat.STATE
    assert state.applied
    assert state.unmatched == []
    expected = {
        "numpy2_aliases": not hasattr(numpy, "NaN"),
        "numpy_quantile_method": "interpolation" not in inspect.signature(numpy.quantile).parameters,
        "pandas3_applymap": not hasattr(pd.DataFrame, "applymap"),
        "pandas3_stack": len(pd.DataFrame([[1.0, np.nan]]).stack()) == 2,
        "sklearn_mse_squared": "squared" not in inspect.signature(
            sklearn.metrics.mean_squared_error).parameters,
    }
    for name, needed in expected.items():
        assert (name in state.needed) is needed, name
        assert (name in state.edited) is needed, name
    for patch in _compat.PATCHES:  # every needed patch edited every module it names
        if patch.name in state.needed and patch.edits:
            assert sorted(state.edited[patch.name]) == sorted({e.module for e in patch.edits})


def test_source_edits_reach_deepchecks_code_and_leave_numpy_and_pandas_alone():
    import numpy
    from deepchecks.tabular.checks import TrainTestSamplesMix

    names = TrainTestSamplesMix.run_logic.__code__.co_names
    if "pandas3_applymap" in _compat.STATE.needed:
        assert "map" in names and "applymap" not in names
        assert not hasattr(pd.DataFrame, "applymap")  # pandas itself untouched
    else:
        assert "applymap" in names
    if "numpy2_aliases" in _compat.STATE.needed:
        assert not hasattr(numpy, "NaN") and not hasattr(numpy, "Inf")


def test_feature_feature_correlation_counts_only_correlated_pairs():
    """pandas 3 made stack() keep NaN: unpatched, the condition failed for every pair."""
    from deepchecks.tabular import Dataset
    from deepchecks.tabular.checks import FeatureFeatureCorrelation

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    frame["a2"] = frame["a"] * 2 + rng.normal(scale=0.01, size=300)  # the one correlated pair
    frame["y"] = rng.integers(0, 2, 300)
    check = FeatureFeatureCorrelation().add_condition_max_number_of_pairs_above_threshold()
    result = check.run(Dataset(frame, label="y", cat_features=[]))
    (condition,) = result.conditions_results
    assert condition.details.endswith("[('a', 'a2')]")


def test_pkg_resources_shim_does_not_leak():
    shim = _compat.STATE.pkg_resources_shim
    assert shim is ("pkg_resources_shim" in _compat.STATE.needed)
    if shim:
        # Only Deepchecks holds it; other code still sees that pkg_resources is missing.
        assert "pkg_resources" not in sys.modules
        assert importlib.util.find_spec("pkg_resources") is None
        from deepchecks.utils import display

        assert display.pkg_resources.parse_version("1.10") > display.pkg_resources.parse_version("1.9")
        assert "numpy" in {d.key for d in display.pkg_resources.working_set}


# ------------------------------------------- Deepchecks' own scorer names (issue 17)


@pytest.fixture(scope="module")
def diabetes_split():
    """Diabetes regression, a fitted gradient boosting model, Deepchecks datasets."""
    from deepchecks.tabular import Dataset

    X, y = load_diabetes(return_X_y=True, as_frame=True)
    frame = X.assign(target=y)
    train, test = frame.iloc[:300], frame.iloc[300:]
    model = GradientBoostingRegressor(random_state=0, n_estimators=30).fit(
        train.drop(columns="target"), train["target"])
    return (Dataset(train, label="target", cat_features=[]),
            Dataset(test, label="target", cat_features=[]), model)


@pytest.fixture(scope="module")
def wine_split():
    """Three-class wine data and a logistic regression (probabilities for every class)."""
    from deepchecks.tabular import Dataset

    X, y = load_wine(return_X_y=True, as_frame=True)
    # two features only, so that the classes overlap and per-class AUCs differ from 1
    frame = X.iloc[:, :2].assign(target=y).sample(frac=1.0, random_state=0)
    frame = frame.reset_index(drop=True)
    train, test = frame.iloc[:120], frame.iloc[120:]
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500)).fit(
        train.drop(columns="target"), train["target"])
    return (Dataset(train, label="target", cat_features=[]),
            Dataset(test, label="target", cat_features=[]), model)


def _metric(frame: pd.DataFrame, metric: str, **where) -> pd.Series:
    rows = frame[frame["Metric"] == metric]
    for column, value in where.items():
        rows = rows[rows[column] == value]
    return rows["Value"]


def test_single_dataset_performance_regression_default_is_rmse(diabetes_split):
    """Its default regression metric is Deepchecks' 'RMSE' scorer, built with
    make_scorer(mean_squared_error, squared=False): a TypeError on scikit-learn >= 1.6
    without the sklearn_scorer_mse_squared patch."""
    from deepchecks.tabular.checks import SingleDatasetPerformance
    from sklearn.metrics import root_mean_squared_error

    _, test, model = diabetes_split
    result = SingleDatasetPerformance().run(test, model).value
    expected = root_mean_squared_error(test.label_col, model.predict(test.features_columns))
    (value,) = _metric(result, "RMSE")
    assert value == pytest.approx(expected, rel=1e-12)


def test_single_dataset_performance_with_deepchecks_regression_scorer_names(diabetes_split):
    from deepchecks.tabular.checks import SingleDatasetPerformance
    from sklearn.metrics import mean_absolute_error, mean_squared_error

    _, test, model = diabetes_split
    with pytest.warns(UserWarning, match="higher metric values represent better"):
        result = SingleDatasetPerformance(scorers=["rmse", "mse", "mean_squared_error",
                                                   "root_mean_squared_error", "mae"]).run(
            test, model).value
    predictions = model.predict(test.features_columns)
    mse = mean_squared_error(test.label_col, predictions)
    assert _metric(result, "mse").item() == pytest.approx(mse, rel=1e-12)
    assert _metric(result, "mean_squared_error").item() == pytest.approx(mse, rel=1e-12)
    assert _metric(result, "rmse").item() == pytest.approx(mse ** 0.5, rel=1e-12)
    assert _metric(result, "root_mean_squared_error").item() == pytest.approx(mse ** 0.5,
                                                                             rel=1e-12)
    assert _metric(result, "mae").item() == pytest.approx(
        mean_absolute_error(test.label_col, predictions), rel=1e-12)


def test_single_dataset_performance_classification_default_and_per_class_auc(wine_split):
    from deepchecks.tabular.checks import SingleDatasetPerformance
    from sklearn.metrics import roc_auc_score

    _, test, model = wine_split
    default = SingleDatasetPerformance().run(test, model).value
    assert set(default["Metric"]) == {"Accuracy", "Precision - Macro Average",
                                      "Recall - Macro Average"}
    result = SingleDatasetPerformance(scorers=["roc_auc_per_class"]).run(test, model).value
    proba = model.predict_proba(test.features_columns)
    for k, cls in enumerate(model.classes_):
        expected = roc_auc_score(test.label_col == cls, proba[:, k])
        assert expected < 0.999  # a test that could tell probabilities from labels
        # Deepchecks names per-class metrics without the "_per_class" suffix
        assert _metric(result, "roc_auc", Class=cls).item() == pytest.approx(expected,
                                                                            rel=1e-12)


def test_binary_neg_log_loss_scorer_uses_probabilities():
    """'neg_log_loss' was make_scorer(log_loss, needs_proba=True, labels=[0, 1]): with
    needs_proba gone (scikit-learn 1.6) it was scored on hard labels and raised."""
    from deepchecks.tabular import Dataset
    from deepchecks.tabular.checks import SingleDatasetPerformance
    from sklearn.metrics import log_loss

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    frame = X.iloc[:, :6].assign(target=y)
    train, test = frame.iloc[:400], frame.iloc[400:]
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500)).fit(
        train.drop(columns="target"), train["target"])
    dataset = Dataset(test, label="target", cat_features=[])
    result = SingleDatasetPerformance(scorers=["neg_log_loss"]).run(dataset, model).value
    proba = model.predict_proba(test.drop(columns="target"))[:, 1]
    assert _metric(result, "neg_log_loss").item() == pytest.approx(
        -log_loss(test["target"], proba), rel=1e-9)


def test_train_test_performance_with_deepchecks_classification_scorers(wine_split):
    """Deepchecks' own test_classification_deepchecks_scorers, on our data."""
    from deepchecks.tabular.checks import TrainTestPerformance
    from sklearn.metrics import roc_auc_score

    train, test, model = wine_split
    check = TrainTestPerformance(scorers=["fpr_per_class", "fnr_per_class",
                                          "specificity_per_class", "fnr_macro",
                                          "roc_auc_per_class"])
    result = check.run(train, test, model).value
    assert set(result["Metric"]) == {"fpr", "fnr", "specificity", "fnr_macro", "roc_auc"}
    for split, dataset in (("Train", train), ("Test", test)):
        proba = model.predict_proba(dataset.features_columns)
        for k, cls in enumerate(model.classes_):
            expected = roc_auc_score(dataset.label_col == cls, proba[:, k])
            assert _metric(result, "roc_auc", Dataset=split, Class=cls).item() == \
                pytest.approx(expected, rel=1e-12)


def test_train_test_performance_with_deepchecks_regression_scorers(diabetes_split):
    from deepchecks.tabular.checks import TrainTestPerformance
    from sklearn.metrics import root_mean_squared_error

    train, test, model = diabetes_split
    with pytest.warns(UserWarning):
        result = TrainTestPerformance(scorers=["rmse", "neg_rmse", "r2"]).run(
            train, test, model).value
    for split, dataset in (("Train", train), ("Test", test)):
        rmse = root_mean_squared_error(dataset.label_col, model.predict(dataset.features_columns))
        assert _metric(result, "rmse", Dataset=split).item() == pytest.approx(rmse, rel=1e-12)
        assert _metric(result, "neg_rmse", Dataset=split).item() == pytest.approx(-rmse,
                                                                                 rel=1e-12)


def test_mixed_nulls_counts_three_kinds_in_an_object_column():
    """pandas 3 infers the ``str`` dtype for text columns, whose missing value is NaN:
    ``pd.NA`` and ``None`` become NaN when the frame is built, before any check sees
    it, so no patch can restore them. Documented workaround (README): build such
    columns with ``dtype=object``; then all three kinds are counted."""
    from deepchecks.tabular import Dataset
    from deepchecks.tabular.checks import MixedNulls

    values = [np.nan, np.nan, pd.NA, "value", "NULL", "ok", "fine"]
    inferred = pd.DataFrame({"col1": values})
    kept = pd.DataFrame({"col1": pd.Series(values, dtype=object)})
    result = MixedNulls().run(Dataset(kept, cat_features=[])).value
    assert set(result["columns"]["col1"]) == {"numpy.nan", "pandas.NA", '"NULL"'}
    from mlflow_deepfix.checks._condense import CONDENSERS

    value, values_, _ = CONDENSERS["Mixed Nulls"](result)
    assert value == 3.0 and values_["col1"] == 3.0
    if pd.api.types.is_string_dtype(inferred["col1"]) and inferred["col1"].dtype != object:
        # pandas >= 3: the inferred str column lost pd.NA (the limitation documented)
        inferred_result = MixedNulls().run(Dataset(inferred, cat_features=[])).value
        assert len(inferred_result["columns"]["col1"]) == 2


def test_scorer_patches_applied_exactly_when_the_stack_needs_them():
    import sklearn.metrics

    state = _compat.STATE
    lacks_squared = "squared" not in inspect.signature(
        sklearn.metrics.mean_squared_error).parameters
    lacks_needs_proba = "needs_proba" not in inspect.signature(
        sklearn.metrics.make_scorer).parameters
    assert ("sklearn_scorer_mse_squared" in state.needed) is lacks_squared
    assert ("sklearn_scorer_needs_proba" in state.needed) is lacks_needs_proba
    from deepchecks.tabular.metric_utils import scorers

    rmse = scorers.regression_scorers_lower_is_better_dict["rmse"]
    assert "squared" not in rmse._kwargs or not lacks_squared
    auc = scorers.multiclass_scorers_dict["roc_auc_per_class"]
    assert "needs_proba" not in auc._kwargs or not lacks_needs_proba


def test_condition_texts_carry_no_numpy2_scalar_reprs():
    """numpy 2 prints ``np.int64(1)``; Deepchecks formats class labels into condition
    details with repr(). The condenser strips the wrappers from every condition text."""
    from deepchecks.tabular import Dataset
    from deepchecks.tabular.checks import RocReport

    from mlflow_deepfix.checks._condense import condense, strip_numpy_reprs

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.normal(size=200)})
    frame["y"] = (frame["x"] + rng.normal(size=200) > 0).astype(int)
    model = LogisticRegression().fit(frame[["x"]], frame["y"])
    result = RocReport().add_condition_auc_greater_than(0.99).run(
        Dataset(frame, label="y", cat_features=[]), model)
    raw = result.conditions_results[0].details
    if np.lib.NumpyVersion(np.__version__) >= "2.0.0":
        assert "np.int64(1)" in raw  # what Deepchecks writes, so the test means something
    outcome = condense("Roc Report", "model_evaluation", result, 0.1)
    (condition,) = outcome.conditions
    assert "Found classes with AUC below threshold: {1: '0." in condition.details
    assert "np." not in condition.details and "np." not in condition.name
    assert strip_numpy_reprs("{np.str_('a(b)'): np.float64(0.5), 'k': np.True_}") == \
        "{'a(b)': 0.5, 'k': True}"
    assert strip_numpy_reprs("np.nan stays, np.float32(-1e-05) goes") == \
        "np.nan stays, -1e-05 goes"
