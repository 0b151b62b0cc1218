"""Image scenarios: a pixel logistic regression on scikit-learn's handwritten digits
(8x8 grey-scale, values 0..16), each workflow with one planted bug in the images,
the labels or how train and test relate.

The frames hold ``image`` (one 2-D float array per row, declared as ``image_col``)
and the label ``digit``; the model is a fitted Pipeline that flattens that column.
The healthy part -- data, stratified split, model (about 0.97 accuracy) -- is the same
in every scenario, so the planted defect is the one thing a diagnosis should point at.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from mlflow_deepfix.bench.scenarios._base import ScenarioData, fit, make_data, scenario, split
from mlflow_deepfix.bench.scenarios._image_data import (
    IMAGE_COL,
    LABEL,
    MAX_VALUE,
    digits,
    image_model,
    map_images,
)
from mlflow_deepfix.bench.scenarios.split import _copy_train_rows_into_test

#: test images in the healthy split (the other 1,347 train the model)
N_TEST = 450
CONFIG = {"image_col": IMAGE_COL}


def digits_split(seed: int, test_size: int = N_TEST) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The healthy split of the 1,797 digits, stratified on the label."""
    return split(digits(), LABEL, seed=seed, test_size=test_size)


def digits_workflow(train: pd.DataFrame, test: pd.DataFrame, seed: int) -> ScenarioData:
    """The image model fitted on ``train``, with ``image_col`` declared.

    BLAS runs on one thread here: for a 64-feature logistic regression, thread start-up
    and contention cost more than they save (all image and text scenarios built in
    11.8 s with default threads against 1.7 s on one, on a busy 2-core machine).
    """
    with threadpool_limits(limits=1, user_api="blas"):
        model = fit(image_model(seed), train, LABEL)
    return make_data(train, test, LABEL, model, "classifier", CONFIG)


def _shuffle(frame: pd.DataFrame, seed: int) -> pd.DataFrame:
    return frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)


# --------------------------------------------------------------------------- clean control


@scenario(
    "clean.image_digits_logistic",
    None,
    "A logistic regression on the min-max scaled pixels of a stratified split of the handwritten "
    "digits (ten classes, about 0.97 accuracy).",
    tags=("digits", "multiclass", "image", "clean"),
)
def _clean_digits(seed: int) -> ScenarioData:
    train, test = digits_split(seed)
    return digits_workflow(train, test, seed)


# --------------------------------------------------------------------------- data layer


@scenario(
    "duplicate_samples.image_augmentation_copies",
    "duplicate_samples",
    "An augmentation step meant to jitter the training images wrote 30% of them a second "
    "time unchanged, so about 23% of the training rows are exact copies of another row.",
    tags=("digits", "multiclass", "image", "data"),
)
def _dup_digits(seed: int) -> ScenarioData:
    train, test = digits_split(seed)
    copies = train.sample(frac=0.3, random_state=seed)
    train = _shuffle(pd.concat([train, copies], ignore_index=True), seed)
    return digits_workflow(train, test, seed)


@scenario(
    "conflicting_labels.image_relabelled_copies",
    "conflicting_labels",
    "A second labelling pass with shifted label ids was merged in: 12% of the training images "
    "appear again under the next digit's label, so about 22% of the training rows share their "
    "exact image with a row of another label.",
    tags=("digits", "multiclass", "image", "data"),
)
def _conflict_digits(seed: int) -> ScenarioData:
    train, test = digits_split(seed)
    relabelled = train.sample(frac=0.125, random_state=seed).copy()
    relabelled[LABEL] = (relabelled[LABEL] + 1) % 10
    train = _shuffle(pd.concat([train, relabelled], ignore_index=True), seed)
    return digits_workflow(train, test, seed)


def _dead_frame(seed: int, saturated: bool):
    """A frame from a failed sensor: near-black (or fully saturated) with faint noise,
    so the broken frames are not exact copies of one another."""
    rng = np.random.default_rng(seed)

    def broken(image: np.ndarray) -> np.ndarray:
        noise = rng.uniform(0.0, 0.8, image.shape)
        return MAX_VALUE - noise if saturated else noise

    return broken


@scenario(
    "outliers.image_dead_sensor_frames",
    "outliers",
    "10% of all scans (in both splits) came from a failing sensor and are almost blank "
    "(near 0) or saturated (near 16) frames, still carrying their original digit label.",
    tags=("digits", "multiclass", "image", "data"),
)
def _outlier_digits(seed: int) -> ScenarioData:
    rng = np.random.default_rng(seed)
    frame = digits()
    broken = rng.random(len(frame)) < 0.10
    saturated = rng.random(len(frame)) < 0.5
    frame = map_images(frame, broken & ~saturated, _dead_frame(seed, saturated=False))
    frame = map_images(frame, broken & saturated, _dead_frame(seed + 1, saturated=True))
    train, test = split(frame, LABEL, seed=seed, test_size=N_TEST)
    return digits_workflow(train, test, seed)


#: the digits kept rare in the class-imbalance scenario, and how many of each are kept
RARE_DIGITS = (3, 8, 9)
RARE_KEEP = 0.06


@scenario(
    "class_imbalance.image_rare_digits",
    "class_imbalance",
    "Digits 3, 8 and 9 were mostly lost in collection: only 6% of their scans remain (under "
    "1% of the rows each) and the model is trained without class weights.",
    tags=("digits", "multiclass", "image", "data"),
)
def _imbalance_digits(seed: int) -> ScenarioData:
    frame = digits()
    rare = frame[LABEL].isin(RARE_DIGITS)
    kept = frame[rare].groupby(LABEL, group_keys=False).sample(frac=RARE_KEEP, random_state=seed)
    frame = pd.concat([frame[~rare], kept]).sort_index()
    train, test = split(frame, LABEL, seed=seed, test_size=0.3)
    return digits_workflow(train, test, seed)


# --------------------------------------------------------------------------- split layer


@scenario(
    "train_test_overlap.image_40pct",
    "train_test_overlap",
    "40% of the test images are copies of training images (the test folder was assembled "
    "from a directory that also fed training).",
    tags=("digits", "multiclass", "image", "split"),
)
def _overlap_digits(seed: int) -> ScenarioData:
    train, test = digits_split(seed)
    test = _copy_train_rows_into_test(train, test, 0.4, seed)
    return digits_workflow(train, test, seed)


#: the three digits that make up most of the label-drift test set
DRIFT_DIGITS = (1, 4, 7)


@scenario(
    "label_drift.image_three_digits",
    "label_drift",
    "The test batch comes from a form whose fields hold mostly 1, 4 and 7: those three digits "
    "make 80% of the test images, against 30% in the stratified training split.",
    tags=("digits", "multiclass", "image", "split"),
)
def _label_drift_digits(seed: int) -> ScenarioData:
    train, test = digits_split(seed, test_size=600)
    common = test[test[LABEL].isin(DRIFT_DIGITS)]
    others = test[~test[LABEL].isin(DRIFT_DIGITS)]
    n_others = round(len(common) * 0.2 / 0.8)
    test = pd.concat([common, others.sample(n=n_others, random_state=seed)])
    return digits_workflow(train, _shuffle(test, seed), seed)


def _faded(image: np.ndarray) -> np.ndarray:
    """A scan from the new scanner: grey background, faded ink (still within 0..16)."""
    return FADED_OFFSET + FADED_GAIN * image


#: the new scanner's response: offset and gain applied to the 0..16 pixel values
FADED_OFFSET, FADED_GAIN = 3.0, 0.7


@scenario(
    "feature_drift.image_faded_scanner",
    "feature_drift",
    "The test scans come from a new scanner with a grey background and faded ink: every test "
    "image is 3 + 0.7 x the original (mean brightness up by a third, contrast down by 30%), "
    "the digits themselves unchanged (accuracy drops a few points, predictions barely move).",
    tags=("digits", "multiclass", "image", "split"),
)
def _feature_drift_digits(seed: int) -> ScenarioData:
    train, test = digits_split(seed)
    everything = np.ones(len(test), dtype=bool)
    test = map_images(test, everything, _faded)
    return digits_workflow(train, test, seed)
