"""The image modality's checks layer: image conversion and properties, and real runs of
Deepchecks' default vision suites on scikit-learn's digits (8 x 8, values 0..16).

No Deepchecks mock: every suite run below is Deepchecks 0.19.1 on CPU torch, without
torchvision, through :mod:`mlflow_deepfix.checks._compat_image`.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from PIL import Image
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression

from mlflow_deepfix.checks import _image_catalog
from mlflow_deepfix.checks._image import ImageCheckInputs, run_image_checks
from mlflow_deepfix.checks._image_catalog import IMAGE_CHECK_CATALOG, IMAGE_DEEPCHECKS_CATEGORY
from mlflow_deepfix.errors import DeepfixInputError
from mlflow_deepfix.schemas import CATEGORIES
from mlflow_deepfix.testing.content.image_features import (
    IMAGE_PROPERTIES,
    image_fingerprints,
    image_properties,
    pixel_scale,
    to_image,
    to_uint8_images,
)

ALL_SUITES = ["data_integrity", "train_test_validation", "model_evaluation"]
TTV = ["train_test_validation"]
CLASSES = list(range(10))


# ------------------------------------------------------------------------- conversion


def test_column_scaling_follows_the_documented_rule():
    digits = load_digits().images[:3]  # float64, 0..16
    dark = digits[0] / 2
    images = to_uint8_images([digits[0], dark, digits[1]])
    assert all(im.dtype == np.uint8 and im.shape == (8, 8, 1) for im in images)
    assert digits[1].max() == 16 and images[2].max() == 255  # the column's own 0..16 range
    assert images[0].max() == round(digits[0].max() * 255 / 16)
    # one factor for the column: the darker image stays darker
    assert images[1].mean() == pytest.approx(images[0].mean() / 2, abs=1.0)
    assert pixel_scale([digits[1], dark]) == (0.0, 16.0)
    floats = to_uint8_images([np.full((2, 2), 0.5), np.ones((2, 2))])
    assert floats[0].max() == 128 and floats[1].max() == 255
    as_int64 = to_uint8_images([np.full((2, 2, 3), 200, dtype=np.int64)])[0]
    assert as_int64.max() == 200  # an 8-bit range stored as int64 is kept
    uint8 = np.array([[0, 3], [7, 9]], dtype=np.uint8)
    assert np.array_equal(to_uint8_images([uint8])[0][..., 0], uint8)  # uint8: unchanged
    normalised = to_uint8_images([np.array([[-1.0, 1.0]])])[0]
    assert normalised.ravel().tolist() == [0, 255]
    # a single cell is scaled by its own range
    assert to_image(dark).max() == 255


def test_cells_of_every_accepted_kind(tmp_path):
    rgb = np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3) * 4
    path = tmp_path / "img.png"
    Image.fromarray(rgb).save(path)
    rgba = np.dstack([rgb, np.full((4, 5), 7, dtype=np.uint8)])
    grey = rgb[..., 0]
    cells = [rgb, rgb.tolist(), Image.fromarray(rgb), Image.fromarray(rgba, "RGBA"), str(path),
             path, Image.fromarray(grey, "L"), Image.fromarray(rgb).convert("P"), grey]
    out = to_uint8_images(cells)
    for image in out[:6]:
        assert image.shape == (4, 5, 3) and np.array_equal(image, rgb)
    assert np.array_equal(out[6][..., 0], grey) and out[6].shape == (4, 5, 1)
    assert out[7].shape == (4, 5, 3)  # palette -> RGB
    assert np.array_equal(out[8][..., 0], grey)


@pytest.mark.parametrize(
    ("cell", "words"),
    [
        (None, "empty"),
        (np.arange(5.0), "1 dimension"),
        (np.zeros((4, 4, 2)), "channels"),
        (np.zeros((3, 8, 8)), "channel-first"),
        (np.full((2, 2), np.nan), "NaN"),
        (np.array([["a", "b"]]), "numbers"),
        ("/no/such/file.png", "cannot read"),
        (3.5, "got float"),
    ],
)
def test_bad_cells_name_the_row_and_the_problem(cell, words):
    with pytest.raises(ValueError, match=words) as info:
        to_uint8_images([np.zeros((2, 2)), np.ones((2, 2)), cell])
    assert "row 2" in str(info.value)


# ------------------------------------------------------------------------- properties


def test_properties_of_hand_built_images():
    black = np.zeros((4, 6, 1), dtype=np.uint8)
    white = np.full((4, 6, 3), 255, dtype=np.uint8)
    red = np.zeros((2, 2, 3), dtype=np.uint8)
    red[..., 0] = 200
    checker = (np.indices((6, 6)).sum(axis=0) % 2 * 255).astype(np.uint8)[..., None]
    frame = image_properties([black, white, red, checker])
    assert list(frame.columns) == list(IMAGE_PROPERTIES)
    assert frame.loc[0, "brightness"] == 0 and frame.loc[0, "rms_contrast"] == 0
    assert frame.loc[0, "fraction_dark_pixels"] == 1 and frame.loc[0, "sharpness"] == 0
    assert frame.loc[1, "brightness"] == pytest.approx(255)
    assert frame.loc[1, "fraction_bright_pixels"] == 1
    assert frame.loc[2, "mean_red_relative_intensity"] == pytest.approx(1.0)
    assert frame.loc[2, "mean_green_relative_intensity"] == 0
    assert frame.loc[1, "mean_blue_relative_intensity"] == pytest.approx(1 / 3)
    assert np.isnan(frame.loc[0, "mean_red_relative_intensity"])  # grey: no colour
    assert frame.loc[0, "aspect_ratio"] == pytest.approx(4 / 6) and frame.loc[0, "area"] == 24
    assert frame.loc[3, "rms_contrast"] == pytest.approx(127.5)
    assert frame.loc[3, "sharpness"] > 1e4


def test_fingerprints_are_exact():
    image = np.arange(12, dtype=np.uint8).reshape(2, 6, 1)
    changed = image.copy()
    changed[0, 0, 0] = 1
    reshaped = image.reshape(6, 2, 1)  # same bytes, another shape
    prints = image_fingerprints([image, image.copy(), changed, reshaped])
    assert prints[0] == prints[1]
    assert len(set(prints[[0, 2, 3]])) == 3


# ----------------------------------------------------------------- the vision checks


@pytest.fixture(scope="module")
def digits():
    """1,000 train and 500 test digits (seeded), a logistic regression's probabilities."""
    data = load_digits()
    images = to_uint8_images(list(data.images))
    order = np.random.default_rng(0).permutation(len(images))
    train, test = order[:1000], order[1000:1500]
    flat = data.images.reshape(len(images), -1)
    model = LogisticRegression(max_iter=300).fit(flat[train], data.target[train])
    return {
        "train_images": [images[i] for i in train], "test_images": [images[i] for i in test],
        "train_labels": data.target[train], "test_labels": data.target[test],
        "probabilities": {"train": model.predict_proba(flat[train]),
                          "test": model.predict_proba(flat[test])},
    }


def _inputs(d: dict, **changes) -> ImageCheckInputs:
    fields = {key: d[key] for key in ("train_images", "test_images", "train_labels",
                                      "test_labels", "probabilities")}
    fields.update(changes)
    return ImageCheckInputs(classes=CLASSES, **fields)


@pytest.fixture(scope="module")
def baseline(digits):
    return run_image_checks(_inputs(digits), ALL_SUITES, sample_size=None, seed=0)


def _by_name(outcomes):
    return {o.name: o for o in outcomes}


def test_every_vision_check_runs_in_suite_order(baseline):
    from deepchecks.vision.suites import data_integrity, model_evaluation, train_test_validation

    expected = [c.name() for f in (data_integrity, train_test_validation, model_evaluation)
                for c in f().checks.values()]
    assert [o.name for o in baseline] == expected == list(IMAGE_CHECK_CATALOG)
    assert set(IMAGE_DEEPCHECKS_CATEGORY) == set(IMAGE_CHECK_CATALOG)
    assert set(IMAGE_DEEPCHECKS_CATEGORY.values()) <= set(CATEGORIES)
    outcomes = _by_name(baseline)
    assert not [o.name for o in baseline if o.outcome == "errored"], baseline
    skipped = {o.name for o in baseline if o.outcome == "skipped"}
    assert skipped == {"Label Property Outliers", "Mean Average Precision Report",
                       "Mean Average Recall Report"}
    assert "object detection" in outcomes["Mean Average Precision Report"].reason
    # a healthy split: no drift, no new label, a model far above the baseline
    for name in ("Label Drift", "Image Property Drift", "New Labels", "Prediction Drift"):
        assert outcomes[name].outcome == "passed", outcomes[name]
    assert outcomes["Simple Model Comparison"].value > 0.8
    confusion = outcomes["Confusion Matrix Report"]
    assert confusion.values["accuracy"] > 0.9 and confusion.value < 0.2
    # grey, same-sized images: no colour nor size property is given to Deepchecks
    assert set(outcomes["Image Property Drift"].values) == {
        "brightness", "rms_contrast", "sharpness", "fraction_dark_pixels",
        "fraction_bright_pixels"}
    assert {"train_value", "test_value"} <= set(outcomes["Image Property Outliers"].values)


def test_same_inputs_same_outcomes(digits, baseline):
    again = run_image_checks(_inputs(digits), ALL_SUITES, sample_size=None, seed=0)
    strip = [o.model_dump(exclude={"duration_seconds"}) for o in again]
    assert strip == [o.model_dump(exclude={"duration_seconds"}) for o in baseline]


def test_brightened_test_images_drift_on_brightness(digits):
    brighter = [np.clip(im.astype(int) + 80, 0, 255).astype(np.uint8)
                for im in digits["test_images"]]
    outcomes = _by_name(run_image_checks(_inputs(digits, test_images=brighter), TTV,
                                         sample_size=None, seed=0))
    drift = outcomes["Image Property Drift"]
    assert drift.outcome == "not_passed"
    assert drift.values["brightness"] > 0.9 and drift.value == max(drift.values.values())
    assert drift.details["method_brightness"] == "Kolmogorov-Smirnov"
    assert outcomes["Heatmap Comparison"].value > 0.2
    assert outcomes["Image Dataset Drift"].value > 0.9
    assert outcomes["Label Drift"].outcome == "passed"


def test_label_drift_and_new_labels(digits):
    keep = np.flatnonzero(np.isin(digits["test_labels"], [0, 1, 2]))
    restricted = _inputs(digits, test_images=[digits["test_images"][i] for i in keep],
                         test_labels=digits["test_labels"][keep],
                         probabilities={"train": digits["probabilities"]["train"],
                                        "test": digits["probabilities"]["test"][keep]})
    drift = _by_name(run_image_checks(restricted, TTV, sample_size=None, seed=0))["Label Drift"]
    assert drift.outcome == "not_passed" and drift.value > 0.5
    # digit 9 never seen in train nor by the model: a new label, never predicted
    seen = np.flatnonzero(digits["train_labels"] != 9)
    outcomes = _by_name(run_image_checks(
        ImageCheckInputs([digits["train_images"][i] for i in seen], digits["test_images"],
                         digits["train_labels"][seen], digits["test_labels"], CLASSES[:9]),
        TTV, sample_size=None, seed=0))
    nines = int(np.sum(digits["test_labels"] == 9))
    assert outcomes["New Labels"].outcome == "not_passed"
    assert outcomes["New Labels"].value == pytest.approx(nines / 500)
    assert outcomes["New Labels"].values == {"n_new_labels": 1.0, "new_9": nines}


def test_an_errored_check_does_not_stop_the_others(digits, baseline, monkeypatch):
    def broken(value):
        raise RuntimeError("heatmap condenser broke")

    monkeypatch.setitem(_image_catalog.IMAGE_CONDENSERS, "Heatmap Comparison", broken)
    outcomes = _by_name(run_image_checks(_inputs(digits), TTV, sample_size=None, seed=0))
    assert outcomes["Heatmap Comparison"].outcome == "errored"
    assert outcomes["Heatmap Comparison"].reason == "RuntimeError: heatmap condenser broke"
    expected = _by_name(baseline)
    for name, outcome in outcomes.items():
        if name != "Heatmap Comparison":
            assert outcome.outcome == expected[name].outcome != "errored"
            assert outcome.value == expected[name].value


def test_missing_split_and_probabilities_are_skipped_with_reasons(digits):
    outcomes = _by_name(run_image_checks(
        _inputs(digits, train_images=None, train_labels=None, probabilities=None,
                model_skip_reason="the model has no predict_proba"),
        ALL_SUITES, sample_size=200, seed=1))
    assert outcomes["Label Drift"].reason == "no training data"
    assert outcomes["Confusion Matrix Report"].reason == "the model has no predict_proba"
    assert outcomes["Image Property Outliers"].outcome == "passed"
    assert "train_value" not in outcomes["Image Property Outliers"].values  # test split only


def test_invalid_inputs_are_refused(digits):
    with pytest.raises(DeepfixInputError, match=r"test_images\[1\].*uint8"):
        run_image_checks(_inputs(digits, test_images=[digits["test_images"][0],
                                                      np.zeros((8, 8))]),
                         TTV, sample_size=None, seed=0)
    with pytest.raises(DeepfixInputError, match="shape"):
        run_image_checks(_inputs(digits, probabilities={"test": np.ones((3, 10)) / 10}),
                         TTV, sample_size=None, seed=0)
    with pytest.raises(DeepfixInputError, match="suites"):
        run_image_checks(_inputs(digits), ["integrity"], sample_size=None, seed=0)


def test_vision_imports_without_torchvision_and_only_when_asked():
    script = textwrap.dedent(
        """
        import importlib.util, sys, time
        import mlflow_deepfix.testing.content.image_features, mlflow_deepfix.checks._image
        import mlflow_deepfix.checks._image_catalog, mlflow_deepfix.checks._compat_image
        print("EARLY", sorted(m for m in ("torch", "deepchecks.vision") if m in sys.modules))
        start = time.perf_counter()
        mlflow_deepfix.checks._compat_image.apply()
        print("SECONDS", round(time.perf_counter() - start, 2))
        import deepchecks.vision
        from deepchecks.vision.vision_data import simple_classification_data as s
        print("BASE", s.VisionDataset.__module__)
        print("SPEC", importlib.util.find_spec("torchvision"))
        print("LOADED", sorted(m for m in sys.modules
                               if m.split(".")[0] in ("torchvision", "albumentations", "imgaug")))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "EARLY []" in done.stdout
    assert "BASE torch.utils.data.dataset" in done.stdout
    assert "SPEC None" in done.stdout and "LOADED []" in done.stdout
