"""``benchmarks/corpus_split.py dump`` / ``compare``: the per-case gate a rule change passes."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

_cmp_path = Path(__file__).resolve().parents[1] / "benchmarks" / "corpus_split.py"
_cmp_spec = importlib.util.spec_from_file_location("_cmp_corpus_split", _cmp_path)
corpus_split = importlib.util.module_from_spec(_cmp_spec)
_cmp_spec.loader.exec_module(corpus_split)

from mlflow_deepfix.bench.corpus.runner import CaseOutcome
from mlflow_deepfix.bench.corpus.scoring import case_measures


def _outcome(case_id, kind, expected, ranked, severity="high", **kw):
    findings = [{"category": c, "severity": severity, "rank": i + 1}
                for i, c in enumerate(ranked)]
    return CaseOutcome(case_id=case_id, kind=kind, dataset=case_id.split(".")[1],
                       model="forest", task="binary", expected=expected, magnitudes=[],
                       valid=kw.pop("valid", True), findings=findings, **kw)


def test_case_measures_single_two_bug_and_clean():
    single = _outcome("outliers.iris.forest.x.s0", "single", ["outliers"],
                      ["underfitting", "outliers"])
    assert case_measures(single) == {"top1": 0.0, "top3": 1.0, "rr": 0.5}
    two = _outcome("a+b.iris.forest.x.s0", "two_bug", ["outliers", "label_drift"],
                   ["outliers", "underfitting", "label_drift"])
    assert case_measures(two) == {"r3": 1.0, "any_top1": 1.0}
    clean = _outcome("clean.iris.forest.none.s0", "clean", [], ["outliers"], severity="low")
    assert case_measures(clean) == {"alarm": 0.0}
    loud = _outcome("clean.iris.forest.none.s0", "clean", [], ["outliers"], severity="medium")
    assert case_measures(loud) == {"alarm": 1.0}


def test_case_measures_leave_out_what_score_leaves_out():
    invalid = _outcome("outliers.iris.forest.x.s0", "single", ["outliers"], [], valid=False)
    assert case_measures(invalid) is None
    timeout = _outcome("outliers.iris.forest.x.s0", "single", ["outliers"], [],
                       error="timeout after 240 s")
    assert case_measures(timeout) is None
    # a testing error is the product failing on the case: a miss, not left out
    raised = _outcome("outliers.iris.forest.x.s0", "single", ["outliers"], [],
                      error="testing: boom")
    assert case_measures(raised) == {"top1": 0.0, "top3": 0.0, "rr": 0.0}


def _write(path, dev, sealed):
    path.write_text(json.dumps({"dev": dev, "held_out": sealed}))
    return str(path)


def test_compare_counts_per_half_and_lists_dev_cases_only(tmp_path, capsys):
    before = _write(tmp_path / "a.json",
                    {"d1": {"top1": 0.0, "top3": 1.0, "rr": 0.5}, "d2": {"alarm": 1.0}},
                    {"s1": {"top1": 1.0, "top3": 1.0, "rr": 1.0}, "s2": {"r3": 0.0}})
    after = _write(tmp_path / "b.json",
                   {"d1": {"top1": 1.0, "top3": 1.0, "rr": 1.0}, "d2": {"alarm": 0.0}},
                   {"s1": {"top1": 1.0, "top3": 1.0, "rr": 1.0}, "s2": {"r3": 1.0}})
    assert corpus_split.main(["compare", before, after, "--list"]) == 0
    out = capsys.readouterr().out
    assert "DEV       top1   +1/-0" in out
    assert "DEV       alarm  +1/-0" in out
    assert "    + d1" in out and "    + d2" in out
    assert "HELD_OUT  r3     +1/-0" in out
    assert "s2" not in out  # sealed cases are counted, never named


def test_compare_fails_when_a_sealed_measure_nets_below_zero(tmp_path, capsys):
    before = _write(tmp_path / "a.json", {}, {"s1": {"alarm": 0.0}})
    after = _write(tmp_path / "b.json", {}, {"s1": {"alarm": 1.0}})
    assert corpus_split.main(["compare", before, after]) == 1
    assert "HELD_OUT  alarm  +0/-1" in capsys.readouterr().out
    # a DEV loss is reported but is the author's call, not the gate's exit status
    assert corpus_split.main(["compare", after, before]) == 0


def test_dump_groups_cases_by_half(tmp_path, monkeypatch):
    outcomes = [_outcome("outliers.iris.forest.x.s0", "single", ["outliers"], ["outliers"]),
                _outcome("clean.wine.forest.none.s0", "clean", [], [], severity="low")]
    monkeypatch.setattr(corpus_split, "_outcomes", lambda cache: outcomes)
    monkeypatch.setattr(corpus_split, "load_split",
                        lambda: {"dev": ["iris"], "held_out": ["wine"]})
    out = tmp_path / "dump.json"
    assert corpus_split.main(["dump", "--cache", str(tmp_path), "--out", str(out)]) == 0
    assert json.loads(out.read_text()) == {
        "dev": {"outliers.iris.forest.x.s0": {"top1": 1.0, "top3": 1.0, "rr": 1.0}},
        "held_out": {"clean.wine.forest.none.s0": {"alarm": 0.0}}}


def test_definitions_rescore_label_drift_on_the_same_artifacts():
    """v4 (the cache's own validity) leaves out a label drift within sampling noise; v3
    re-derives validity from the recorded harm and counts it again, as stops 31-47 did."""
    harm = {"score_clean": 0.9, "score_baseline_clean": 0.4,
            "label_shift": 0.12, "label_shift_z": 1.2}
    within = _outcome("label_drift.wine.linear.shift_small.s0", "single", ["label_drift"],
                      ["outliers"], valid=False, harm=harm,
                      invalid_reason="label_drift: label_shift_z=1.2 < 1.645")
    (v4,) = corpus_split.with_definition([within], "v4")
    assert not v4.valid and case_measures(v4) is None
    (v3,) = corpus_split.with_definition([within], "v3")
    assert v3.valid and case_measures(v3) == {"top1": 0.0, "top3": 0.0, "rr": 0.0}
    assert corpus_split.DEFINITIONS[0] == "v4"
