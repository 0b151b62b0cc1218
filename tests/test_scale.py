"""Scale (issue 13 B): Deepchecks sees bounded, stratified samples while deepfix's
statistics count every row, through mlflow.models.evaluate on a real sqlite store."""

from __future__ import annotations

import mlflow
from sklearn.ensemble import RandomForestClassifier

from tests.conftest import log_model


def test_checks_see_a_bounded_sample_and_statistics_every_row(
    tracking_uri, breast_cancer_splits, monkeypatch
):
    from mlflow_deepfix.testing.stats import sampling

    monkeypatch.setattr(sampling, "CHECKS_MAX_ROWS", 150)
    train, test = breast_cancer_splits
    features = train.drop(columns=["label"])
    model_uri = log_model(
        RandomForestClassifier(n_estimators=20, random_state=0).fit(features, train["label"]),
        features,
    )
    with mlflow.start_run() as run:
        mlflow.models.evaluate(
            model_uri, test, targets="label", model_type="classifier",
            evaluators=["deepfix"], evaluator_config={"deepfix": {"train_data": train,
                                                                  "cache": False}},
        )
    artifact = mlflow.artifacts.load_dict(f"runs:/{run.info.run_id}/deepfix/artifact_data.json")
    assert artifact["dataset"]["train"]["n_rows"] == len(train)
    assert artifact["dataset"]["test"]["n_rows"] == len(test)
    note = next(n for n in artifact["notes"] if n.startswith("Deepchecks' suites saw"))
    assert f"150 of {len(test):,} test rows" in note and f"150 of {len(train):,} train" in note
    duplicates = artifact["checks"][[c["name"] for c in artifact["checks"]].index(
        "Data Duplicates")]
    assert duplicates["outcome"] in ("passed", "not_passed")
    # the prediction distribution covers every test row, not the sample
    predicted = mlflow.pyfunc.load_model(model_uri).predict(test.drop(columns=["label"]))
    share = float((predicted == 1).mean())
    assert abs(artifact["performance"]["prediction_distribution"]["1"] - share) < 1e-9


def test_row_hashes_in_chunks_equal_hashing_the_whole_frame(monkeypatch):
    import numpy as np
    import pandas as pd

    from mlflow_deepfix.testing.stats import rows as stats

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({
        "x": rng.normal(size=1000), "n": rng.integers(0, 5, size=1000),
        "c": rng.choice(["a", "b", None], size=1000),
    })
    kinds = {c: stats._hash_kind(frame[c]) for c in frame}
    whole = stats._row_hashes(frame, list(frame), kinds)
    monkeypatch.setattr(stats, "HASH_CHUNK_ROWS", 97)
    np.testing.assert_array_equal(stats._row_hashes(frame, list(frame), kinds), whole)
    # an unhashable cell in a late chunk: every chunk falls back to text, consistently
    lists = frame.assign(c=[["a"]] * 999 + [["b"]])
    lists_kinds = {c: stats._hash_kind(lists[c]) for c in lists}
    hashed = stats._row_hashes(lists, list(lists), lists_kinds)
    monkeypatch.setattr(stats, "HASH_CHUNK_ROWS", 10_000)
    np.testing.assert_array_equal(stats._row_hashes(lists, list(lists), lists_kinds), hashed)
