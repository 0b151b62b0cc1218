"""Quickstart: a model with a planted bug, diagnosed by deepfix through mlflow.evaluate.

The bug: 40% of the test rows are copies of training rows (a classic leak when a
dataset holds repeated records and is split at random). The test score looks great;
deepfix should say why it cannot be trusted.

Run:  python examples/quickstart.py   (writes ./deepfix-quickstart/)
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import mlflow
import pandas as pd
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split

OUTPUT = Path(os.environ.get("DEEPFIX_QUICKSTART_DIR", "deepfix-quickstart")).resolve()


def make_buggy_split(seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    data = load_breast_cancer(as_frame=True)
    frame = data.frame.rename(columns={"target": "label"})
    train, test = train_test_split(frame, test_size=0.3, stratify=frame["label"], random_state=seed)
    n_copied = int(0.4 * len(test))
    copied = train.sample(n=n_copied, random_state=seed)
    test = pd.concat([test.iloc[: len(test) - n_copied], copied]).reset_index(drop=True)
    return train.reset_index(drop=True), test


def main() -> None:
    logging.basicConfig(level=logging.WARNING)
    OUTPUT.mkdir(parents=True, exist_ok=True)
    tracking_uri = f"sqlite:///{OUTPUT / 'mlflow.db'}"
    mlflow.set_tracking_uri(tracking_uri)
    if mlflow.get_experiment_by_name("deepfix-quickstart") is None:
        # keep artifacts next to the database, not in ./mlruns of whatever folder we run in
        mlflow.create_experiment(
            "deepfix-quickstart", artifact_location=(OUTPUT / "artifacts").as_uri()
        )
    mlflow.set_experiment("deepfix-quickstart")

    train, test = make_buggy_split()
    features = train.drop(columns=["label"])
    model = RandomForestClassifier(n_estimators=100, random_state=0).fit(features, train["label"])

    with mlflow.start_run(run_name="quickstart") as run:
        info = mlflow.sklearn.log_model(
            model,
            name="model",
            input_example=features.head(3),
            serialization_format="cloudpickle",
        )
        result = mlflow.models.evaluate(
            info.model_uri,
            test,
            targets="label",
            model_type="classifier",
            evaluators=["deepfix"],
            evaluator_config={"deepfix": {"train_data": train}},
        )

    findings = result.artifacts["deepfix_findings"].content
    print(f"\ndeepfix status: {findings['status'].upper()}  "
          f"({findings['timings']['total_seconds']:.1f}s, run {run.info.run_id})\n")
    for finding in findings["findings"]:
        print(f"#{finding['rank']} [{finding['severity']}] {finding['category']}: {finding['title']}")
        print(f"    why: {finding['explanation']}")
        for step, fix in enumerate(finding["fixes"][:3], start=1):
            print(f"    fix {step}: {fix}")
        print()
    print("metrics:", json.dumps({k: v for k, v in result.metrics.items()}, indent=None))
    print(f"\nreport:   {result.artifacts['deepfix_report'].uri}")
    print(f"findings: {result.artifacts['deepfix_findings'].uri}")
    print(f"\nBrowse it in the MLflow UI:\n  mlflow ui --backend-store-uri {tracking_uri} --port 5000\n"
          "then open http://127.0.0.1:5000, experiment 'deepfix-quickstart', run 'quickstart', "
          "Artifacts > deepfix/report.html")


if __name__ == "__main__":
    main()
