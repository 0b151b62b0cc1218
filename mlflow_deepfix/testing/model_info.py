"""What can be learned about a model without its training data: :class:`ModelInfo`.

Several root causes are visible in the model object itself: a scale-sensitive estimator
without a scaler in front of it (preprocessing mismatch), a regressor used as a
classifier (wrong task type), features that get no weight (unused features). This
module reads those facts from an MLflow pyfunc model (its flavors, signature and raw
model) or from a bare scikit-learn estimator, and never calls ``predict``.
"""

from __future__ import annotations

import importlib
import logging
import math
from numbers import Integral, Real
from typing import Any

import numpy as np

from mlflow_deepfix.inputs.model_adapter import ModelAdapter
from mlflow_deepfix.schemas import ModelInfo
from mlflow_deepfix.testing.stats import label_keys

logger = logging.getLogger(__name__)

#: estimators whose fitted result depends on the scale of the features: distances
#: (SVMs with RBF/poly kernels, nearest neighbours, Gaussian processes), penalties or
#: gradient steps (regularised linear models, SGD, neural networks). Matched on the
#: public module of the final estimator's class...
SCALE_SENSITIVE_MODULES: tuple[str, ...] = (
    "sklearn.linear_model",
    "sklearn.svm",
    "sklearn.neighbors",
    "sklearn.neural_network",
    "sklearn.kernel_ridge",
    "sklearn.gaussian_process",
    "sklearn.semi_supervised",
)
#: ... except these, which are scale-invariant (plain least squares and the like).
SCALE_INVARIANT_CLASSES: frozenset[str] = frozenset(
    {
        "LinearRegression",
        "TheilSenRegressor",
        "RANSACRegressor",
        "Lars",
        "LassoLars",
        "OrthogonalMatchingPursuit",
    }
)
#: Outside those modules (other libraries), class names that are scale-sensitive.
#: Trees, tree ensembles, naive Bayes and discriminant analysis are not.
SCALE_SENSITIVE_NAMES: frozenset[str] = frozenset(
    {"NearestCentroid", "KMeans", "Perceptron", "MLPClassifier", "MLPRegressor"}
)

_MAX_REPR = 100
_MAX_LIST = 20


def _public_path(cls: type) -> str:
    """``sklearn.linear_model.LogisticRegression`` rather than ``..._logistic...``."""
    parts = cls.__module__.split(".")
    public = []
    for part in parts:
        if part.startswith("_"):
            break
        public.append(part)
    candidate = ".".join(public)
    if candidate and candidate != cls.__module__:
        try:
            if getattr(importlib.import_module(candidate), cls.__name__, None) is cls:
                return f"{candidate}.{cls.__name__}"
        except ImportError:
            pass
    return f"{cls.__module__}.{cls.__name__}"


def _json_safe(value: Any) -> Any:
    """A hyperparameter as something JSON can hold, deterministic across runs."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, Real):
        number = float(value)
        return number if math.isfinite(number) else None
    if hasattr(value, "get_params") or hasattr(value, "fit"):
        return type(value).__name__
    if isinstance(value, (list, tuple)) and len(value) <= _MAX_LIST:
        items = [_json_safe(v) for v in value]
        if all(v is None or isinstance(v, (bool, int, float, str)) for v in items):
            return items
    if isinstance(value, type):
        return value.__name__
    if callable(value) and hasattr(value, "__name__"):
        return value.__name__
    text = repr(value)
    if " at 0x" in text:  # object addresses change between runs
        text = type(value).__name__
    return text[:_MAX_REPR]


def _raw_and_flavor(model: Any, adapter: ModelAdapter | None) -> tuple[Any, str | None]:
    """The raw model behind a pyfunc (or the object itself) and its MLflow flavor."""
    metadata = getattr(model, "metadata", None)
    flavors = getattr(metadata, "flavors", None)
    if isinstance(flavors, dict) and hasattr(model, "predict"):
        flavor = next((f for f in flavors if f != "python_function"), None)
        flavor = flavor or ("python_function" if "python_function" in flavors else None)
        raw = adapter.raw_model if adapter is not None else None
        if raw is None:
            try:
                raw = model.get_raw_model()
            except Exception:  # noqa: BLE001 - flavors without a raw model raise variously
                raw = None
        return raw, flavor
    return model, type(model).__module__.split(".")[0] or None


def _unwrap(estimator: Any) -> Any:
    """Search and meta-estimators: the fitted estimator doing the predicting."""
    for attribute in ("best_estimator_", "regressor_"):
        inner = getattr(estimator, attribute, None)
        if inner is not None:
            return inner
    return estimator


def _steps(estimator: Any) -> list[tuple[str, Any]] | None:
    steps = getattr(estimator, "steps", None)
    if (
        isinstance(steps, list)
        and steps
        and all(isinstance(s, tuple) and len(s) == 2 for s in steps)
    ):
        return steps
    return None


def _step_name(step: Any) -> str:
    if step is None or step == "passthrough":
        return "passthrough"
    return type(step).__name__


#: transformers that put numeric features on a common scale (a ``ColumnTransformer`` or a
#: nested ``Pipeline`` is searched for them)
SCALING_CLASSES = frozenset({
    "StandardScaler", "MinMaxScaler", "MaxAbsScaler", "RobustScaler", "Normalizer",
    "QuantileTransformer", "PowerTransformer", "KBinsDiscretizer", "SplineTransformer",
})


def _has_scaling(step: Any, depth: int = 0) -> bool:
    """Whether ``step`` (a transformer, a Pipeline, a ColumnTransformer or FeatureUnion)
    scales features somewhere: a pipeline whose only step is a column encoder without
    a scaler feeds a scale-sensitive model raw units."""
    if step is None or isinstance(step, str) or depth > 6:
        return False
    name = type(step).__name__
    if name in SCALING_CLASSES or name.endswith("Scaler"):
        return True
    nested = _steps(step) or []
    members = list(getattr(step, "transformers_", None) or getattr(step, "transformers", None)
                   or getattr(step, "transformer_list", None) or [])
    parts = [s for _, s in nested] + [m[1] for m in members if isinstance(m, tuple) and len(m) >= 2]
    return any(_has_scaling(part, depth + 1) for part in parts)


def _is_scale_sensitive(estimator: Any) -> bool:
    cls = type(estimator)
    if cls.__name__ in SCALE_INVARIANT_CLASSES:
        return False
    if cls.__name__ == "SVC" or cls.__name__ in SCALE_SENSITIVE_NAMES:
        return True
    module = _public_path(cls).rsplit(".", 1)[0]
    return any(module == m or module.startswith(m + ".") for m in SCALE_SENSITIVE_MODULES)


def _n_parameters(estimator: Any) -> int | None:
    """Learned numbers: coefficients, tree nodes, network weights; None when unknown."""
    try:
        if hasattr(estimator, "coefs_") and hasattr(estimator, "intercepts_"):  # MLP
            return int(
                sum(np.size(w) for w in estimator.coefs_)
                + sum(np.size(b) for b in estimator.intercepts_)
            )
        if hasattr(estimator, "tree_"):
            return int(estimator.tree_.node_count)
        if hasattr(estimator, "_predictors"):  # HistGradientBoosting*
            return int(sum(len(p.nodes) for stage in estimator._predictors for p in stage))
        if hasattr(estimator, "estimators_"):
            members = np.ravel(np.asarray(estimator.estimators_, dtype=object))
            counts = [_n_parameters(m) for m in members]
            if counts and all(c is not None for c in counts):
                return int(sum(counts))
            return None
        if hasattr(estimator, "support_vectors_") and hasattr(estimator, "dual_coef_"):
            return int(np.size(estimator.dual_coef_) + np.size(getattr(estimator, "intercept_", 0)))
        if hasattr(estimator, "coef_"):
            return int(np.size(estimator.coef_) + np.size(getattr(estimator, "intercept_", 0)))
    except Exception as exc:  # noqa: BLE001 - unusual estimators: report unknown
        logger.debug("could not count the parameters of %s: %s", type(estimator).__name__, exc)
    return None


def _raw_importances(estimator: Any) -> np.ndarray | None:
    values = getattr(estimator, "feature_importances_", None)
    if values is None:
        coef = getattr(estimator, "coef_", None)
        if coef is None:
            return None
        coef = np.abs(np.asarray(coef, dtype=float))
        values = coef.mean(axis=0) if coef.ndim == 2 else coef
    try:
        values = np.asarray(values, dtype=float).ravel()
    except (TypeError, ValueError):
        return None
    return values


def _map_outputs(
    preprocessing: Any, feature_names: list[str], n_out: int
) -> list[str | None] | None:
    """Input feature behind each output column of the preprocessing steps, from
    ``get_feature_names_out`` (``num__age`` -> ``age``, ``cat__color_red`` -> ``color``)."""
    try:
        names = [str(n) for n in preprocessing.get_feature_names_out()]
    except Exception:  # noqa: BLE001 - transformers without feature names
        return None
    if len(names) != n_out:
        return None
    by_length = sorted(feature_names, key=len, reverse=True)
    mapped = []
    for name in names:
        bare = name.split("__", 1)[1] if "__" in name else name
        match = (
            bare
            if bare in feature_names
            else next((f for f in by_length if bare.startswith(f + "_")), None)
        )
        if match is None:
            return None
        mapped.append(match)
    return mapped


def _importances(final: Any, pipeline: Any | None, feature_names: list[str]) -> dict[str, float]:
    values = _raw_importances(final)
    if values is None or values.size == 0 or not np.all(np.isfinite(values)):
        return {}
    total = float(values.sum())
    if total <= 0:
        return {}
    values = values / total
    owners: list[str | None] | None = None
    if pipeline is not None and len(pipeline.steps) > 1:
        try:
            preprocessing = pipeline[:-1]
        except Exception:  # noqa: BLE001 - pipeline-like objects that cannot be sliced
            preprocessing = None
        if preprocessing is not None:
            owners = _map_outputs(preprocessing, feature_names, values.size)
    if owners is None:
        if values.size != len(feature_names):
            return {}
        owners = list(feature_names)
    out = {name: 0.0 for name in feature_names}
    for owner, value in zip(owners, values):
        out[owner] += float(value)
    return out


def _signature(model: Any) -> tuple[list[str], dict[str, str]]:
    signature = getattr(getattr(model, "metadata", None), "signature", None)
    inputs = getattr(signature, "inputs", None)
    if inputs is None:
        return [], {}
    names: list[str] = []
    types: dict[str, str] = {}
    for spec in getattr(inputs, "inputs", []) or []:
        name = getattr(spec, "name", None)
        if not isinstance(name, str):
            continue
        names.append(name)
        kind = getattr(spec, "type", None)
        types[name] = str(getattr(kind, "name", kind))
    return names, types


def describe_model(model: Any, adapter: ModelAdapter | None, feature_names: list[str]) -> ModelInfo:
    """Everything :class:`ModelInfo` holds about ``model``.

    ``model`` is an MLflow ``PyFuncModel`` (the raw model comes from ``adapter`` or
    ``get_raw_model()``) or a bare estimator. ``output_kind`` is ``continuous`` when the
    raw model is a regressor, even when the task is classification: that mismatch is
    the wrong-task-type signal. Feature importances of a pipeline are mapped back to
    ``feature_names`` through the preprocessing's output names (one-hot columns summed
    into their feature), else positionally when the counts agree, else left empty.
    """
    raw, flavor = _raw_and_flavor(model, adapter)
    info: dict[str, Any] = {"flavor": flavor}
    info["signature_inputs"], info["signature_types"] = _signature(model)
    feature_names = list(feature_names)

    if raw is None:
        if adapter is not None and adapter.has_proba:
            info["has_predict_proba"] = True
            info["output_kind"] = "probabilities"
            info["classes"] = _class_keys(adapter.classes_)
        return ModelInfo(**info)

    outer = _unwrap(raw)
    steps = _steps(outer)
    final = _unwrap(steps[-1][1]) if steps else outer
    info["model_class"] = _public_path(type(final))
    if hasattr(final, "get_params"):
        try:
            params = final.get_params(deep=False)
            info["hyperparameters"] = {str(k): _json_safe(v) for k, v in sorted(params.items())}
        except Exception as exc:  # noqa: BLE001 - third-party get_params
            logger.warning("could not read the hyperparameters of %s: %s", info["model_class"], exc)
    if steps:
        info["is_pipeline"] = True
        info["pipeline_steps"] = [f"{name}: {_step_name(step)}" for name, step in steps]
        info["has_preprocessing"] = any(_step_name(step) != "passthrough" for _, step in steps[:-1])
        info["has_scaling"] = any(_has_scaling(step) for _, step in steps[:-1])
    info["scale_sensitive"] = _is_scale_sensitive(final)
    info["n_parameters"] = _n_parameters(final)

    # what the checks can use: the adapter's finding, else a raw predict_proba + classes_
    has_proba = (adapter is not None and adapter.has_proba) or (
        _has(raw, "predict_proba") and _has(raw, "classes_")
    )
    info["has_predict_proba"] = bool(has_proba)
    classes = getattr(raw, "classes_", None)
    if classes is None and adapter is not None:
        classes = adapter.classes_
    if classes is not None:
        info["classes"] = _class_keys(classes)

    if _kind_is(raw, final, "regressor") or (
        # a classification task served by an estimator that learned no classes: its
        # outputs are numbers, not labels (custom pyfunc models, with no fit, are
        # left "unknown")
        adapter is not None
        and adapter.is_classifier
        and classes is None
        and not has_proba
        and not _kind_is(raw, final, "classifier")
        and _has(final, "fit")
        and _has(final, "predict")
    ):
        info["output_kind"] = "continuous"
    elif has_proba:
        info["output_kind"] = "probabilities"
    elif _kind_is(raw, final, "classifier") or classes is not None:
        info["output_kind"] = "class_labels"

    info["feature_importances"] = _importances(final, outer if steps else None, feature_names)
    return ModelInfo(**info)


def _kind_is(raw: Any, final: Any, kind: str) -> bool:
    """sklearn's ``is_classifier``/``is_regressor`` on the model or its final step."""
    from sklearn.base import is_classifier, is_regressor

    test = is_classifier if kind == "classifier" else is_regressor
    for obj in (raw, final):
        try:
            if test(obj):
                return True
        except Exception:  # noqa: BLE001 - objects sklearn's tag machinery rejects
            if getattr(obj, "_estimator_type", None) == kind:
                return True
    return False


def _has(obj: Any, attribute: str) -> bool:
    try:
        return hasattr(obj, attribute)
    except Exception:  # noqa: BLE001 - available_if properties may raise anything
        return False


def _class_keys(classes: Any) -> list[str]:
    return [k if k is not None else "nan" for k in label_keys(np.asarray(classes).ravel())]
