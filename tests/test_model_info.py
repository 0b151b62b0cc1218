"""describe_model on bare estimators and on a real MLflow pyfunc model."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier

from mlflow_deepfix.inputs.model_adapter import ModelAdapter
from mlflow_deepfix.testing.model_info import describe_model


@pytest.fixture(scope="module")
def data() -> tuple[pd.DataFrame, pd.Series]:
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    return X.iloc[:200, :6], y.iloc[:200]


@pytest.fixture(scope="module")
def tracking(tmp_path_factory) -> str:
    """One sqlite store for the module: creating its tables is the slow part."""
    import mlflow

    root = tmp_path_factory.mktemp("mlflow")
    uri = f"sqlite:///{root}/mlflow.db"
    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(uri)
    # artifacts under the temp dir too (the default would be ./mlruns)
    for name in ("model-info", "model-info-custom"):
        mlflow.create_experiment(name, artifact_location=(root / name).as_uri())
    yield uri
    mlflow.set_tracking_uri(previous)


def test_logistic_regression(data):
    X, y = data
    model = LogisticRegression(C=0.5, max_iter=2000).fit(X, y)
    info = describe_model(model, None, list(X.columns))
    assert info.flavor == "sklearn"
    assert info.model_class == "sklearn.linear_model.LogisticRegression"
    assert info.hyperparameters["C"] == 0.5 and info.hyperparameters["max_iter"] == 2000
    assert info.is_pipeline is False and info.has_preprocessing is False
    assert info.scale_sensitive is True
    assert info.n_parameters == X.shape[1] + 1
    assert info.has_predict_proba is True and info.output_kind == "probabilities"
    assert info.classes == ["0", "1"]
    assert set(info.feature_importances) == set(X.columns)
    assert sum(info.feature_importances.values()) == pytest.approx(1.0)
    expected = np.abs(model.coef_[0]) / np.abs(model.coef_[0]).sum()
    assert list(info.feature_importances.values()) == pytest.approx(list(expected))
    json.dumps(info.model_dump())


def test_scaled_svc_pipeline(data):
    X, y = data
    model = make_pipeline(StandardScaler(), SVC()).fit(X, y)
    info = describe_model(model, None, list(X.columns))
    assert info.is_pipeline is True
    assert info.pipeline_steps == ["standardscaler: StandardScaler", "svc: SVC"]
    assert info.has_preprocessing is True
    assert info.model_class == "sklearn.svm.SVC"
    assert info.scale_sensitive is True
    assert info.has_predict_proba is False  # SVC(probability=False)
    assert info.output_kind == "class_labels"
    assert info.feature_importances == {}  # an RBF SVC has no native importances
    assert info.hyperparameters["kernel"] == "rbf"


def test_random_forest_importances_and_node_count(data):
    X, y = data
    model = RandomForestClassifier(n_estimators=7, max_depth=3, random_state=0).fit(X, y)
    info = describe_model(model, None, list(X.columns))
    assert info.scale_sensitive is False
    assert sum(info.feature_importances.values()) == pytest.approx(1.0)
    assert info.feature_importances == pytest.approx(
        dict(zip(X.columns, model.feature_importances_))
    )
    assert info.n_parameters == sum(t.tree_.node_count for t in model.estimators_)
    assert info.output_kind == "probabilities"


def test_parameter_counts_of_other_families(data):
    X, y = data
    tree = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    assert describe_model(tree, None, list(X.columns)).n_parameters == tree.tree_.node_count
    hgb = HistGradientBoostingClassifier(max_iter=3, random_state=0).fit(X, y)
    assert describe_model(hgb, None, list(X.columns)).n_parameters > 3
    mlp = MLPClassifier(hidden_layer_sizes=(4,), max_iter=20, random_state=0).fit(X, y)
    info = describe_model(mlp, None, list(X.columns))
    assert info.n_parameters == 6 * 4 + 4 + 4 * 1 + 1
    assert info.hyperparameters["hidden_layer_sizes"] == [4]
    assert info.scale_sensitive is True
    assert (
        describe_model(KNeighborsClassifier().fit(X, y), None, list(X.columns)).n_parameters is None
    )


def test_regressor_used_as_a_classifier_reports_continuous_output(data):
    X, y = data
    model = LinearRegression().fit(X, y)
    adapter = ModelAdapter(model, list(X.columns), is_classifier=True)
    info = describe_model(model, adapter, list(X.columns))
    assert info.output_kind == "continuous"
    assert info.has_predict_proba is False
    assert info.classes == []
    assert info.scale_sensitive is False  # ordinary least squares is scale-invariant


def test_one_hot_pipeline_importances_map_back_to_input_features(data):
    X, y = data
    frame = X.copy()
    frame["colour"] = np.where(y == 1, "red", "blue")  # a strong categorical feature
    numeric = list(X.columns)
    prep = ColumnTransformer(
        [("num", StandardScaler(), numeric), ("cat", OneHotEncoder(), ["colour"])]
    )
    model = Pipeline([("prep", prep), ("clf", LogisticRegression(max_iter=2000))]).fit(frame, y)
    info = describe_model(model, None, numeric + ["colour"])
    assert set(info.feature_importances) == set(numeric + ["colour"])
    assert sum(info.feature_importances.values()) == pytest.approx(1.0)
    assert max(info.feature_importances, key=info.feature_importances.get) == "colour"
    assert info.has_preprocessing is True
    assert info.has_scaling is True  # the scaler sits inside the ColumnTransformer


def test_encoder_without_a_scaler_is_preprocessing_but_not_scaling(data):
    """Imputing and one-hot encoding in front of a scale-sensitive model leave numeric
    features in raw units: has_preprocessing, but not has_scaling."""
    X, y = data
    frame = X.copy()
    frame["colour"] = np.where(y == 1, "red", "blue")
    prep = ColumnTransformer(
        [("num", SimpleImputer(), list(X.columns)), ("cat", OneHotEncoder(), ["colour"])]
    )
    model = Pipeline([("prep", prep), ("clf", LogisticRegression(max_iter=200))]).fit(frame, y)
    info = describe_model(model, None, list(frame.columns))
    assert info.has_preprocessing is True
    assert info.has_scaling is False
    bare = describe_model(LogisticRegression(max_iter=200).fit(X, y), None, list(X.columns))
    assert bare.has_scaling is None  # not a pipeline: unknown, rules fall back


def test_hyperparameters_are_json_safe_and_deterministic(data):
    X, y = data
    model = LogisticRegression(
        class_weight={0: 1, 1: 3}, random_state=np.random.RandomState(0), max_iter=500
    )
    model.fit(X, y)
    first = describe_model(model, None, list(X.columns)).hyperparameters
    assert first["random_state"] == "RandomState"  # no object address in the output
    assert first["class_weight"] == "{0: 1, 1: 3}"
    assert json.loads(json.dumps(first)) == first


def test_mlflow_pyfunc_model(tracking, data):
    import mlflow
    from mlflow.models import infer_signature

    X, y = data
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)).fit(X, y)
    mlflow.set_experiment("model-info")
    with mlflow.start_run():
        logged = mlflow.sklearn.log_model(
            model,
            name="model",
            serialization_format="cloudpickle",
            signature=infer_signature(X, model.predict(X)),
            pip_requirements=["scikit-learn"],  # skips the slow requirement inference
        )
    pyfunc = mlflow.pyfunc.load_model(logged.model_uri)
    adapter = ModelAdapter(pyfunc, list(X.columns), is_classifier=True)
    info = describe_model(pyfunc, adapter, list(X.columns))
    assert info.flavor == "sklearn"
    assert info.model_class == "sklearn.linear_model.LogisticRegression"
    assert info.is_pipeline and info.has_preprocessing
    assert info.pipeline_steps == [
        "standardscaler: StandardScaler",
        "logisticregression: LogisticRegression",
    ]
    assert info.signature_inputs == list(X.columns)
    assert set(info.signature_types.values()) == {"double"}
    assert info.output_kind == "probabilities" and info.has_predict_proba
    assert info.classes == ["0", "1"]
    assert sum(info.feature_importances.values()) == pytest.approx(1.0)


def test_custom_pyfunc_without_an_estimator_is_not_called_a_regressor(tracking, data):
    import mlflow

    X, _ = data

    class Threshold(mlflow.pyfunc.PythonModel):
        def predict(self, context, model_input: pd.DataFrame, params=None) -> pd.Series:
            return (model_input.iloc[:, 0] > 14).astype(int)

    mlflow.set_experiment("model-info-custom")
    with mlflow.start_run():
        logged = mlflow.pyfunc.log_model(
            name="model",
            python_model=Threshold(),
            input_example=X.head(3),
            pip_requirements=["pandas"],
        )
    pyfunc = mlflow.pyfunc.load_model(logged.model_uri)
    info = describe_model(
        pyfunc, ModelAdapter(pyfunc, list(X.columns), is_classifier=True), list(X.columns)
    )
    assert info.flavor == "python_function"
    assert info.output_kind == "unknown"
    assert info.signature_inputs == list(X.columns)
