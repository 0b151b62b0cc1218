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
