"""The text and image scenarios of the bench (no evaluation here).

Every new scenario must build the same data from the same seed, give a model that
predicts on its test frame, and carry its planted bug measurably (computed with plain
numpy/pandas/scikit-learn, independently of deepfix); the clean controls must reach a
sensible accuracy and carry none of those bugs. The last tests log one text and one
image model the way ``deepfix bench`` does and read them back through ``mlflow.pyfunc``.
"""

from __future__ import annotations

import re

import mlflow
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score

from mlflow_deepfix.bench import runner as bench
from mlflow_deepfix.bench.scenarios import all_scenarios, get_scenario
from mlflow_deepfix.bench.scenarios._image_data import (
    brightness,
    contrast,
    flatten_images,
    image_keys,
)
from mlflow_deepfix.bench.scenarios._text_data import make_reviews, normalized
from mlflow_deepfix.schemas import CATEGORIES

# The text and image scenarios are registered with the library (SCENARIO_MODULES); the
# generic per-scenario checks of tests/test_scenarios.py cover the tabular ones, these
# tests the text and image ones (object columns of texts and arrays).
TEXT_IDS = [
    "clean.text_reviews_logistic",
    "clean.text_topics_logistic",
    "duplicate_samples.text_rescraped_reviews",
    "conflicting_labels.text_second_annotator",
    "data_type_issues.text_html_mojibake",
    "train_test_overlap.text_40pct",
    "label_drift.text_complaints_week",
    "feature_drift.text_forum_posts",
]
IMAGE_IDS = [
    "clean.image_digits_logistic",
    "duplicate_samples.image_augmentation_copies",
    "conflicting_labels.image_relabelled_copies",
    "outliers.image_dead_sensor_frames",
    "class_imbalance.image_rare_digits",
    "train_test_overlap.image_40pct",
    "label_drift.image_three_digits",
    "feature_drift.image_faded_scanner",
]
IDS = TEXT_IDS + IMAGE_IDS


@pytest.fixture(scope="module")
def modules():
    """The text and image scenario modules (importing them registers the scenarios)."""
    import mlflow_deepfix.bench.scenarios.image as image_scenarios
    import mlflow_deepfix.bench.scenarios.text as text_scenarios

    return text_scenarios, image_scenarios


@pytest.fixture(scope="module")
def built(modules) -> dict:
    """Every new scenario built once with seed 0 (a few seconds in all)."""
    return {scenario_id: get_scenario(scenario_id).build(0) for scenario_id in IDS}


# --------------------------------------------------------------------------- helpers


def modality(data) -> str:
    return "text" if "text_col" in data.config else "image"


def column(data) -> str:
    return data.config.get("text_col") or data.config["image_col"]


def features(data, split: str) -> pd.DataFrame:
    return getattr(data, split).drop(columns=[data.target])


def accuracy(data, split: str = "test") -> float:
    frame = getattr(data, split)
    return accuracy_score(frame[data.target], data.model.predict(features(data, split)))


def keys(data, split: str) -> pd.Series:
    """One comparable key per row of the text or image column (texts normalised the
    way duplicate detectors compare them)."""
    values = getattr(data, split)[column(data)]
    return normalized(values) if modality(data) == "text" else image_keys(values)


def duplicate_share(data) -> float:
    return float(keys(data, "train").duplicated().mean())


def overlap_share(data) -> float:
    return float(keys(data, "test").isin(set(keys(data, "train"))).mean())


def conflicted_share(data) -> float:
    """Share of training rows whose text/image also appears with another label."""
    k = keys(data, "train").to_numpy()
    n_labels = data.train[data.target].groupby(k).nunique()
    return float(pd.Series(k).map(n_labels).gt(1).mean())


def shares(data, split: str) -> pd.Series:
    return getattr(data, split)[data.target].value_counts(normalize=True)


def unknown_word_share(data) -> float:
    """Share of the test words (unigrams) missing from the fitted vocabulary."""
    vectorizer = data.model.named_steps["tfidf"].named_transformers_["tfidf"]
    analyze = vectorizer.build_analyzer()
    words = [w for text in data.test[column(data)] for w in analyze(text) if " " not in w]
    return float(np.mean([w not in vectorizer.vocabulary_ for w in words]))


def uppercase_share(texts: pd.Series) -> float:
    letters = "".join(texts)
    alpha = [c for c in letters if c.isalpha()]
    return sum(c.isupper() for c in alpha) / len(alpha)


def flat_share(images: pd.Series) -> float:
    """Share of images with (almost) no structure: blank or saturated frames."""
    return float((contrast(images) < 1.0).mean())


# --------------------------------------------------------------------------- the library


def test_library_has_six_text_and_six_image_scenarios_with_valid_ids(modules):
    names = {m.__name__ for m in modules}
    new = [s for s in all_scenarios() if s.build.__module__ in names]
    assert sorted(s.id for s in new) == sorted(IDS)  # every one is tested here
    text = [s for s in new if "text" in s.tags]
    image = [s for s in new if "image" in s.tags]
    assert len([s for s in text if not s.is_clean]) >= 6
    assert len([s for s in image if not s.is_clean]) >= 6
    for s in new:
        kind = "text" if s in text else "image"
        assert kind in s.tags and len(s.description) > 40
        if s.is_clean:
            assert s.id.startswith(f"clean.{kind}_")
        else:
            assert s.expected in CATEGORIES
            assert re.fullmatch(rf"{s.expected}\.{kind}_[a-z0-9_]+", s.id), s.id
        assert get_scenario(s.id) is s


@pytest.mark.parametrize("scenario_id", IDS)
def test_builds_deterministically_and_the_model_predicts(built, scenario_id):
    data = built[scenario_id]
    again = get_scenario(scenario_id).build(0)
    col = column(data)
    assert col in data.train.columns and col in data.test.columns
    assert data.model_type == "classifier" and "train_data" not in data.config
    assert {"text_col", "image_col"} & set(data.config)
    for split in ("train", "test"):
        assert keys(data, split).equals(keys(again, split)), split
        assert getattr(data, split)[data.target].equals(getattr(again, split)[data.target])
    predicted = data.model.predict(features(data, "test"))
    assert len(predicted) == len(data.test)
    assert set(predicted) <= set(data.train[data.target])
    np.testing.assert_array_equal(predicted, again.model.predict(features(again, "test")))
    proba = data.model.predict_proba(features(data, "test"))
    assert proba.shape == (len(data.test), data.train[data.target].nunique())
    if modality(data) == "image":
        assert all(isinstance(x, np.ndarray) and x.ndim == 2 for x in data.test[col])


def test_another_seed_gives_other_data(modules):
    a = get_scenario("clean.text_reviews_logistic").build(1)
    b = get_scenario("clean.text_reviews_logistic").build(2)
    assert not a.train["review"].equals(b.train["review"])
    assert make_reviews(50, 3).equals(make_reviews(50, 3))


# --------------------------------------------------------------------------- clean controls


def test_clean_controls_are_healthy(built):
    reviews = built["clean.text_reviews_logistic"]
    assert 0.84 <= accuracy(reviews) <= 0.96, accuracy(reviews)
    assert accuracy(built["clean.text_topics_logistic"]) >= 0.85
    assert accuracy(built["clean.image_digits_logistic"]) >= 0.93
    for scenario_id in ("clean.text_reviews_logistic", "clean.image_digits_logistic"):
        data = built[scenario_id]
        assert duplicate_share(data) < 0.01 and overlap_share(data) < 0.01
        assert conflicted_share(data) < 0.01
        assert (shares(data, "train") - shares(data, "test")).abs().max() < 0.05
    assert flat_share(built["clean.image_digits_logistic"].test["image"]) == 0.0


# --------------------------------------------------------------------------- text bugs


def test_text_duplicates_include_case_and_punctuation_variants(built):
    data = built["duplicate_samples.text_rescraped_reviews"]
    assert duplicate_share(data) >= 0.2
    exact = data.train["review"].duplicated().mean()
    assert exact < duplicate_share(data) - 0.05, "some copies are variants, not verbatim"
    assert overlap_share(data) < 0.02


def test_text_conflicting_labels(built):
    data = built["conflicting_labels.text_second_annotator"]
    assert conflicted_share(data) >= 0.18


def test_text_scrape_damage_is_only_in_test(built):
    data, clean = built["data_type_issues.text_html_mojibake"], built["clean.text_reviews_logistic"]
    broken = data.test["review"].str.contains("<p>|\u00c2|\u00e2", regex=True)
    assert broken.mean() >= 0.5
    assert not data.train["review"].str.contains("<|\u00c2|\u00e2", regex=True).any()
    assert unknown_word_share(data) >= unknown_word_share(clean) + 0.2
    assert accuracy(data) < accuracy(clean)


def test_text_train_test_overlap(built):
    assert overlap_share(built["train_test_overlap.text_40pct"]) >= 0.38


def test_text_label_drift(built):
    data = built["label_drift.text_complaints_week"]
    assert abs(shares(data, "train")[1] - 0.5) < 0.05
    assert shares(data, "test")[0] >= 0.78
    assert overlap_share(data) < 0.02


def test_text_feature_drift_changes_the_style_not_the_labels_or_topics(built):
    data = built["feature_drift.text_forum_posts"]
    train, test = data.train["review"], data.test["review"]
    assert test.str.len().mean() >= 3 * train.str.len().mean()
    assert uppercase_share(test) >= 0.3
    assert uppercase_share(train) <= 0.1
    assert (shares(data, "train") - shares(data, "test")).abs().max() < 0.08
    topics = data.train["topic"].value_counts(normalize=True)
    assert (topics - data.test["topic"].value_counts(normalize=True)).abs().max() < 0.08


# --------------------------------------------------------------------------- image bugs


def test_image_duplicates(built):
    data = built["duplicate_samples.image_augmentation_copies"]
    assert duplicate_share(data) >= 0.2 and overlap_share(data) < 0.02


def test_image_conflicting_labels(built):
    assert conflicted_share(built["conflicting_labels.image_relabelled_copies"]) >= 0.18


def test_image_outliers_in_both_splits(built):
    data = built["outliers.image_dead_sensor_frames"]
    for split in ("train", "test"):
        assert 0.06 <= flat_share(getattr(data, split)["image"]) <= 0.15, split
    assert duplicate_share(data) < 0.01, "broken frames differ from one another"
    assert accuracy(data) < accuracy(built["clean.image_digits_logistic"]) - 0.03


def test_image_class_imbalance(built, modules):
    data = built["class_imbalance.image_rare_digits"]
    train_shares = shares(data, "train")
    rare = list(modules[1].RARE_DIGITS)
    assert train_shares[rare].max() <= 0.015 and train_shares.drop(rare).min() >= 0.1
    predicted = pd.Series(data.model.predict(features(data, "test")))
    n_rare = data.test["digit"].isin(rare).sum()
    assert 0 < predicted.isin(rare).sum() < n_rare, "the unweighted model under-predicts them"


def test_image_train_test_overlap(built):
    assert overlap_share(built["train_test_overlap.image_40pct"]) >= 0.38


def test_image_label_drift(built, modules):
    data = built["label_drift.image_three_digits"]
    drift = list(modules[1].DRIFT_DIGITS)
    assert shares(data, "test")[drift].sum() >= 0.75
    assert shares(data, "train")[drift].sum() <= 0.35


def test_image_feature_drift_is_a_brightness_and_contrast_shift(built):
    data, clean = built["feature_drift.image_faded_scanner"], built["clean.image_digits_logistic"]
    assert brightness(data.test["image"]).mean() >= brightness(data.train["image"]).mean() + 1.0
    assert contrast(data.test["image"]).mean() <= 0.8 * contrast(data.train["image"]).mean()
    assert (shares(data, "train") - shares(data, "test")).abs().max() < 0.05
    assert accuracy(data) <= accuracy(clean) - 0.02
    predicted = pd.Series(data.model.predict(features(data, "test")))
    assert predicted.value_counts(normalize=True).max() < 0.2, "predictions barely move"


# --------------------------------------------------------------------------- MLflow round trip


def test_flatten_images_accepts_arrays_and_nested_lists():
    frame = pd.DataFrame({"image": [np.eye(4), np.eye(4).tolist()]})
    assert flatten_images(frame).shape == (2, 16)
    with pytest.raises(KeyError, match="image"):
        flatten_images(pd.DataFrame({"pixels": [np.eye(4)]}))


def test_pyfunc_round_trip(built, tracking_uri, tmp_path):
    """A text and an image model, logged like ``deepfix bench`` logs them (cloudpickle,
    signature inferred from the training features) in a sqlite store under tmp_path,
    predict the same through ``mlflow.pyfunc``."""
    assert tracking_uri.startswith("sqlite:///")
    for scenario_id in ("clean.text_reviews_logistic", "clean.image_digits_logistic"):
        data = built[scenario_id]
        with mlflow.start_run():
            info = mlflow.sklearn.log_model(
                data.model,
                name="m",
                serialization_format="cloudpickle",
                signature=bench._signature(data), pip_requirements=["scikit-learn"],
            )
        assert mlflow.get_run(info.run_id).info.artifact_uri.startswith(tmp_path.as_uri())
        loaded = mlflow.pyfunc.load_model(info.model_uri)
        test = features(data, "test").head(60)
        predicted = np.asarray(loaded.predict(test)).ravel()
        np.testing.assert_array_equal(predicted, data.model.predict(test), err_msg=scenario_id)
        raw = loaded.get_raw_model()
        np.testing.assert_allclose(raw.predict_proba(test), data.model.predict_proba(test))
