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
