"""``benchmarks/corpus_label_only_refresh.py``: re-measuring the label-only test of cached
artifacts reproduces what the testing step measures (so a refreshed cache is the cache
stage 1 would write), and a stale entry is replaced."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

pytest.importorskip("statsmodels")

from mlflow_deepfix.bench.corpus import CaseSpec
from mlflow_deepfix.bench.corpus.runner import run_stage1

_path = Path(__file__).resolve().parents[1] / "benchmarks" / "corpus_label_only_refresh.py"
_spec = importlib.util.spec_from_file_location("_label_only_refresh", _path)
refresh_script = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(refresh_script)


def test_a_fresh_artifact_refreshes_to_itself_and_a_stale_entry_is_replaced(tmp_path):
    # tips: text columns (sex, smoker, day, time) beside the numeric ones, and a leak
    spec = CaseSpec.from_id("target_leakage.tips.linear.leak_strong.s0")
    report = run_stage1([spec], directory=tmp_path, workers=0, progress=False)
    assert report.ran == [spec.id] and not report.errors
    record = json.loads((tmp_path / f"{spec.id}.json").read_text())
    columns = refresh_script.leak_columns(record["artifact"])
    assert columns and "review_score" in columns
    same, status = refresh_script.refresh(record)
    assert status == "same"
    strip = refresh_script._strip  # the measurements without their timings
    assert strip(same["artifact"]["interventions"]) == strip(record["artifact"]["interventions"])

    stale = json.loads(json.dumps(record))
    entry = next(i for i in stale["artifact"]["interventions"]
                 if i["kind"] == "label_only_feature")
    entry["score_after"], entry["values"]["n_other"] = 0.5, 2.0
    fixed, status = refresh_script.refresh(stale)
    assert status == "changed"
    assert strip(fixed["artifact"]["interventions"]) == strip(record["artifact"]["interventions"])
