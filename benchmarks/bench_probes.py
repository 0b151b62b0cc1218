"""Extra run time of the behaviour probes (robustness, confidence by slice, group
disparities, spurious correlations) against the rest of a deepfix evaluation.

For each workflow below (10,000 evaluation rows by default, 70/30 split), runs
``mlflow.models.evaluate(..., evaluators=["deepfix"])`` on a sqlite tracking store in a
temporary directory, reads ``artifact_data.json`` (``probe_seconds``: wall time of each
probe) and ``findings.json`` (``timings.total_seconds``), and prints per workflow the
probe time and the evaluation time without it, then

    extra = median(probe seconds) / median(evaluation seconds without the probes)

The target (issue 15) is extra <= 0.20. ``sensitive_features`` is set so the fairness
probe runs too.

    python benchmarks/bench_probes.py                 # 10k evaluation rows
    python benchmarks/bench_probes.py --rows 2000     # smaller
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

os.environ.setdefault("DISABLE_DEEPCHECKS_ANONYMOUS_TELEMETRY", "1")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")


def _classification(n: int, seed: int):
    from sklearn.datasets import make_classification
    from sklearn.ensemble import HistGradientBoostingClassifier

    X, y = make_classification(n_samples=n, n_features=20, n_informative=8, flip_y=0.05,
                               random_state=seed)
    frame = pd.DataFrame(X, columns=[f"x{i:02d}" for i in range(20)])
    frame["label"] = y
    frame["group"] = np.where(np.random.default_rng(seed).random(n) < 0.3, "B", "A")
    return frame, "label", HistGradientBoostingClassifier(random_state=seed), "classifier"


def _loan(n: int, seed: int):
    from mlflow_deepfix.bench.scenarios._base import gradient_boosting
    from mlflow_deepfix.bench.scenarios._datasets import LOAN_CATEGORICAL, make_loan

    frame = make_loan(n, seed).drop(columns=["application_date"])
    frame["group"] = np.where(frame["age"] > 50, "older", "younger")
    return frame, "default", gradient_boosting(seed, LOAN_CATEGORICAL), "classifier"


def _regression(n: int, seed: int):
    from sklearn.datasets import make_regression
    from sklearn.ensemble import RandomForestRegressor

    X, y = make_regression(n_samples=n, n_features=15, n_informative=8, noise=10.0,
                           random_state=seed)
    frame = pd.DataFrame(X, columns=[f"x{i:02d}" for i in range(15)])
    frame["target"] = y
    frame["group"] = np.where(np.random.default_rng(seed).random(n) < 0.4, "B", "A")
    model = RandomForestRegressor(n_estimators=50, max_depth=8, random_state=seed, n_jobs=1)
    return frame, "target", model, "regressor"


WORKFLOWS = {"classification_hgb": _classification, "loan_gradient_boosting": _loan,
             "regression_random_forest": _regression}


def run(name: str, rows: int, seed: int, root: Path) -> dict:
    import mlflow

    frame, target, model, model_type = WORKFLOWS[name](int(rows / 0.3), seed)
    n_train = len(frame) - rows
    train, test = frame.iloc[:n_train].reset_index(drop=True), frame.iloc[n_train:].reset_index(drop=True)
    features = [c for c in frame.columns if c not in (target, "group")]
    model.fit(train[features], train[target])
    with mlflow.start_run(run_name=name) as active:
        info = mlflow.sklearn.log_model(model, name="model", serialization_format="cloudpickle",
                                        input_example=train[features].head(3))
        started = time.perf_counter()
        mlflow.models.evaluate(
            info.model_uri, test, targets=target, model_type=model_type, evaluators=["deepfix"],
            evaluator_config={"deepfix": {"train_data": train, "kb": False, "seed": seed,
                                          "sensitive_features": ["group"]}},
        )
        wall = time.perf_counter() - started
    artifact = mlflow.artifacts.load_dict(f"runs:/{active.info.run_id}/deepfix/artifact_data.json")
    findings = mlflow.artifacts.load_dict(f"runs:/{active.info.run_id}/deepfix/findings.json")
    probes = artifact.get("probe_seconds", {})
    total = findings["timings"]["total_seconds"] or wall
    return {"workflow": name, "rows": rows, "probes": probes, "probe_seconds": sum(probes.values()),
            "total_seconds": total, "without_probes": total - sum(probes.values())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000, help="evaluation rows (default 10000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workflow", action="append", choices=sorted(WORKFLOWS))
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    import mlflow

    print(f"load average before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        mlflow.set_tracking_uri(f"sqlite:///{root / 'mlflow.db'}")
        mlflow.set_experiment("bench-probes")
        results = [run(name, args.rows, args.seed, root) for name in (args.workflow or WORKFLOWS)]
    print(f"load average after:  {os.getloadavg()}")
    print(f"\n{'workflow':28s} {'rows':>6s} {'probes s':>9s} {'rest s':>8s} {'share':>6s}  per probe")
    for r in results:
        share = r["probe_seconds"] / r["without_probes"] if r["without_probes"] else float("nan")
        per = ", ".join(f"{k} {v:.2f}" for k, v in sorted(r["probes"].items()))
        print(f"{r['workflow']:28s} {r['rows']:6d} {r['probe_seconds']:9.2f} "
              f"{r['without_probes']:8.2f} {share:6.1%}  {per}")
    extra = statistics.median(r["probe_seconds"] for r in results) / statistics.median(
        r["without_probes"] for r in results
    )
    print(f"\nextra run time: median probes / median evaluation without them = {extra:.1%} "
          f"(target <= 20%)")
    return 0 if extra <= 0.20 else 1


if __name__ == "__main__":
    sys.exit(main())
