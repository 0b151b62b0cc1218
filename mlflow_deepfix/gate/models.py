"""The models the gate compares: URIs resolved to registry versions, loaded, their
task inferred, and their predictions taken through the evaluator's own adapter."""

from __future__ import annotations

import logging
from typing import Any

import pandas as pd

from mlflow_deepfix.errors import DeepfixInputError
from mlflow_deepfix.gate.options import MODEL_TYPES
from mlflow_deepfix.gate.result import ModelRef

logger = logging.getLogger(__name__)


def resolve_model(uri: str, *, client: Any = None, name: str = "model_uri") -> ModelRef:
    """Check that ``uri`` names an existing model; resolve registry aliases to versions.

    ``models:/name/<version>``, ``models:/name@alias`` and ``models:/name/latest``
    resolve to a registered model version (which the gate tags and may promote); other
    URIs (``runs:/...``, a local path, ``models:/<model_id>``) are accepted as they are.
    """
    from mlflow.exceptions import MlflowException
    from mlflow.store.artifact.utils.models import _parse_model_uri
    from mlflow.tracking import MlflowClient

    if not isinstance(uri, str) or not uri.strip():
        raise DeepfixInputError(
            f"{name} must be a model URI such as 'models:/my-model/3' or "
            f"'models:/my-model@champion'; got {uri!r}."
        )
    uri = uri.strip()
    if not uri.startswith("models:/"):
        return ModelRef(uri=uri)
    try:
        parsed = _parse_model_uri(uri)
    except MlflowException as error:
        raise DeepfixInputError(
            f"{name}={uri!r} is not a valid models:/ URI: {error.message}"
        ) from None
    if parsed.name is None:  # models:/<model_id>: a logged model, not a registry version
        return ModelRef(uri=uri)
    client = client or MlflowClient()
    try:
        if parsed.version is not None:
            version = client.get_model_version(parsed.name, parsed.version).version
        elif parsed.alias is not None:
            version = client.get_model_version_by_alias(parsed.name, parsed.alias).version
        else:
            versions = client.search_model_versions(f"name='{parsed.name}'")
            if not versions:
                raise MlflowException(f"registered model {parsed.name!r} has no versions")
            version = str(max(int(v.version) for v in versions))
    except MlflowException as error:
        message = str(error.message).strip().splitlines()[0]
        raise DeepfixInputError(
            f"{name}={uri!r}: no such registered model version ({message})."
        ) from None
    return ModelRef(uri=uri, name=parsed.name, version=str(version))


def _load_model(ref: ModelRef, *, name: str) -> Any:
    import mlflow.pyfunc

    try:
        return mlflow.pyfunc.load_model(ref.pinned_uri)
    except Exception as error:  # noqa: BLE001 - any load failure means an unusable model URI
        message = str(getattr(error, "message", error)).strip().splitlines()
        raise DeepfixInputError(
            f"{name}={ref.uri!r}: the model cannot be loaded ({type(error).__name__}"
            f"{': ' + message[0] if message else ''})."
        ) from None


def infer_model_type(model: Any, labels: pd.Series) -> str:
    """``classifier`` or ``regressor``, from the raw model when it is a scikit-learn
    estimator, else from the labels (non-numeric or few integer values: classifier;
    non-integer numbers: regressor). Raises when it cannot tell."""
    from mlflow_deepfix.inputs.model_adapter import _raw_model

    raw = _raw_model(model)
    if raw is not None:
        try:
            from sklearn.base import is_classifier, is_regressor

            if is_classifier(raw):
                return "classifier"
            if is_regressor(raw):
                return "regressor"
        except Exception as error:  # noqa: BLE001 - not a scikit-learn estimator
            logger.debug("model_type not inferred from %s: %s", type(raw).__name__, error)
        if hasattr(raw, "predict_proba"):
            return "classifier"
    values = labels.dropna()
    if not pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
        return "classifier"
    as_float = values.astype(float)
    if (as_float != as_float.round()).any():
        return "regressor"
    if values.nunique() <= 20:
        return "classifier"
    raise DeepfixInputError(
        "model_type could not be inferred (the labels are integers with "
        f"{values.nunique()} distinct values and the model is not a scikit-learn "
        f"estimator); pass model_type, one of {MODEL_TYPES}."
    )


def _task(model_type: str, labels: pd.Series) -> str:
    if model_type == "regressor":
        return "regression"
    return "binary_classification" if labels.nunique() <= 2 else "multiclass_classification"


def _predict(model: Any, frame: pd.DataFrame, targets: str, task: str, *, name: str) -> Any:
    """Labels (classification) or values (regression) predicted for every row, through
    the same adapter the evaluator uses (so pyfunc probability outputs become labels).
    A model that cannot predict on ``data`` cannot be compared: that is an input error."""
    from mlflow_deepfix.inputs.model_adapter import ModelAdapter, resolve_feature_names

    candidates = [c for c in frame.columns if c != targets]
    features = resolve_feature_names(model, candidates)
    adapter = ModelAdapter(model, features, is_classifier=task != "regression")
    if task != "regression":
        adapter.detect_pyfunc_proba(frame, frame[targets].dropna().to_numpy())
    try:
        return adapter.predict(frame.drop(columns=[targets]))
    except Exception as error:  # noqa: BLE001 - any predict failure makes the comparison moot
        message = str(getattr(error, "message", error)).strip().splitlines()
        raise DeepfixInputError(
            f"{name}: the model cannot predict on data, so the fix cannot be verified "
            f"({type(error).__name__}{': ' + message[0] if message else ''})."
        ) from None
