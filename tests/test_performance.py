"""summarize_performance: metrics, degenerate outputs, calibration and thresholds."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import (
    accuracy_score,
    balanced_accuracy_score,
    f1_score,
    log_loss,
    roc_auc_score,
)

from mlflow_deepfix.testing.performance import (
    expected_calibration_error,
    score_main_metric,
    segment_errors,
    summarize_performance,
)

BINARY = "binary_classification"


def _binary(n: int = 2000, prevalence: float = 0.3, seed: int = 0):
    """Labels and calibrated probabilities: P(y=1 | p) = p."""
    rng = np.random.default_rng(seed)
    p = np.clip(rng.beta(2, 2 / prevalence - 2, size=n), 0.001, 0.999)
    y = (rng.random(n) < p).astype(int)
    return y, np.column_stack([1 - p, p])


def test_binary_metrics_match_sklearn():
    y, proba = _binary()
    pred = (proba[:, 1] >= 0.5).astype(int)
    summary = summarize_performance(
        task=BINARY, y_test=y, pred_test=pred, proba_test=proba, classes=[0, 1]
    )
    test = summary.scores["test"]
    assert summary.metric == "f1_macro"
    assert summary.test_score == pytest.approx(f1_score(y, pred, average="macro"))
    assert test["accuracy"] == pytest.approx(accuracy_score(y, pred))
    assert test["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(y, pred))
    assert test["roc_auc"] == pytest.approx(roc_auc_score(y, proba[:, 1]))
    assert test["log_loss"] == pytest.approx(log_loss(y, proba))
    assert test["nan_predictions"] == 0
    assert summary.train_score is None and "train" not in summary.scores


def test_degenerate_majority_predictions():
    y = np.array([0] * 90 + [1] * 10)
    summary = summarize_performance(task=BINARY, y_test=y, pred_test=np.zeros(100, dtype=int))
    assert summary.prediction_distribution == {"0": 1.0}
    assert summary.scores["test"]["accuracy"] == pytest.approx(0.9)  # looks fine...
    assert summary.scores["test"]["balanced_accuracy"] == pytest.approx(0.5)
    assert summary.test_score == pytest.approx(
        f1_score(y, np.zeros(100), average="macro")
    )  # ...is not
    assert summary.test_score < 0.5
    assert summary.scores["test"]["n_predicted_classes"] == 1


def test_string_labels_and_classes_never_predicted():
    y = np.array(["cat", "dog", "bird"] * 20)
    pred = np.array(["cat"] * 60)
    summary = summarize_performance(task="multiclass_classification", y_test=y, pred_test=pred)
    assert summary.test_score == pytest.approx(f1_score(y, pred, average="macro"))
    assert summary.prediction_distribution == {"cat": 1.0}


def test_labels_of_different_dtypes_compare_by_value():
    y = np.array([0, 1, 1, 0] * 10)
    summary = summarize_performance(task=BINARY, y_test=y.astype(float), pred_test=y.astype(str))
    assert summary.test_score == 1.0


def test_nan_predictions_are_counted_and_wrong():
    y = np.array([0, 1] * 50)
    pred = y.astype(float)
    pred[:10] = np.nan
    summary = summarize_performance(task=BINARY, y_test=y, pred_test=pred)
    assert summary.scores["test"]["nan_predictions"] == 10
    assert summary.scores["test"]["accuracy"] == pytest.approx(0.9)
    assert summary.prediction_distribution["<nan>"] == pytest.approx(0.1)


def test_continuous_output_for_a_classification_task_scores_near_zero():
    y = np.array([0, 1] * 100)
    pred = np.random.default_rng(0).random(200)  # a regressor's raw output
    summary = summarize_performance(task=BINARY, y_test=y, pred_test=pred)
    assert summary.test_score == 0.0
    assert len(summary.prediction_distribution) <= 51


def test_calibration_error_small_when_calibrated_large_when_not():
    y, proba = _binary(n=20_000)
    calibrated = summarize_performance(
        task=BINARY, y_test=y, pred_test=proba.argmax(1), proba_test=proba, classes=[0, 1]
    )
    assert calibrated.calibration_error < 0.03
    overconfident = np.where(proba[:, 1:] >= 0.5, 0.99, 0.01)
    over = np.column_stack([1 - overconfident[:, 0], overconfident[:, 0]])
    bad = summarize_performance(
        task=BINARY, y_test=y, pred_test=over.argmax(1), proba_test=over, classes=[0, 1]
    )
    assert bad.calibration_error > 0.15


def test_confidence_gap_tells_overconfidence_from_underconfidence():
    y, proba = _binary(n=20_000)
    calibrated = summarize_performance(
        task=BINARY, y_test=y, pred_test=proba.argmax(1), proba_test=proba, classes=[0, 1]
    )
    assert abs(calibrated.confidence_gap) < 0.02
    # the same decisions, stated at 0.99 / 0.01 and at 0.55 / 0.45
    for stated, sign in ((0.99, 1), (0.55, -1)):
        top = np.where(proba[:, 1] >= 0.5, stated, 1 - stated)
        served = np.column_stack([1 - top, top])
        summary = summarize_performance(
            task=BINARY, y_test=y, pred_test=served.argmax(1), proba_test=served,
            classes=[0, 1],
        )
        accuracy = summary.scores["test"]["accuracy"]
        assert summary.confidence_gap == pytest.approx(stated - accuracy, abs=1e-9)
        assert np.sign(summary.confidence_gap) == sign
        assert summary.calibration_error > 0.1


def test_multiclass_calibration_uses_the_predicted_class():
    matrix = np.array([[0.8, 0.1, 0.1]] * 100)
    y = np.array(["a"] * 80 + ["b"] * 20)
    assert expected_calibration_error(y, matrix, ["a", "b", "c"]) == pytest.approx(0.0)
    y_wrong = np.array(["b"] * 100)
    assert expected_calibration_error(y_wrong, matrix, ["a", "b", "c"]) == pytest.approx(0.8)


def test_threshold_tuning_helps_a_rare_class_with_low_scores():
    rng = np.random.default_rng(1)
    n = 4000
    y = (rng.random(n) < 0.05).astype(int)
    # well ranked but never above 0.5: default threshold predicts no positive at all
    score = np.clip(0.05 + 0.3 * y + rng.normal(0, 0.05, n), 0, 0.45)
    proba = np.column_stack([1 - score, score])
    summary = summarize_performance(
        task=BINARY,
        y_test=y,
        pred_test=(score >= 0.5).astype(int),
        proba_test=proba,
        classes=[0, 1],
    )
    assert summary.f1_at_default == 0.0
    assert summary.best_threshold < 0.5
    assert summary.f1_at_best > 0.8


def test_threshold_uses_the_minority_class_even_when_it_is_listed_first():
    y = np.array(["rare"] * 10 + ["common"] * 90)
    p_rare = np.where(y == "rare", 0.4, 0.1)
    proba = np.column_stack([1 - p_rare, p_rare])  # columns: common, rare
    summary = summarize_performance(
        task=BINARY,
        y_test=y,
        pred_test=np.array(["common"] * 100),
        proba_test=proba,
        classes=["common", "rare"],
    )
    assert summary.f1_at_default == 0.0 and summary.f1_at_best == 1.0
    assert 0.1 < summary.best_threshold <= 0.4


def test_multiclass_roc_auc_and_train_scores():
    rng = np.random.default_rng(2)
    y = rng.integers(0, 3, 600)
    logits = np.eye(3)[y] * 2 + rng.normal(size=(600, 3))
    proba = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    summary = summarize_performance(
        task="multiclass_classification",
        y_test=y,
        pred_test=proba.argmax(1),
        proba_test=proba,
        classes=[0, 1, 2],
        y_train=y,
        pred_train=y,
        proba_train=np.eye(3)[y],
    )
    assert summary.scores["test"]["roc_auc"] == pytest.approx(
        roc_auc_score(y, proba, multi_class="ovr")
    )
    assert summary.train_score == 1.0
    assert summary.best_threshold is None  # binary only


def test_regression_metrics_spread_and_nans():
    rng = np.random.default_rng(3)
    y = rng.normal(10, 2, 500)
    pred = y + rng.normal(0, 0.5, 500)
    pred[:5] = np.nan
    summary = summarize_performance(task="regression", y_test=y, pred_test=pred)
    keep = np.isfinite(pred)
    assert summary.metric == "r2"
    assert summary.scores["test"]["nan_predictions"] == 5
    assert summary.scores["test"]["rmse"] == pytest.approx(
        np.sqrt(np.mean((pred[keep] - y[keep]) ** 2))
    )
    assert summary.test_score > 0.9
    assert summary.prediction_spread_ratio == pytest.approx(np.std(pred[keep]) / np.std(y[keep]))
    constant = summarize_performance(task="regression", y_test=y, pred_test=np.full(500, 10.0))
    assert constant.prediction_spread_ratio == 0.0
    assert constant.test_score < 0.01
    assert constant.prediction_distribution == {}


def test_probabilities_of_the_wrong_shape_are_ignored_not_fatal():
    y = np.array([0, 1] * 10)
    summary = summarize_performance(
        task=BINARY, y_test=y, pred_test=y, proba_test=np.ones((20, 3)) / 3, classes=[0, 1]
    )
    assert "roc_auc" not in summary.scores["test"] and summary.calibration_error is None


def test_score_main_metric():
    assert score_main_metric(BINARY, [0, 1, 1], [0, 1, 1]) == 1.0
    assert score_main_metric("regression", [1.0, 2.0, 3.0], [2.0, 2.0, 2.0]) == pytest.approx(0.0)
    with pytest.raises(ValueError, match="task='ranking'"):
        score_main_metric("ranking", [0], [0])


def test_classes_inferred_from_sorted_labels_when_not_given():
    y = np.array([2, 10] * 50)
    p_ten = np.where(y == 10, 0.9, 0.2)
    summary = summarize_performance(
        task=BINARY, y_test=y, pred_test=y, proba_test=np.column_stack([1 - p_ten, p_ten])
    )
    assert summary.scores["test"]["roc_auc"] == 1.0  # column 1 is label 10 (sorted numerically)


def test_segment_errors_score_a_sizeable_category_of_a_small_test_split():
    """91 test rows over four sites: a site of 16 rows (18 %) is scored although it is under
    30 rows, one of 9 rows (10 %) is not; on 1,000 rows a 5 % category of 50 rows is."""
    import pandas as pd

    sites = ["a"] * 40 + ["b"] * 26 + ["d"] * 16 + ["e"] * 9
    frame = pd.DataFrame({"site": sites})
    truth = np.zeros(len(sites))
    guess = np.where(frame["site"] == "d", 1.0, 0.1)
    found = segment_errors(frame, task="regression", y_true=truth, y_pred=guess, features=["site"])
    values = {s.value: s for s in found}
    assert "d" in values and values["d"].n_rows == 16 and values["d"].error == 1.0
    assert "e" not in values
    large = pd.DataFrame({"site": ["a"] * 950 + ["z"] * 50})
    found = segment_errors(large, task="regression", y_true=np.zeros(1000),
                           y_pred=np.where(large["site"] == "z", 1.0, 0.0), features=["site"])
    assert [s.value for s in found][:1] == ["z"]


# --- stop 30: testing-side measurements ---


def test_segment_errors_score_a_ten_row_segment_of_a_small_test_split():
    """A 10-row site of a 60-row test split (17 %) is scored; 9 rows are not."""
    import pandas as pd

    for rows, scored in ((10, True), (9, False)):
        sites = ["a"] * (60 - rows) + ["s"] * rows
        frame = pd.DataFrame({"site": sites})
        guess = np.where(frame["site"] == "s", 1.0, 0.0)
        found = segment_errors(frame, task="regression", y_true=np.zeros(60), y_pred=guess,
                               features=["site"])
        assert ("s" in {s.value for s in found}) is scored


def test_segment_baseline_error_tells_a_wider_spread_from_a_failing_model():
    """Dinner bills spread twice as wide as lunch bills: the model's error doubles at
    dinner, and so does the constant guess's, while the overall baseline stays between."""
    import pandas as pd

    rng = np.random.default_rng(0)
    meal = np.array(["lunch"] * 100 + ["dinner"] * 100)
    truth = np.where(meal == "dinner", 2.0, 1.0) * rng.normal(0, 1, 200) + 10
    guess = 10 + 0.5 * (truth - 10)  # explains the same share of the spread in both
    found = {s.value: s for s in segment_errors(pd.DataFrame({"meal": meal}), task="regression",
                                                y_true=truth, y_pred=guess, features=["meal"])}
    dinner, lunch = found["dinner"], found["lunch"]
    assert dinner.error > 1.5 * lunch.error
    assert dinner.error / dinner.baseline_error == pytest.approx(
        lunch.error / lunch.baseline_error, rel=0.1)
    assert lunch.baseline_error < dinner.overall_baseline_error < dinner.baseline_error


def test_segment_baseline_error_of_a_class_is_one_minus_its_majority_share():
    import pandas as pd

    group = np.array(["a"] * 40 + ["b"] * 40)
    truth = np.array([1] * 30 + [0] * 10 + [1] * 20 + [0] * 20)
    found = {s.value: s for s in segment_errors(
        pd.DataFrame({"g": group}), task="binary_classification", y_true=truth,
        y_pred=np.ones(80, dtype=int), features=["g"])}
    assert found["a"].baseline_error == pytest.approx(0.25)
    assert found["b"].baseline_error == pytest.approx(0.5)
    assert found["a"].overall_baseline_error == pytest.approx(30 / 80)


def test_confidence_gap_noise_is_the_chance_spread_of_a_calibrated_model():
    """The gap of a perfectly calibrated model scatters around 0 with the stated noise
    (within 15 % over 300 draws), and the noise shrinks as 1/sqrt(rows)."""
    from mlflow_deepfix.testing.performance import confidence_gap, confidence_gap_noise

    rng = np.random.default_rng(1)
    p = rng.uniform(0.55, 0.95, 400)
    matrix = np.column_stack([1 - p, p])
    noise = confidence_gap_noise(matrix)
    gaps = [confidence_gap(np.where(rng.random(400) < p, "1", "0"), matrix, ["0", "1"])
            for _ in range(300)]
    assert abs(np.mean(gaps)) < 3 * noise / np.sqrt(300)
    assert np.std(gaps) == pytest.approx(noise, rel=0.15)
    assert confidence_gap_noise(np.vstack([matrix] * 4)) == pytest.approx(noise / 2)
    y, proba = _binary(500)
    summary = summarize_performance(task=BINARY, y_test=y, pred_test=(proba[:, 1] > 0.5).astype(int),
                                    proba_test=proba, classes=[0, 1])
    assert summary.confidence_gap_noise == pytest.approx(confidence_gap_noise(proba))


# --- round 32: seg32 ---


def test_seg32_segment_siblings_cover_every_category_of_the_feature():
    """The sibling aggregates of a listed segment count every other category of its
    feature, the ones too small to be listed included; a one-row category (its constant
    guess is exact) is left out. The error spreads are the segment's and the other
    rows' sample standard deviations."""
    import pandas as pd

    rng = np.random.default_rng(3)
    site = np.array(["a"] * 50 + ["b"] * 40 + ["c"] * 5 + ["d"])
    truth = rng.normal(10, 2, site.size)
    guess = truth + rng.normal(0, 1, site.size)
    found = {s.value: s for s in segment_errors(pd.DataFrame({"site": site}), task="regression",
                                                y_true=truth, y_pred=guess, features=["site"])}
    assert set(found) == {"a", "b"}  # c (5 rows) and d (1 row) are not listed
    a = found["a"]
    errors = np.abs(truth - guess)
    others = (site == "b") | (site == "c")
    assert a.sibling_n_rows == 45
    assert a.sibling_error == pytest.approx(errors[others].mean(), abs=1e-5)
    base = sum(
        (site == v).sum() * np.mean(np.abs(truth[site == v] - np.median(truth[site == v])))
        for v in ("b", "c")
    ) / 45
    assert a.sibling_baseline_error == pytest.approx(base, abs=1e-5)
    assert a.error_std == pytest.approx(np.std(errors[site == "a"], ddof=1), abs=1e-5)
    assert a.rest_error_std == pytest.approx(np.std(errors[site != "a"], ddof=1), abs=1e-5)
    assert found["b"].sibling_n_rows == 55  # a and c


def test_seg32_segment_score_new_fields_default_to_none():
    """Artifacts written before round 32 load with the new fields absent (None)."""
    from mlflow_deepfix.schemas import SegmentScore

    old = SegmentScore(feature="f", value="v", share=0.2, n_rows=20, error=1.0,
                       overall_error=0.5)
    assert old.error_std is old.rest_error_std is old.sibling_n_rows is None
    assert old.sibling_error is old.sibling_baseline_error is None


def test_pr50_regression_statistics_say_which_set_the_predictions_are_drawn_from():
    """A classifier fitted on a numeric target answers only with training targets; a
    regressor lands between them. The test statistics record how many distinct values
    were predicted, how many distinct training targets there are, and the share of
    predictions that equal one of them (what tells the two apart for a pyfunc)."""
    y_train = np.arange(100, dtype=float) % 25
    y_test = np.arange(40, dtype=float) % 20
    classes = summarize_performance(task="regression", y_test=y_test, pred_test=y_test[::-1],
                                    y_train=y_train, pred_train=y_train)
    stats = classes.prediction_stats["test"]
    assert stats["in_train_targets"] == 1.0
    assert stats["distinct"] == 20.0 and stats["train_target_distinct"] == 25.0
    between = summarize_performance(task="regression", y_test=y_test, pred_test=y_test + 0.37,
                                    y_train=y_train, pred_train=y_train + 0.37)
    assert between.prediction_stats["test"]["in_train_targets"] == 0.0
    assert "in_train_targets" not in between.prediction_stats["train"]
    alone = summarize_performance(task="regression", y_test=y_test, pred_test=y_test)
    assert set(alone.prediction_stats["test"]) == {"mean", "std", "distinct"}
