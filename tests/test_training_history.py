"""Training history: real, tiny torch training runs logged to a real MLflow store, read
back through the model's run and diagnosed.

Three runs of the same 8x8-digits CNN differ only in their optimiser settings: a
healthy one (Adam, lr 0.01), a diverging one (SGD, lr 5) and a stalled one (SGD,
lr 1e-6). Each is logged with ``mlflow.pytorch`` and evaluated end to end with
``evaluators=["deepfix"]``; the history analyzer must name the diverging and the stalled
run at rank 1 and say nothing at all about the healthy one.
"""

from __future__ import annotations

import math

import mlflow
import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")

from deepfix_agents import RULES, reason, run_analyzers

from mlflow_deepfix.bench.scenarios._torch import (
    DigitsCNN,
    log_probability_model,
    train_classifier,
)
from mlflow_deepfix.schemas import (
    CATEGORIES,
    ADDED_CATEGORIES,
    ArtifactData,
    MetricHistory,
    PerformanceSummary,
    TrainingHistory,
)
from mlflow_deepfix.testing.training_history import (
    MAX_POINTS,
    metric_role,
    read_training_history,
)

RUNS = {
    "healthy": dict(lr=0.01, optimizer="adam"),
    "diverging": dict(lr=5.0, optimizer="sgd"),
    "stalled": dict(lr=1e-6, optimizer="sgd"),
}


def _digits():
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    frame = pd.DataFrame({"image": list(digits.images.astype(np.float32)), "digit": digits.target})
    train, test = train_test_split(frame, test_size=0.3, stratify=frame["digit"], random_state=0)
    return train.reset_index(drop=True), test.reset_index(drop=True)


def _arrays(frame):
    return np.stack(frame["image"].to_list()), frame["digit"].to_numpy()


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("history")
    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(f"sqlite:///{root / 'mlflow.db'}")
    mlflow.create_experiment("history", artifact_location=(root / "artifacts").as_uri())
    mlflow.set_experiment("history")
    yield root
    mlflow.set_tracking_uri(previous)


@pytest.fixture(scope="module")
def digits():
    return _digits()


def _train_and_log(digits, *, epochs=12, poison=False, **settings):
    train, test = digits
    x, y = _arrays(train)
    if poison:  # one corrupt pixel in the training images: the loss turns NaN
        x = x.copy()
        x[7, 3, 3] = np.nan
    x_val, y_val = _arrays(test)
    torch.set_num_threads(1)
    with mlflow.start_run(run_name="train") as run:
        network = DigitsCNN(seed=0)
        train_classifier(network, x, y, x_val, y_val, epochs=epochs, **settings)
        info = log_probability_model(network, x[:4] if not poison else x_val[:4])
    return info.model_uri, run.info.run_id


@pytest.fixture(scope="module")
def evaluated(store, digits):
    """name -> (findings.json, ArtifactData) for the three runs, evaluated end to end."""
    train, test = digits
    out = {}
    for name, settings in RUNS.items():
        uri, _ = _train_and_log(digits, **settings)
        with mlflow.start_run(run_name=f"evaluate-{name}"):
            result = mlflow.models.evaluate(
                uri, test, targets="digit", model_type="classifier", evaluators=["deepfix"],
                evaluator_config={"deepfix": {"image_col": "image", "train_data": train,
                                              "kb": False}},
            )
        artifact = ArtifactData.model_validate(result.artifacts["deepfix_artifact_data"].content)
        out[name] = (result.artifacts["deepfix_findings"].content, artifact)
    return out


# ------------------------------------------------------------------ reading


@pytest.mark.parametrize(
    ("key", "role"),
    [
        ("loss", "train_loss"), ("train_loss", "train_loss"), ("train/loss", "train_loss"),
        ("epoch_loss", "train_loss"), ("val_loss", "val_loss"), ("valLoss", "val_loss"),
        ("validation/loss", "val_loss"), ("eval_loss", "val_loss"),
        ("accuracy", "train_score"), ("train_acc", "train_score"),
        ("val_accuracy", "val_score"), ("test_f1", "val_score"),
        ("deepfix_findings_count", None), ("learning_rate", None), ("accuracy_score", "train_score"),
        ("system/cpu_utilization_percentage", None), ("train_val_loss", None),
    ],
)
def test_metric_keys_map_to_roles(key, role):
    assert metric_role(key) == role


def test_history_of_a_logged_torch_run_is_read_through_the_model(evaluated, digits):
    uri, run_id = _train_and_log(digits, epochs=5, lr=0.01)
    history, note = read_training_history(mlflow.pyfunc.load_model(uri))
    assert note is None and history.run_id == run_id
    assert {m.role: m.key for m in history.metrics} == {
        "train_loss": "loss", "val_loss": "val_loss", "train_score": "accuracy",
        "val_score": "val_accuracy",
    }
    assert all(m.n_points == 5 and m.steps == [0, 1, 2, 3, 4] for m in history.metrics)
    assert history.learning_rate == 0.01 and history.epochs == 5 and history.batch_size == 32
    assert history.optimizer == "Adam" and history.early_stopping is None
    assert history.val_rows == len(digits[1])  # the validation split's size, from val_rows
    loss = history.metric("train_loss").values
    assert loss[-1] < loss[0]  # a real, learning run


def test_a_model_without_logged_curves_is_skipped_with_a_note(store, breast_cancer_splits):
    from sklearn.linear_model import LogisticRegression

    train, _ = breast_cancer_splits
    model = LogisticRegression(max_iter=5000).fit(train.drop(columns="label"), train["label"])
    with mlflow.start_run():
        mlflow.log_metric("accuracy", 0.95)  # one value is a measurement, not a history
        info = mlflow.sklearn.log_model(model, name="model", serialization_format="cloudpickle",
                                        pip_requirements=["scikit-learn"])
    history, note = read_training_history(mlflow.pyfunc.load_model(info.model_uri))
    assert history is None
    assert "logged no loss or accuracy curve" in note and info.run_id in note
    history, note = read_training_history(model)
    assert history is None and "no source run" in note


def test_nan_loss_is_recorded_and_read_as_divergence(evaluated, digits):
    uri, _ = _train_and_log(digits, epochs=4, lr=0.01, poison=True)
    history, _ = read_training_history(mlflow.pyfunc.load_model(uri))
    loss = history.metric("train_loss")
    assert loss.n_nonfinite == 4 and loss.first_nonfinite_step == 0 and loss.values[-1] is None
    # the healthy run's artifact, with this history and no measured quality: the
    # evaluated model's harm is then read from the logged validation accuracy
    _, healthy = evaluated["healthy"]
    artifact = healthy.model_copy(update={"training": history, "performance": PerformanceSummary()})
    findings = reason(run_analyzers(artifact)[0], artifact)
    assert findings[0].category == "training_divergence"
    assert findings[0].severity == "critical"
    assert "NaN or infinite in 4 of 4" in findings[0].evidence[0].detail


def test_long_histories_are_thinned_keeping_the_last_point(store):
    with mlflow.start_run() as run:
        for step in range(1200):
            mlflow.log_metric("loss", 2.0 / (1 + step), step=step, synchronous=False)
    mlflow.flush_async_logging()

    class Model:
        class metadata:
            run_id = run.info.run_id

    history, _ = read_training_history(Model())
    loss = history.metric("train_loss")
    assert loss.n_points == 1200 and len(loss.values) == MAX_POINTS
    assert loss.steps[0] == 0 and loss.steps[-1] == 1199


@pytest.mark.parametrize(("logged", "rows"), [("300", 300), ("0.2", None), ("1", None)])
def test_validation_rows_are_read_only_as_a_row_count(store, logged, rows):
    """A ``val_size`` of 0.2 is a fraction of a split we do not know the size of."""
    with mlflow.start_run() as run:
        mlflow.log_param("val_size", logged)
        for step in range(4):
            mlflow.log_metric("loss", 1.0 / (1 + step), step=step)

    class Model:
        class metadata:
            run_id = run.info.run_id

    history, _ = read_training_history(Model())
    assert history.val_rows == rows


def test_the_cnn_starts_from_its_own_seed_not_from_the_global_generator():
    """The root cause of a flaky healthy run: the network's initial weights were drawn
    from torch's global generator wherever earlier code had left it."""
    first = DigitsCNN(seed=3).state_dict()
    torch.rand(17)  # whatever ran before
    again, other = DigitsCNN(seed=3).state_dict(), DigitsCNN(seed=4).state_dict()
    assert all(torch.equal(first[k], again[k]) for k in first)
    assert not torch.equal(first["head.weight"], other["head.weight"])


# ------------------------------------------------------------------ diagnosis


def test_diverging_run_is_training_divergence_at_rank_1(evaluated):
    findings, artifact = evaluated["diverging"]
    top = findings["findings"][0]
    assert top["category"] == "training_divergence" and top["severity"] == "critical"
    assert "learning rate 5" in top["title"]
    assert any(e["source"] == "training" for e in top["evidence"])
    # the collapsed predictions are its symptom, not a second root cause
    assert "degenerate_predictions" not in [f["category"] for f in findings["findings"]]
    assert artifact.training.learning_rate == 5.0


def test_stalled_run_is_training_stalled_at_rank_1(evaluated):
    findings, _ = evaluated["stalled"]
    top = findings["findings"][0]
    assert top["category"] == "training_stalled" and top["severity"] == "critical"
    assert "learning rate 1e-06" in top["title"]
    assert "training_divergence" not in [f["category"] for f in findings["findings"]]


def test_healthy_run_gets_nothing_from_its_history(evaluated):
    findings, artifact = evaluated["healthy"]
    assert artifact.training is not None and len(artifact.training.metrics) == 4
    signals, errors = run_analyzers(artifact)
    assert not errors
    assert [s for s in signals if s.source == "training"] == []
    loud = [(f["category"], f["severity"], f["title"]) for f in findings["findings"]
            if f["severity"] not in ("low", "info")]
    assert loud == []


def test_frozen_network_reads_as_never_updated(evaluated, digits):
    uri, _ = _train_and_log(digits, epochs=4, lr=0.01, frozen=True)
    history, _ = read_training_history(mlflow.pyfunc.load_model(uri))
    _, healthy = evaluated["healthy"]
    artifact = healthy.model_copy(update={"training": history, "performance": PerformanceSummary()})
    top = reason(run_analyzers(artifact)[0], artifact)[0]
    assert top.category == "training_stalled"
    assert top.title.startswith("Training never updated the model")


def test_a_flat_curve_on_a_good_model_is_convergence_not_a_stall(evaluated):
    """Harm decides: the healthy model's measured quality vetoes a flat-looking curve."""
    _, healthy = evaluated["healthy"]
    flat = TrainingHistory(
        run_id="r",
        metrics=[MetricHistory(key="loss", role="train_loss", steps=[0, 1, 2, 3],
                               values=[2.30, 2.29, 2.29, 2.28], n_points=4)],
    )
    artifact = healthy.model_copy(update={"training": flat})
    signals, _ = run_analyzers(artifact)
    assert [s for s in signals if s.category == "training_stalled"] == []


def _overfitting_history(val_accuracy_end: float) -> TrainingHistory:
    epochs = list(range(12))
    train = [2.0 * 0.6**e for e in epochs]
    val = [2.0 * 0.6**e if e <= 4 else 2.0 * 0.6**4 * (1 + 0.15 * (e - 4)) for e in epochs]
    val_acc = [min(0.5 + 0.1 * e, 0.9) if e <= 4 else 0.9 - (0.9 - val_accuracy_end) * (e - 4) / 7
               for e in epochs]
    return TrainingHistory(
        run_id="r",
        metrics=[
            MetricHistory(key="loss", role="train_loss", steps=epochs, values=train, n_points=12),
            MetricHistory(key="val_loss", role="val_loss", steps=epochs, values=val, n_points=12),
            MetricHistory(key="val_accuracy", role="val_score", steps=epochs, values=val_acc,
                          n_points=12),
        ],
        epochs=12,
    )


@pytest.mark.parametrize(("end", "severity"), [(0.82, "medium"), (0.75, "high"), (0.895, None)])
def test_validation_turning_while_training_improves_feeds_overfitting(evaluated, end, severity):
    _, healthy = evaluated["healthy"]
    artifact = healthy.model_copy(update={"training": _overfitting_history(end)})
    signals = RULES.get("overfitting")().detect("training", artifact)
    if severity is None:  # lost 0.005 accuracy: noise, not harm
        assert signals == []
        return
    (signal,) = signals
    lost = 0.9 - end
    assert math.isclose(signal.facts["lost"], lost, abs_tol=1e-3)
    assert "no early stopping was configured" in signal.evidence.detail
    finding = next(f for f in reason(signals, artifact) if f.category == "overfitting")
    assert finding.severity == severity
    assert "past its best validation loss" in finding.title


@pytest.mark.parametrize(("val_rows", "fires"), [(40, False), (5000, True)])
def test_a_decline_within_the_validation_noise_is_not_overfitting(evaluated, val_rows, fires):
    """The same 0.08 accuracy lost after the best epoch: noise on 40 validation rows
    (the best of 12 epochs is a lucky one), a real decline on 5,000."""
    _, healthy = evaluated["healthy"]
    history = _overfitting_history(0.82).model_copy(update={"val_rows": val_rows})
    artifact = healthy.model_copy(update={"training": history})
    signals = RULES.get("overfitting")().detect("training", artifact)
    assert bool(signals) is fires
    if fires:
        assert signals[0].facts["noise"] < 0.03
        assert "noise on 5000 validation rows" in signals[0].evidence.detail


def test_new_categories_are_appended_to_the_model_layer():
    assert list(CATEGORIES[-2:]) == ["training_divergence", "training_stalled"]
    assert set(ADDED_CATEGORIES[-2:]) == {"training_divergence", "training_stalled"}
    for category in ADDED_CATEGORIES[-2:]:
        assert category in RULES
