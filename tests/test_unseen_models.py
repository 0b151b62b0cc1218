"""``benchmarks/unseen_models.py``: the corpus's bugs under model families the corpus
never fits (issue 12, "unfamiliar models"). The families build and fit, the corpus
itself is untouched by them, the benchmark's cases are deterministic and keep DEV's
datasets apart from the sealed ones, and a case runs through the real testing step
and the rules end to end (a linear SVM: a scikit-learn model without probabilities)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("statsmodels")

from mlflow_deepfix.bench.corpus import MODEL_FAMILIES, CaseSpec, generate_cases
from mlflow_deepfix.bench.corpus.models import UNSEEN_FAMILIES, make_estimator


def _module(name: str):
    """A script of ``benchmarks/`` as a module (the folder is no package)."""
    path = Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


unseen_models = _module("unseen_models")


def _frame(rows: int = 120) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=rows), "b": rng.normal(size=rows),
                          "colour": rng.choice(["red", "blue"], rows)})
    frame["y"] = (frame["a"] + 0.5 * (frame["colour"] == "red") > 0).astype(int)
    frame["v"] = 2 * frame["a"] - frame["b"] + rng.normal(0, 0.1, rows)
    return frame


@pytest.mark.parametrize("family", UNSEEN_FAMILIES)
def test_each_unseen_family_fits_both_tasks_and_is_new_to_the_corpus(family):
    assert family not in MODEL_FAMILIES
    frame = _frame()
    X = frame[["a", "b", "colour"]]
    clf = make_estimator(family, numeric=["a", "b"], categorical=["colour"],
                         task="binary_classification", seed=0).fit(X, frame["y"])
    assert (clf.predict(X) == frame["y"]).mean() > 0.8
    # the linear SVM decides without probabilities: the path no corpus family takes
    # with a model the evaluator can see inside
    assert hasattr(clf, "predict_proba") == (family != "linsvc")
    reg = make_estimator(family, numeric=["a", "b"], categorical=["colour"],
                         task="regression", seed=0).fit(X, frame["v"])
    assert np.corrcoef(reg.predict(X), frame["v"])[0, 1] > 0.8


def test_an_unknown_family_is_refused_naming_the_accepted_ones():
    with pytest.raises(ValueError, match="unknown model family 'xgb'.*linsvc"):
        make_estimator("xgb", numeric=["a"], categorical=[], task="regression", seed=0)


def test_the_corpus_never_draws_an_unseen_family():
    assert not {s.model for s in generate_cases()} & set(UNSEEN_FAMILIES)


def test_cases_are_deterministic_and_the_parts_share_no_dataset():
    dev, sealed = unseen_models.generate("dev"), unseen_models.generate("sealed")
    assert [s.id for s in dev] == [s.id for s in unseen_models.generate("dev")]
    assert len({s.id for s in dev + sealed}) == len(dev) + len(sealed)
    assert not {s.dataset for s in dev} & {s.dataset for s in sealed}
    assert {s.dataset for s in sealed} <= set(unseen_models.part_datasets("sealed"))
    for part in (dev, sealed):
        assert {s.model for s in part} == set(UNSEEN_FAMILIES)
        kinds = {s.kind for s in part}
        assert kinds == {"single", "two_bug", "clean"}
        for spec in part[::25]:
            assert CaseSpec.from_id(spec.id) == spec
    # a category whose injector needs probabilities is never planted under the SVM
    assert not [s for s in dev + sealed if s.model == "linsvc" and set(s.categories) & {
        "decision_threshold", "poor_calibration", "overconfident_slice"}]
    # clean controls: every sealed dataset, a capped number of DEV's
    clean_sealed = {s.dataset for s in sealed if s.kind == "clean"}
    assert clean_sealed == set(unseen_models.part_datasets("sealed"))
    assert len({s.dataset for s in dev if s.kind == "clean"}) == 12


def test_a_case_without_probabilities_runs_end_to_end_and_is_scored(tmp_path, capsys):
    """One DEV case under the linear SVM through the real testing step (Deepchecks, the
    probes, the interventions) and the rules; ``score`` reads it from the cache."""
    from mlflow_deepfix.bench.corpus.runner import run_stage1, run_stage2

    spec = next(s for s in unseen_models.generate("dev")
                if s.model == "linsvc" and s.kind == "single"
                and s.categories == ("duplicate_samples",))
    directory = unseen_models.cache_dir(tmp_path)
    report = run_stage1([spec], directory=directory, workers=0, progress=False)
    assert report.ran == [spec.id] and not report.errors
    (outcome,) = run_stage2([spec], directory=directory)
    assert outcome.error is None and outcome.findings
    record = json.loads((directory / f"{spec.id}.json").read_text())
    scores = record["artifact"]["performance"]["scores"]["test"]
    assert "roc_auc" not in scores and "accuracy" in scores
    out = tmp_path / "scores.json"
    assert unseen_models.main(["score", "--cache-root", str(tmp_path), "--part", "dev",
                               "--json", str(out)]) == 0
    dev = json.loads(out.read_text())["rules"]["dev"]
    assert dev["overall"]["n_buggy"] == 1
    assert "linsvc" in dev["model"]
    assert "rules, dev" in capsys.readouterr().out
    # the per-case dump gates a change through corpus_split.py compare
    dump = tmp_path / "dump.json"
    assert unseen_models.main(["dump", "--cache-root", str(tmp_path), "--out", str(dump)]) == 0
    measures = json.loads(dump.read_text())
    assert set(measures) == {"dev", "sealed"}
    assert set(measures["dev"][spec.id]) == {"top1", "top3", "rr"}
    # a sealed case that got worse fails the gate; the same dump against itself passes
    worse = {"dev": measures["dev"], "sealed": {"x": {"top1": 0.0, "top3": 0.0, "rr": 0.0}}}
    before = {"dev": measures["dev"], "sealed": {"x": {"top1": 1.0, "top3": 1.0, "rr": 1.0}}}
    (tmp_path / "worse.json").write_text(json.dumps(worse))
    (tmp_path / "before.json").write_text(json.dumps(before))
    corpus_split = _module("corpus_split")
    assert corpus_split.main(["compare", str(dump), str(dump)]) == 0
    assert corpus_split.main(["compare", str(tmp_path / "before.json"),
                              str(tmp_path / "worse.json")]) == 1
