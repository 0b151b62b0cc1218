"""Shared fixtures: a real sqlite-backed MLflow tracking store per test, seeded data
from scikit-learn's bundled datasets, and a helper that logs a model like a user would."""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings

os.environ.setdefault("DISABLE_DEEPCHECKS_ANONYMOUS_TELEMETRY", "1")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
os.environ.setdefault("DO_NOT_TRACK", "true")
# deepfix's result cache: one throwaway directory per test session, never the user's
os.environ.setdefault("DEEPFIX_CACHE_DIR", tempfile.mkdtemp(prefix="deepfix-test-cache-"))

import mlflow  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from sklearn.datasets import load_breast_cancer  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False, help="run slow tests")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--runslow"):
        return
    skip_slow = pytest.mark.skip(reason="opt-in: pass --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)


@pytest.fixture(autouse=True)
def _quiet_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.fixture(scope="session")
def _migrated_store(tmp_path_factory):
    """An empty sqlite tracking store with MLflow's schema migrations applied, made once
    per session: creating a store runs every migration (about 5 s), which each of the
    suite's many tracking tests would otherwise repeat."""
    path = tmp_path_factory.mktemp("store-template") / "mlflow.db"
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

    store = SqlAlchemyStore(f"sqlite:///{path}", (path.parent / "artifacts").as_uri())
    store.engine.dispose()
    return path


@pytest.fixture
def tracking_uri(tmp_path, _migrated_store):
    """A fresh sqlite tracking store (MLflow >= 3 refuses the plain file store): a copy
    of the session's freshly migrated empty store, so every test has its own real
    database without paying for the migrations again."""
    shutil.copyfile(_migrated_store, tmp_path / "mlflow.db")
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(uri)
    # artifacts under tmp_path too (the default would be ./mlruns in the working directory)
    mlflow.create_experiment("deepfix-tests", artifact_location=(tmp_path / "artifacts").as_uri())
    mlflow.set_experiment("deepfix-tests")
    yield uri
    if mlflow.active_run():
        mlflow.end_run()
    mlflow.set_tracking_uri(previous)


@pytest.fixture(scope="session")
def breast_cancer_splits():
    frame = load_breast_cancer(as_frame=True).frame.rename(columns={"target": "label"})
    train, test = train_test_split(frame, test_size=0.3, stratify=frame["label"], random_state=0)
    return train.reset_index(drop=True), test.reset_index(drop=True)


#: the requirements test models are logged with (see :func:`log_model`)
SKLEARN_REQUIREMENTS = ["scikit-learn"]


def log_model(model, features: pd.DataFrame, **kwargs) -> str:
    """Log a fitted sklearn model in a new run and return its URI. The requirements are
    given (:data:`SKLEARN_REQUIREMENTS`) rather than inferred: MLflow infers them by
    loading the model in a fresh Python process (about 5 s per model), and nothing
    deepfix reads depends on them."""
    kwargs.setdefault("pip_requirements", SKLEARN_REQUIREMENTS)
    with mlflow.start_run(run_name="train"):
        info = mlflow.sklearn.log_model(
            model,
            name="model",
            input_example=features.head(3),
            serialization_format="cloudpickle",
            **kwargs,
        )
    return info.model_uri
