"""Dataset statistics: every signal is planted in a small seeded frame and measured."""

from __future__ import annotations

import json
import time

import numpy as np
import pandas as pd
import pytest

from mlflow_deepfix.testing.stats import (
    compare_splits,
    infer_cat_features,
    label_keys,
    split_stats,
    summarize_dataset,
)

BINARY = "binary_classification"


def _frame(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "x1": rng.normal(size=n),
            "x2": rng.uniform(0, 10, size=n),
            "color": rng.choice(["red", "green", "blue"], size=n),
            "label": rng.integers(0, 2, size=n),
        }
    )


def _stats(frame: pd.DataFrame, features: list[str] | None = None, **kwargs) -> object:
    features = features if features is not None else [c for c in frame.columns if c != "label"]
    kwargs.setdefault("task", BINARY)
    kwargs.setdefault("cat_features", infer_cat_features(frame, features))
    return split_stats(frame, name="train", label="label", feature_names=features, **kwargs)


# --------------------------------------------------------------------------- split stats


def test_duplicate_fraction_counts_exact_repeats_including_label():
    base = _frame(100)
    frame = pd.concat([base, base.iloc[:10]], ignore_index=True)
    stats = _stats(frame)
    assert stats.duplicate_fraction == pytest.approx(10 / 110)
    assert _stats(base).duplicate_fraction == 0.0


def test_same_features_different_label_is_a_conflict_not_a_duplicate():
    base = _frame(100)
    flipped = base.iloc[:20].copy()
    flipped["label"] = 1 - flipped["label"]
    stats = _stats(pd.concat([base, flipped], ignore_index=True))
    # 20 original rows + their 20 flipped copies share a feature vector with two labels
    assert stats.conflicting_label_fraction == pytest.approx(40 / 120)
    assert stats.duplicate_fraction == 0.0
    assert _stats(base).conflicting_label_fraction == 0.0


def test_label_distribution_and_missing_labels():
    frame = _frame(200)
    frame["label"] = np.where(np.arange(200) < 150, "no", "yes")
    frame.loc[:9, "label"] = None
    stats = _stats(frame)
    assert stats.label_missing_fraction == pytest.approx(0.05)
    assert stats.label_distribution == pytest.approx({"no": 140 / 190, "yes": 50 / 190})
    assert stats.n_rows == 200 and stats.n_columns == 4


def test_regression_label_stats():
    frame = _frame(300)
    frame["label"] = np.linspace(0, 10, 300)
    stats = _stats(frame, task="regression")
    assert stats.label_distribution == {}
    assert stats.label_stats["mean"] == pytest.approx(5.0)
    # robust extremes (p0.5 / p99.5), not the exact values of single rows
    assert stats.label_stats["min"] == pytest.approx(0.05) and stats.label_stats["max"] == pytest.approx(9.95)
    assert stats.label_stats["q50"] == pytest.approx(5.0)


def test_numeric_column_statistics():
    frame = _frame(1000)
    frame["x1"] = np.arange(1000, dtype=float) % 100  # 0..99 ten times
    col = _stats(frame).column("x1")
    assert col.kind == "numeric"
    assert col.n_unique == 100 and col.unique_fraction == pytest.approx(0.1)
    assert col.top_fraction == pytest.approx(0.01)
    assert col.mean == pytest.approx(49.5)
    assert col.min == pytest.approx(np.quantile(frame["x1"], 0.005)) and col.max == pytest.approx(np.quantile(frame["x1"], 0.995))
    assert col.q50 == pytest.approx(49.5)
    assert col.q01 == pytest.approx(np.quantile(frame["x1"], 0.01))
    assert col.q99 == pytest.approx(np.quantile(frame["x1"], 0.99))
    assert col.std == pytest.approx(frame["x1"].std())
    assert col.outlier_fraction == 0.0


def test_constant_and_all_missing_columns():
    frame = _frame(200)
    frame["const"] = 7
    frame["empty"] = np.nan
    stats = _stats(frame)
    const = stats.column("const")
    assert const.n_unique == 1 and const.top_fraction == 1.0 and const.std == 0.0
    assert const.outlier_fraction in (0.0, None)
    empty = stats.column("empty")
    assert empty.missing_fraction == 1.0 and empty.n_unique == 0 and empty.mean is None


def test_outliers_beyond_five_iqrs():
    rng = np.random.default_rng(1)
    frame = _frame(1000)
    values = rng.normal(size=1000)
    values[:20] = 1000.0
    frame["wild"] = values
    zero_inflated = np.zeros(1000)
    zero_inflated[:30] = rng.uniform(1, 2, size=30)  # IQR is 0: must not all be outliers
    frame["sparse"] = zero_inflated
    stats = _stats(frame)
    assert stats.column("wild").outlier_fraction == pytest.approx(0.02)
    assert stats.column("sparse").outlier_fraction == 0.0
    assert stats.column("x1").outlier_fraction == 0.0


def test_infinities_are_counted_and_kept_out_of_moments():
    frame = _frame(200)
    frame.loc[:4, "x1"] = np.inf
    frame.loc[5, "x1"] = -np.inf
    col = _stats(frame).column("x1")
    assert col.n_inf == 6
    assert np.isfinite(col.mean) and np.isfinite(col.max)


def test_string_mismatch_case_and_whitespace_variants():
    frame = _frame(100)
    frame["answer"] = ["Yes"] * 70 + ["yes "] * 10 + ["YES"] * 5 + ["No"] * 15
    col = _stats(frame).column("answer")
    assert col.string_mismatch_fraction == pytest.approx(0.15)
    assert _stats(frame).column("color").string_mismatch_fraction == 0.0


def test_numbers_that_differ_only_by_punctuation_are_not_mismatches():
    frame = _frame(100)
    frame["code"] = ["1.0"] * 50 + ["10"] * 50
    assert _stats(frame).column("code").string_mismatch_fraction == 0.0


def test_mixed_types():
    frame = _frame(100)
    frame["mixed"] = pd.Series([1, 2.5, "three", None] * 25, dtype=object)
    frame["numeric_text"] = ["12", "7", "unknown", "3"] * 25
    stats = _stats(frame)
    assert stats.column("mixed").mixed_types is True
    assert stats.column("mixed").missing_fraction == pytest.approx(0.25)
    assert stats.column("numeric_text").mixed_types is True
    assert stats.column("color").mixed_types is False
    assert stats.column("x1").mixed_types is False


def test_numbers_stored_as_formatted_text():
    rng = np.random.default_rng(8)
    frame = _frame(200)
    amounts = rng.integers(1_000, 90_000, size=200)
    frame["amount"] = [f"${a:,}" for a in amounts]  # "$52,300"
    frame.loc[:9, "amount"] = "n/a"
    frame["share"] = pd.Series([f" {p}% " for p in rng.integers(0, 100, size=200)], dtype=object)
    stats = _stats(frame)
    assert stats.column("amount").numeric_string_fraction == pytest.approx(0.95)
    assert stats.column("share").numeric_string_fraction == 1.0
    assert stats.column("color").numeric_string_fraction == 0.0
    assert stats.column("x1").numeric_string_fraction is None  # not a text column


def test_label_copy_has_association_near_one_and_noise_near_zero():
    frame = _frame(2000)
    frame["leak_numeric"] = frame["label"] * 3.0 + 1.0
    frame["leak_text"] = np.where(frame["label"] == 1, "pos", "neg")
    stats = _stats(frame)
    assert stats.column("leak_numeric").target_association == pytest.approx(1.0)
    assert stats.column("leak_text").target_association == pytest.approx(1.0)
    assert stats.column("x1").target_association < 0.1
    assert stats.column("color").target_association < 0.05


def test_multiclass_and_regression_association():
    rng = np.random.default_rng(3)
    n = 3000
    label = rng.integers(0, 4, size=n)
    frame = pd.DataFrame(
        {
            "only_class_3": (label == 3) + rng.normal(0, 0.01, n),
            "noise": rng.normal(size=n),
            "label": label,
        }
    )
    stats = _stats(frame, task="multiclass_classification")
    assert stats.column("only_class_3").target_association > 0.95  # one-vs-rest maximum
    assert stats.column("noise").target_association < 0.1

    frame = pd.DataFrame({"monotone": rng.normal(size=n), "noise": rng.normal(size=n)})
    frame["label"] = np.exp(frame["monotone"])  # Spearman sees through the non-linearity
    stats = _stats(frame, task="regression")
    assert stats.column("monotone").target_association == pytest.approx(1.0)
    assert stats.column("noise").target_association < 0.1


def test_association_only_on_train_by_default_and_on_a_capped_sample():
    frame = _frame(500)
    test = split_stats(
        frame, name="test", label="label", task=BINARY, feature_names=["x1"], cat_features=[]
    )
    assert test.column("x1").target_association is None
    sampled = _stats(frame, max_rows=100)
    assert sampled.column("x1").target_association is not None
    assert sampled.n_rows == 500  # other statistics still see every row


def test_monotonic_index_like_columns():
    rng = np.random.default_rng(4)
    frame = _frame(500)
    frame["row_number"] = np.arange(500)
    frame["shuffled_counter"] = rng.permutation(2000)[:500]  # a train split of ids 0..1999
    frame["timestamp"] = pd.date_range("2021-01-01", periods=500, freq="h")
    frame["amount"] = rng.integers(0, 1_000_000, size=500)  # distinct integers, sparse range
    stats = _stats(frame, features=["x1", "x2", "color"])
    assert stats.column("row_number").monotonic is True
    assert stats.column("shuffled_counter").monotonic is True
    assert stats.column("timestamp").monotonic is True
    assert stats.column("timestamp").kind == "datetime"
    assert stats.column("amount").monotonic is False
    assert stats.column("x1").monotonic is False


def test_columns_beyond_the_features_are_described_but_not_hashed():
    frame = _frame(100)
    frame["row_id"] = np.arange(100)
    base = pd.concat([frame, frame.iloc[:10].assign(row_id=np.arange(100, 110))], ignore_index=True)
    stats = split_stats(
        base,
        name="train",
        label="label",
        task=BINARY,
        feature_names=["x1", "x2", "color"],
        cat_features=["color"],
    )
    assert stats.column("row_id") is not None
    assert [c.name for c in stats.columns][:3] == ["x1", "x2", "color"]
    # the id differs but the feature vector + label repeats: a duplicate sample
    assert stats.duplicate_fraction == pytest.approx(10 / 110)


def test_awkward_dtypes_do_not_crash():
    n = 60
    rng = np.random.default_rng(5)
    frame = pd.DataFrame(
        {
            "all_nan": np.full(n, np.nan),
            "empty_strings": [""] * (n // 2) + ["a"] * (n // 2),
            "inf": np.where(np.arange(n) % 7 == 0, np.inf, rng.normal(size=n)),
            "when": pd.date_range("2020-01-01", periods=n, freq="D", tz="UTC"),
            "flag": rng.integers(0, 2, n).astype(bool),
            "text": pd.Series(rng.choice(["a", "b", None], n), dtype="str"),
            "cat": pd.Series(rng.choice(["u", "v"], n)).astype("category"),
            "nullable_int": pd.array(list(range(n - 1)) + [None], dtype="Int64"),
            "zero_var": np.ones(n),
            "lists": pd.Series([[i % 3] for i in range(n)], dtype=object),
            "objects_all_none": pd.Series([None] * n, dtype=object),
            "label": rng.integers(0, 3, n),
        }
    )
    features = [c for c in frame.columns if c != "label"]
    summary = summarize_dataset(
        frame,
        frame.iloc[::-1].reset_index(drop=True),
        label="label",
        task="multiclass_classification",
        feature_names=features,
        cat_features=None,
        index_col=None,
        datetime_col="when",
        seed=0,
    )
    kinds = {c.name: c.kind for c in summary.train.columns}
    assert kinds["when"] == "datetime" and kinds["flag"] == "boolean"
    assert kinds["all_nan"] == "numeric" and kinds["cat"] == "categorical"
    assert summary.train.column("inf").n_inf == 9
    assert summary.train.column("zero_var").std == 0.0
    assert summary.comparison.overlap_fraction == 1.0  # the test split is train reversed
    json.loads(summary.model_dump_json())  # JSON-safe throughout


def test_empty_frame():
    frame = _frame(10).iloc[:0]
    stats = _stats(frame)
    assert stats.n_rows == 0 and stats.duplicate_fraction == 0.0


# --------------------------------------------------------------------------- comparison


def _compare(train: pd.DataFrame, test: pd.DataFrame, **kwargs):
    features = kwargs.pop("features", ["x1", "x2", "color"])
    kwargs.setdefault("cat_features", ["color"])
    kwargs.setdefault("datetime_col", None)
    return compare_splits(train, test, label="label", task=BINARY, feature_names=features, **kwargs)


def test_overlap_when_forty_percent_of_test_rows_come_from_train():
    train, fresh = _frame(500, seed=0), _frame(60, seed=1)
    test = pd.concat([train.iloc[:40], fresh], ignore_index=True)
    assert _compare(train, test).overlap_fraction == pytest.approx(0.4)
    assert _compare(train, fresh).overlap_fraction == 0.0


def test_overlap_ignores_incidental_dtype_differences():
    train = _frame(100)
    train["count"] = np.arange(100)
    test = train.iloc[:50].copy()
    test["count"] = test["count"].astype(float)  # int64 -> float64
    test["color"] = test["color"].astype("category")
    comparison = _compare(train, test, features=["x1", "count", "color"])
    assert comparison.overlap_fraction == 1.0
    assert comparison.dtype_mismatches == {"color": "str -> category"}


def test_integers_read_as_floats_are_no_dtype_mismatch():
    """One missing value makes an integer column float64: the model reads the same
    numbers, so the comparison reports no schema change (a drift beside it stays a
    drift, not a symptom of a retyped column)."""
    train = _frame(100)
    train["count"] = np.arange(100)
    test = train.iloc[:50].copy()
    test["count"] = test["count"].astype(float)
    test.loc[test.index[0], "count"] = np.nan
    test["x1"] = test["x1"].round().astype(int)
    comparison = _compare(train, test, features=["x1", "count", "color"])
    assert comparison.dtype_mismatches == {}
    test["count"] = test["count"].astype(str)
    assert _compare(train, test, features=["x1", "count", "color"]).dtype_mismatches == {
        "count": "int64 -> str"
    }


def test_dtype_mismatch_and_missing_columns():
    train = _frame(100)
    test = _frame(50, seed=1).drop(columns=["x2"])
    test["x1"] = test["x1"].astype(str)
    test["extra"] = 1
    comparison = _compare(train, test)
    assert comparison.columns_only_in_train == ["x2"]
    assert comparison.columns_only_in_test == ["extra"]
    assert comparison.dtype_mismatches == {"x1": "float64 -> str"}
    assert comparison.test_to_train_ratio == pytest.approx(0.5)


def test_str_and_object_text_columns_are_not_a_mismatch():
    train = _frame(50)
    test = train.copy()
    test["color"] = test["color"].astype(object)
    comparison = _compare(train, test)
    assert comparison.dtype_mismatches == {}
    assert comparison.overlap_fraction == 1.0


def test_unseen_categories_and_labels():
    train, test = _frame(300), _frame(100, seed=1)
    test.loc[:9, "color"] = "purple"
    test.loc[:4, "label"] = 2
    comparison = _compare(train, test)
    assert comparison.unseen_category_fraction == {"color": pytest.approx(0.10)}
    assert comparison.unseen_label_fraction == pytest.approx(0.05)
    assert _compare(train, _frame(100, seed=2)).unseen_category_fraction == {}


def test_unseen_category_compares_numbers_by_value():
    train = _frame(100)
    train["level"] = np.arange(100) % 3
    test = train.copy()
    test["level"] = test["level"].astype(float)
    test.loc[0, "level"] = np.nan
    comparison = _compare(train, test, cat_features=["level"])
    assert comparison.unseen_category_fraction == {}


def test_test_dated_before_latest_training_date():
    train, test = _frame(100), _frame(100, seed=1)
    train["day"] = pd.date_range("2022-01-01", periods=100, freq="D").astype(str)
    test["day"] = pd.date_range("2022-03-01", periods=100, freq="D").astype(str)
    # train ends 2022-04-10; test runs 2022-03-01..2022-06-08: 40 days precede it
    comparison = _compare(train, test, datetime_col="day")
    assert comparison.test_before_train_fraction == pytest.approx(0.40)
    proper = test.assign(day=pd.date_range("2023-01-01", periods=100, freq="D"))
    assert _compare(train, proper, datetime_col="day").test_before_train_fraction == 0.0
    assert _compare(train, test).test_before_train_fraction is None


# --------------------------------------------------------------------------- helpers


def test_infer_cat_features_rule():
    rng = np.random.default_rng(6)
    n = 400
    frame = pd.DataFrame(
        {
            "text": rng.choice(["a", "b"], n),
            "flag": rng.integers(0, 2, n).astype(bool),
            "small_int": rng.integers(0, 4, n),
            "small_int_float": rng.integers(0, 4, n).astype(float),
            "many_ints": rng.integers(0, 300, n),
            "floats": rng.normal(size=n),
            "category": pd.Series(rng.choice(["x", "y"], n)).astype("category"),
        }
    )
    assert infer_cat_features(frame, list(frame.columns) + ["absent"]) == [
        "text",
        "flag",
        "small_int",
        "small_int_float",
        "category",
    ]


def test_label_keys_unify_number_and_text_labels():
    assert list(label_keys([1, 1.0, "1", np.int64(2), 2.5, None])) == [
        "1",
        "1",
        "1",
        "2",
        "2.5",
        None,
    ]
    assert list(label_keys(np.array([True, False]))) == ["True", "False"]
    assert list(label_keys(pd.Series([0.0, np.nan, 3.0]))) == ["0", None, "3"]


def test_summarize_without_training_split_puts_association_on_test():
    test = _frame(300)
    test["leak"] = test["label"]
    summary = summarize_dataset(
        None,
        test,
        label="label",
        task=BINARY,
        feature_names=["x1", "leak"],
        cat_features=None,
        seed=0,
    )
    assert summary.train is None and summary.comparison is None
    assert summary.test.column("leak").target_association == pytest.approx(1.0)


def test_unknown_task_is_refused_with_the_accepted_values():
    with pytest.raises(ValueError, match="task='clustering'.*'regression'"):
        _stats(_frame(10), task="clustering")


def test_same_inputs_same_statistics():
    frame = _frame(3000)
    first = _stats(frame, max_rows=500, seed=3).model_dump()
    second = _stats(frame, max_rows=500, seed=3).model_dump()
    assert first == second


def test_fast_enough_on_a_wide_frame():
    rng = np.random.default_rng(7)
    n = 50_000
    columns = {f"n{i}": rng.normal(size=n) for i in range(25)}
    columns.update({f"c{i}": rng.choice(["a", "b", "c", "d"], n) for i in range(8)})
    columns["label"] = rng.integers(0, 2, n)
    train, test = pd.DataFrame(columns), pd.DataFrame(columns).sample(frac=0.3, random_state=0)
    features = [c for c in train.columns if c != "label"]
    start = time.perf_counter()
    summary = summarize_dataset(
        train, test, label="label", task=BINARY, feature_names=features, cat_features=None, seed=0
    )
    elapsed = time.perf_counter() - start
    assert summary.comparison.overlap_fraction == 1.0
    assert elapsed < 4.0, f"summarize_dataset took {elapsed:.2f}s on 65k x 33"
