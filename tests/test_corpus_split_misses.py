"""``benchmarks/corpus_split.py misses``: DEV top-1 misses against their clean twins."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

_ms50_path = Path(__file__).resolve().parents[1] / "benchmarks" / "corpus_split.py"
_ms50_spec = importlib.util.spec_from_file_location("_ms50_corpus_split", _ms50_path)
corpus_split = importlib.util.module_from_spec(_ms50_spec)
_ms50_spec.loader.exec_module(corpus_split)


@dataclass
class _Outcome:
    case_id: str
    findings: list = field(default_factory=list)
    kind: str = "single"
    valid: bool = True
    error: str | None = None

    @property
    def dataset(self):
        return self.case_id.split(".")[1]

    @property
    def expected(self):
        return [] if self.kind == "clean" else [self.case_id.split(".")[0]]

    def names(self, category):
        return (category,)


def _f(category, severity, rank):
    return {"category": category, "severity": severity, "rank": rank}


def test_a_hit_is_no_miss():
    case = _Outcome("missing_values.iris.svm.mcar10.s0", [_f("missing_values", "low", 1)])
    assert corpus_split.miss_kind(case, []) is None


def test_each_kind_of_miss_against_the_twin():
    case = _Outcome("missing_values.iris.svm.mcar10.s0",
                    [_f("overfitting", "high", 1), _f("missing_values", "low", 2)])
    assert corpus_split.miss_kind(case, [_f("overfitting", "high", 1)]) == (
        "winner on the clean twin, same or higher severity", True)
    assert corpus_split.miss_kind(case, [_f("overfitting", "low", 1)]) == (
        "winner on the clean twin, lower severity there", True)
    assert corpus_split.miss_kind(case, [_f("outliers", "low", 1)]) == (
        "winner not on the clean twin", True)
    assert corpus_split.miss_kind(case, None) == ("no clean twin", True)
    absent = _Outcome("missing_values.iris.svm.mcar10.s0", [_f("overfitting", "high", 1)])
    assert corpus_split.miss_kind(absent, [])[1] is False
    assert corpus_split.miss_kind(_Outcome("missing_values.iris.svm.mcar10.s0"), []) == (
        "no findings", False)


def test_misses_reads_dev_only_and_pairs_each_case_with_its_twin(monkeypatch, capsys):
    outcomes = [
        _Outcome("outliers.iris.svm.unit.s0", [_f("overfitting", "medium", 1)]),
        _Outcome("clean.iris.svm.none.s0", [_f("overfitting", "medium", 1)], kind="clean"),
        _Outcome("outliers.iris.knn.unit.s0", [_f("overfitting", "high", 1),
                                               _f("outliers", "low", 2)]),
        _Outcome("clean.iris.knn.none.s0", [_f("overfitting", "low", 1)], kind="clean"),
        _Outcome("outliers.iris.mlp.unit.s0", [_f("outliers", "high", 1)]),
        # a sealed dataset's miss is never read
        _Outcome("outliers.digits.svm.unit.s0", [_f("overfitting", "high", 1)]),
    ]
    monkeypatch.setattr(corpus_split, "_outcomes", lambda cache: outcomes)
    monkeypatch.setattr(corpus_split, "with_definition", lambda o, d: o)
    monkeypatch.setattr(corpus_split, "load_split",
                        lambda: {"dev": ["iris"], "held_out": ["digits"], "fresh": []})
    assert corpus_split.main(["misses", "--cache", "unused", "--list"]) == 0
    out = capsys.readouterr().out
    assert "DEV single-bug cases 3, top-1 misses 2" in out
    assert "1  winner on the clean twin, same or higher severity; planted absent" in out
    assert "1  winner on the clean twin, lower severity there; planted found" in out
    assert "outliers.iris.knn.unit.s0" in out
    assert "digits" not in out


@dataclass
class _Harmed(_Outcome):
    harm: dict = field(default_factory=dict)


def _artifact(n_rows, noise=None):
    interventions = [] if noise is None else [{"kind": "chance_level", "noise": noise}]
    return {"dataset": {"test": {"n_rows": n_rows}}, "interventions": interventions}


def test_harm_units_read_the_cost_against_the_test_scores_noise():
    case = _Harmed("outliers.iris.svm.unit.s0", harm={"score_drop": 0.2})
    # the chance measurement's standard error when it is the larger ...
    assert corpus_split.harm_units(case, _artifact(100, noise=0.1)) == 2.0
    # ... else the sampling noise 0.5/sqrt(rows)
    assert corpus_split.harm_units(case, _artifact(100, noise=0.01)) == 4.0
    assert corpus_split.harm_units(_Harmed("x.iris.svm.u.s0"), _artifact(100)) is None
    assert corpus_split.harm_band(-0.5).startswith("below 0")
    assert corpus_split.harm_band(1.5) == "1 to 2"
    assert corpus_split.harm_band(4.0) == "4 or more"
    assert corpus_split.harm_band(None) == "not measured"


def test_misses_by_harm_counts_dev_hits_per_band(monkeypatch, capsys, tmp_path):
    import json

    outcomes = [
        # 4.5 noise units, hit; 4.5, miss; 0.5, hit; a sealed dataset's case is never read
        _Harmed("outliers.iris.svm.unit.s0", [_f("outliers", "high", 1)], harm={"score_drop": 0.45}),
        _Harmed("outliers.iris.knn.unit.s0", [_f("overfitting", "high", 1),
                                              _f("outliers", "low", 2)], harm={"score_drop": 0.45}),
        _Harmed("outliers.iris.mlp.unit.s0", [_f("outliers", "low", 1)], harm={"score_drop": 0.05}),
        _Harmed("outliers.digits.svm.unit.s0", [_f("overfitting", "high", 1)],
                harm={"score_drop": 0.45}),
    ]
    for o in outcomes:
        (tmp_path / f"{o.case_id}.json").write_text(json.dumps({"artifact": _artifact(25)}))
    monkeypatch.setattr(corpus_split, "_outcomes", lambda cache: outcomes)
    monkeypatch.setattr(corpus_split, "with_definition", lambda o, d: o)
    monkeypatch.setattr(corpus_split, "load_split",
                        lambda: {"dev": ["iris"], "held_out": ["digits"], "fresh": []})
    assert corpus_split.main(["misses", "--cache", str(tmp_path), "--by-harm"]) == 0
    out = capsys.readouterr().out
    assert "4 or more" in out and "cases    2  top-1 0.500  top-3 1.000" in out
    assert "0 to 1" in out and "cases    1  top-1 1.000  top-3 1.000" in out
    assert "1 to 2" not in out
