"""Any column label type works: labels become text once at the boundary, the model is
called with its own labels, and labels that collide once turned into text are refused."""

from __future__ import annotations

import mlflow
import numpy as np
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from mlflow_deepfix import DeepfixInputError
from mlflow_deepfix.inputs.labels import stringify_labels


class _IntLabelModel:
    """Reads its features by the integer labels it was 'trained' on."""

    def __init__(self):
        self.seen: list[list] = []

    def __call__(self, frame: pd.DataFrame):
        self.seen.append(list(frame.columns))
        return (frame[0] + 0.5 * frame[1] > 0).astype(int).to_numpy()


def _frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.normal(size=(n, 3)), columns=pd.Index([0, 1, 2.5], dtype=object))
    frame["label"] = (frame[0] + rng.normal(0, 0.5, n) > 0).astype(int)
    return frame


def test_stringify_keeps_the_originals_and_refuses_collisions():
    frames, labels = stringify_labels({"data": _frame(5, 0), "train_data": None})
    assert list(frames["data"].columns) == ["0", "1", "2.5", "label"]
    assert labels.originals == {"0": 0, "1": 1, "2.5": 2.5}
    assert list(labels.restore(frames["data"]).columns) == [0, 1, 2.5, "label"]
    clash = pd.DataFrame({1: [1.0], "1": [2.0], "label": [0]})
    with pytest.raises(DeepfixInputError, match=r"labels 1 \(int\) and '1' \(str\) both read '1'"):
        stringify_labels({"data": clash})
    with pytest.raises(DeepfixInputError, match="use the same column labels in every frame"):
        stringify_labels({"data": pd.DataFrame({1: [1]}), "train_data": pd.DataFrame({"1": [1]})})


def test_integer_column_labels_evaluate_end_to_end(tracking_uri):
    train, test = _frame(200, 1), _frame(120, 2)
    model = _IntLabelModel()
    with mlflow.start_run():
        result = mlflow.models.evaluate(
            model, test, targets="label", model_type="classifier", evaluators=["deepfix"],
            evaluator_config={"deepfix": {"train_data": train, "kb": False,
                                          "suites": ["data_integrity", "model_evaluation"]}},
        )
    artifact = result.artifacts["deepfix_artifact_data"].content
    assert artifact["dataset"]["feature_names"] == ["0", "1", "2.5"]
    assert [c["name"] for c in artifact["dataset"]["test"]["columns"]][:3] == ["0", "1", "2.5"]
    assert not artifact["runtime_failures"]  # the model got the labels it reads
    assert model.seen and all(cols == [0, 1, 2.5] for cols in model.seen)
    assert any("reported as text" in n for n in artifact["notes"])


def test_colliding_labels_are_a_clean_refusal(tracking_uri):
    test = pd.DataFrame({1: [0.1, 0.2, 0.3], "1": [1.0, 2.0, 3.0], "label": [0, 1, 0]})
    with mlflow.start_run() as run, pytest.raises(DeepfixInputError, match="both read '1'"):
        mlflow.models.evaluate(
            lambda frame: np.zeros(len(frame)), test, targets="label",
            model_type="classifier", evaluators=["deepfix"],
        )
    client = MlflowClient()
    assert not client.list_artifacts(run.info.run_id, "deepfix")
    assert not any(k.startswith("deepfix") for k in client.get_run(run.info.run_id).data.tags)
