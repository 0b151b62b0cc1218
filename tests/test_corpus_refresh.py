"""``benchmarks/corpus_prediction_stats_refresh.py``: one field of cached artifacts
refreshed with the current testing code, checked against what stage 1 measured."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from mlflow_deepfix.bench.corpus.cases import CaseSpec
from mlflow_deepfix.bench.corpus.runner import case_path, run_stage1

_rf50_path = Path(__file__).resolve().parents[1] / "benchmarks" / "corpus_prediction_stats_refresh.py"
_rf50_spec = importlib.util.spec_from_file_location("_rf50_refresh", _rf50_path)
refresh_script = importlib.util.module_from_spec(_rf50_spec)
_rf50_spec.loader.exec_module(refresh_script)

#: a regression pyfunc that hides a classifier, and a classification case (copied as is)
CASES = ["wrong_task_type.epilepsy.pyfunc_labels.swapped.s0", "clean.iris.svm.none.s0"]


def test_the_refresh_rebuilds_what_stage_1_measured_and_refuses_a_changed_model(tmp_path):
    source, dest = tmp_path / "old", tmp_path / "new"
    report = run_stage1([CaseSpec.from_id(c) for c in CASES], directory=source, workers=0,
                        progress=False)
    assert not report.errors
    regression = case_path(source, CASES[0])
    measured = json.loads(regression.read_text())
    stats = measured["artifact"]["performance"]["prediction_stats"]["test"]
    assert {"distinct", "train_target_distinct", "in_train_targets"} <= set(stats)
    # an artifact made before the statistics were recorded
    old = json.loads(regression.read_text())
    for key in ("distinct", "train_target_distinct", "in_train_targets"):
        old["artifact"]["performance"]["prediction_stats"]["test"].pop(key)
    regression.write_text(json.dumps(old))

    assert refresh_script.main(["--source", str(source), "--dest", str(dest)]) == 0
    refreshed = json.loads(case_path(dest, CASES[0]).read_text())
    assert refreshed["artifact"]["performance"]["prediction_stats"]["test"] == stats
    assert refreshed["refreshed"] == ["performance.prediction_stats"]
    assert case_path(dest, CASES[1]).read_bytes() == case_path(source, CASES[1]).read_bytes()

    # a cached mean the rebuilt model does not reproduce: the old field is kept, exit 1
    old["artifact"]["performance"]["prediction_stats"]["test"]["mean"] += 1.0
    regression.write_text(json.dumps(old))
    again = tmp_path / "again"
    assert refresh_script.main(["--source", str(source), "--dest", str(again)]) == 1
    kept = json.loads(case_path(again, CASES[0]).read_text())
    assert kept["artifact"]["performance"]["prediction_stats"]["test"] == (
        old["artifact"]["performance"]["prediction_stats"]["test"])
    assert "refreshed" not in kept
