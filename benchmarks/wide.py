"""Wide frames: time one full evaluation of 2,000 numeric columns x 1,000 rows.

The Deepchecks checks see the 100 most relevant columns (``checks._wide``); deepfix's
own statistics, the baselines and the model see all of them. Target: <= 60 s.

    python benchmarks/wide.py [--columns 2000] [--rows 1000] [--profile]
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("DISABLE_DEEPCHECKS_ANONYMOUS_TELEMETRY", "1")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--columns", type=int, default=2000)
    parser.add_argument("--rows", type=int, default=1000, help="rows per split")
    parser.add_argument("--profile", action="store_true", help="print where the time goes")
    args = parser.parse_args(argv)

    import mlflow
    import numpy as np
    import pandas as pd
    from sklearn.linear_model import LogisticRegression

    logging.basicConfig(level=logging.WARNING)
    rng = np.random.default_rng(0)
    n = 2 * args.rows
    X = rng.normal(size=(n, args.columns)) * rng.uniform(0.1, 10, args.columns)
    frame = pd.DataFrame(X, columns=[f"probe_{i:04d}" for i in range(args.columns)])
    frame["label"] = (X[:, :5].sum(axis=1) + rng.normal(size=n) > 0).astype(int)
    train, test = frame.iloc[: args.rows], frame.iloc[args.rows :].reset_index(drop=True)
    features = [c for c in frame.columns if c != "label"]

    folder = tempfile.mkdtemp(prefix="deepfix-wide-")
    mlflow.set_tracking_uri(f"sqlite:///{folder}/mlflow.db")
    mlflow.create_experiment("wide", artifact_location=Path(folder, "artifacts").as_uri())
    mlflow.set_experiment("wide")
    model = LogisticRegression(max_iter=300).fit(train[features], train["label"])
    with mlflow.start_run():
        info = mlflow.sklearn.log_model(model, name="model", serialization_format="cloudpickle")
    import mlflow_deepfix.checks  # noqa: F401 - import cost is not the evaluation's

    profiler = None
    if args.profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    started = time.perf_counter()
    with mlflow.start_run():
        result = mlflow.models.evaluate(
            info.model_uri, test, targets="label", model_type="classifier",
            evaluators=["deepfix"],
            evaluator_config={"deepfix": {"train_data": train, "kb": False}},
        )
    seconds = time.perf_counter() - started
    if profiler is not None:
        import pstats

        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(35)
    findings = result.artifacts["deepfix_findings"].content
    notes = [n for n in result.artifacts["deepfix_artifact_data"].content["notes"]
             if "Wide frame" in n]
    in_report = "Wide frame" in result.artifacts["deepfix_report"].content
    print(f"wide frame {args.columns} columns x {args.rows} rows per split: {seconds:.1f} s "
          f"(target <= 60 s); {len(findings['findings'])} findings, top "
          f"{findings['findings'][0]['category'] if findings['findings'] else 'none'}; "
          f"checks run {result.metrics['deepfix_checks_run']:.0f}, errored "
          f"{result.metrics['deepfix_checks_errored']:.0f}")
    print(f"cap noted in artifact_data.json: {bool(notes)}, in report.html: {in_report}")
    return 0 if seconds <= 60 else 1


if __name__ == "__main__":
    sys.exit(main())
