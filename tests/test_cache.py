"""The result cache (issue 13 C): fingerprints, invalidation, the metric, the CLI, and
a repeated evaluation through ``mlflow.models.evaluate`` on a real sqlite store."""

from __future__ import annotations

import json

import mlflow
import numpy as np
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from mlflow_deepfix import DeepfixConfigError, cache, parse_config
from mlflow_deepfix.cli import main as cli_main
from mlflow_deepfix.evaluator import cache_hit_metric
from tests.conftest import log_model

# ------------------------------------------------------------------------ fingerprints


def _frame(rows=1000, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "x": rng.normal(size=rows),
            "n": rng.integers(0, 9, size=rows),
            "c": rng.choice(["a", "b", None], size=rows),
            "label": rng.integers(0, 2, size=rows),
        }
    )


def test_frame_fingerprint_sees_values_names_and_types_but_not_the_index():
    frame = _frame()
    base = cache.frame_fingerprint(frame)
    assert cache.frame_fingerprint(frame.copy()) == base
    assert cache.frame_fingerprint(frame.set_axis(range(5, 1005))) == base
    changed = frame.copy()
    changed.loc[737, "x"] += 1e-9
    assert cache.frame_fingerprint(changed) != base
    assert cache.frame_fingerprint(frame.rename(columns={"x": "y"})) != base
    assert cache.frame_fingerprint(frame.astype({"n": "float64"})) != base
    assert cache.frame_fingerprint(frame.iloc[:-1]) != base
    assert cache.frame_fingerprint(frame[["n", "x", "c", "label"]]) != base
    assert cache.frame_fingerprint(None) is None


def test_chunked_hashing_sees_every_chunk(monkeypatch):
    monkeypatch.setattr(cache, "CHUNK_ROWS", 128)
    frame = _frame(rows=1000)
    base = cache.frame_fingerprint(frame)
    assert cache.frame_fingerprint(frame.copy()) == base
    changed = frame.copy()
    changed.loc[999, "c"] = "z"  # in the last, partial chunk
    assert cache.frame_fingerprint(changed) != base


def test_unhashable_cells_such_as_images_are_fingerprinted_by_content():
    images = [np.full((4, 4), i, dtype=np.uint8) for i in range(3)]
    frame = pd.DataFrame({"image": images, "label": [0, 1, 0]})
    base = cache.frame_fingerprint(frame)
    again = pd.DataFrame({"image": [img.copy() for img in images], "label": [0, 1, 0]})
    assert cache.frame_fingerprint(again) == base
    images[2] = images[2].copy()
    images[2][3, 3] = 255
    assert cache.frame_fingerprint(pd.DataFrame({"image": images, "label": [0, 1, 0]})) != base


def test_model_fingerprint_follows_the_fitted_parameters():
    frame = _frame()
    X, y = frame[["x", "n"]], frame["label"]
    first = cache.model_fingerprint(LogisticRegression().fit(X, y))
    assert first == cache.model_fingerprint(LogisticRegression().fit(X, y))
    assert first != cache.model_fingerprint(LogisticRegression(C=0.01).fit(X, y))


def test_models_holding_large_arrays_are_fingerprinted():
    """Pickle protocol 5 writes large arrays (a forest fitted on ~100k rows) as
    PickleBuffer objects: they must be hashed, not make the model uncacheable."""
    from sklearn.ensemble import RandomForestClassifier

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(20_000, 4)), rng.integers(0, 2, 20_000)
    forest = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    first = cache.model_fingerprint(forest)
    assert first is not None
    assert cache.model_fingerprint(forest) == first
    forest.estimators_[2].tree_.value[5, 0, 0] += 0.25  # one leaf of one tree
    assert cache.model_fingerprint(forest) not in (None, first)
    # an object whose only large part is a non-contiguous array view
    assert cache.model_fingerprint({"w": np.arange(400_000.0)[::2]}) is not None


def test_cache_config_key_is_strictly_boolean():
    assert parse_config({}).cache is True
    assert parse_config({"cache": False}).cache is False
    with pytest.raises(DeepfixConfigError, match=r"\['cache'\] must be true or false; got 'no'"):
        parse_config({"cache": "no"})


def test_one_metric_reconciles_the_results_cache_and_the_llm_cache():
    assert cache_hit_metric(True, {}) == 1.0  # rules engine: only the results cache counts
    assert cache_hit_metric(False, {}) == 0.0
    assert cache_hit_metric(True, {"deepfix_cache_hit": 1.0}) == 1.0
    assert cache_hit_metric(True, {"deepfix_cache_hit": 0.0}) == 0.0  # LLM asked again
    assert cache_hit_metric(False, {"deepfix_cache_hit": 1.0}) == 0.0  # checks rerun


# ------------------------------------------------------------------ end to end, sqlite


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    folder = tmp_path / "deepfix-cache"
    monkeypatch.setenv(cache.ENV_DIR, str(folder))
    return folder


@pytest.fixture
def logged(tracking_uri, breast_cancer_splits):
    train, test = breast_cancer_splits
    features = train.drop(columns=["label"])
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500))
    model.fit(features, train["label"])
    return log_model(model, features), train, test


def _evaluate(model_uri, test, config):
    with mlflow.start_run() as run:
        result = mlflow.models.evaluate(
            model_uri, test, targets="label", model_type="classifier",
            evaluators=["deepfix"], evaluator_config={"deepfix": config},
        )
    return run.info.run_id, result


def _artifact(run_id):
    return mlflow.artifacts.load_dict(f"runs:/{run_id}/deepfix/artifact_data.json")


def _without_timings(data):
    data = dict(data)
    data.pop("checks_seconds")
    data["checks"] = [{k: v for k, v in c.items() if k != "duration_seconds"}
                      for c in data["checks"]]
    return data


def test_a_repeat_evaluation_is_served_from_the_cache_and_gives_the_same_diagnosis(
    logged, cache_dir, monkeypatch
):
    model_uri, train, test = logged
    first_run, first = _evaluate(model_uri, test, {"train_data": train})
    assert first.metrics["deepfix_cache_hit"] == 0.0
    assert len(list((cache_dir / "results").glob("*/*.json"))) == 1

    # a hit must not run the testing step at all
    import mlflow_deepfix.testing

    def no_testing(*args, **kwargs):
        raise AssertionError("run_testing called on a cache hit")

    monkeypatch.setattr(mlflow_deepfix.testing, "run_testing", no_testing)
    second_run, second = _evaluate(model_uri, test.copy(), {"train_data": train.copy()})
    assert second.metrics["deepfix_cache_hit"] == 1.0
    assert MlflowClient().get_run(second_run).data.metrics["deepfix_cache_hit"] == 1.0
    assert _without_timings(_artifact(second_run)) == _without_timings(_artifact(first_run))
    findings = [mlflow.artifacts.load_dict(f"runs:/{r}/deepfix/findings.json")["findings"]
                for r in (first_run, second_run)]
    assert findings[0] == findings[1]
    assert second.metrics["deepfix_duration_seconds"] < first.metrics["deepfix_duration_seconds"]
    report = mlflow.artifacts.load_text(f"runs:/{second_run}/deepfix/report.html")
    assert "Results cache: hit" in report


@pytest.mark.parametrize("change", ["data", "train_data", "config", "model", "version"])
def test_any_change_of_the_inputs_is_a_miss(logged, cache_dir, monkeypatch, change):
    model_uri, train, test = logged
    _evaluate(model_uri, test, {"train_data": train})
    config = {"train_data": train}
    if change == "data":
        test = test.copy()
        test.loc[3, "mean radius"] += 0.5
    elif change == "train_data":
        config["train_data"] = train.iloc[1:]
    elif change == "config":
        config["seed"] = 1
    elif change == "model":
        features = train.drop(columns=["label"])
        model = make_pipeline(StandardScaler(), LogisticRegression(C=0.05, max_iter=500))
        model_uri = log_model(model.fit(features, train["label"]), features)
    elif change == "version":
        monkeypatch.setattr(cache, "code_fingerprint", lambda: "another deepfix version")
    _, result = _evaluate(model_uri, test, config)
    assert result.metrics["deepfix_cache_hit"] == 0.0
    assert len(list((cache_dir / "results").glob("*/*.json"))) == 2


def test_cache_false_neither_reads_nor_writes(logged, cache_dir):
    model_uri, train, test = logged
    _evaluate(model_uri, test, {"train_data": train})
    run_id, result = _evaluate(model_uri, test, {"train_data": train, "cache": False})
    assert result.metrics["deepfix_cache_hit"] == 0.0
    assert len(list((cache_dir / "results").glob("*/*.json"))) == 1
    report = mlflow.artifacts.load_text(f"runs:/{run_id}/deepfix/report.html")
    assert "Results cache: disabled" in report


def test_a_corrupt_entry_is_a_miss_and_is_rewritten(logged, cache_dir):
    model_uri, train, test = logged
    _evaluate(model_uri, test, {"train_data": train})
    (entry,) = (cache_dir / "results").glob("*/*.json")
    entry.write_text("{not json", encoding="utf-8")
    _, result = _evaluate(model_uri, test, {"train_data": train})
    assert result.metrics["deepfix_cache_hit"] == 0.0
    assert json.loads(entry.read_text(encoding="utf-8"))["format"] == cache.CACHE_FORMAT


# ---------------------------------------------------------------------- store and CLI


def _small_artifact():
    from mlflow_deepfix.schemas import ArtifactData, DatasetSummary, SplitStats

    test = SplitStats(name="test", n_rows=10, n_columns=2)
    return ArtifactData(task="regression", dataset=DatasetSummary(target="y", test=test))


def test_store_is_pruned_least_recently_used_first(tmp_path):
    artifact = _small_artifact()
    size = len(json.dumps({"artifact": artifact.model_dump(mode="json")}))
    store = cache.ResultCache(tmp_path, max_bytes=int(2.5 * (size + 200)))
    for i, key in enumerate(["aa" + "0" * 62, "bb" + "0" * 62, "cc" + "0" * 62]):
        store.put(key, artifact)
        if i == 1:
            assert store.get("aa" + "0" * 62) is not None  # used: survives the prune
    kept = {p.stem[:2] for p in store.entries()}
    assert kept == {"aa", "cc"}


def test_cli_info_and_clear(cache_dir, capsys):
    store = cache.ResultCache()
    store.put("ab" + "1" * 62, _small_artifact())
    llm_entry = cache_dir / "llm" / "cd" / ("cd" + "2" * 62 + ".json")
    llm_entry.parent.mkdir(parents=True)
    llm_entry.write_text("{}", encoding="utf-8")

    assert cli_main(["cache", "info", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["results"]["entries"] == 1 and info["llm"]["entries"] == 1
    assert info["directory"] == str(cache_dir)

    assert cli_main(["cache", "clear", "--only", "results"]) == 0
    assert "removed 1 entries" in capsys.readouterr().out
    assert cache.cache_info()["results"]["entries"] == 0
    assert cache.cache_info()["llm"]["entries"] == 1
    assert cli_main(["cache", "clear"]) == 0
    assert cache.cache_info()["llm"]["entries"] == 0
