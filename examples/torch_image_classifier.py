"""Torch image classifier: a CNN whose serving code feeds it images scaled to [0, 1].

The bug: the network was trained on the raw 8x8 digit scans (pixels 0..16) and scales
them itself, but the inference service applies the usual ToTensor-style normalisation
first, so every image reaches the network 16 times too dark. The accuracy collapses and
no code in the model changed. deepfix should name the image drift at rank 1, with the
image properties that moved.

The CNN trains in seconds on scikit-learn's bundled digits (no download), logs its
per-epoch loss and accuracy to the run as a training script does, and is logged with
``mlflow.pytorch``; the logged model returns the softmax of its logits, which deepfix
reads as the class probabilities. deepfix also reads the training curves back (see
``training`` in ``deepfix/artifact_data.json``) and finds nothing wrong with them.
Needs the ``[image]`` extra:  pip install -c constraints.txt -e ".[image]"

Run:  python examples/torch_image_classifier.py   (writes ./deepfix-torch-image-example/)
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import mlflow
from _summary import print_summary
import numpy as np
import torch

from mlflow_deepfix.bench.scenarios._image_data import stack
from mlflow_deepfix.bench.scenarios._torch import (
    DigitsCNN,
    log_probability_model,
    train_classifier,
)
from mlflow_deepfix.bench.scenarios.deep import digits_float32, unit_scaled

OUTPUT = Path(os.environ.get("DEEPFIX_EXAMPLE_DIR", "deepfix-torch-image-example")).resolve()


def main() -> None:
    logging.basicConfig(level=logging.WARNING)
    torch.set_num_threads(1)  # a tiny network: one thread is faster and deterministic
    OUTPUT.mkdir(parents=True, exist_ok=True)
    tracking_uri = f"sqlite:///{OUTPUT / 'mlflow.db'}"
    mlflow.set_tracking_uri(tracking_uri)
    if mlflow.get_experiment_by_name("deepfix-torch-image-example") is None:
        mlflow.create_experiment(
            "deepfix-torch-image-example", artifact_location=(OUTPUT / "artifacts").as_uri()
        )
    mlflow.set_experiment("deepfix-torch-image-example")

    train, test = digits_float32(seed=0)  # float32 8x8 arrays in an "image" column
    fit_rows, val_rows = train.iloc[:1000], train.iloc[1000:]
    # the bug: the serving pipeline normalises to [0, 1] before the network sees the image
    served = unit_scaled(test)

    with mlflow.start_run(run_name="torch-image-classifier") as run:
        network = DigitsCNN(seed=0)
        train_classifier(  # logs learning_rate, epochs, ... and loss/val_loss per epoch
            network, stack(fit_rows["image"]), fit_rows["digit"].to_numpy(),
            stack(val_rows["image"]), val_rows["digit"].to_numpy(), lr=0.01, epochs=10,
        )
        info = log_probability_model(network, stack(train["image"].head(4)).astype(np.float32))
        result = mlflow.models.evaluate(
            info.model_uri,
            served,
            targets="digit",
            model_type="classifier",
            evaluators=["deepfix"],
            evaluator_config={"deepfix": {"image_col": "image", "train_data": train}},
        )

    print_summary(result, run, tracking_uri)


if __name__ == "__main__":
    main()
