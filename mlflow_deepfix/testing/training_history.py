"""Reads the model's training history from its MLflow run: :class:`TrainingHistory`.

Several root causes leave their trace only in how training went, not in the finished
model: a learning rate too large (the loss explodes or turns NaN), one too small or a
frozen network (the loss never moves), training that went on long after the validation
loss turned (overfitting over epochs, no early stopping). Any flavour whose training
logged metrics per step or per epoch (``mlflow.log_metric(..., step=epoch)``,
autologging) can be read this way; the run is found through the model's
``metadata.run_id``.

Only MLflow *reads* happen here (``MlflowClient.get_run`` / ``get_metric_history``).
Metric keys are mapped to roles by their words (``loss``/``val_loss``,
``accuracy``/``val_accuracy``, ``train/f1`` ...), the one shortest key per role wins.
"""

from __future__ import annotations

import logging
import math
import re
from typing import Any

from mlflow_deepfix.schemas import MetricHistory, TrainingHistory

logger = logging.getLogger(__name__)

#: longest curve kept per metric (evenly thinned beyond; the last point always kept)
MAX_POINTS = 500
#: fewer points than this is a single measurement, not a history
MIN_POINTS = 3

_VALIDATION_WORDS = frozenset({"val", "valid", "validation", "eval", "dev", "test", "holdout"})
_TRAIN_WORDS = frozenset({"train", "training", "tr"})
_SCORE_WORDS = frozenset({"acc", "accuracy", "f1", "auc", "top1"})
#: metrics a deepfix or default evaluation writes to the same run: never training curves
_IGNORED_PREFIXES = ("deepfix_", "system/")

_PARAM_ALIASES: dict[str, tuple[str, ...]] = {
    "learning_rate": ("learning_rate", "lr", "learningrate", "base_lr", "initial_lr", "eta"),
    "epochs": ("epochs", "num_epochs", "n_epochs", "max_epochs", "epoch", "num_train_epochs"),
    "batch_size": ("batch_size", "batchsize", "per_device_train_batch_size", "train_batch_size"),
    "optimizer": ("optimizer", "optimizer_name", "optim", "opt"),
    "early_stopping": (
        "early_stopping", "early_stopping_patience", "patience", "early_stopping_rounds",
        "n_iter_no_change",
    ),
    # a row count only (a fraction such as ``val_size=0.2`` is not read): it is what
    # tells epoch-to-epoch noise of a validation accuracy from a real decline
    "val_rows": (
        "val_rows", "n_val", "n_val_rows", "val_samples", "num_val_samples", "validation_rows",
        "n_validation", "val_size", "validation_size", "eval_rows",
    ),
}


def _words(key: str) -> list[str]:
    spaced = re.sub(r"([a-z])([A-Z])", r"\1_\2", key)
    return [w for w in re.split(r"[^a-z0-9]+", spaced.lower()) if w]


def metric_role(key: str) -> str | None:
    """``train_loss``, ``val_loss``, ``train_score``, ``val_score`` or None (not a curve
    we read) for a metric key such as ``loss``, ``val_loss``, ``train/accuracy``."""
    if key.startswith(_IGNORED_PREFIXES):
        return None
    words = _words(key)
    is_loss = any(w == "loss" or w.endswith("loss") for w in words)
    is_score = any(w in _SCORE_WORDS for w in words)
    if is_loss == is_score:  # neither, or ambiguous ("loss_acc")
        return None
    validation = any(w in _VALIDATION_WORDS or w.startswith(("val", "valid")) for w in words)
    if validation and any(w in _TRAIN_WORDS for w in words):
        return None
    prefix = "val" if validation else "train"
    return f"{prefix}_{'loss' if is_loss else 'score'}"


def _thin(points: list[tuple[int, float]]) -> list[tuple[int, float]]:
    if len(points) <= MAX_POINTS:
        return points
    last = len(points) - 1
    keep = sorted({round(i * last / (MAX_POINTS - 1)) for i in range(MAX_POINTS)})
    return [points[i] for i in keep]


def _history(client: Any, run_id: str, key: str, role: str) -> MetricHistory | None:
    logged = client.get_metric_history(run_id, key)
    if len(logged) < MIN_POINTS:
        return None
    by_order = sorted(logged, key=lambda m: (m.step, m.timestamp))
    steps = [int(m.step) for m in by_order]
    if len(set(steps)) < len(steps):  # logged without distinct steps: use the log order
        by_order = sorted(logged, key=lambda m: m.timestamp)
        steps = list(range(len(by_order)))
    points = [(step, float(m.value)) for step, m in zip(steps, by_order)]
    nonfinite = [step for step, value in points if not math.isfinite(value)]
    kept = _thin(points)
    return MetricHistory(
        key=key,
        role=role,
        steps=[step for step, _ in kept],
        values=[value if math.isfinite(value) else None for _, value in kept],
        n_points=len(points),
        n_nonfinite=len(nonfinite),
        first_nonfinite_step=nonfinite[0] if nonfinite else None,
    )


def _number(text: str | None) -> float | None:
    try:
        value = float(text) if text is not None else None
    except ValueError:
        return None
    return value if value is not None and math.isfinite(value) else None


def _params(logged: dict[str, str]) -> tuple[dict[str, str], dict[str, Any]]:
    lowered = {k.lower(): k for k in logged}
    found: dict[str, str] = {}
    parsed: dict[str, Any] = {}
    for field, aliases in _PARAM_ALIASES.items():
        key = next((lowered[a] for a in aliases if a in lowered), None)
        if key is None:
            continue
        raw = logged[key]
        found[key] = raw[:100]
        if field == "optimizer":
            parsed[field] = raw[:100]
        elif field == "early_stopping":
            parsed[field] = raw.strip().lower() not in ("", "0", "false", "none", "no")
        else:
            number = _number(raw)
            if field == "val_rows":
                if number is not None and number >= 2 and number == int(number):
                    parsed[field] = int(number)
            elif number is not None:
                parsed[field] = int(number) if field in ("epochs", "batch_size") else number
    return found, parsed


def read_training_history(model: Any) -> tuple[TrainingHistory | None, str | None]:
    """The training history of ``model``'s source run, or None with the reason (a note
    for the report) when there is none to read."""
    run_id = getattr(getattr(model, "metadata", None), "run_id", None)
    if not run_id:
        return None, "Training history not read: the model has no source run."
    from mlflow.tracking import MlflowClient

    client = MlflowClient()
    try:
        run = client.get_run(run_id)
    except Exception as error:  # noqa: BLE001 - a deleted or foreign run is not an error
        return None, (
            f"Training history not read: the model's run {run_id} could not be read "
            f"({type(error).__name__})."
        )
    candidates: dict[str, list[str]] = {}
    for key in run.data.metrics:
        role = metric_role(key)
        if role is not None:
            candidates.setdefault(role, []).append(key)
    metrics = []
    for role in ("train_loss", "val_loss", "train_score", "val_score"):
        # the plainest name wins: "loss" over "epoch_loss" over "train/batch_loss"
        for key in sorted(candidates.get(role, ()), key=lambda k: (len(k), k)):
            history = _history(client, run_id, key, role)
            if history is not None:
                metrics.append(history)
                break
    if not metrics:
        return None, (
            f"Training history not read: the model's run {run_id} logged no loss or accuracy "
            f"curve (metrics with at least {MIN_POINTS} steps)."
        )
    found, parsed = _params(run.data.params)
    history = TrainingHistory(run_id=run_id, metrics=metrics, params=found, **parsed)
    logger.info("training history of run %s: %s", run_id, ", ".join(m.key for m in metrics))
    return history, None
