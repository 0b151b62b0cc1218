"""``benchmarks/corpus_split.py failures --twin``: a planted case beside its clean twin."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

_imb21_path = Path(__file__).resolve().parents[1] / "benchmarks" / "corpus_split.py"
_imb21_spec = importlib.util.spec_from_file_location("_imb21_corpus_split", _imb21_path)
corpus_split = importlib.util.module_from_spec(_imb21_spec)
_imb21_spec.loader.exec_module(corpus_split)


def _imb21_artifact(acc, ece, predicted, labels, n=40):
    return {
        "dataset": {"test": {"n_rows": n, "label_distribution": labels}},
        "performance": {
            "scores": {"test": {"accuracy": acc}},
            "calibration_error": ece,
            "calibration_noise": 0.05,
            "prediction_distribution": predicted,
        },
    }


def test_clean_twin_keeps_dataset_model_and_seed():
    assert corpus_split.clean_twin("poor_calibration.wine.mlp.strong.s0") == \
        "clean.wine.mlp.none.s0"
    assert corpus_split.clean_twin("feature_drift+unseen_categories.fair.forest.a+b.s3") == \
        "clean.fair.forest.none.s3"
    assert corpus_split.clean_twin("clean.iris.svm.none.s0") is None


def test_measured_names_the_harm_measurements():
    line = corpus_split.measured(_imb21_artifact(
        0.9, 0.12, {"a": 0.6, "b": 0.4}, {"a": 0.9, "b": 0.1}))
    assert "accuracy=0.900" in line
    assert "ece=0.120 (noise 0.050)" in line
    assert "pred-vs-true tv=0.300" in line
    assert "rarest 'b' 0.100 (4 rows, predicted 0.400)" in line


def test_failures_twin_prints_case_and_twin(tmp_path, capsys, monkeypatch):
    for name, acc in (("class_imbalance.iris.hgb.rare20.s0", 0.8),
                      ("clean.iris.hgb.none.s0", 0.95)):
        record = {"artifact": _imb21_artifact(acc, 0.05, {"a": 0.5, "b": 0.5},
                                              {"a": 0.5, "b": 0.5})}
        (tmp_path / f"{name}.json").write_text(json.dumps(record))

    class _Outcome:
        case_id, dataset, kind = "class_imbalance.iris.hgb.rare20.s0", "iris", "single"
        expected, valid, error, harm, findings = ["class_imbalance"], True, None, {}, []

    monkeypatch.setattr(corpus_split, "_outcomes", lambda cache: [_Outcome()])
    monkeypatch.setattr(corpus_split, "load_split", lambda: {"dev": ["iris"], "held_out": []})
    corpus_split.main(["failures", "--cache", str(tmp_path), "--category", "class_imbalance",
                       "--twin"])
    out = capsys.readouterr().out
    assert "measured case: n_test=40 accuracy=0.800" in out
    assert "measured twin: n_test=40 accuracy=0.950" in out


def test_the_shipped_split_partitions_every_corpus_dataset_into_named_halves():
    """DEV, HELD-OUT and the FRESH halves (datasets added after the split, which no rule
    change has read) are disjoint and cover every dataset the corpus draws cases from."""
    from mlflow_deepfix.bench.corpus.datasets import DATASET_BATCHES, DATASETS

    split = corpus_split.load_split()
    assert corpus_split.halves(split) == ["dev", "held_out", "fresh", "fresh2"]
    named = [d for half in corpus_split.halves(split) for d in split[half]]
    assert sorted(named) == sorted(DATASETS) and len(named) == len(set(named))
    assert set(split["fresh"]) == set(DATASET_BATCHES[1])
    assert set(split["fresh2"]) == set(DATASET_BATCHES[-1])
    assert corpus_split.halves({"dev": ["iris"], "held_out": ["wine"]}) == ["dev", "held_out"]
