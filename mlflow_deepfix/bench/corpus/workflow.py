"""A user's workflow as the corpus builds it: split, (injected bugs), fit, serve.

:class:`Workflow` is the mutable state an injector edits: the two splits, the model's
columns, overrides for the estimator, and hooks that run after the fit (changes made at
serving time, such as a scaler left out of the shipped model). :func:`fit_and_serve`
turns it into what ``mlflow.models.evaluate`` would receive.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from mlflow_deepfix.bench.corpus.datasets import CorpusDataset
from mlflow_deepfix.bench.corpus.models import as_pyfunc, make_estimator

TEST_SHARE = 0.3


@dataclass
class Workflow:
    dataset: CorpusDataset
    family: str
    seed: int
    rng: np.random.Generator
    train: pd.DataFrame
    test: pd.DataFrame
    numeric: list[str]
    categorical: list[str]
    target: str
    task: str
    #: the task the model is declared as to ``evaluate`` (wrong_task_type changes it)
    model_type: str
    #: the task the estimator is built for (``task`` unless an injector changes it)
    estimator_task: str
    #: final-estimator parameter overrides (regularisation, depth, ...)
    overrides: dict[str, Any] = field(default_factory=dict)
    #: replaces make_estimator entirely: (workflow) -> unfitted estimator
    build_estimator: Callable[[Workflow], Any] | None = None
    #: (workflow, fitted model) -> served model, in order, after the fit
    after_fit: list[Callable[[Workflow, Any], Any]] = field(default_factory=list)
    #: transforms the training target before the fit (e.g. log1p)
    target_transform: Callable[[pd.Series], pd.Series] | None = None
    #: extra evaluator_config["deepfix"] keys
    config: dict[str, Any] = field(default_factory=dict)
    #: columns already changed by an injector (a second one picks others)
    claimed: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    #: the (column, value) whose rows a weak_segment injector made unreliable, so the
    #: corpus can measure that segment's shortfall (None when no segment is planted)
    segment: tuple[str, Any] | None = None
    #: the class a label_drift injector made more frequent on test (``"high"`` targets on
    #: a regression), so the corpus can measure how far the test labels really moved
    #: (None when no label drift is planted)
    favoured_label: Any = None

    @property
    def features(self) -> list[str]:
        return [*self.numeric, *self.categorical]

    @property
    def is_classification(self) -> bool:
        return self.task != "regression"

    def informative(self, k: int, *, claim: bool = True) -> list[str]:
        """The ``k`` unclaimed numeric features most associated with the target in the
        training split (|Spearman|; classification labels as codes, one-vs-rest max)."""
        candidates = [c for c in self.numeric if c not in self.claimed]
        scores = {}
        y = self.train[self.target]
        for c in candidates:
            x = pd.to_numeric(self.train[c], errors="coerce")
            if x.nunique() < 2:
                continue
            if self.is_classification and y.nunique() > 2:
                s = max(abs(x.corr((y == v).astype(float), method="spearman")) for v in y.unique())
            else:
                s = abs(x.corr(y.astype(float), method="spearman"))
            scores[c] = 0.0 if np.isnan(s) else s
        chosen = sorted(scores, key=lambda c: (-scores[c], c))[:k]
        if claim:
            self.claimed.update(chosen)
        return chosen


def clean_split(dataset: CorpusDataset, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The honest split: chronological for a time-ordered dataset, else random
    (stratified for classification)."""
    frame = dataset.frame
    if dataset.time_ordered:
        cut = round(len(frame) * (1 - TEST_SHARE))
        return frame.iloc[:cut].reset_index(drop=True), frame.iloc[cut:].reset_index(drop=True)
    stratify = frame[dataset.target] if dataset.is_classification else None
    train, test = train_test_split(
        frame, test_size=TEST_SHARE, random_state=seed, stratify=stratify
    )
    return train.reset_index(drop=True), test.reset_index(drop=True)


def new_workflow(dataset: CorpusDataset, family: str, seed: int, rng_seed: int) -> Workflow:
    train, test = clean_split(dataset, seed)
    config: dict[str, Any] = {}
    if dataset.datetime_col:
        config["datetime_col"] = dataset.datetime_col
    return Workflow(
        dataset=dataset, family=family, seed=seed, rng=np.random.default_rng(rng_seed),
        train=train, test=test, numeric=list(dataset.numeric_features),
        categorical=list(dataset.cat_features), target=dataset.target, task=dataset.task,
        model_type=dataset.model_type, estimator_task=dataset.task, config=config,
    )


@dataclass
class Served:
    """What ``mlflow.models.evaluate`` gets: the model, the test frame, train_data."""

    model: Any  # a PyFuncModel
    raw: Any  # the fitted scikit-learn object behind it
    train: pd.DataFrame
    test: pd.DataFrame
    target: str
    model_type: str
    config: dict[str, Any]


def fit_and_serve(wf: Workflow) -> Served:
    """Fit the workflow's model on its training split and wrap it as MLflow would."""
    if wf.build_estimator is not None:
        estimator = wf.build_estimator(wf)
    else:
        estimator = make_estimator(
            wf.family, numeric=wf.numeric, categorical=wf.categorical,
            task=wf.estimator_task, seed=wf.seed, **wf.overrides,
        )
    X = wf.train[wf.features]
    y = wf.train[wf.target]
    if wf.target_transform is not None:
        y = wf.target_transform(y)
    model = estimator.fit(X, y)
    for hook in wf.after_fit:
        model = hook(wf, model)
    pyfunc = as_pyfunc(model, X, labels_only=wf.family == "pyfunc_labels")
    keep = [*wf.features, wf.target]
    if wf.dataset.datetime_col and wf.dataset.datetime_col in wf.train:
        keep.append(wf.dataset.datetime_col)
    keep.extend(wf.config.get("extra_columns", ()))
    config = {k: v for k, v in wf.config.items() if k != "extra_columns"}
    train = wf.train[[c for c in dict.fromkeys(keep) if c in wf.train]]
    test = wf.test[[c for c in wf.test.columns if c in set(keep) or c not in wf.train.columns]]
    return Served(model=pyfunc, raw=model, train=train, test=test, target=wf.target,
                  model_type=wf.model_type, config=config)
