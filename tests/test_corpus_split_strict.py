"""``benchmarks/corpus_split.py score --strict``: a rule that raises during stage 2 fails
the run, naming the case and the rule; a clean run passes."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

_path = Path(__file__).resolve().parents[1] / "benchmarks" / "corpus_split.py"
_spec = importlib.util.spec_from_file_location("_strict_corpus_split", _path)
corpus_split = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus_split)

CASES = ("clean.iris.linear.none.s0", "underfitting.iris.linear.labels_noise.s0")


def _artifact():
    """The smallest artifact the schema accepts: every rule runs on it, none raises."""
    return {
        "task": "multiclass_classification",
        "dataset": {"target": "y", "test": {"name": "test", "n_rows": 40, "n_columns": 3}},
    }


@pytest.fixture
def cache(tmp_path, monkeypatch):
    for case_id in CASES:
        record = {"case_id": case_id, "metadata": {"task": "multiclass_classification"},
                  "artifact": _artifact()}
        (tmp_path / f"{case_id}.json").write_text(json.dumps(record))
    monkeypatch.setattr(corpus_split, "load_split", lambda: {"dev": ["iris"], "held_out": []})
    return tmp_path


def test_strict_passes_a_clean_run(cache, capsys):
    assert corpus_split.main(["score", "--cache", str(cache), "--strict"]) == 0
    captured = capsys.readouterr()
    assert "DEV" in captured.out and "strict" not in captured.err


def test_strict_fails_when_a_rule_raises(cache, capsys, monkeypatch):
    from deepfix_agents.rules.unseen_categories import UnseenCategories

    def boom(self, artifact):
        raise RuntimeError("planted failure")

    monkeypatch.setattr(UnseenCategories, "detect_dataset", boom)
    # without --strict the error is recorded, the evaluation goes on and the score passes
    assert corpus_split.main(["score", "--cache", str(cache)]) == 0
    capsys.readouterr()
    assert corpus_split.main(["score", "--cache", str(cache), "--strict"]) == 1
    captured = capsys.readouterr()
    assert "DEV" in captured.out  # the scores are still printed
    assert "on 2 case(s)" in captured.err
    for case_id in CASES:
        assert f"{case_id}: rule unseen_categories failed" in captured.err
    assert "planted failure" in captured.err


def test_strict_fails_when_the_diagnosis_raises(cache, capsys, monkeypatch):
    from deepfix_agents.rules import RULES

    def boom(self, signals, artifact):
        raise RuntimeError("planted severity failure")

    for rule in RULES:
        monkeypatch.setattr(rule, "severity", boom)
    assert corpus_split.main(["score", "--cache", str(cache), "--strict"]) == 1
    err = capsys.readouterr().err
    assert f"{CASES[0]}: diagnosis: RuntimeError: planted severity failure" in err


def test_strict_leaves_the_log_configuration_as_it_was(cache):
    import logging

    logger = logging.getLogger("deepfix_agents")
    handlers, level = list(logger.handlers), logger.level
    corpus_split.main(["score", "--cache", str(cache), "--strict"])
    assert logger.handlers == handlers and logger.level == level
