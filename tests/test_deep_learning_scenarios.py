"""Deep-learning models end to end: a torch CNN logged with ``mlflow.pytorch`` and a
frozen MiniLM encoder with a linear head logged as a pyfunc, each with a planted bug,
built, logged and evaluated through ``mlflow.models.evaluate(..., evaluators=["deepfix"])``
by the bench runner on a real SQLite store, exactly as ``deepfix bench`` does.

The probabilities deepfix reads must be the networks' own (softmax of their logits,
through the flavour), and the planted bug's category must come first.
"""

from __future__ import annotations

import time

import mlflow
import numpy as np
import pytest

pytest.importorskip("torch")

from mlflow_deepfix.bench import runner as bench
from mlflow_deepfix.bench.scenarios import get_scenario, select
from mlflow_deepfix.bench.scenarios._minilm import forward, head_layers, probabilities


def _run(scenario_id: str, tmp_path):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    started = time.perf_counter()
    report = bench.run_bench([get_scenario(scenario_id)], tracking_uri=uri, progress=False)
    (result,) = report.results
    assert result.error is None, result.error
    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(uri)
    try:
        artifact = mlflow.artifacts.load_dict(f"runs:/{result.run_id}/deepfix/artifact_data.json")
        findings = mlflow.artifacts.load_dict(f"runs:/{result.run_id}/deepfix/findings.json")
    finally:
        mlflow.set_tracking_uri(previous)
    print(f"{scenario_id}: rank {result.rank}, {time.perf_counter() - started:.1f} s")
    return result, artifact, findings


def test_torch_cnn_fed_unit_scaled_images_is_feature_drift_at_rank_1(tmp_path):
    result, artifact, findings = _run("feature_drift.torch_digits_unit_scaled_inputs", tmp_path)
    assert result.rank == 1 and result.top1 == "feature_drift"
    top = findings["findings"][0]
    assert top["severity"] in ("critical", "high")
    model = artifact["model"]
    assert model["flavor"] == "pytorch"
    assert model["output_kind"] == "probabilities" and model["has_predict_proba"]
    # the training run's curves were logged with the model and read back
    assert artifact["training"]["val_rows"] > 0
    assert {m["role"] for m in artifact["training"]["metrics"]} == {
        "train_loss", "val_loss", "train_score", "val_score"}
    # nothing in the healthy training is blamed
    assert not {"training_divergence", "training_stalled"} & set(result.categories)


def test_minilm_classifier_on_rare_complaints_is_class_imbalance_at_rank_1(tmp_path):
    result, artifact, findings = _run("class_imbalance.minilm_rare_complaints", tmp_path)
    assert result.rank == 1 and result.top1 == "class_imbalance"
    assert findings["findings"][0]["severity"] in ("critical", "high")
    model = artifact["model"]
    assert model["flavor"] == "python_function"
    assert model["output_kind"] == "probabilities" and model["has_predict_proba"]
    assert artifact["modality"] == "text"


def test_history_of_a_pyfunc_model_is_read_too_lr_too_high_is_divergence_at_rank_1(tmp_path):
    """The training history is read from any flavour's run: here a pyfunc (MiniLM with
    a torch-trained two-layer head at SGD learning rate 50)."""
    result, artifact, findings = _run("training_divergence.minilm_head_lr_too_high", tmp_path)
    assert result.rank == 1 and result.top1 == "training_divergence"
    assert artifact["model"]["flavor"] == "python_function"
    assert artifact["training"]["learning_rate"] == 50.0
    assert any(e["source"] == "training" for e in findings["findings"][0]["evidence"])


def test_minilm_head_probabilities_are_the_softmax_of_its_logits():
    binary = probabilities(np.array([[0.0], [2.0]]))
    assert np.allclose(binary[:, 1], 1 / (1 + np.exp([-0.0, -2.0]))) and np.allclose(
        binary.sum(axis=1), 1.0)
    multi = probabilities(np.array([[1.0, 2.0, 3.0]]))
    assert np.allclose(multi, np.exp([1, 2, 3]) / np.exp([1, 2, 3]).sum())


def test_deep_learning_scenarios_are_registered_with_their_own_flavours():
    ids = {s.id for s in select(["torch_", "minilm_"])}
    assert ids == {
        "clean.torch_digits_cnn", "feature_drift.torch_digits_unit_scaled_inputs",
        "clean.minilm_reviews_head", "class_imbalance.minilm_rare_complaints",
        "training_divergence.torch_digits_lr_too_high", "training_stalled.torch_digits_lr_too_low",
        "training_divergence.minilm_head_lr_too_high", "training_stalled.minilm_head_lr_too_low",
    }
    assert all("deep_learning" in get_scenario(i).tags for i in ids)


def test_a_torch_head_and_its_exported_layers_give_the_same_logits():
    """The pyfunc runs the head from its exported arrays: the same numbers as torch."""
    import torch
    from torch import nn

    torch.manual_seed(0)
    network = nn.Sequential(nn.Linear(6, 4), nn.ReLU(), nn.Linear(4, 3))
    x = np.random.default_rng(0).normal(size=(5, 6)).astype(np.float32)
    with torch.no_grad():
        expected = network(torch.tensor(x)).numpy()
    assert np.allclose(forward(head_layers(network), x), expected, atol=1e-5)
