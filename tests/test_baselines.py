"""The baseline ladder on real (bundled) data and on planted problems."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.model_selection import train_test_split

from mlflow_deepfix.testing.baselines import baseline_ladder

BINARY = "binary_classification"


@pytest.fixture(scope="module")
def cancer() -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    frame = load_breast_cancer(as_frame=True).frame
    train, test = train_test_split(frame, test_size=0.3, random_state=0, stratify=frame["target"])
    return train, test, [c for c in frame.columns if c != "target"]


def _ladder(train, test, features, **kwargs):
    kwargs.setdefault("task", BINARY)
    kwargs.setdefault("cat_features", [])
    kwargs.setdefault("seed", 0)
    kwargs.setdefault("label", "target")
    return {r.name: r for r in baseline_ladder(train, test, feature_names=features, **kwargs)}


def test_three_rungs_with_sane_scores_on_breast_cancer(cancer):
    train, test, features = cancer
    rungs = _ladder(train, test, features)
    assert list(rungs) == ["dummy", "linear", "tree"]
    assert all(r.metric == "f1_macro" for r in rungs.values())
    # majority class (63%): F1 of 0.77 on one class, 0 on the other
    assert rungs["dummy"].cv_score == pytest.approx(0.386, abs=0.01)
    assert rungs["dummy"].test_score == pytest.approx(0.386, abs=0.01)
    assert rungs["linear"].cv_score > 0.93 and rungs["linear"].test_score > 0.93
    assert rungs["tree"].cv_score > 0.85 and rungs["tree"].test_score > 0.85


def test_a_planted_label_copy_makes_the_tree_perfect(cancer):
    train, test, features = cancer
    train = train.assign(leak=np.where(train["target"] == 1, "yes", "no"))
    test = test.assign(leak=np.where(test["target"] == 1, "yes", "no"))
    rungs = _ladder(train, test, features + ["leak"], cat_features=["leak"])
    assert rungs["tree"].cv_score == pytest.approx(1.0)
    assert rungs["tree"].test_score == pytest.approx(1.0)


def test_regression_ladder():
    frame = load_diabetes(as_frame=True).frame
    train, test = train_test_split(frame, test_size=0.3, random_state=0)
    features = [c for c in frame.columns if c != "target"]
    rungs = _ladder(train, test, features, task="regression")
    assert rungs["dummy"].metric == "r2"
    assert abs(rungs["dummy"].cv_score) < 0.05 and rungs["dummy"].test_score < 0.02
    assert rungs["linear"].cv_score > 0.35 and rungs["linear"].test_score > 0.3


def test_messy_columns_never_raise():
    rng = np.random.default_rng(0)
    n = 600
    signal = rng.normal(size=n)
    frame = pd.DataFrame(
        {
            "signal": np.where(rng.random(n) < 0.1, np.nan, signal),
            "inf": np.where(rng.random(n) < 0.05, np.inf, rng.normal(size=n)),
            "city": pd.Series(rng.choice(["paris", "rome", None], n), dtype="str"),
            "user": [f"user{i}" for i in rng.integers(0, 400, n)],  # high cardinality
            "mixed": pd.Series([1, "two", 3.0, None] * (n // 4), dtype=object),
            "when": pd.date_range("2020-01-01", periods=n, freq="h"),
            "flag": rng.random(n) < 0.5,
            "all_nan": np.nan,
            "label": np.where(signal > 0, "up", "down"),
        }
    )
    train, test = frame.iloc[:400], frame.iloc[400:].copy()
    test.loc[test.index[:20], "city"] = "tokyo"  # unseen category
    features = [c for c in frame.columns if c != "label"]
    rungs = _ladder(
        train, test, features, label="label", cat_features=["city", "user", "mixed", "flag"]
    )
    assert list(rungs) == ["dummy", "linear", "tree"]
    assert rungs["linear"].test_score > 0.75 and rungs["tree"].test_score > 0.75


def test_missing_test_column_skips_only_the_test_score(cancer, caplog):
    train, test, features = cancer
    with caplog.at_level(logging.WARNING, logger="mlflow_deepfix.testing.baselines"):
        rungs = _ladder(train, test.drop(columns=[features[0]]), features)
    assert all(r.test_score is None and r.cv_score is not None for r in rungs.values())
    assert "missing column" in caplog.text


def test_single_class_gives_no_rung(cancer, caplog):
    train, test, features = cancer
    train = train.assign(target=1)
    with caplog.at_level(logging.WARNING, logger="mlflow_deepfix.testing.baselines"):
        assert (
            baseline_ladder(
                train,
                test,
                label="target",
                task=BINARY,
                feature_names=features,
                cat_features=[],
                seed=0,
            )
            == []
        )
    assert "single class" in caplog.text


def test_sampling_is_seeded(cancer):
    train, test, features = cancer
    first = _ladder(train, test, features, max_rows=200, seed=5)
    second = _ladder(train, test, features, max_rows=200, seed=5)
    assert {k: v.model_dump() for k, v in first.items()} == {
        k: v.model_dump() for k, v in second.items()
    }


def test_bad_arguments_are_refused():
    frame = pd.DataFrame({"a": [1.0] * 20, "target": [0, 1] * 10})
    with pytest.raises(ValueError, match="cv=1"):
        baseline_ladder(
            frame,
            frame,
            label="target",
            task=BINARY,
            feature_names=["a"],
            cat_features=[],
            seed=0,
            cv=1,
        )


def test_training_rows_scan_finds_a_site_with_shuffled_labels(cancer):
    """Out-of-fold errors per category on the training sample: a site whose labels are
    shuffled is the worst category for both fitted rungs, the others stay near the
    overall error, and the dummy rung records no scan."""
    train, test, features = cancer
    rng = np.random.default_rng(0)
    site = rng.choice(["a", "b", "c", "d"], len(train))
    y = train["target"].to_numpy(copy=True)
    noisy = np.flatnonzero(site == "d")
    y[noisy] = rng.permutation(y)[: noisy.size]
    train = train.assign(site=site, target=y)
    test = test.assign(site=rng.choice(["a", "b", "c", "d"], len(test)))
    rungs = _ladder(train, test, features + ["site"], cat_features=["site"])
    assert rungs["dummy"].train_segments == [] and rungs["dummy"].train_rows is None
    for name in ("linear", "tree"):
        rung = rungs[name]
        assert rung.train_rows == len(train)
        worst = max(rung.train_segments, key=lambda s: s.error)
        assert (worst.feature, worst.value) == ("site", "d")
        assert worst.error > 0.25 and worst.error > 3 * worst.sibling_error
        assert worst.n_rows == int((site == "d").sum())
        assert all(s.error < 0.15 for s in rung.train_segments if s.value != "d")


def test_training_rows_scan_is_empty_without_categorical_features(cancer):
    train, test, features = cancer
    rungs = _ladder(train, test, features)
    assert all(r.train_segments == [] and r.train_rows is None for r in rungs.values())
