"""The scenario types, their registry, and the datasets and split helpers they share.

A *scenario* is a small, deterministic ML workflow with exactly one planted bug (or
none, for a clean control) and the contract category a good diagnosis should name
first. Keeping the shapes and the registry here, apart from the scenario modules,
lets users register their own scenarios with :func:`register` and score them with
``deepfix bench`` exactly like the shipped ones.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from mlflow_deepfix.schemas import CATEGORIES

logger = logging.getLogger(__name__)

MODEL_TYPES = ("classifier", "regressor")


@dataclass(frozen=True)
class ScenarioData:
    """What one scenario hands to ``mlflow.models.evaluate``.

    ``train`` and ``test`` both hold the target column (``target``); ``model`` is a
    fitted scikit-learn estimator or Pipeline; ``config`` holds extra
    ``evaluator_config["deepfix"]`` keys (never ``train_data``: the runner adds it).

    ``log_model`` is for models that are not scikit-learn's (a torch network, a
    transformer behind a pyfunc): called inside the active MLflow run, it logs the
    model with its own flavour -- and whatever its training logged, such as per-epoch
    curves -- and returns the ``ModelInfo``. None: ``mlflow.sklearn`` logs ``model``.
    """

    train: pd.DataFrame
    test: pd.DataFrame
    target: str
    model: Any
    model_type: str
    config: dict = field(default_factory=dict)
    log_model: Callable[[], Any] | None = None

    @property
    def feature_names(self) -> list[str]:
        """The columns the model was fitted on (``feature_names_in_``), else every
        non-target training column."""
        names = getattr(self.model, "feature_names_in_", None)
        if names is not None:
            return [str(n) for n in names]
        return [c for c in self.train.columns if c != self.target]


@dataclass(frozen=True)
class Scenario:
    """One planted bug (``expected`` category) or a clean control (``expected=None``)."""

    id: str
    expected: str | None
    description: str
    build: Callable[[int], ScenarioData]
    tags: tuple[str, ...] = ()

    @property
    def is_clean(self) -> bool:
        return self.expected is None


_REGISTRY: dict[str, Scenario] = {}


def register(scenario: Scenario) -> Scenario:
    """Add ``scenario`` to the library, after checking its id and category.

    Raises ``ValueError`` for a duplicate or malformed id, an unknown category or a
    ``build`` that is not callable, so that a typo fails at import time, not in the
    middle of a benchmark.
    """
    if not isinstance(scenario, Scenario):
        raise TypeError(f"scenario must be a Scenario, got {type(scenario).__name__}")
    if (
        not isinstance(scenario.id, str)
        or not scenario.id.strip()
        or scenario.id != scenario.id.strip()
    ):
        raise ValueError(
            f"scenario id must be a non-empty string without surrounding spaces, got {scenario.id!r}"
        )
    if scenario.id in _REGISTRY:
        raise ValueError(f"scenario id {scenario.id!r} is already registered; ids must be unique")
    if scenario.expected is not None and scenario.expected not in CATEGORIES:
        raise ValueError(
            f"scenario {scenario.id!r}: expected must be None (clean control) or one of "
            f"{', '.join(CATEGORIES)}; got {scenario.expected!r}"
        )
    if not callable(scenario.build):
        raise TypeError(f"scenario {scenario.id!r}: build must be callable (seed -> ScenarioData)")
    _REGISTRY[scenario.id] = scenario
    return scenario


def scenario(
    id: str, expected: str | None, description: str, tags: tuple[str, ...] = ()
) -> Callable[[Callable[[int], ScenarioData]], Callable[[int], ScenarioData]]:
    """Decorator form of :func:`register` for a ``build(seed)`` function."""

    def wrap(build: Callable[[int], ScenarioData]) -> Callable[[int], ScenarioData]:
        register(
            Scenario(
                id=id, expected=expected, description=description, build=build, tags=tuple(tags)
            )
        )
        return build

    return wrap


def registered() -> list[Scenario]:
    """Every registered scenario, in registration order."""
    return list(_REGISTRY.values())


def lookup(scenario_id: str) -> Scenario:
    try:
        return _REGISTRY[scenario_id]
    except KeyError:
        close = [s for s in _REGISTRY if scenario_id in s]
        hint = f" Did you mean one of: {', '.join(close[:5])}?" if close else ""
        raise KeyError(f"unknown scenario id {scenario_id!r}.{hint}") from None


# --------------------------------------------------------------------------- helpers


def make_data(
    train: pd.DataFrame,
    test: pd.DataFrame,
    target: str,
    model: Any,
    model_type: str,
    config: dict | None = None,
    log_model: Callable[[], Any] | None = None,
) -> ScenarioData:
    """Build a :class:`ScenarioData` after checking the parts fit together."""
    if model_type not in MODEL_TYPES:
        raise ValueError(f"model_type must be one of {MODEL_TYPES}, got {model_type!r}")
    for name, frame in (("train", train), ("test", test)):
        if target not in frame.columns:
            raise ValueError(f"{name} frame has no target column {target!r}")
    config = dict(config or {})
    if "train_data" in config:
        raise ValueError("config must not hold train_data; the bench runner adds it")
    if log_model is not None and not callable(log_model):
        raise TypeError(f"log_model must be callable or None, got {type(log_model).__name__}")
    return ScenarioData(
        train=train.reset_index(drop=True),
        test=test.reset_index(drop=True),
        target=target,
        model=model,
        model_type=model_type,
        config=config,
        log_model=log_model,
    )


def split(
    frame: pd.DataFrame,
    target: str | None,
    *,
    seed: int,
    test_size: float = 0.25,
    stratify: bool = True,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A healthy, shuffled (and stratified when ``target`` is given) split."""
    labels = frame[target] if (stratify and target is not None) else None
    train, test = train_test_split(frame, test_size=test_size, random_state=seed, stratify=labels)
    return train.reset_index(drop=True), test.reset_index(drop=True)


def xy(
    frame: pd.DataFrame, target: str, drop: tuple[str, ...] = ()
) -> tuple[pd.DataFrame, pd.Series]:
    """Features and target of ``frame``; ``drop`` names non-feature columns (dates, ids)."""
    return frame.drop(columns=[target, *drop]), frame[target]


def one_hot(categorical: list[str], remainder: str = "passthrough") -> ColumnTransformer:
    """One-hot the named columns, pass the rest through; the usual tabular front end."""
    return ColumnTransformer(
        [("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), categorical)],
        remainder=remainder,
        verbose_feature_names_out=False,
    )


# --------------------------------------------------------------------------- models
# Small, fast, reasonable models: the healthy part of every workflow. ``categorical``
# puts a one-hot front end before the estimator, as a typical tabular pipeline does.


def _front(categorical: list[str] | None) -> list[tuple[str, Any]]:
    return [("encode", one_hot(list(categorical)))] if categorical else []


def logistic(seed: int, categorical: list[str] | None = None, **params: Any) -> Pipeline:
    params.setdefault("max_iter", 2000)
    return Pipeline(
        [
            *_front(categorical),
            ("scale", StandardScaler()),
            ("model", LogisticRegression(random_state=seed, **params)),
        ]
    )


def ridge(categorical: list[str] | None = None, alpha: float = 1.0) -> Pipeline:
    return Pipeline(
        [*_front(categorical), ("scale", StandardScaler()), ("model", Ridge(alpha=alpha))]
    )


def gradient_boosting(
    seed: int, categorical: list[str] | None = None, regression: bool = False, **params: Any
) -> Pipeline:
    params.setdefault("n_estimators", 60)
    params.setdefault("max_depth", 3)
    cls = GradientBoostingRegressor if regression else GradientBoostingClassifier
    return Pipeline([*_front(categorical), ("model", cls(random_state=seed, **params))])


def random_forest(
    seed: int, categorical: list[str] | None = None, regression: bool = False, **params: Any
) -> Pipeline:
    params.setdefault("n_estimators", 50)
    params.setdefault("max_depth", 6)
    params.setdefault("min_samples_leaf", 3)
    cls = RandomForestRegressor if regression else RandomForestClassifier
    return Pipeline([*_front(categorical), ("model", cls(random_state=seed, n_jobs=1, **params))])


def fit(model: Any, train: pd.DataFrame, target: str, drop: tuple[str, ...] = ()) -> Any:
    """Fit ``model`` on the features of ``train`` (minus ``drop``) and return it."""
    features, labels = xy(train, target, drop)
    return model.fit(features, labels)


def loan_workflow(
    train: pd.DataFrame, test: pd.DataFrame, seed: int, config: dict | None = None
) -> ScenarioData:
    """The loan table's usual model (gradient boosting on its categoricals, the
    application date kept out of the features), fitted on ``train``: the healthy part of
    every loan scenario, whose bug lives in the data or the split."""
    from mlflow_deepfix.bench.scenarios._datasets import LOAN_CATEGORICAL

    model = fit(
        gradient_boosting(seed, LOAN_CATEGORICAL), train, "default", drop=("application_date",)
    )
    return make_data(train, test, "default", model, "classifier", config)
