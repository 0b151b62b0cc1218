"""Image classifier: a digit model whose test images were taken under new lighting.

The bug: the training images come from one scanner; the evaluation images come from a
second one that over-exposes (brighter, lower contrast) -- the "image property drift" that
DeepFix found in an industrial food-waste project. The model's accuracy drops and nothing
in the code changed. deepfix should name the drift, with the image properties that moved.

Images are 8x8 digits from scikit-learn (no download), stored one array per row in an
``image`` column; the model is a scikit-learn pipeline that flattens them. Needs the
``[image]`` extra:  pip install -c constraints.txt -e ".[image]"

Run:  python examples/image_classifier.py   (writes ./deepfix-image-example/)
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import mlflow
from _summary import print_summary
import numpy as np
import pandas as pd
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

OUTPUT = Path(os.environ.get("DEEPFIX_EXAMPLE_DIR", "deepfix-image-example")).resolve()


def flatten_images(frame: pd.DataFrame) -> np.ndarray:
    """The model's first step: one row of 64 pixel values per image."""
    return np.stack([np.asarray(image, dtype=float).ravel() for image in frame["image"]])


def over_exposed(image: np.ndarray) -> np.ndarray:
    """What the second scanner does: lift every pixel towards white (digits range 0..16)."""
    return np.clip(0.55 * image + 7.0, 0.0, 16.0)


def make_data(seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    digits = load_digits()
    frame = pd.DataFrame({"image": list(digits.images), "digit": digits.target})
    train, test = train_test_split(frame, test_size=0.3, stratify=frame["digit"], random_state=seed)
    test = test.assign(image=test["image"].map(over_exposed))
    return train.reset_index(drop=True), test.reset_index(drop=True)


def main() -> None:
    logging.basicConfig(level=logging.WARNING)
    OUTPUT.mkdir(parents=True, exist_ok=True)
    tracking_uri = f"sqlite:///{OUTPUT / 'mlflow.db'}"
    mlflow.set_tracking_uri(tracking_uri)
    if mlflow.get_experiment_by_name("deepfix-image-example") is None:
        mlflow.create_experiment(
            "deepfix-image-example", artifact_location=(OUTPUT / "artifacts").as_uri()
        )
    mlflow.set_experiment("deepfix-image-example")

    train, test = make_data()
    model = Pipeline(
        [
            ("flatten", FunctionTransformer(flatten_images)),
            ("model", LogisticRegression(max_iter=2000, random_state=0)),
        ]
    ).fit(train[["image"]], train["digit"])

    with mlflow.start_run(run_name="image-classifier") as run:
        info = mlflow.sklearn.log_model(model, name="model", serialization_format="cloudpickle")
        result = mlflow.models.evaluate(
            info.model_uri,
            test,
            targets="digit",
            model_type="classifier",
            evaluators=["deepfix"],
            evaluator_config={"deepfix": {"image_col": "image", "train_data": train}},
        )

    print_summary(result, run, tracking_uri)


if __name__ == "__main__":
    main()
