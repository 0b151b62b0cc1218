"""The training split's Predictive Power Scores are computed once per run_checks
(Feature Label Correlation and Feature Label Correlation Change share them), and the
outcomes are the ones Deepchecks computes without the memo."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.datasets import make_classification

from mlflow_deepfix.checks import CheckInputs, run_checks  # patches Deepchecks first
from mlflow_deepfix.checks._pps_memo import _content_key, shared_pps


def _pps():
    import deepchecks.ppscore  # after mlflow_deepfix.checks has patched Deepchecks

    return deepchecks.ppscore


def _splits():
    X, y = make_classification(n_samples=600, n_features=5, n_informative=3, random_state=1)
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(5)])
    frame["label"] = y
    return frame.iloc[:400].reset_index(drop=True), frame.iloc[400:].reset_index(drop=True)


def _inputs(train, test):
    return CheckInputs(train=train, test=test, label="label", task="binary_classification",
                       feature_names=[f"x{i}" for i in range(5)], cat_features=[], model=None)


def _pps_checks(train, test):
    outcomes = run_checks(_inputs(train, test), ["data_integrity", "train_test_validation"],
                          sample_size=None, seed=0, progress=False)
    return {o.name: o for o in outcomes if "Feature Label Correlation" in o.name}


def test_train_pps_is_computed_once_and_outcomes_are_unchanged(monkeypatch):
    pps = _pps()
    train, test = _splits()
    original = pps.predictors
    computed: list[str] = []

    def counting(df, y, *args, **kwargs):
        computed.append(_content_key(df, y, args, kwargs))
        return original(df, y, *args, **kwargs)

    monkeypatch.setattr(pps, "predictors", counting)
    shared = _pps_checks(train, test)
    assert len(computed) == len(set(computed)), "an identical PPS table was computed twice"
    assert len(computed) == 2  # train once (both checks), test once

    # the same checks without the memo: Deepchecks' own numbers
    unshared = {}
    for name in ("Feature Label Correlation", "Feature Label Correlation Change"):
        from deepchecks.tabular import Dataset
        from deepchecks.tabular.checks import (
            FeatureLabelCorrelation,
            FeatureLabelCorrelationChange,
        )

        check = (FeatureLabelCorrelation if name.endswith("Correlation")
                 else FeatureLabelCorrelationChange)(n_samples=5000, random_state=0)
        datasets = [Dataset(train, label="label", cat_features=[])]
        if name.endswith("Change"):
            datasets.append(Dataset(test, label="label", cat_features=[]))
        unshared[name] = check.run(*datasets, with_display=False).value
    flc = shared["Feature Label Correlation"].values
    for feature, score in unshared["Feature Label Correlation"].items():
        assert np.isclose(flc[feature], score)
    change = shared["Feature Label Correlation Change"].values
    for feature, score in unshared["Feature Label Correlation Change"]["train"].items():
        assert np.isclose(change[f"train_{feature}"], score)


def test_memo_is_scoped_to_the_block_and_returns_copies():
    pps = _pps()
    train, _ = _splits()
    original = pps.predictors
    with shared_pps() as memo:
        first = pps.predictors(train, "label", random_seed=0)
        first.loc[:, "ppscore"] = -1.0
        second = pps.predictors(train.copy(), "label", random_seed=0)
        assert memo.hits == 1 and (second["ppscore"] >= 0).all()
        pps.predictors(train.iloc[1:], "label", random_seed=0)
        assert memo.hits == 1
    assert pps.predictors is original
