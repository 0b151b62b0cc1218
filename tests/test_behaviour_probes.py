"""Behaviour probes (issue 15): the measurements on hand-made data and models, and the
four rules on hand-built artifact data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from deepfix_agents.reasoner import reason
from deepfix_agents.rules import RULES
from mlflow_deepfix.intervals import wilson
from mlflow_deepfix.testing.confidence import measure_confidence
from mlflow_deepfix.testing.fairness import measure_fairness, newcombe_low
from mlflow_deepfix.testing.robustness import measure_robustness
from mlflow_deepfix.schemas import (
    CATEGORY_LAYERS,
    ArtifactData,
    ConfidenceSummary,
    DatasetSummary,
    FairnessSummary,
    FeatureAssociationShift,
    FeatureFragility,
    GroupDisparity,
    GroupStats,
    RobustnessSummary,
    SliceConfidence,
    SplitStats,
    SpuriousSummary,
)
from mlflow_deepfix.testing.spurious import measure_spurious

SOURCES = ("dataset", "deepchecks", "model", "baseline", "runtime")


# --------------------------------------------------------------------------- statistics


def test_wilson_and_newcombe_intervals():
    low, high = wilson(0, 10)
    assert low == 0.0 and 0.25 < high < 0.35  # no successes in 10: up to ~31%
    low, high = wilson(50, 100)
    assert low < 0.5 < high and high - low == pytest.approx(0.19, abs=0.01)
    # 60% vs 40% on 30 rows each is not clearly different; on 1000 rows each it is
    assert newcombe_low(18, 30, 12, 30) < 0
    assert newcombe_low(600, 1000, 400, 1000) > 0.15


# --------------------------------------------------------------------------- robustness


def _code_frame(seed: int, n: int = 3000) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    code = rng.integers(100, 140, n)
    effect = np.random.default_rng(1).choice([0, 1], 40)
    smooth = rng.normal(0, 1, n)
    label = np.where(rng.random(n) < 0.9, effect[code - 100], 1 - effect[code - 100])
    return pd.DataFrame({"code": code, "smooth": smooth, "label": label})


def _predict(model, columns):
    return lambda frame: model.predict(frame[columns])


def test_a_code_read_as_a_number_is_named_fragile_and_a_smooth_model_is_not():
    frame = _code_frame(0)
    tree = DecisionTreeClassifier(min_samples_leaf=20, random_state=0).fit(
        frame[["code", "smooth"]], frame["label"]
    )
    test = _code_frame(1, 800)
    summary = measure_robustness(
        _predict(tree, ["code", "smooth"]), test, target="label",
        task="binary_classification", feature_names=["code", "smooth"], cat_features=[],
        reference=frame, seed=0,
    )
    assert summary.n_rows == 500  # bounded sample
    assert summary.features[0].feature == "code" and summary.features[0].flip_rate > 0.2
    assert summary.score_drop > 0.1

    smooth = pd.DataFrame({"x": np.linspace(-3, 3, 1000)})
    smooth["label"] = (smooth["x"] > 0).astype(int)
    model = LogisticRegression().fit(smooth[["x"]], smooth["label"])
    calm = measure_robustness(
        _predict(model, ["x"]), smooth, target="label", task="binary_classification",
        feature_names=["x"], cat_features=[], seed=0,
    )
    assert calm.features[0].flip_rate < 0.05


def test_robustness_is_deterministic_and_leaves_unordered_categories_alone():
    frame = _code_frame(0, 600)
    frame["colour"] = np.where(frame["smooth"] > 0, "red", "blue")
    tree = DecisionTreeClassifier(random_state=0).fit(frame[["code", "smooth"]], frame["label"])
    args = dict(target="label", task="binary_classification",
                feature_names=["code", "smooth", "colour"], cat_features=["colour"], seed=3)
    first = measure_robustness(_predict(tree, ["code", "smooth"]), frame, **args)
    again = measure_robustness(_predict(tree, ["code", "smooth"]), frame, **args)
    assert first == again
    assert "colour" in first.not_perturbed and "meaning" in first.not_perturbed["colour"]


def test_discrete_numeric_scales_only_move_to_observed_levels():
    """Fair (1978) holds only few-valued float scales (years of schooling 9, 12, 14, 16,
    17, 20). Gaussian noise gave a nearest-neighbour model values between the levels
    that never occur, and a swap of every row to the neighbouring level (educ is
    categorical by inference: 6 whole values) moved people by years of schooling; the
    model flipped on both. Now a scale moves only to an adjacent observed level, and only
    where the noise makes that a small change."""
    from mlflow_deepfix.testing.stats import infer_cat_features
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from mlflow_deepfix.bench.corpus.datasets import fair

    data = fair()
    frame, target = data.frame, data.target
    scales = [c for c in frame.columns if c != target and pd.api.types.is_numeric_dtype(frame[c])]
    assert "educ" in scales and frame["educ"].nunique() == 6
    rng = np.random.default_rng(0)
    # a continuous column, and a constant one (whose float std is a rounding error > 0)
    frame = frame.assign(income=rng.lognormal(10, 0.5, len(frame)), stuck=0.1)
    features = [*scales, "income", "stuck"]
    train = frame.sample(frac=0.7, random_state=0)
    test = frame.drop(train.index)
    model = make_pipeline(StandardScaler(), KNeighborsClassifier(5)).fit(train[features],
                                                                        train[target])
    seen = []

    def predict(rows):
        seen.append(rows.copy())
        return model.predict(rows[features])

    inferred = infer_cat_features(test, features)
    assert "educ" in inferred
    summary = measure_robustness(predict, test, target=target, task="binary_classification",
                                 feature_names=features, cat_features=inferred,
                                 reference=train, seed=0, declared_cat_features=[])
    perturbed = pd.concat(seen[1:])
    for name in scales:
        assert set(perturbed[name].unique()) <= set(train[name].unique()), name
    # levels far apart relative to the noise are not crossed: not perturbed, with a reason
    assert "discrete scale of 6 values" in summary.not_perturbed["educ"]
    assert summary.not_perturbed["stuck"] == "no spread to perturb within"
    by_name = {f.feature: f for f in summary.features}
    assert "educ" not in by_name
    assert all(by_name[n].flip_rate <= 0.02 for n in scales if n in by_name)
    # the continuous column still gets noise: values that were not there before
    assert "snapped" not in by_name["income"].perturbation
    assert not set(perturbed["income"].round(6)) <= set(test["income"].round(6))
    # declared by the user, the same column is a code: swapped to the neighbouring level
    declared = measure_robustness(predict, test, target=target, task="binary_classification",
                                  feature_names=features, cat_features=inferred,
                                  reference=train, seed=0, declared_cat_features=inferred)
    assert {f.feature: f for f in declared.features}["educ"].perturbation.startswith("swap")

    # a 10-level integer code not declared categorical, whose levels the noise does
    # cross (4.6% of rows at a spread of 5 codes): perturbed, only to observed codes, and
    # the flips it causes are the code's
    code = _code_frame(0)
    code["code"] = 100 + (code["code"] - 100) // 4  # 10 codes, 100..109
    effect = np.random.default_rng(1).choice([0, 1], 10)
    code["label"] = effect[code["code"] - 100]
    tree = DecisionTreeClassifier(random_state=0).fit(code[["code", "smooth"]], code["label"])
    seen.clear()
    fragile = measure_robustness(
        lambda rows: (seen.append(rows.copy()), tree.predict(rows[["code", "smooth"]]))[1],
        code, target="label", task="binary_classification", feature_names=["code", "smooth"],
        cat_features=[], seed=0,
    )
    assert set(pd.concat(seen)["code"].unique()) <= set(range(100, 110))
    assert "snapped to the 10 observed levels" in fragile.features[0].perturbation
    assert fragile.features[0].feature == "code" and fragile.features[0].flip_rate > 0


def test_continuous_outputs_of_a_classifier_are_not_counted_as_flips():
    frame = _code_frame(0, n=600)
    regressor = LinearRegression().fit(frame[["code", "smooth"]], frame["label"])
    summary = measure_robustness(_predict(regressor, ["code", "smooth"]), frame,
                                 target="label", task="binary_classification",
                                 feature_names=["code", "smooth"], cat_features=[], seed=0)
    assert summary.flip_rate == 0.0 and not summary.features
    assert "not class labels" in summary.not_perturbed["(all inputs)"]


def test_text_perturbations_expose_a_case_sensitive_vocabulary():
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.pipeline import make_pipeline

    rng = np.random.default_rng(0)
    words = {1: ["great", "lovely", "superb"], 0: ["awful", "broken", "poor"]}
    labels = rng.integers(0, 2, 400)
    texts = [f"it was {rng.choice(words[int(y)])} really" for y in labels]
    frame = pd.DataFrame({"review": texts, "label": labels})
    model = make_pipeline(CountVectorizer(lowercase=False), LogisticRegression())
    model.fit(frame["review"], frame["label"])
    summary = measure_robustness(
        lambda f: model.predict(f["review"]), frame, target="label",
        task="binary_classification", feature_names=["review"], cat_features=[],
        modality="text", content_column="review", seed=0,
    )
    by_name = {f.feature: f.flip_rate for f in summary.features}
    assert by_name["review: case"] > 0.3
    assert by_name["review: whitespace"] == 0.0


# --------------------------------------------------------------------------- confidence


def test_a_confidently_wrong_slice_is_found_and_described_in_words():
    rng = np.random.default_rng(0)
    n = 3000
    frame = pd.DataFrame({"age": rng.integers(20, 90, n).astype(float),
                          "smoker": rng.choice(["yes", "no"], n),
                          "x": rng.normal(0, 1, n)})
    y = (frame["x"] > 0).astype(int).to_numpy()
    slice_mask = (frame["smoker"] == "yes") & (frame["age"] > 72)
    y = np.where(slice_mask & (rng.random(n) < 0.7), 1 - y, y)
    frame["label"] = y
    p1 = 1 / (1 + np.exp(-4 * frame["x"].to_numpy()))
    proba = np.column_stack([1 - p1, p1])
    predicted = (p1 > 0.5).astype(int)
    summary = measure_confidence(frame, target="label", proba=proba, predicted=predicted,
                                 feature_names=["age", "smoker", "x"], cat_features=["smoker"])
    top = summary.slices[0]
    assert top.kind == "overconfident"
    assert set(top.features) == {"age", "smoker"}
    assert "smoker = yes" in top.description and "age >" in top.description
    assert top.rate_low > summary.confident_error_rate + 0.3


def _claimed(seed, slice_top, slice_error, rest_top, rest_error, n=3000, n_slice=400):
    """Rows whose predictions claim ``*_top`` and are wrong for exactly ``*_error`` of them,
    in a slice ``group = s`` and elsewhere; the label is made from the prediction."""
    rng = np.random.default_rng(seed)
    inside = np.arange(n) < n_slice
    top = np.where(inside, slice_top, rest_top)
    wrong = np.zeros(n, dtype=bool)
    for where, share in ((np.flatnonzero(inside), slice_error),
                         (np.flatnonzero(~inside), rest_error)):
        wrong[rng.choice(where, int(round(share * where.size)), replace=False)] = True
    predicted = rng.integers(0, 2, n)
    frame = pd.DataFrame({"group": np.where(inside, "s", rng.choice(["a", "b"], n)),
                          "x": rng.normal(0, 1, n),
                          "label": np.where(wrong, 1 - predicted, predicted)})
    proba = np.where(predicted[:, None] == 1, np.column_stack([1 - top, top]),
                     np.column_stack([top, 1 - top]))
    return measure_confidence(frame, target="label", proba=proba, predicted=predicted,
                              feature_names=["group", "x"], cat_features=["group"])


def test_a_slice_is_overconfident_when_its_errors_exceed_what_the_model_claims_there():
    # says 0.99 on the slice and is wrong 10% of the time there; says 0.85 elsewhere and
    # is wrong 15% (calibrated): the slice errs less often than the rest, yet ten times
    # as often as it claims
    sure = _claimed(0, slice_top=0.99, slice_error=0.10, rest_top=0.85, rest_error=0.15)
    over = [s for s in sure.slices if s.kind == "overconfident"]
    assert over and over[0].description == "group = s"
    assert over[0].mean_confidence == pytest.approx(0.99)
    assert over[0].overall_rate == pytest.approx(0.01, abs=0.005)  # the claim, no global gap
    assert over[0].rate == pytest.approx(0.10) and over[0].rate_low > 0.05

    # borderline rows said 0.82 and wrong 18% of the time are calibrated, however rarely
    # the sure rows elsewhere (said 0.99, wrong 1%) are wrong
    borderline = _claimed(1, slice_top=0.82, slice_error=0.18, rest_top=0.99, rest_error=0.01)
    assert not [s for s in borderline.slices if s.kind == "overconfident"]

    # overconfident everywhere (says 0.95, wrong 20%): poor calibration, not a slice
    everywhere = _claimed(2, slice_top=0.95, slice_error=0.20, rest_top=0.95, rest_error=0.20)
    assert not [s for s in everywhere.slices if s.kind == "overconfident"]
    assert everywhere.confident_error_rate == pytest.approx(0.2, abs=0.005)
    # ... but a slice that is worse than that global overconfidence still stands out
    worse = _claimed(3, slice_top=0.95, slice_error=0.45, rest_top=0.95, rest_error=0.20)
    over = [s for s in worse.slices if s.kind == "overconfident"]
    assert over and over[0].description == "group = s"
    assert over[0].overall_rate == pytest.approx(0.2, abs=0.02)


def test_os42_a_slice_right_more_often_than_it_is_confident_is_no_overconfident_slice():
    # the model says 0.52 on the slice and is never wrong there (calibrated elsewhere:
    # says 0.9, wrong 10%): the slice search lists it as needlessly unsure, and the
    # overconfident_slice rule names nothing; the direction is the whole mechanism
    unsure = _claimed(5, slice_top=0.52, slice_error=0.0, rest_top=0.9, rest_error=0.10)
    listed = [s for s in unsure.slices if s.description == "group = s"]
    assert listed and listed[0].kind == "underconfident"
    assert listed[0].rate == pytest.approx(1.0) and listed[0].mean_confidence < 0.6
    artifact = _artifact(confidence=unsure)
    assert not list(RULES.get("overconfident_slice")().detect_model(artifact))
    # the same slice said 0.99 and wrong 30% of the time is one
    sure = _artifact(confidence=_claimed(5, slice_top=0.99, slice_error=0.30,
                                         rest_top=0.9, rest_error=0.10))
    named = list(RULES.get("overconfident_slice")().detect_model(sure))
    assert named and named[0].facts["slice"] == "group = s"
    assert named[0].facts["rate"] > 1 - 0.99


def test_calib13_a_slice_holding_nearly_all_confident_predictions_is_compared_with_the_rest():
    # the model is sure (0.99) only on the slice and wrong 40% of the time there; it is
    # unsure (0.6) and calibrated (40% wrong) elsewhere: no confident row outside the
    # slice to compare with, so its calibration on the other rows is the comparison
    alone = _claimed(4, slice_top=0.99, slice_error=0.40, rest_top=0.6, rest_error=0.40)
    over = [s for s in alone.slices if s.kind == "overconfident"]
    assert over and over[0].description == "group = s"
    assert over[0].overall_rate == pytest.approx(0.01, abs=0.005)
    assert over[0].share_of_confident_errors == pytest.approx(1.0)
    # ... overconfident by as much elsewhere (says 0.6, wrong 55%): the model's, not the
    # slice's (0.01 claimed + 0.15 elsewhere covers the slice's 15%)
    everywhere = _claimed(5, slice_top=0.99, slice_error=0.15, rest_top=0.6, rest_error=0.55)
    assert not [s for s in everywhere.slices if s.kind == "overconfident"]


# --------------------------------------------------------------------------- fairness


def test_group_gaps_have_intervals_and_small_groups_are_left_out():
    rng = np.random.default_rng(0)
    n = 2000
    group = rng.choice(["A", "B"], n, p=[0.6, 0.4])
    group[:20] = "C"  # a group too small to score
    y = rng.integers(0, 2, n)
    miss = (group == "B") & (y == 1) & (rng.random(n) < 0.4)
    pred = np.where(miss, 0, y)
    frame = pd.DataFrame({"group": group, "label": y})
    summary = measure_fairness(frame, target="label", task="binary_classification",
                               predicted=pred, sensitive_features=["group"], feature_names=[])
    item = summary.features[0]
    assert item.small_groups == ["C"] and {g.group for g in item.groups} == {"A", "B"}
    assert item.model_sees_it is False
    assert item.equalized_odds_difference == pytest.approx(0.4, abs=0.06)
    assert 0.25 < item.equalized_odds_low < item.equalized_odds_difference
    assert item.worst_group == "B"


def test_regression_groups_get_mae_and_bias_gaps_with_widened_intervals():
    rng = np.random.default_rng(1)
    n = 3000
    group = rng.choice(["A", "B", "C"], n, p=[0.5, 0.3, 0.2])
    y = rng.normal(100, 20, n)
    noise = np.where(group == "C", rng.normal(0, 30, n), rng.normal(0, 10, n))
    frame = pd.DataFrame({"region": group, "y": y})
    summary = measure_fairness(frame, target="y", task="regression", predicted=y + noise,
                               sensitive_features=["region"], feature_names=["region"])
    item = summary.features[0]
    by = {g.group: g for g in item.groups}
    assert by["C"].mae == pytest.approx(24, abs=2.5) and by["A"].mae == pytest.approx(8, abs=1)
    assert by["C"].mae_low < by["C"].mae < by["C"].mae_high
    assert item.worst_group == "C" and item.model_sees_it is True
    assert 10 < item.mae_difference_low < item.mae_difference
    # three groups: three pairs compared, so the interval is wider than a plain 95% one
    assert item.z == pytest.approx(2.394, abs=0.01)
    # no systematic under-prediction of any group: the residual gap's interval holds 0
    assert item.bias_difference_low < 0
    # the same predictions without the noisy group: nothing to score
    same = np.where(group == "C", y + rng.normal(0, 10, n), y + noise)
    flat = measure_fairness(frame, target="y", task="regression", predicted=same,
                            sensitive_features=["region"], feature_names=[]).features[0]
    assert flat.mae_difference_low < 0


def test_multiclass_groups_are_compared_one_class_against_the_rest():
    rng = np.random.default_rng(2)
    n = 3000
    group = rng.choice(["A", "B"], n, p=[0.7, 0.3])
    y = rng.choice(["cat", "dog", "fox"], n)
    # group B's foxes are read as dogs 60% of the time; everything else is right
    wrong = (group == "B") & (y == "fox") & (rng.random(n) < 0.6)
    pred = np.where(wrong, "dog", y)
    frame = pd.DataFrame({"group": group, "species": y})
    item = measure_fairness(frame, target="species", task="multiclass_classification",
                            predicted=pred, sensitive_features=["group"], feature_names=[],
                            classes=["cat", "dog", "fox"]).features[0]
    by = {g.group: g for g in item.groups}
    assert by["A"].macro_recall == 1.0 and by["B"].macro_recall == pytest.approx(0.8, abs=0.05)
    assert item.worst_class == "fox" and item.equalized_odds_difference == pytest.approx(0.6, abs=0.08)
    assert 0.4 < item.equalized_odds_low < item.equalized_odds_difference
    assert item.accuracy_difference_low > 0.1 and item.worst_group == "B"
    # the same labels predicted perfectly: no gap at all
    clean = measure_fairness(frame, target="species", task="multiclass_classification",
                             predicted=y, sensitive_features=["group"], feature_names=[],
                             classes=["cat", "dog", "fox"]).features[0]
    assert clean.equalized_odds_low <= 0 and clean.accuracy_difference_low <= 0


# --------------------------------------------------------------------------- spurious


def test_a_broken_relation_is_told_apart_from_a_stable_one():
    rng = np.random.default_rng(0)

    def frame(n, linked):
        x = rng.normal(0, 1, n)
        shortcut = rng.normal(0, 1, n)
        y = 2 * x + (3 * shortcut if linked else 0) + rng.normal(0, 0.5, n)
        return pd.DataFrame({"x": x, "shortcut": shortcut, "y": y})

    train, test = frame(800, True), frame(800, False)
    model = LinearRegression().fit(train[["x", "shortcut"]], train["y"])
    summary = measure_spurious(_predict(model, ["x", "shortcut"]), train, test, target="y",
                               task="regression", feature_names=["x", "shortcut"],
                               cat_features=[], seed=0)
    by_name = {f.feature: f for f in summary.features}
    broken, stable = by_name["shortcut"], by_name["x"]
    assert broken.change_high < 0 and broken.marginal_shift < 0.1
    assert broken.importance_train > 0.3 and broken.importance_train > broken.importance_test
    assert stable.change_low < 0 < stable.change_high or stable.association_test > 0


# --------------------------------------------------------------------------- rules


def _watermark_frame(seed: int, n: int = 2000) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    site = rng.choice(["A", "B", "C"], n, p=[0.4, 0.3, 0.3])
    x = rng.normal(0, 1, n)
    label = (x + rng.normal(0, 1, n) > 0).astype(int)
    marked = 60 + 25 * label + rng.normal(0, 4, n)
    marker = np.where(site == "C", marked, rng.choice(marked, n))
    return pd.DataFrame({"x": x, "marker": marker, "site": site, "label": label})


def test_a_relation_holding_in_one_slice_is_found_when_the_model_applies_it_everywhere():
    train, test = _watermark_frame(0), _watermark_frame(1)

    def everywhere(frame):  # the shortcut learned as a general rule
        return ((frame["x"] + (frame["marker"] - 72.5) / 6) > 0).astype(int).to_numpy()

    def only_in_c(frame):  # a model that learned where the relation holds
        use = frame["site"].to_numpy() == "C"
        return np.where(use, frame["marker"] > 72.5, frame["x"] > 0).astype(int)

    args = {"target": "label", "task": "binary_classification",
            "feature_names": ["x", "marker", "site"], "cat_features": ["site"]}
    found = measure_spurious(everywhere, train, test, **args).slice_only
    assert [(s.feature, s.slice_feature, s.slice_value) for s in found] == [("marker", "site", "C")]
    item = found[0]
    assert item.association_inside > 0.9 and abs(item.association_outside) < 0.15
    assert item.difference_low > 0.5 and item.reliance_outside > 0.2
    assert item.marginal_shift < 0.1  # the same in both splits: not drift
    # the same relation, used only where it holds: the model's reliance outside is nil
    careful = measure_spurious(only_in_c, train, test, **args).slice_only
    assert careful and careful[0].reliance_outside == 0.0
    artifact = _artifact(spurious=SpuriousSummary(n_rows_train=500, n_rows_test=500,
                                                  metric="accuracy", slice_only=careful))
    assert not [s for s in _signals(artifact) if s.category == "spurious_correlation"]
    artifact = _artifact(spurious=SpuriousSummary(n_rows_train=500, n_rows_test=500,
                                                  metric="accuracy", slice_only=found))
    finding = next(f for f in reason(_signals(artifact), artifact)
                   if f.category == "spurious_correlation")
    # half the decisions outside site C follow a value that says nothing there
    assert finding.severity in ("high", "critical") and "site = C" in finding.title
    assert "not drift" in finding.explanation


def test_slice_only_reliance_needs_class_decisions():
    """A regressor fitted to class codes moves every output a little when any column is
    shuffled: the 'share of decisions that change' then counts no decisions, and the same
    slice-only evidence that is high for a classifier is not scored at all."""
    from mlflow_deepfix.schemas import ModelInfo, PerformanceSummary

    train, test = _watermark_frame(0), _watermark_frame(1)

    def everywhere(frame):
        return ((frame["x"] + (frame["marker"] - 72.5) / 6) > 0).astype(int).to_numpy()

    found = measure_spurious(everywhere, train, test, target="label",
                             task="binary_classification",
                             feature_names=["x", "marker", "site"],
                             cat_features=["site"]).slice_only
    summary = SpuriousSummary(n_rows_train=500, n_rows_test=500, metric="accuracy",
                              slice_only=found)
    labels = SplitStats(name="test", n_rows=1000, n_columns=3,
                        label_distribution={"0": 0.5, "1": 0.5})

    def scored(**model):
        artifact = ArtifactData(
            task="binary_classification",
            dataset=DatasetSummary(target="label", test=labels), spurious=summary, **model)
        return [s for s in _signals(artifact) if s.category == "spurious_correlation"]

    assert scored(performance=PerformanceSummary(prediction_distribution={"0": 0.5, "1": 0.5}))
    assert not scored(model=ModelInfo(output_kind="continuous"))
    assert not scored(performance=PerformanceSummary(
        prediction_distribution={"0.13": 0.3, "0.58": 0.3, "0.91": 0.4}))


def _artifact(**probes) -> ArtifactData:
    test = SplitStats(name="test", n_rows=1000, n_columns=3)
    return ArtifactData(task="binary_classification",
                        dataset=DatasetSummary(target="label", test=test), **probes)


def _signals(artifact):
    return [s for rule in RULES for src in SOURCES for s in rule().detect(src, artifact)]


def _fragility(rate):
    return RobustnessSummary(
        n_rows=500, metric="accuracy", base_score=0.9, flip_rate=rate, score_drop=rate / 2,
        features=[FeatureFragility(feature="code", kind="numeric", perturbation="noise",
                                   flip_rate=rate, score_drop=rate / 2)],
    )


@pytest.mark.parametrize(("rate", "severity"), [(0.03, None), (0.2, "medium"), (0.5, "high")])
def test_fragile_predictions_severity_follows_the_flip_rate(rate, severity):
    findings = reason(_signals(_artifact(robustness=_fragility(rate))), _artifact())
    found = [f for f in findings if f.category == "fragile_predictions"]
    if severity is None:
        assert not found
    else:
        assert found[0].severity == severity and "'code'" in found[0].title


def _slice(rate_low, share, kind="overconfident"):
    return SliceConfidence(description="age > 62 and smoker = yes", features=["age", "smoker"],
                           kind=kind, n_rows=int(share * 1000), share=share, n_confident=80,
                           rate=rate_low + 0.1, rate_low=rate_low, rate_high=rate_low + 0.2,
                           overall_rate=0.05, mean_confidence=0.55 if kind != "overconfident" else 0.9,
                           share_of_confident_errors=0.6)


def test_overconfident_slice_is_scored_by_excess_and_size_and_unsure_slices_are_not_it():
    big = ConfidenceSummary(n_rows=1000, threshold=0.8, confident_error_rate=0.05,
                            n_confident=700, slices=[_slice(0.4, 0.15)])
    artifact = _artifact(confidence=big)
    finding = next(f for f in reason(_signals(artifact), artifact) if f.category == "overconfident_slice")
    assert finding.severity == "high" and "age > 62 and smoker = yes" in finding.title
    tiny = big.model_copy(update={"slices": [_slice(0.4, 0.01)]})
    artifact = _artifact(confidence=tiny)
    assert all(f.severity in ("low", "info") for f in reason(_signals(artifact), artifact))
    # a slice where the model hedges (mean confidence 0.55) yet is right 98% of the time
    # is underconfident: the opposite mechanism, never named an overconfident slice
    unsure = big.model_copy(update={"slices": [_slice(0.98, 0.3, kind="underconfident")]})
    artifact = _artifact(confidence=unsure)
    assert not list(RULES.get("overconfident_slice")().detect_model(artifact))
    assert all(f.category != "overconfident_slice" for f in reason(_signals(artifact), artifact))
    # nor does it hide an overconfident slice listed beside it
    both = big.model_copy(update={"slices": [_slice(0.98, 0.3, kind="underconfident"),
                                             _slice(0.4, 0.15)]})
    artifact = _artifact(confidence=both)
    found = [f for f in reason(_signals(artifact), artifact) if f.category == "overconfident_slice"]
    assert found and found[0].severity == "high" and "confident predictions are wrong" in found[0].title


def _disparity(eo_low):
    groups = [GroupStats(group="A", n_rows=600, accuracy=0.9, tpr=0.9, fpr=0.1),
              GroupStats(group="B", n_rows=400, accuracy=0.8, tpr=0.9 - eo_low - 0.05, fpr=0.1)]
    item = GroupDisparity(feature="sex", model_sees_it=False, groups=groups,
                          equalized_odds_difference=eo_low + 0.05, equalized_odds_low=eo_low,
                          demographic_parity_difference=0.05, demographic_parity_low=-0.01,
                          base_rate_difference=0.0, accuracy_difference=0.1,
                          accuracy_difference_low=-0.01, worst_group="B", best_group="A")
    return FairnessSummary(n_rows=1000, features=[item])


def test_group_disparity_uses_the_lower_end_of_the_interval_and_needs_the_key():
    assert not [s for s in _signals(_artifact()) if s.category == "group_disparity"]
    noisy = _artifact(fairness=_disparity(-0.02))  # a gap whose interval includes 0
    assert not [s for s in _signals(noisy) if s.category == "group_disparity"]
    clear = _artifact(fairness=_disparity(0.2))
    finding = next(f for f in reason(_signals(clear), clear) if f.category == "group_disparity")
    assert finding.severity == "high" and "'sex'" in finding.title
    assert "proxies" in finding.explanation


def _accuracy_gap(gap, low):
    """Two groups with an accuracy gap ``gap`` whose interval starts at ``low`` (nothing
    else differs between them)."""
    groups = [GroupStats(group="A", n_rows=175, accuracy=0.85),
              GroupStats(group="B", n_rows=110, accuracy=0.85 + gap)]
    item = GroupDisparity(feature="sex", model_sees_it=False, groups=groups,
                          accuracy_difference=gap, accuracy_difference_low=low,
                          worst_group="A", best_group="B")
    return FairnessSummary(n_rows=285, features=[item])


@pytest.mark.parametrize(("gap", "low", "severity"), [
    (0.081, 0.0014, "low"),    # significant, 8 points: measured, however close low is to 0
    (0.081, -0.002, None),     # the interval includes 0: chance cannot be ruled out
    (0.03, 0.001, None),       # significant but below the first band: too small to report
    (0.2, 0.11, "medium"),     # the lower end itself scores above the floor
    (0.2, 0.01, "medium"),     # significant: its estimate (20 points) sizes it, not the low end
    (0.4, 0.01, "medium"),     # ...but only up to medium: high needs the lower end itself
    (0.4, 0.25, "high"),       # the lower end itself is high
])
def test_group_disparity_a_significant_gap_is_at_least_low(gap, low, severity):
    artifact = _artifact(fairness=_accuracy_gap(gap, low))
    found = [f for f in reason(_signals(artifact), artifact) if f.category == "group_disparity"]
    if severity is None:
        assert not found
    else:
        assert found[0].severity == severity and "accuracy gap" in found[0].title


def _regression_disparity(relative_low):
    groups = [GroupStats(group="A", n_rows=600, mae=10.0, mean_residual=0.0),
              GroupStats(group="C", n_rows=200, mae=10.0 + 10 * relative_low + 2,
                         mean_residual=1.0)]
    item = GroupDisparity(feature="district", model_sees_it=False, groups=groups,
                          mae_difference=10 * relative_low + 2, mae_difference_low=10 * relative_low,
                          mae_overall=10.0, bias_difference=1.0, bias_difference_low=-2.0,
                          target_std=50.0, worst_group="C", best_group="A", z=1.96)
    return FairnessSummary(n_rows=800, features=[item])


@pytest.mark.parametrize(("relative_low", "severity"),
                         # the estimate is 0.2 above the lower end: a significant gap of
                         # 22% of the MAE is low, of 40% medium (its estimate, the lower
                         # end 20%), of 60% medium, of 100% high (the lower end 80%)
                         [(-0.1, None), (0.02, "low"), (0.2, "medium"), (0.4, "medium"),
                          (0.8, "high")])
def test_regression_disparity_is_scored_by_the_mae_gap_relative_to_the_overall_mae(
        relative_low, severity):
    artifact = _artifact(fairness=_regression_disparity(relative_low))
    found = [f for f in reason(_signals(artifact), artifact) if f.category == "group_disparity"]
    if severity is None:
        assert not found
    else:
        assert found[0].severity == severity
        assert "mean absolute error gap" in found[0].title and "'district'" in found[0].title


def _shift(change_high, shift):
    return SpuriousSummary(n_rows_train=500, n_rows_test=500, metric="accuracy", features=[
        FeatureAssociationShift(feature="scanner", association_train=0.5, association_test=0.0,
                                change_low=-0.6, change_high=change_high, marginal_shift=shift,
                                importance_train=0.2, importance_test=0.0)])


def test_spurious_correlation_needs_a_significant_break_and_discounts_drift():
    assert not _signals(_artifact(spurious=_shift(0.05, 0.0)))  # interval includes 0
    stable = _artifact(spurious=_shift(-0.3, 0.0))
    drifted = _artifact(spurious=_shift(-0.3, 0.4))
    a = next(s for s in _signals(stable) if s.category == "spurious_correlation")
    b = next(s for s in _signals(drifted) if s.category == "spurious_correlation")
    assert a.score == pytest.approx(0.7) and b.score == pytest.approx(0.35)
    finding = next(f for f in reason(_signals(stable), stable) if f.category == "spurious_correlation")
    assert finding.layer == "split" and "not ordinary drift" in finding.explanation


def _shortcut_and_ece(shifted: bool) -> ArtifactData:
    """A broken shortcut (association 0.5 in training, 0 in evaluation) and an ECE of
    0.3 on 1000 test rows; with ``shifted`` the model also predicts the rare class for
    a third of the rows, on train as on test (class weights: a shifted prior)."""
    from mlflow_deepfix.schemas import PerformanceSummary

    shares = {"0": 0.9, "1": 0.1}
    predicted = {"0": 0.67, "1": 0.33} if shifted else shares
    perf = PerformanceSummary(metric="accuracy", test_score=0.7, train_score=0.9,
                              calibration_error=0.3, calibration_noise=0.03,
                              prediction_distribution=predicted,
                              train_prediction_distribution=predicted)
    train = SplitStats(name="train", n_rows=1000, n_columns=3, label_distribution=shares)
    test = SplitStats(name="test", n_rows=1000, n_columns=3, label_distribution=shares)
    return ArtifactData(task="binary_classification", performance=perf,
                        dataset=DatasetSummary(target="label", train=train, test=test),
                        spurious=_shift(-0.3, 0.0))


def test_a_broken_shortcut_explains_the_calibration_error_not_a_shifted_prior():
    # the shortcut holds in training and not in evaluation: the model is confidently
    # wrong on test because of it, so the calibration error is its symptom
    broken = _shortcut_and_ece(shifted=False)
    findings = reason(_signals(broken), broken)
    categories = [f.category for f in findings]
    assert "spurious_correlation" in categories and "poor_calibration" not in categories
    cause = next(f for f in findings if f.category == "spurious_correlation")
    assert any(e.detail.startswith("symptom (poor_calibration)") for e in cause.evidence)
    # a class predicted three times as often as it occurs on the training rows too: a
    # shifted prior, which a shortcut that holds in training cannot produce
    shifted = _shortcut_and_ece(shifted=True)
    categories = [f.category for f in reason(_signals(shifted), shifted)]
    assert "spurious_correlation" in categories and "poor_calibration" in categories


def _spread_fragility(rates):
    """Per-input flip rates ``{feature: rate}``, most fragile first."""
    items = sorted(rates.items(), key=lambda kv: -kv[1])
    return RobustnessSummary(
        n_rows=500, metric="accuracy", base_score=0.9, flip_rate=items[0][1], score_drop=0.05,
        features=[FeatureFragility(feature=name, kind="numeric", perturbation="noise",
                                   flip_rate=rate, score_drop=rate / 2) for name, rate in items],
    )


def _overfitting_signal():
    from deepfix_agents.signals import Signal
    from mlflow_deepfix.schemas import Evidence

    detail = "f1_macro is 0.99 on train but 0.70 on test (gap 0.29)"
    return Signal(category="overfitting", source="model", score=0.85, confidence=0.9,
                  evidence=Evidence(source="model", detail=detail, value=0.29))


def test_a_fragile_input_is_the_cause_of_the_overfitting_gap_never_folded_into_it():
    # one code column flips predictions, the other inputs are calm: the fragility is
    # localised in 'code', which the overfitting gap does not name, so it is never
    # folded into that gap; the other way round, the gap is the model memorising the
    # arbitrary order of the code (one cause, one fix): the fragile finding stands and
    # carries the gap as its symptom
    local = _spread_fragility({"code": 0.5, "a": 0.01, "b": 0.02, "c": 0.0})
    artifact = _artifact(robustness=local)
    assert RULES.get("fragile_predictions")().subjects([], artifact) == ("code",)
    findings = reason([*_signals(artifact), _overfitting_signal()], artifact)
    assert [f.category for f in findings] == ["fragile_predictions"]
    assert any("symptom (overfitting)" in e.detail for e in findings[0].evidence)
    # a model rough on every input: nothing localises the flips, the gap explains them
    rough = _spread_fragility({"code": 0.5, "a": 0.45, "b": 0.4, "c": 0.3})
    artifact = _artifact(robustness=rough)
    assert RULES.get("fragile_predictions")().subjects([], artifact) == ()
    findings = reason([*_signals(artifact), _overfitting_signal()], artifact)
    assert [f.category for f in findings] == ["overfitting"]
    assert any("symptom (fragile_predictions)" in e.detail for e in findings[0].evidence)


def test_a_localised_symptom_is_folded_only_into_a_cause_naming_one_of_its_inputs():
    from deepfix_agents.reasoner import explain_symptoms, linked
    from mlflow_deepfix.schemas import Finding

    def finding(category, severity):
        return Finding(category=category, layer=CATEGORY_LAYERS[category], title=category,
                       severity=severity, confidence=0.8, explanation=category)

    findings = [finding("overfitting", "high"), finding("overconfident_slice", "medium")]
    named = {"overconfident_slice": ("age", "smoker")}
    assert not linked("overfitting", "overconfident_slice", named)
    kept = explain_symptoms(findings, None, named)
    assert [f.category for f in kept] == ["overfitting", "overconfident_slice"]
    # the same cause naming 'age' links them; without names the old fold stands
    assert linked("overfitting", "overconfident_slice", {**named, "overfitting": ("age",)})
    assert [f.category for f in explain_symptoms(findings, None, None)] == ["overfitting"]


# --- round 32: slice_error_noise ---


def test_slice_error_noise_is_the_poisson_binomial_count_of_the_expected_rate():
    # says 0.99 on the slice and is wrong 10% there (400 rows), calibrated elsewhere: the
    # null count is sum(1 - c) = 4 errors, variance sum c(1 - c) = 400 * 0.99 * 0.01
    sure = _claimed(0, slice_top=0.99, slice_error=0.10, rest_top=0.85, rest_error=0.15)
    top = next(s for s in sure.slices if s.kind == "overconfident")
    assert top.n_wrong == 40
    assert top.expected_wrong == pytest.approx(top.overall_rate * top.n_confident, abs=0.05)
    assert top.expected_wrong == pytest.approx(4.0, abs=0.5)
    assert top.expected_wrong_var == pytest.approx(400 * 0.99 * 0.01, rel=0.15)
    # the null's standard error (~2 errors) is far below the Wilson interval's half-width
    # on the observed rate (~12 errors): the test centred on the claim is sharper
    assert 4 * np.sqrt(top.expected_wrong_var) < (top.rate - top.rate_low) * top.n_confident
    # overconfident by 0.25 everywhere: the outside overconfidence enters each row's
    # probability of error, and with it the variance (p = 0.3, not 0.05)
    worse = _claimed(3, slice_top=0.95, slice_error=0.45, rest_top=0.95, rest_error=0.20)
    top = next(s for s in worse.slices if s.kind == "overconfident")
    p = top.overall_rate
    assert top.expected_wrong_var == pytest.approx(top.n_confident * p * (1 - p), rel=0.02)
    # deterministic, and underconfident slices carry no count model
    again = _claimed(3, slice_top=0.95, slice_error=0.45, rest_top=0.95, rest_error=0.20)
    assert again.model_dump() == worse.model_dump()
    assert all(s.expected_wrong is None for s in worse.slices if s.kind == "underconfident")


def test_slice_error_noise_is_optional_in_old_artifacts():
    from mlflow_deepfix.schemas import SliceConfidence

    old = SliceConfidence(description="a = 1", kind="overconfident", n_rows=50, share=0.2,
                          rate=0.3, rate_low=0.2, rate_high=0.4, overall_rate=0.05,
                          mean_confidence=0.95)
    assert old.n_wrong is None and old.expected_wrong is None and old.expected_wrong_var is None
