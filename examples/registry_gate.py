"""Promotion gate: refuse a buggy model version, promote its fix, and prove the fix.

The planted bug: the training script standardised the features *outside* the model
(``StandardScaler().fit_transform(train)``) and logged only the classifier, so at
serving time the model receives raw features, on scales it never saw. Version 1 is that
model; deepfix finds the preprocessing mismatch and the gate refuses it. Version 2 puts
the scaler inside a ``Pipeline``; the gate compares it with version 1 on the same test
rows (repair rate: share of v1's mistakes that v2 fixes; negative flip rate: share of
v1's correct answers that v2 breaks), checks ``NFR <= 5%`` and points the ``champion``
alias at it.

Run:  python examples/registry_gate.py   (writes ./deepfix-registry-gate/)

The same gates from a shell (exit code 0 passed, 1 refused, 2 usage error)::

    export MLFLOW_TRACKING_URI=sqlite:///deepfix-registry-gate/mlflow.db
    deepfix gate --model-uri models:/breast-cancer/1 --data test.parquet --target label \\
        --train-data train_v1.parquet --promote-to champion
    deepfix gate --model-uri models:/breast-cancer/2 --data test.parquet --target label \\
        --train-data train.parquet --baseline models:/breast-cancer/1 --max-nfr 0.05 \\
        --promote-to champion
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

import mlflow
import pandas as pd
from mlflow.tracking import MlflowClient
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import mlflow_deepfix

OUTPUT = Path(os.environ.get("DEEPFIX_GATE_DIR", "deepfix-registry-gate")).resolve()
MODEL_NAME = "breast-cancer"
SEED = 0


def load_splits() -> tuple[pd.DataFrame, pd.DataFrame]:
    frame = load_breast_cancer(as_frame=True).frame.rename(columns={"target": "label"})
    train, test = train_test_split(frame, test_size=0.3, stratify=frame["label"], random_state=SEED)
    return train.reset_index(drop=True), test.reset_index(drop=True)


def register(model, train: pd.DataFrame, description: str) -> str:
    """Fit, log and register a model version like a training job would."""
    features = train.drop(columns=["label"])
    model.fit(features, train["label"])
    with mlflow.start_run(run_name=f"train: {description}"):
        info = mlflow.sklearn.log_model(
            model,
            name="model",
            input_example=features.head(3),
            serialization_format="cloudpickle",
            registered_model_name=MODEL_NAME,
        )
    return str(info.registered_model_version)


def main() -> None:
    logging.basicConfig(level=logging.WARNING)
    shutil.rmtree(OUTPUT, ignore_errors=True)  # a fresh registry on every run
    OUTPUT.mkdir(parents=True)
    mlflow.set_tracking_uri(f"sqlite:///{OUTPUT / 'mlflow.db'}")  # tracking + registry
    experiment = "deepfix-registry-gate"
    if mlflow.get_experiment_by_name(experiment) is None:
        mlflow.create_experiment(experiment, artifact_location=(OUTPUT / "artifacts").as_uri())
    mlflow.set_experiment(experiment)

    train, test = load_splits()
    features = [c for c in train.columns if c != "label"]

    # v1, the bug: features standardised outside the model, classifier logged alone
    scaled_train = train.copy()
    scaled_train[features] = StandardScaler().fit_transform(train[features])
    buggy = register(LogisticRegression(max_iter=500), scaled_train, "scaler outside the model")
    # v2, the fix: the scaler travels with the model
    fixed = register(
        make_pipeline(StandardScaler(), LogisticRegression(max_iter=500)),
        train,
        "scaler inside a Pipeline",
    )

    print(f"== gate {MODEL_NAME} v{buggy} (the buggy model) ==")
    refused = mlflow_deepfix.gate(
        f"models:/{MODEL_NAME}/{buggy}",
        test,
        targets="label",
        train_data=scaled_train,  # what v1 was trained on
        promote_to="champion",
    )
    print(refused.summary(), "\n")

    print(f"== gate {MODEL_NAME} v{fixed} (the fix), against v{buggy} ==")
    promoted = mlflow_deepfix.gate(
        f"models:/{MODEL_NAME}/{fixed}",
        test,
        targets="label",
        train_data=train,
        promote_to="champion",
        baseline_uri=f"models:/{MODEL_NAME}/{buggy}",
        max_negative_flip_rate=0.05,
    )
    print(promoted.summary(), "\n")

    client = MlflowClient()
    champion = client.get_model_version_by_alias(MODEL_NAME, "champion")
    for version in (buggy, fixed):
        tags = client.get_model_version(MODEL_NAME, version).tags
        print(
            f"v{version} tags:", {k: v for k, v in sorted(tags.items()) if k.startswith("deepfix.")}
        )
    print(f"champion -> v{champion.version}")
    print(f"gate run report: {promoted.run_id} (deepfix/report.html, 'Fix verification' section)")
    print(f"browse: mlflow ui --backend-store-uri sqlite:///{OUTPUT / 'mlflow.db'}")

    if refused.passed or not promoted.passed or str(champion.version) != fixed:
        raise SystemExit(
            "unexpected outcome: the buggy version should be refused, the fix promoted"
        )


if __name__ == "__main__":
    main()
