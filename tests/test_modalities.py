"""Text and image modalities end to end: ``mlflow.models.evaluate`` with ``text_col`` /
``image_col`` on a real sqlite tracking store, real Deepchecks NLP / vision suites, the
real MiniLM model, and the rules engine; plus the call errors of these modalities."""

from __future__ import annotations

import json

import mlflow
import numpy as np
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

from mlflow_deepfix.bench.scenarios._image_data import flatten_images
from mlflow_deepfix.bench.scenarios._text_data import text_model
from mlflow_deepfix.errors import DeepfixInputError
from tests.conftest import log_model


def _digits(seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    digits = load_digits()
    frame = pd.DataFrame({"image": list(digits.images), "digit": digits.target})
    train, test = train_test_split(frame, test_size=0.3, stratify=frame["digit"], random_state=seed)
    return train.reset_index(drop=True), test.reset_index(drop=True)


def _image_model(train: pd.DataFrame):
    return Pipeline(
        [("flatten", FunctionTransformer(flatten_images)),
         ("model", LogisticRegression(max_iter=2000, random_state=0))]
    ).fit(train[["image"]], train["digit"])


def _evaluate(model_uri, test, target, config):
    with mlflow.start_run() as run:
        result = mlflow.models.evaluate(
            model_uri, test, targets=target, model_type="classifier",
            evaluators=["deepfix"], evaluator_config={"deepfix": config},
        )
    return run.info.run_id, result


def _no_deepfix_output(run_id: str) -> bool:
    client = MlflowClient()
    run = client.get_run(run_id)
    return (
        not client.list_artifacts(run_id, "deepfix")
        and not any(k.startswith("deepfix.") for k in run.data.tags)
        and not any(k.startswith("deepfix_") for k in run.data.metrics)
    )


@pytest.fixture(scope="module")
def reviews():
    from mlflow_deepfix.bench.scenarios._text_data import make_reviews

    frame = make_reviews(900, seed=0)
    train, test = train_test_split(frame, test_size=0.3, stratify=frame["sentiment"],
                                   random_state=0)
    return train.reset_index(drop=True), test.reset_index(drop=True)


def test_image_property_drift_is_the_top_finding_and_names_the_properties(tracking_uri):
    train, test = _digits()
    brighter = test.assign(image=test["image"].map(lambda im: np.clip(0.55 * im + 7.0, 0, 16)))
    model_uri = log_model(_image_model(train), train[["image"]].head(3))
    run_id, result = _evaluate(model_uri, brighter, "digit",
                               {"image_col": "image", "train_data": train})
    findings = result.artifacts["deepfix_findings"].content
    assert findings["modality"] == "image"
    top = findings["findings"][0]
    assert top["category"] == "feature_drift", [f["category"] for f in findings["findings"]]
    assert top["severity"] in ("critical", "high")
    assert "Image property" in top["title"]
    text = " ".join(e["detail"] for e in top["evidence"])
    assert any(p in text for p in ("brightness", "rms_contrast", "fraction_dark_pixels"))
    assert any("acquisition" in fix or "augmentation" in fix for fix in top["fixes"])
    names = {c["name"] for c in findings["checks"]}
    assert {"Image Property Drift", "Label Drift", "Image Property Outliers"} <= names
    drift = next(c for c in findings["checks"] if c["name"] == "Image Property Drift")
    assert drift["outcome"] == "not_passed"
    # artifact data holds properties and no pixels
    artifact = result.artifacts["deepfix_artifact_data"].content
    assert "brightness" in artifact["dataset"]["property_names"]
    assert artifact["dataset"]["content_column"] == "image"
    assert len(json.dumps(artifact)) < 200_000
    tags = MlflowClient().get_run(run_id).data.tags
    assert tags["deepfix.top_finding"] == "feature_drift"


def test_clean_image_split_raises_no_medium_finding(tracking_uri):
    train, test = _digits(seed=1)
    model_uri = log_model(_image_model(train), train[["image"]].head(3))
    _, result = _evaluate(model_uri, test, "digit", {"image_col": "image", "train_data": train})
    findings = result.artifacts["deepfix_findings"].content
    loud = [(f["category"], f["severity"]) for f in findings["findings"]
            if f["severity"] in ("critical", "high", "medium")]
    assert not loud
    assert findings["status"] == "pass"


def test_text_conflicting_labels_found_with_text_fixes(tracking_uri, reviews):
    train, test = reviews
    disputed = train.sample(frac=0.25, random_state=0)
    train = pd.concat([train, disputed.assign(sentiment=1 - disputed["sentiment"])])
    train = train.sample(frac=1.0, random_state=0).reset_index(drop=True)
    model = text_model(0).fit(train[["review"]], train["sentiment"])
    model_uri = log_model(model, train[["review"]].head(3))
    _, result = _evaluate(model_uri, test, "sentiment",
                          {"text_col": "review", "train_data": train})
    findings = result.artifacts["deepfix_findings"].content
    assert findings["modality"] == "text"
    top = findings["findings"][0]
    assert top["category"] == "conflicting_labels", [f["category"] for f in findings["findings"]]
    assert "texts" in top["title"]
    assert any("annotat" in fix for fix in top["fixes"])
    checks = {c["name"]: c for c in findings["checks"]}
    assert checks["Conflicting Labels"]["outcome"] == "not_passed"
    assert checks["Text Duplicates"]["outcome"] == "not_passed"
    assert checks["Unknown Tokens"]["outcome"] in ("passed", "not_passed")
    artifact = result.artifacts["deepfix_artifact_data"].content
    assert "text_length" in artifact["dataset"]["property_names"]
    report = result.artifacts["deepfix_report"].content
    assert "Content column" in report and "text_length" in report
    assert "&lt;/br&gt;" not in report  # Deepchecks' HTML line breaks become spaces
    # no raw text in the artifact data
    dumped = json.dumps(artifact)
    assert all(review not in dumped for review in test["review"].head(20))


@pytest.mark.parametrize(
    ("config", "model_type", "message"),
    [
        ({"modality": "text"}, "classifier", "needs text_col='<column>'"),
        ({"text_col": "review", "image_col": "review"}, "classifier", "one modality per call"),
        ({"text_col": "nope"}, "classifier", "'nope' is not a column"),
        ({"text_col": "review"}, "regressor", "supports model_type='classifier' only"),
        ({"image_col": "review"}, "classifier", "image_col='review'"),
    ],
)
def test_bad_modality_calls_are_refused_before_any_output(
    tracking_uri, reviews, config, model_type, message
):
    train, test = reviews
    model = text_model(0).fit(train[["review"]], train["sentiment"])
    model_uri = log_model(model, train[["review"]].head(3))
    with mlflow.start_run() as run, pytest.raises(DeepfixInputError) as error:
        mlflow.models.evaluate(
            model_uri, test, targets="sentiment", model_type=model_type,
            evaluators=["deepfix"],
            evaluator_config={"deepfix": {"train_data": train, **config}},
        )
    assert message in str(error.value)
    assert _no_deepfix_output(run.info.run_id)


def test_non_text_cells_are_refused_naming_the_row(tracking_uri, reviews):
    train, test = reviews
    model = text_model(0).fit(train[["review"]], train["sentiment"])
    model_uri = log_model(model, train[["review"]].head(3))
    broken = test.copy()
    broken["review"] = broken["review"].astype(object)
    broken.loc[5, "review"] = 42
    with mlflow.start_run() as run, pytest.raises(DeepfixInputError, match="row 5"):
        mlflow.models.evaluate(
            model_uri, broken, targets="sentiment", model_type="classifier",
            evaluators=["deepfix"], evaluator_config={"deepfix": {"text_col": "review"}},
        )
    assert _no_deepfix_output(run.info.run_id)


def test_images_without_training_data_run_the_single_split_checks(tracking_uri):
    train, test = _digits(seed=2)
    model_uri = log_model(_image_model(train), train[["image"]].head(3))
    _, result = _evaluate(model_uri, test, "digit", {"image_col": "image"})
    findings = result.artifacts["deepfix_findings"].content
    artifact = result.artifacts["deepfix_artifact_data"].content
    assert findings["status"] == "pass"
    assert any("Train/test checks skipped" in note for note in artifact["notes"])
    outcomes = {c["name"]: c["outcome"] for c in findings["checks"]}
    assert outcomes["Image Property Drift"] == "skipped"
    assert outcomes["Image Property Outliers"] in ("passed", "not_passed")
    assert artifact["dataset"]["train"] is None


def test_text_model_that_cannot_predict_gives_a_schema_finding(tracking_uri, reviews):
    train, test = reviews
    model = text_model(0).fit(train[["review"]], train["sentiment"])
    model_uri = log_model(model, train[["review"]].head(3))
    renamed = {"review": "text"}
    _, result = _evaluate(
        model_uri, test.rename(columns=renamed), "sentiment",
        {"text_col": "text", "train_data": train.rename(columns=renamed)},
    )
    findings = result.artifacts["deepfix_findings"].content
    top = findings["findings"][0]
    assert (top["category"], top["severity"]) == ("schema_mismatch", "critical")
    assert "'review'" in top["title"]
    skipped = {c["name"] for c in findings["checks"] if c["outcome"] == "skipped"}
    assert "Train Test Performance" in skipped  # model checks need predictions


def test_colour_cast_in_rgb_images_is_named_as_a_colour_property(tracking_uri):
    """RGB images whose test split has a warm colour cast (a new light source): the drift
    is found and its evidence names the colour-channel properties."""
    train, test = _digits(seed=3)

    def rgb(image):
        grey = np.asarray(image, dtype=float) * 15.0  # 0..240
        return np.stack([grey, grey, grey], axis=-1).astype(np.uint8)

    def warm(image):
        tinted = image.astype(float) * np.array([1.0, 0.75, 0.45])
        return tinted.astype(np.uint8)

    train = train.assign(image=train["image"].map(rgb))
    test = test.assign(image=test["image"].map(rgb).map(warm))
    model_uri = log_model(_image_model(train), train[["image"]].head(3))
    _, result = _evaluate(model_uri, test, "digit", {"image_col": "image", "train_data": train})
    findings = result.artifacts["deepfix_findings"].content
    drift = next(f for f in findings["findings"] if f["category"] == "feature_drift")
    assert drift["severity"] in ("critical", "high")
    evidence = " ".join(e["detail"] for e in drift["evidence"]) + drift["title"]
    assert "relative_intensity" in evidence
    check = next(c for c in findings["checks"] if c["name"] == "Image Property Drift")
    assert check["outcome"] == "not_passed"
