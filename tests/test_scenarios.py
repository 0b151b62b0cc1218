"""The scenario library and the bench runner.

Fast tests (no ``evaluate`` calls) check that the library covers every contract
category at least twice, that each scenario is deterministic, and that the planted
bug is measurably there (computed with plain pandas/scikit-learn, independently of
deepfix). The last test runs a few scenarios end to end through the real evaluator.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import accuracy_score, f1_score, r2_score, recall_score, roc_auc_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from mlflow_deepfix.bench import runner as bench
from mlflow_deepfix.bench.scenarios import Scenario, all_scenarios, get_scenario, register, select
from mlflow_deepfix.bench.scenarios._base import make_data
from mlflow_deepfix.schemas import CATEGORIES

ALL_SCENARIOS = all_scenarios()
#: the tabular scenarios; the text and image ones (object columns of texts and pixel
#: arrays) are measured by tests/test_text_image_scenarios.py
SCENARIOS = [s for s in ALL_SCENARIOS if not {"text", "image"} & set(s.tags)]
IDS = [s.id for s in SCENARIOS]
NULL_MARKERS = {"", "N/A", "NA", "n/a", "null", "None", "nan"}


@pytest.fixture(scope="module")
def built() -> dict:
    """Every scenario built once with seed 0 (a few seconds in all)."""
    return {s.id: s.build(0) for s in SCENARIOS}


# --------------------------------------------------------------------------- measuring helpers


def features(data, split: str) -> pd.DataFrame:
    frame = getattr(data, split)
    names = [c for c in data.feature_names if c in frame.columns]
    return frame[names]


def labels(data, split: str) -> pd.Series:
    return getattr(data, split)[data.target]


def score(data, split: str, predictions=None) -> float:
    """Accuracy for classifiers, R2 for regressors."""
    y = labels(data, split)
    p = data.model.predict(features(data, split)) if predictions is None else predictions
    return accuracy_score(y, p) if data.model_type == "classifier" else r2_score(y, p)


def categorical_columns(frame: pd.DataFrame) -> list[str]:
    return [
        c
        for c in frame.columns
        if not pd.api.types.is_numeric_dtype(frame[c])
        and not pd.api.types.is_datetime64_any_dtype(frame[c])
    ]


def single_feature_auc(values: pd.Series, y: pd.Series) -> float:
    auc = roc_auc_score(y, pd.to_numeric(values, errors="coerce").fillna(0.0))
    return max(auc, 1.0 - auc)


def row_keys(frame: pd.DataFrame) -> pd.Series:
    return pd.util.hash_pandas_object(frame.astype(str), index=False)


def overlap_fraction(data) -> float:
    return float(
        row_keys(features(data, "test")).isin(set(row_keys(features(data, "train")))).mean()
    )


def expected_calibration_error(y: np.ndarray, p: np.ndarray, bins: int = 10) -> float:
    index = np.clip((p * bins).astype(int), 0, bins - 1)
    return float(
        sum(
            (index == b).mean() * abs(y[index == b].mean() - p[index == b].mean())
            for b in range(bins)
            if (index == b).any()
        )
    )


def final_estimator(model):
    return model.steps[-1][1] if isinstance(model, Pipeline) else model


# --------------------------------------------------------------------------- per-category bug checks
# Each asserts the planted bug is present and large enough to matter.


def check_missing_values(d):
    x = features(d, "train")
    missing = {
        c: (
            x[c].isna()
            | (
                x[c].astype(str).str.strip().isin(NULL_MARKERS)
                & ~pd.api.types.is_numeric_dtype(x[c])
            )
        ).mean()
        for c in x.columns
    }
    assert max(missing.values()) >= 0.15, missing
    d.model.predict(features(d, "test"))  # the workflow itself runs


def check_data_type_issues(d):
    x = features(d, "train")
    worst = 0.0
    for col in categorical_columns(x):
        text = x[col].astype(str)
        numeric_like = (
            pd.to_numeric(text.str.replace(r"[$,\s]", "", regex=True), errors="coerce")
            .notna()
            .mean()
        )
        variants = 1.0 - text.str.strip().str.lower().nunique() / text.nunique()
        worst = max(worst, numeric_like, variants)
    assert worst >= 0.5, f"no numbers-as-text or category variants found ({worst:.2f})"


def check_duplicate_samples(d):
    dup = d.train.duplicated().mean()
    assert dup >= 0.15, dup
    assert overlap_fraction(d) < 0.05  # within train, not across splits


def check_conflicting_labels(d):
    x = features(d, "train")
    keys = row_keys(x)
    n_labels = labels(d, "train").groupby(keys.to_numpy()).nunique()
    conflicted = keys.map(n_labels).gt(1).mean()
    assert conflicted >= 0.15, conflicted


def check_target_leakage(d):
    x, y = features(d, "train"), labels(d, "train")
    leaky = [
        c
        for c in x.select_dtypes("number").columns
        if x[c].nunique() < len(x) and single_feature_auc(x[c], y) >= 0.95
    ]
    assert leaky, "no single non-id feature predicts the label with AUC >= 0.95"


def check_identifier_leakage(d):
    frame, y = d.train, labels(d, "train")
    ids = [
        c
        for c in frame.columns
        if c != d.target and pd.api.types.is_integer_dtype(frame[c]) and frame[c].is_unique
    ]
    assert ids, "no id column"
    assert max(single_feature_auc(frame[c], y) for c in ids) >= 0.85
    assert set(ids) & set(d.feature_names), "the id is fed to the model"


def check_constant_feature(d):
    for split in ("train", "test"):
        x = features(d, split)
        assert (x.nunique(dropna=False) == 1).sum() >= 3, split


def check_outliers(d):
    x = features(d, "train").select_dtypes("number")
    q1, q3 = x.quantile(0.25), x.quantile(0.75)
    far = (x > q3 + 10 * (q3 - q1)) | (x < q1 - 10 * (q3 - q1))
    assert far.any(axis=1).mean() >= 0.02, far.any(axis=1).mean()


def check_class_imbalance(d):
    shares = labels(d, "train").value_counts(normalize=True)
    assert shares.min() <= 0.05, shares
    rare = shares.idxmin()
    predicted = d.model.predict(features(d, "test"))
    assert recall_score(labels(d, "test"), predicted, labels=[rare], average="macro") <= 0.5
    assert pd.Series(predicted).value_counts(normalize=True).max() < 1.0, (
        "not a fully collapsed model"
    )


def check_train_test_overlap(d):
    assert overlap_fraction(d) >= 0.1


def check_label_drift(d):
    a = labels(d, "train").value_counts(normalize=True)
    b = labels(d, "test").value_counts(normalize=True)
    tv = 0.5 * a.subtract(b, fill_value=0).abs().sum()
    assert tv >= 0.25, tv


def _ks(a: pd.Series, b: pd.Series) -> float:
    grid = np.sort(np.concatenate([a, b]))
    return float(
        np.abs(
            np.searchsorted(np.sort(a), grid, "right") / len(a)
            - np.searchsorted(np.sort(b), grid, "right") / len(b)
        ).max()
    )


def _label_shift(d) -> float:
    a, b = labels(d, "train"), labels(d, "test")
    if d.model_type == "classifier":
        return abs(a.mean() - b.mean())
    return abs(a.mean() - b.mean()) / a.std()


def _prediction_shift(d) -> float:
    a, b = (np.asarray(d.model.predict(features(d, s)), dtype=float) for s in ("train", "test"))
    if d.model_type == "classifier":
        return abs(a.mean() - b.mean())
    return abs(a.mean() - b.mean()) / labels(d, "train").std()


def check_feature_drift(d):
    a, b = features(d, "train"), features(d, "test")
    shifts = [_ks(a[c], b[c]) for c in a.select_dtypes("number").columns]
    for c in categorical_columns(a):
        pa, pb = a[c].value_counts(normalize=True), b[c].value_counts(normalize=True)
        shifts.append(0.5 * pa.subtract(pb, fill_value=0).abs().sum())
    assert max(shifts) >= 0.5, shifts
    assert _label_shift(d) <= 0.25
    assert _prediction_shift(d) <= 0.25, "drift should not mainly move the predictions"


def check_prediction_drift(d):
    assert _prediction_shift(d) >= 0.15, _prediction_shift(d)
    assert _label_shift(d) <= 0.1, _label_shift(d)


def check_unseen_categories(d):
    a, b = features(d, "train"), features(d, "test")
    unseen = max((~b[c].isin(set(a[c]))).mean() for c in categorical_columns(a))
    assert unseen >= 0.25, unseen


def check_temporal_leakage(d):
    col = d.config["datetime_col"]
    assert col not in d.feature_names
    before = (d.test[col] < d.train[col].max()).mean()
    assert before >= 0.9, before


def check_split_size_mismatch(d):
    n_train, n_test = len(d.train), len(d.test)
    assert min(n_train, n_test) <= 50 and min(n_train, n_test) / max(n_train, n_test) <= 0.1


def check_schema_mismatch(d):
    train_x = d.train.drop(columns=[d.target])
    test_x = d.test.drop(columns=[d.target])
    shared = set(train_x.columns) & set(test_x.columns)
    dtype_changes = [c for c in shared if str(train_x[c].dtype) != str(test_x[c].dtype)]
    assert set(train_x.columns) != set(test_x.columns) or dtype_changes
    if set(d.feature_names) - set(test_x.columns):
        with pytest.raises((KeyError, ValueError)):
            d.model.predict(test_x)


def check_overfitting(d):
    gap = score(d, "train") - score(d, "test")
    assert gap >= 0.25, gap


def check_underfitting(d):
    x, y = features(d, "train"), labels(d, "train")
    if d.model_type == "classifier":
        simple = [
            DecisionTreeClassifier(max_depth=4, random_state=0),
            LogisticRegression(max_iter=2000),
        ]
    else:
        simple = [DecisionTreeRegressor(max_depth=4, random_state=0), LinearRegression()]
    best = max(score(d, "test", clone(m).fit(x, y).predict(features(d, "test"))) for m in simple)
    assert score(d, "test") <= best - 0.25, (score(d, "test"), best)
    assert len(np.unique(d.model.predict(features(d, "test")))) > 1, "not a constant model"


def check_degenerate_predictions(d):
    p = d.model.predict(features(d, "test"))
    if d.model_type == "classifier":
        assert pd.Series(p).value_counts(normalize=True).max() >= 0.98
    else:
        assert np.std(p) / labels(d, "test").std() <= 0.05


def check_poor_calibration(d):
    y = labels(d, "test").to_numpy()
    p = d.model.predict_proba(features(d, "test"))[:, 1]
    assert expected_calibration_error(y, p) >= 0.15
    assert roc_auc_score(y, p) >= 0.7, "the model ranks well; only its probabilities are off"


def check_decision_threshold(d):
    y = labels(d, "test").to_numpy()
    p = d.model.predict_proba(features(d, "test"))[:, 1]
    gain = max(f1_score(y, p >= t) for t in np.linspace(0.05, 0.95, 19)) - f1_score(y, p >= 0.5)
    assert gain >= 0.1, gain
    assert roc_auc_score(y, p) >= 0.8
    assert 0.05 <= y.mean() <= 0.15


def check_weak_segment(d):
    x, y = features(d, "test"), labels(d, "test")
    p = d.model.predict(x)
    worst_gap = 0.0
    for col in categorical_columns(x):
        for rows in x.groupby(col).groups.values():
            inside = x.index.isin(rows)
            if inside.mean() < 0.1:
                continue
            metric = accuracy_score if d.model_type == "classifier" else r2_score
            worst_gap = max(
                worst_gap, metric(y[~inside], p[~inside]) - metric(y[inside], p[inside])
            )
    assert worst_gap >= 0.2, worst_gap


def check_preprocessing_mismatch(d):
    assert not isinstance(d.model, Pipeline)
    x_train, x_test = features(d, "train"), features(d, "test")
    stds = x_train.std()
    assert stds.max() / stds.min() >= 50, "raw features span very different scales"
    raw = d.model.predict(x_test)
    scaler = StandardScaler().fit(x_train)
    scaled = d.model.predict(pd.DataFrame(scaler.transform(x_test), columns=x_test.columns))
    if d.model_type == "classifier":
        assert pd.Series(raw).value_counts(normalize=True).max() >= 0.9
        assert score(d, "test", scaled) >= 0.9
    else:
        assert np.std(raw) / np.std(scaled) <= 0.3
        assert score(d, "test", scaled) - score(d, "test", raw) >= 0.4


def check_wrong_task_type(d):
    model = final_estimator(d.model)
    p = np.asarray(d.model.predict(features(d, "test")), dtype=float)
    if d.model_type == "classifier":
        assert not hasattr(model, "predict_proba")
        assert (p != np.round(p)).mean() >= 0.9, "continuous outputs for a classification task"
    else:
        assert hasattr(model, "predict_proba") and len(model.classes_) >= 50


def check_unused_features(d):
    coef = np.ravel(final_estimator(d.model).coef_)
    assert (coef == 0).sum() >= 15 and (coef == 0).mean() >= 0.6, (coef == 0).sum()
    assert score(d, "test") >= 0.75, "otherwise a healthy model"


def check_clean(d):
    assert overlap_fraction(d) <= 0.03  # iris holds a few naturally identical flowers
    assert d.train.duplicated().mean() <= 0.02
    for split in ("train", "test"):
        x = features(d, split)
        assert not x.isna().any().any()
        assert (x.nunique() > 1).all()
    test, train = score(d, "test"), score(d, "train")
    if d.model_type == "classifier":
        y, proba = labels(d, "test"), d.model.predict_proba(features(d, "test"))
        auc = (
            roc_auc_score(y, proba[:, 1])
            if proba.shape[1] == 2
            else roc_auc_score(y, proba, multi_class="ovr")
        )
        assert auc >= 0.75, auc
    else:
        assert test >= 0.35
    assert train - test <= 0.2


def _flip_rate(d, frame: pd.DataFrame, column: str, step) -> float:
    before = d.model.predict(frame)
    moved = frame.copy()
    moved[column] = step(moved[column])
    after = d.model.predict(moved)
    if d.model_type == "regressor":
        return float((np.abs(after - before) > 0.2 * labels(d, "test").std()).mean())
    return float((after != before).mean())


def check_fragile_predictions(d):
    # an integer code column: moving it to the neighbouring code flips many predictions
    x = features(d, "test")
    codes = [c for c in x.columns if pd.api.types.is_integer_dtype(x[c]) and x[c].nunique() >= 20]
    assert codes
    assert max(_flip_rate(d, x, c, lambda v: v + 1) for c in codes) >= 0.2


def check_overconfident_slice(d):
    # a simple region (depth-3 tree on the test features) holds confidently wrong answers
    x = features(d, "test")
    proba = d.model.predict_proba(x)
    wrong = (proba.max(axis=1) >= 0.8) & (d.model.predict(x) != labels(d, "test").to_numpy())
    encoded = pd.get_dummies(x, dtype=float)
    tree = DecisionTreeClassifier(max_depth=3, min_samples_leaf=int(0.05 * len(x)),
                                  random_state=0).fit(encoded, wrong)
    leaves = tree.apply(encoded)
    worst = max(wrong[leaves == leaf].mean() for leaf in np.unique(leaves))
    assert worst >= 0.3 and worst >= 3 * wrong.mean() and wrong.mean() <= 0.2


def check_group_disparity(d):
    (column,) = d.config["sensitive_features"]
    assert column not in d.feature_names  # kept aside: the model never reads it
    test = d.test
    predicted = d.model.predict(features(d, "test"))
    groups = test[column].unique()
    if d.model_type == "regressor":  # one group's errors are much larger
        error = np.abs(predicted - test[d.target].to_numpy())
        mae = {g: error[(test[column] == g).to_numpy()].mean() for g in groups}
        assert max(mae.values()) >= 1.5 * min(mae.values())
    elif test[d.target].nunique() > 2:  # multiclass: one group is misread far more often
        right = predicted == test[d.target].to_numpy()
        accuracy = {g: right[(test[column] == g).to_numpy()].mean() for g in groups}
        assert max(accuracy.values()) - min(accuracy.values()) >= 0.1
    else:
        positive = test[d.target] == 1
        tpr = {g: (predicted[(test[column] == g) & positive] == 1).mean() for g in groups}
        assert max(tpr.values()) - min(tpr.values()) >= 0.15


def check_spurious_correlation(d):
    # one feature's link to the label vanishes in test while its distribution stays,
    # or (slice-only) it holds inside one level of a categorical column only
    from scipy.stats import ks_2samp

    slice_columns = [c for c in d.feature_names if not pd.api.types.is_numeric_dtype(d.train[c])]
    for column in slice_columns:
        for level in d.train[column].unique():
            inside = (d.train[column] == level).to_numpy()
            y = labels(d, "train").to_numpy(dtype=float)
            for c in d.feature_names:
                if c in slice_columns:
                    continue
                x = d.train[c].to_numpy(float)
                r_in = abs(np.corrcoef(x[inside], y[inside])[0, 1])
                r_out = abs(np.corrcoef(x[~inside], y[~inside])[0, 1])
                if r_in > 0.8 and r_out < 0.15:
                    return

    found = []
    for c in d.feature_names:
        a, b = d.train[c], d.test[c]
        if not pd.api.types.is_numeric_dtype(a):
            a, b = pd.factorize(a, sort=True)[0], pd.Categorical(b, categories=sorted(d.train[c].unique())).codes
            a, b = pd.Series(a), pd.Series(b)
        r_train = abs(np.corrcoef(a, labels(d, "train"))[0, 1])
        r_test = abs(np.corrcoef(b, labels(d, "test"))[0, 1])
        found.append((r_train - r_test, ks_2samp(a, b).statistic))
    gap, shift = max(found)
    assert gap >= 0.3 and shift <= 0.15


CHECKS = {name[len("check_") :]: fn for name, fn in globals().items() if name.startswith("check_")}


# --------------------------------------------------------------------------- library shape


#: categories read from a network's logged training curves, which no scikit-learn
#: scenario has: their scenarios are the deep-learning ones (registered with torch)
TRAINING_CATEGORIES = ("training_divergence", "training_stalled")


def test_every_category_has_at_least_two_scenarios_on_different_datasets():
    by_category: dict[str, list[Scenario]] = {}
    trained = [s for s in ALL_SCENARIOS if "deep_learning" in s.tags
               and s.expected in TRAINING_CATEGORIES]
    for s in SCENARIOS + trained:
        by_category.setdefault(s.expected, []).append(s)
    missing = [c for c in CATEGORIES if len(by_category.get(c, [])) < 2]
    assert not missing, f"categories with fewer than 2 scenarios: {missing}"
    for category in CATEGORIES:
        datasets = {s.tags[0] for s in by_category[category]}
        assert len(datasets) >= 2, f"{category}: all scenarios use {datasets}"
    assert len(by_category[None]) >= 5


def test_clean_controls_cover_binary_multiclass_and_regression():
    kinds = {s.tags[1] for s in SCENARIOS if s.expected is None}
    assert {"binary", "multiclass", "regression"} <= kinds


def test_ids_are_unique_stable_and_prefixed_by_category():
    assert len(IDS) == len(set(IDS))
    for s in SCENARIOS:
        assert s.id.split(".")[0] == (s.expected or "clean"), s.id
        assert s.description.strip()
    assert [s.id for s in ALL_SCENARIOS] == [s.id for s in all_scenarios()]  # stable order
    for s in ALL_SCENARIOS:
        assert s.id.split(".")[0] == (s.expected or "clean"), s.id


def test_get_scenario_and_select():
    assert get_scenario("train_test_overlap.breast_cancer_40pct").expected == "train_test_overlap"
    with pytest.raises(KeyError, match="train_test_overlap"):
        get_scenario("train_test_overlap")
    assert {s.expected for s in select(["overlap"])} == {"train_test_overlap"}
    with pytest.raises(ValueError, match="no_such_thing"):
        select(["no_such_thing"])


def test_registry_rejects_bad_scenarios():
    build = get_scenario(IDS[0]).build
    with pytest.raises(ValueError, match="already registered"):
        register(Scenario(IDS[0], "outliers", "dup", build))
    with pytest.raises(ValueError, match="not_a_category"):
        register(Scenario("x.y", "not_a_category", "bad", build))
    with pytest.raises(TypeError, match="callable"):
        register(Scenario("x.z", None, "bad", None))
    assert "x.y" not in [s.id for s in all_scenarios()]


def test_make_data_validates_its_parts():
    d = get_scenario("clean.wine_logistic_pipeline").build(0)
    with pytest.raises(ValueError, match="model_type"):
        make_data(d.train, d.test, d.target, d.model, "classification")
    with pytest.raises(ValueError, match="train_data"):
        make_data(d.train, d.test, d.target, d.model, "classifier", {"train_data": d.train})
    with pytest.raises(ValueError, match="target"):
        make_data(d.train, d.test, "nope", d.model, "classifier")


# --------------------------------------------------------------------------- per scenario


@pytest.mark.parametrize("scenario_id", IDS)
def test_scenario_is_small_and_well_formed(built, scenario_id):
    d = built[scenario_id]
    assert d.model_type in ("classifier", "regressor")
    assert len(d.train) + len(d.test) <= 5000 and d.train.shape[1] <= 41
    assert d.target in d.train.columns and d.target in d.test.columns
    assert "train_data" not in d.config
    assert set(d.feature_names) <= set(d.train.columns) - {d.target}


@pytest.mark.parametrize("scenario_id", IDS)
def test_planted_bug_is_measurably_there(built, scenario_id):
    s, d = get_scenario(scenario_id), built[scenario_id]
    CHECKS[s.expected or "clean"](d)


@pytest.mark.parametrize("scenario_id", IDS)
def test_scenario_is_deterministic(built, scenario_id):
    first, again = built[scenario_id], get_scenario(scenario_id).build(0)
    pd.testing.assert_frame_equal(first.train, again.train)
    pd.testing.assert_frame_equal(first.test, again.test)
    assert first.config == again.config
    x = features(first, "train").head(50)
    np.testing.assert_array_equal(first.model.predict(x), again.model.predict(x))


def test_another_seed_gives_other_data():
    s = get_scenario("missing_values.loan_mnar_mixed_markers")
    assert not s.build(0).train.equals(s.build(1).train)


# --------------------------------------------------------------------------- bench scoring


def _result(sid, expected, categories, severe=0, baseline=()):
    r = bench.ScenarioResult(
        sid, expected, categories=list(categories), n_medium_or_worse=severe, seconds=2.0
    )
    r.rank = bench._rank(r.categories, expected)
    r.baseline_categories = list(baseline)
    r.baseline_rank = bench._rank(r.baseline_categories, expected)
    return r


def test_summarize_scores_ranks_and_false_alarms():
    results = [
        _result("a", "outliers", ["outliers", "label_drift"], baseline=["label_drift", "outliers"]),
        _result("b", "overfitting", ["underfitting", "weak_segment", "overfitting"]),
        _result("c", "label_drift", ["outliers"], baseline=["label_drift"]),
        _result("d", None, ["weak_segment"], severe=1, baseline=["weak_segment"]),
        _result("e", None, [], severe=0),
    ]
    s = bench.summarize(results)
    assert (s.n_buggy, s.n_clean) == (3, 2)
    assert s.top1_accuracy == pytest.approx(1 / 3)
    assert s.top3_accuracy == pytest.approx(2 / 3)
    assert s.mrr == pytest.approx((1 + 1 / 3) / 3)
    assert s.clean_false_alarms == 1
    assert s.total_seconds == pytest.approx(10.0) and s.mean_seconds == pytest.approx(2.0)
    b = bench.summarize(results, "baseline")
    assert b.top1_accuracy == pytest.approx(1 / 3) and b.mrr == pytest.approx((0.5 + 1) / 3)
    assert b.clean_false_alarms == 1


def test_baseline_ranks_failures_in_suite_then_check_order():
    artifact = {
        "checks": [
            {
                "name": "Train Test Performance",
                "suite": "model_evaluation",
                "outcome": "not_passed",
            },
            {"name": "Feature Drift", "suite": "train_test_validation", "outcome": "not_passed"},
            {"name": "Data Duplicates", "suite": "data_integrity", "outcome": "passed"},
            {"name": "Is Single Value", "suite": "data_integrity", "outcome": "not_passed"},
            {
                "name": "Multivariate Drift",
                "suite": "train_test_validation",
                "outcome": "not_passed",
            },
            {"name": "Model Inference Time", "suite": "model_evaluation", "outcome": "not_passed"},
            {"name": "Label Drift", "suite": "train_test_validation", "outcome": "errored"},
        ]
    }
    mapping = bench.deepchecks_mapping()
    assert bench.baseline_categories(artifact, mapping) == [
        "constant_feature",
        "feature_drift",
        "overfitting",
    ]


def test_deepchecks_mapping_uses_contract_categories():
    mapping = bench.deepchecks_mapping()
    assert {v for v in mapping.values() if v} <= set(CATEGORIES)
    assert mapping["Train Test Samples Mix"] == "train_test_overlap"


def test_findings_categories_dedupes_in_rank_order():
    findings = {
        "findings": [
            {"rank": 2, "category": "outliers", "severity": "low"},
            {"rank": 1, "category": "label_drift", "severity": "high"},
            {"rank": 3, "category": "label_drift", "severity": "medium"},
        ]
    }
    assert bench.findings_categories(findings) == (["label_drift", "outliers"], 2)


def test_format_table_and_json(tmp_path):
    results = [
        _result("a.x", "outliers", ["outliers"], baseline=["label_drift"]),
        _result("clean.y", None, []),
    ]
    report = bench.BenchReport(
        results, bench.summarize(results), bench.summarize(results, "baseline"), "deepchecks"
    )
    table = bench.format_table(report)
    assert (
        "a.x" in table
        and "clean.y" in table
        and "top-1 accuracy" in table
        and "deepchecks" in table
    )
    assert "1.000" in table and "0/1" in table
    saved = json.loads(report.to_json(tmp_path / "r.json").read_text())
    assert saved["results"][0]["rank"] == 1 and saved["baseline"]["top1_accuracy"] == 0.0


def test_bench_cli_lists_and_rejects_unknown_patterns(capsys):
    parser = argparse.ArgumentParser()
    bench.add_bench_parser(parser.add_subparsers())
    args = parser.parse_args(["bench", "--list", "--scenario", "overlap"])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "train_test_overlap.breast_cancer_40pct" in out and "clean." not in out
    args = parser.parse_args(["bench", "--scenario", "nope_nope"])
    assert args.func(args) == 2


def test_run_bench_validates_arguments():
    with pytest.raises(ValueError, match="baseline"):
        bench.run_bench(SCENARIOS[:1], baseline="evidently")
    with pytest.raises(ValueError, match="train_data"):
        bench.run_bench(SCENARIOS[:1], evaluator_config={"train_data": None})


# --------------------------------------------------------------------------- end to end


def test_bench_end_to_end_through_the_real_evaluator(tmp_path):
    """Four scenarios (one of images) through mlflow.models.evaluate(evaluators=["deepfix"]) on a real
    SQLite store, with the Deepchecks baseline read back from the same runs."""
    chosen = [
        get_scenario("train_test_overlap.breast_cancer_40pct"),
        get_scenario("target_leakage.breast_cancer_biopsy_score"),
        get_scenario("clean.breast_cancer_random_forest"),
        get_scenario("feature_drift.image_faded_scanner"),
    ]
    uri = f"sqlite:///{(tmp_path / 'mlflow.db').as_posix()}"
    report = bench.run_bench(
        chosen,
        tracking_uri=uri,
        baseline="deepchecks",
        evaluator_config={"kb": False},
        progress=False,
    )
    by_id = {r.scenario_id: r for r in report.results}
    assert all(r.error is None for r in report.results), [r.error for r in report.results]
    assert all(r.status in ("pass", "warn", "fail") for r in report.results)
    assert by_id["train_test_overlap.breast_cancer_40pct"].rank == 1
    assert by_id["target_leakage.breast_cancer_biopsy_score"].rank == 1
    assert (
        "train_test_overlap" in by_id["train_test_overlap.breast_cancer_40pct"].baseline_categories
    )
    assert by_id["clean.breast_cancer_random_forest"].n_medium_or_worse == 0
    # an image scenario: its raw Deepchecks failures are read with the vision mapping
    assert by_id["feature_drift.image_faded_scanner"].rank == 1
    assert "feature_drift" in by_id["feature_drift.image_faded_scanner"].baseline_categories
    assert report.deepfix.n_buggy == 3 and report.baseline is not None
    assert "top-1 accuracy" in bench.format_table(report)
