"""Time deepfix against Deepchecks' own ``full_suite()`` on the same data and model.

Generates seeded tabular data (default 100,000 rows x 33 feature columns: 30 numeric
from ``make_classification`` plus 3 categorical), splits it 70/30, trains a
HistGradientBoosting pipeline, then in one process times

  (a) raw Deepchecks ``full_suite().run(train, test, model)`` (HTML/plots included,
      as a user would run it), and
  (b) deepfix end to end: ``mlflow.models.evaluate(..., evaluators=["deepfix"])`` on a
      sqlite tracking store in a temporary directory, or with ``--checks-only`` just
      ``mlflow_deepfix.checks.run_checks`` on the same inputs,

and prints both times and their ratio (target: deepfix <= 0.25 x full_suite).

    python benchmarks/bench_vs_full_suite.py                 # 100k rows, both timings
    python benchmarks/bench_vs_full_suite.py --rows 20000    # smaller
    python benchmarks/bench_vs_full_suite.py --checks-only   # time run_checks, not evaluate
    python benchmarks/bench_vs_full_suite.py --skip-full-suite --checks-only
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

LABEL = "label"
CAT_FEATURES = ["region", "plan", "channel"]


def make_data(rows: int, seed: int, train_fraction: float = 0.7
              ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``rows`` seeded rows (30 numeric + 3 categorical features and a binary label),
    split ``train_fraction`` / rest into train and test (default 70/30)."""
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_samples=rows, n_features=30, n_informative=10, n_redundant=6,
        flip_y=0.05, class_sep=0.8, random_state=seed,
    )
    frame = pd.DataFrame(X, columns=[f"num_{i:02d}" for i in range(30)])
    rng = np.random.default_rng(seed)
    # Categorical columns tied to informative features, with noise, so they matter.
    frame["region"] = np.where(X[:, 0] + rng.normal(0, 1, rows) > 0, "north", "south")
    frame.loc[rng.random(rows) < 0.2, "region"] = "east"
    frame["plan"] = pd.cut(X[:, 1] + rng.normal(0, 1, rows), bins=[-np.inf, -1, 0, 1, np.inf],
                           labels=["basic", "plus", "pro", "max"]).astype(str)
    frame["channel"] = rng.choice(["web", "store", "phone", "partner", "other"], size=rows,
                                  p=[0.4, 0.3, 0.15, 0.1, 0.05])
    frame[LABEL] = y
    n_train = int(rows * train_fraction)
    return frame.iloc[:n_train].reset_index(drop=True), frame.iloc[n_train:].reset_index(drop=True)


def train_model(train: pd.DataFrame, seed: int):
    """A HistGradientBoosting pipeline (ordinal-encoded categoricals): a typical
    tabular model, and one without usable model-native importances for the raw
    columns, so Deepchecks falls back to permutation importance."""
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OrdinalEncoder

    features = [c for c in train.columns if c != LABEL]
    numeric = [c for c in features if c not in CAT_FEATURES]
    pre = ColumnTransformer(
        [("cat", OrdinalEncoder(), CAT_FEATURES), ("num", "passthrough", numeric)],
        verbose_feature_names_out=False,
    )
    model = Pipeline([
        ("pre", pre),
        ("clf", HistGradientBoostingClassifier(max_iter=100, categorical_features=[0, 1, 2],
                                               random_state=seed)),
    ])
    return model.fit(train[features], train[LABEL])


def time_full_suite(train: pd.DataFrame, test: pd.DataFrame, model) -> float:
    from deepchecks.tabular import Dataset
    from deepchecks.tabular.suites import full_suite

    import mlflow_deepfix.checks  # noqa: F401 - applies the compatibility patches first

    start = time.perf_counter()
    kwargs = {"label": LABEL, "cat_features": CAT_FEATURES}
    result = full_suite().run(Dataset(train, **kwargs), Dataset(test, **kwargs), model)
    elapsed = time.perf_counter() - start
    failures = [r for r in result.results if type(r).__name__ == "CheckFailure"]
    print(f"full_suite: {elapsed:.1f} s, {len(result.results)} results, "
          f"{len(failures)} CheckFailure (incl. not-relevant ones)")
    return elapsed


def time_run_checks(train: pd.DataFrame, test: pd.DataFrame, model, seed: int,
                    sample_size: int | None) -> float:
    from mlflow_deepfix.checks import CheckInputs, run_checks
    from mlflow_deepfix.inputs.model_adapter import ModelAdapter

    features = [c for c in train.columns if c != LABEL]
    start = time.perf_counter()
    adapter = ModelAdapter(_AsPyfunc(model), features, is_classifier=True)
    inputs = CheckInputs(train=train, test=test, label=LABEL, task="binary_classification",
                         feature_names=features, cat_features=CAT_FEATURES, model=adapter)
    outcomes = run_checks(inputs, ["data_integrity", "train_test_validation",
                                   "model_evaluation"], sample_size=sample_size, seed=seed)
    elapsed = time.perf_counter() - start
    counts = pd.Series([o.outcome for o in outcomes]).value_counts().to_dict()
    print(f"run_checks: {elapsed:.1f} s, {len(outcomes)} checks {counts}")
    slowest = sorted(outcomes, key=lambda o: -o.duration_seconds)[:6]
    print("  slowest: " + ", ".join(f"{o.name} {o.duration_seconds:.1f}s" for o in slowest))
    return elapsed


def time_evaluate(train: pd.DataFrame, test: pd.DataFrame, model, seed: int,
                  sample_size: int | None) -> float:
    import mlflow

    with tempfile.TemporaryDirectory() as tmp:
        mlflow.set_tracking_uri(f"sqlite:///{tmp}/mlflow.db")
        mlflow.set_experiment(experiment_id=mlflow.create_experiment(
            "deepfix-bench", artifact_location=Path(tmp, "artifacts").as_uri()))
        features = [c for c in train.columns if c != LABEL]
        with mlflow.start_run():
            info = mlflow.sklearn.log_model(model, name="model",
                                            serialization_format="cloudpickle",
                                            input_example=test[features].head(5))
            config = {"train_data": train, "seed": seed}
            if sample_size is not None:
                config["sample_size"] = sample_size
            start = time.perf_counter()
            result = mlflow.models.evaluate(
                model=info.model_uri, data=test, targets=LABEL, model_type="classifier",
                evaluators=["deepfix"], evaluator_config={"deepfix": config},
            )
            elapsed = time.perf_counter() - start
            run_id = mlflow.active_run().info.run_id
        timings = mlflow.artifacts.load_dict(f"runs:/{run_id}/deepfix/findings.json")["timings"]
        print(f"deepfix evaluate: {elapsed:.1f} s (findings.json timings: {timings}), metrics "
              f"{ {k: v for k, v in result.metrics.items() if k.startswith('deepfix_')} }")
    return elapsed


class _AsPyfunc:
    """What the evaluator hands run_checks: a pyfunc-like object with a raw model."""

    def __init__(self, model):
        self._model = model

    def predict(self, X):
        return self._model.predict(X)

    def get_raw_model(self):
        return self._model


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000, help="rows before the 70/30 split")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sample-size", type=int, default=None,
                        help="deepfix sample_size (default: chosen for speed)")
    parser.add_argument("--checks-only", action="store_true",
                        help="time mlflow_deepfix.checks.run_checks instead of mlflow evaluate")
    parser.add_argument("--skip-full-suite", action="store_true",
                        help="do not run Deepchecks' full_suite (it takes minutes at 100k rows)")
    args = parser.parse_args(argv)
    if args.rows < 100:
        parser.error(f"--rows must be at least 100, got {args.rows}")

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    print(f"load average before: {os.getloadavg()}, cpus: {os.cpu_count()}")
    os.environ.setdefault("DISABLE_DEEPCHECKS_ANONYMOUS_TELEMETRY", "1")
    train, test = make_data(args.rows, args.seed)
    model = train_model(train, args.seed)
    print(f"data: train {train.shape}, test {test.shape}; model: {type(model).__name__}")

    full = None if args.skip_full_suite else time_full_suite(train, test, model)
    if args.checks_only:
        ours = time_run_checks(train, test, model, args.seed, args.sample_size)
        label = "run_checks"
    else:
        ours = time_evaluate(train, test, model, args.seed, args.sample_size)
        label = "deepfix evaluate"
    if full is not None:
        print(f"ratio {label} / full_suite = {ours / full:.3f} (target <= 0.25)")
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
