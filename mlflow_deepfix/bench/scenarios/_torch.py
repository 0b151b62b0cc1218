"""Small torch models trained in seconds, with their training history logged to MLflow.

Shared by the deep-learning scenarios, their tests and the training-history tests: a
CNN for scikit-learn's 8x8 digits, a softmax head that makes the logged model return
probabilities, and one training loop that logs what a real training script logs
(hyperparameters once, ``loss``/``val_loss``/``accuracy``/``val_accuracy`` per epoch).
Everything is seeded and single-threaded, so a run is the same on every machine.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

logger = logging.getLogger(__name__)

try:  # torch is an optional dependency of the package (extras text/image/kb)
    import torch
    from torch import nn
except ImportError:  # pragma: no cover - the scenarios needing torch are not registered then
    torch = None
    nn = None


def _require_torch() -> None:
    if torch is None:
        raise ImportError(
            "the deep-learning scenarios need torch: pip install -c constraints.txt -e '.[image]'"
        )


if nn is not None:

    class DigitsCNN(nn.Module):
        """Conv(1->8, 3x3) -> ReLU -> max-pool -> linear(128 -> n_classes), on raw 8x8
        digit images (pixels 0..16, scaled inside the model so it ships its own
        preprocessing)."""

        def __init__(self, n_classes: int = 10, side: int = 8, seed: int = 0):
            super().__init__()
            self.side = side
            # the initial weights come from ``seed``, not from wherever torch's global
            # generator happens to be (seeding only the training loop left them to
            # chance: the same run differed from process to process)
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(seed)
                self.conv = nn.Conv2d(1, 8, kernel_size=3, padding=1)
                self.head = nn.Linear(8 * (side // 2) ** 2, n_classes)

        def forward(self, x):
            x = x.reshape(-1, 1, self.side, self.side).float() / 16.0
            x = nn.functional.max_pool2d(torch.relu(self.conv(x)), 2)
            return self.head(x.flatten(1))

    class Probabilities(nn.Module):
        """Softmax over the wrapped network's logits: what the logged model returns, so
        that predictions through the MLflow flavour are class probabilities."""

        def __init__(self, network: nn.Module):
            super().__init__()
            self.network = network

        def forward(self, x):
            return torch.softmax(self.network(x), dim=1)


@dataclass
class TrainingLog:
    """Per-epoch curves of one training run (also what was logged to MLflow)."""

    params: dict[str, object]
    loss: list[float] = field(default_factory=list)
    val_loss: list[float] = field(default_factory=list)
    accuracy: list[float] = field(default_factory=list)
    val_accuracy: list[float] = field(default_factory=list)


def train_classifier(
    network,
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_val: np.ndarray,
    y_val: np.ndarray,
    *,
    lr: float,
    epochs: int,
    optimizer: str = "adam",
    batch_size: int = 32,
    seed: int = 0,
    frozen: bool = False,
    log_to_mlflow: bool = True,
) -> TrainingLog:
    """Train ``network`` (logits out) with cross-entropy; when ``log_to_mlflow``, log the
    hyperparameters and per-epoch metrics to the active MLflow run, as a training
    script would. ``frozen`` leaves every weight untouched (the "forgot to unfreeze"
    bug): the loop runs, nothing learns. The network's initial weights are its own
    business (``DigitsCNN(seed=...)``): ``seed`` here drives the batch order only."""
    _require_torch()
    import mlflow

    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    if frozen:
        for parameter in network.parameters():
            parameter.requires_grad_(False)
    trainable = [p for p in network.parameters() if p.requires_grad]
    step = None
    if trainable:
        step = (
            torch.optim.SGD(trainable, lr=lr, momentum=0.9)
            if optimizer == "sgd"
            else torch.optim.Adam(trainable, lr=lr)
        )
    # val_rows: how many rows the validation metrics are measured on, which tells the
    # history analyzer how much of their epoch-to-epoch wobble is noise
    params = {"learning_rate": lr, "epochs": epochs, "batch_size": batch_size,
              "optimizer": "SGD(momentum=0.9)" if optimizer == "sgd" else "Adam",
              "val_rows": len(y_val)}
    log = TrainingLog(params=params)
    if log_to_mlflow:
        mlflow.log_params(params)
    xt, xv = (torch.tensor(np.asarray(x, dtype=np.float32)) for x in (x_train, x_val))
    yt, yv = (torch.tensor(np.asarray(y, dtype=np.int64)) for y in (y_train, y_val))
    loss_fn = nn.functional.cross_entropy
    for epoch in range(epochs):
        network.train()
        order = torch.randperm(len(xt), generator=generator)
        total, correct = 0.0, 0
        for start in range(0, len(xt), batch_size):
            batch = order[start : start + batch_size]
            logits = network(xt[batch])
            loss = loss_fn(logits, yt[batch])
            if step is not None:
                step.zero_grad()
                loss.backward()
                step.step()
            total += float(loss.detach()) * len(batch)
            correct += int((logits.argmax(1) == yt[batch]).sum())
        network.eval()
        with torch.no_grad():
            logits = network(xv)
            val_loss = float(loss_fn(logits, yv))
            val_accuracy = float((logits.argmax(1) == yv).float().mean())
        values = {"loss": total / len(xt), "val_loss": val_loss,
                  "accuracy": correct / len(xt), "val_accuracy": val_accuracy}
        for key, value in values.items():
            getattr(log, key).append(value)
        if log_to_mlflow:
            mlflow.log_metrics(values, step=epoch)
    network.eval()
    return log


def log_training(log: TrainingLog) -> None:
    """Log a finished :class:`TrainingLog` to the active MLflow run, as the training loop
    would have (hyperparameters once, the four curves per epoch): a scenario trains at
    build time and logs when the bench runner opens the model's run."""
    import mlflow

    mlflow.log_params(log.params)
    for epoch in range(len(log.loss)):
        mlflow.log_metrics(
            {key: getattr(log, key)[epoch] for key in ("loss", "val_loss", "accuracy",
                                                         "val_accuracy")},
            step=epoch,
        )


def log_probability_model(network, example: np.ndarray, *, name: str = "model"):
    """Log ``Probabilities(network)`` with ``mlflow.pytorch`` in the ``pt2`` format (an
    exported graph: loading it runs no pickle and needs no import of this module) and
    a tensor signature ``(-1, *example.shape[1:])``: MLflow then stacks an image column
    of H x W arrays into one float32 batch, and the flavour's output is one probability
    column per class. ``example`` is a batch of at least two inputs."""
    _require_torch()
    import mlflow
    from mlflow.models import ModelSignature
    from mlflow.types import Schema, TensorSpec

    example = np.asarray(example, dtype=np.float32)
    signature = ModelSignature(
        inputs=Schema([TensorSpec(np.dtype(np.float32), (-1, *example.shape[1:]))]),
        outputs=Schema([TensorSpec(np.dtype(np.float32), (-1, -1))]),
    )
    return mlflow.pytorch.log_model(
        Probabilities(network).eval(),
        name=name,
        signature=signature,
        input_example=example[:4],
        serialization_format="pt2",
        # stated, not inferred: inference loads the model in a subprocess (~20 s on 2 cores)
        pip_requirements=[f"torch=={torch.__version__.split('+')[0]}"],
    )
