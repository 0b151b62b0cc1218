"""One way to call any MLflow model: ``predict`` and, for classifiers, ``predict_proba``.

MLflow hands evaluators a pyfunc model, whose ``predict`` returns labels only. The
probability-based checks need ``predict_proba``, which we take from the raw model
(``get_raw_model()``) when it has one, or from a pyfunc whose output already holds
one probability column per class (CONTRACT.md section 1).
"""

from __future__ import annotations

import json
import logging
from typing import Any

import numpy as np
import pandas as pd

from mlflow_deepfix.native_threads import threads_for_rows

logger = logging.getLogger(__name__)


def _raw_model(model: Any) -> Any | None:
    getter = getattr(model, "get_raw_model", None)
    if getter is None:
        return None
    try:
        return getter()
    except Exception:  # noqa: BLE001 - pyfunc flavors without a raw model raise various errors
        return None


def _signature_columns(model: Any) -> list[str]:
    metadata = getattr(model, "metadata", None)
    signature = getattr(metadata, "signature", None)
    inputs = getattr(signature, "inputs", None)
    if inputs is None:
        return []
    try:
        names = inputs.input_names()
    except Exception:  # noqa: BLE001 - tensor-based signatures have no names
        return []
    return [n for n in names if isinstance(n, str)]


def resolve_feature_names(model: Any, candidates: list[str]) -> list[str]:
    """The columns the model sees: its signature, else the raw model's
    ``feature_names_in_``, else every candidate (non-target) column."""
    for names in (_signature_columns(model), _feature_names_in(_raw_model(model))):
        if names:
            return list(names)
    return list(candidates)


def _feature_names_in(raw: Any) -> list[str]:
    names = getattr(raw, "feature_names_in_", None)
    return [str(n) for n in names] if names is not None else []


#: scikit-learn classifiers whose ``predict`` is literally
#: ``classes_.take(argmax(predict_proba(X)))`` (checked against their source; subclasses
#: are not trusted, they may override ``predict``)
ARGMAX_PREDICTORS = frozenset({
    "sklearn.ensemble._forest.RandomForestClassifier",
    "sklearn.ensemble._forest.ExtraTreesClassifier",
    "sklearn.tree._classes.DecisionTreeClassifier",
    "sklearn.tree._classes.ExtraTreeClassifier",
    "sklearn.ensemble._hist_gradient_boosting.gradient_boosting.HistGradientBoostingClassifier",
})


def _final_estimator_name(model: Any) -> str:
    """``module.qualname`` of a model, or of the last step of a (nested) Pipeline."""
    for _ in range(8):
        steps = getattr(model, "steps", None)
        if not steps:
            break
        model = steps[-1][1]
    kind = type(model)
    return f"{kind.__module__}.{kind.__qualname__}"


#: objectives of a LightGBM / XGBoost native ``Booster`` whose ``predict`` (and so the
#: MLflow flavour's pyfunc) returns the probability of class 1, one value per row
POSITIVE_PROBABILITY_OBJECTIVES = frozenset({
    "binary", "cross_entropy", "xentropy",  # LightGBM
    "binary:logistic",  # XGBoost
})


def native_booster_library(raw: Any) -> str | None:
    """``"lightgbm"`` or ``"xgboost"`` for a native ``Booster`` of that library
    (``lgb.train``, ``xgb.train``), else None."""
    kind = type(raw)
    if kind.__name__ != "Booster":
        return None
    return next((lib for lib in ("lightgbm", "xgboost") if kind.__module__.startswith(lib)),
                None)


def booster_objective(raw: Any) -> str | None:
    """The training objective of a LightGBM or XGBoost native ``Booster`` (``lgb.train``,
    ``xgb.train``), or None for any other model. Such a booster has no ``predict_proba``
    and its ``predict`` returns what the objective defines: for a binary one, the
    probability of class 1, which the pyfunc passes on as the "prediction"."""
    library = native_booster_library(raw)
    try:
        if library == "lightgbm":
            objective = (getattr(raw, "params", None) or {}).get("objective")
            return str(objective) if objective else None
        if library == "xgboost":
            return str(json.loads(raw.save_config())["learner"]["objective"]["name"])
    except Exception:  # noqa: BLE001 - an unreadable booster is treated as any model
        return None
    return None


#: the reason MLflow's xgboost flavour gives when it hands a native booster a frame
#: with ``category`` columns: it builds the DMatrix without ``enable_categorical``
XGBOOST_CATEGORICAL_REFUSAL = "enable_categorical"


def category_refusal(error: BaseException, features: pd.DataFrame) -> str:
    """How the MLflow packaging refused the pandas ``category`` columns of ``features``
    that the model itself reads: ``"signature"``, ``"xgboost_dmatrix"``, or ``""`` when
    ``error`` is no such refusal (the values of ``RuntimeFailure.category_refusal``).

    Two ways, both MLflow's and not the model's: a signature has no categorical type,
    ``infer_signature`` records such a column as string, and enforcement then will not
    convert the category column back ("Can not safely convert category to <U0"); and
    the xgboost flavour builds a native booster's DMatrix without
    ``enable_categorical``. The model was trained on exactly these dtypes (LightGBM,
    XGBoost and HistGradientBoosting read them natively), so its raw ``predict`` takes
    the frame as it is. Read from MLflow's and XGBoost's own messages, here only: the
    testing step records the answer, and the rules read the record.
    """
    if not any(isinstance(dtype, pd.CategoricalDtype) for dtype in features.dtypes):
        return ""
    message = str(error)
    if message.startswith("Failed to enforce schema") and "convert category" in message:
        return "signature"
    if XGBOOST_CATEGORICAL_REFUSAL in message:
        return "xgboost_dmatrix"
    return ""


def _positive_class(output: Any, n_rows: int) -> np.ndarray:
    """P(class 1) per row from a binary booster's pyfunc output (one value per row, as
    a vector or a one-column frame)."""
    return np.asarray(output, dtype=float).reshape(n_rows, -1)[:, -1]


class ModelAdapter:
    """A thin, picklable-enough wrapper exposing ``predict``/``predict_proba``.

    ``classes_`` lists the labels in the column order of ``predict_proba``. When the
    model offers no probabilities ``has_proba`` is False and ``predict_proba`` raises
    :class:`AttributeError` (which is how Deepchecks detects the capability).
    """

    def __init__(
        self, model: Any, feature_names: list[str], is_classifier: bool, column_labels: Any = None
    ):
        self.model = model
        #: the user's own column labels (``inputs.labels.ColumnLabels``), restored before
        #: every call: the model sees the columns exactly as it was trained on them
        self.column_labels = column_labels
        self.raw_model = _raw_model(model)
        self.feature_names = list(feature_names)
        self.is_classifier = is_classifier
        self.classes_: np.ndarray | None = None
        self.proba_source: str | None = None
        self.no_proba_reason: str | None = None
        #: the MLflow packaging's refusal of pandas ``category`` columns, once seen:
        #: predictions then come from the raw model (see :meth:`_served_predict`)
        self.signature_refusal: BaseException | None = None
        if is_classifier:
            self._detect_proba()

    # ------------------------------------------------------------------ predictions
    def _features(self, X: pd.DataFrame) -> pd.DataFrame:
        missing = [c for c in self.feature_names if c not in X.columns]
        if not missing:
            X = X[self.feature_names]
        # else let the model raise its own error: crash diagnosis records it with the
        # expected and given columns
        return self.column_labels.restore(X) if self.column_labels else X

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        features = self._features(X)
        with threads_for_rows(len(X)):
            output = self._served_predict(features)
        if self.proba_source == "pyfunc_positive":
            positive = _positive_class(output, len(X))
            return np.asarray(self.classes_)[(positive >= 0.5).astype(int)]
        if isinstance(output, pd.DataFrame):
            if self.proba_source == "pyfunc" and output.shape[1] > 1:
                return np.asarray(self.classes_)[np.argmax(output.to_numpy(), axis=1)]
            output = output.iloc[:, 0]
        array = np.asarray(output)
        if self.proba_source == "pyfunc" and array.ndim == 2 and array.shape[1] > 1:
            # a tensor-based flavour (mlflow.pytorch with a tensor signature) returns a
            # plain array of probabilities: one column per class, as for DataFrames
            return np.asarray(self.classes_)[np.argmax(array.astype(float), axis=1)]
        if array.ndim == 2 and array.shape[1] == 1:
            array = array[:, 0]
        return array

    def _served_predict(self, features: pd.DataFrame) -> Any:
        """The pyfunc's ``predict``; where its signature refuses the model's own pandas
        ``category`` columns (:func:`category_refusal`), the raw model's, so that
        one packaging defect does not hide every other finding. The first refusal is
        kept in :attr:`signature_refusal` (reported as a ``schema_mismatch``); a raw
        model that cannot predict either re-raises it."""
        if self.signature_refusal is None:
            try:
                return self.model.predict(features)
            except Exception as error:  # only one kind is bypassed, the rest re-raised
                raw_predict = self._raw_predict_fn()
                if raw_predict is None or not category_refusal(error, features):
                    raise
                try:
                    output = raw_predict(features)
                except Exception:  # noqa: BLE001 - the refusal is the error to report
                    raise error from None
                self.signature_refusal = error
                logger.warning(
                    "the logged model refuses the data's pandas category columns (%s); "
                    "deepfix calls the raw model directly for the rest of the diagnosis",
                    str(error).rsplit("Error: ", 1)[-1][:200],
                )
                return output
        return self._raw_predict_fn()(features)

    def _raw_predict_fn(self) -> Any | None:
        """The raw model's method behind the pyfunc's ``predict`` (the flavour's
        ``predict_fn``, ``predict`` by default), or None. A native XGBoost booster
        predicts a DMatrix, built with its categorical columns enabled."""
        if self.raw_model is None:
            return None
        if native_booster_library(self.raw_model) == "xgboost":
            import xgboost

            booster = self.raw_model
            return lambda frame: booster.predict(
                xgboost.DMatrix(frame, enable_categorical=True)
            )
        flavors = getattr(getattr(self.model, "metadata", None), "flavors", None) or {}
        name = (flavors.get("python_function") or {}).get("predict_fn") or "predict"
        return getattr(self.raw_model, name, None)

    def _detect_positive_probability(self, values: np.ndarray, labels: np.ndarray) -> bool:
        """Accept a native LightGBM / XGBoost ``Booster`` with a binary objective
        (:data:`POSITIVE_PROBABILITY_OBJECTIVES`): its pyfunc returns P(class 1), one
        value in [0, 1] per row, for labels 0 and 1 (the only ones such a booster trains
        on). Labels are then read at 0.5 and probabilities are ``[1 - p, p]``. The
        objective, not the range of the output, decides: a regressor fitted on 0/1
        labels also answers within [0, 1], and that is the wrong-task bug."""
        if booster_objective(self.raw_model) not in POSITIVE_PROBABILITY_OBJECTIVES:
            return False
        if values.ndim == 2 and values.shape[1] == 1:
            values = values[:, 0]
        if values.ndim != 1:
            return False
        try:
            positive = values.astype(float)
            classes = np.unique(np.asarray(labels).astype(float))
        except (TypeError, ValueError):
            return False
        in_range = np.isfinite(positive).all() and positive.min() >= 0 and positive.max() <= 1
        if not in_range or classes.tolist() != [0.0, 1.0]:
            return False
        self.classes_ = np.unique(labels)
        self.proba_source = "pyfunc_positive"
        self.no_proba_reason = None
        return True

    @property
    def has_proba(self) -> bool:
        return self.proba_source is not None

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        if self.proba_source == "raw":
            with threads_for_rows(len(X)):
                return np.asarray(self.raw_model.predict_proba(self._features(X)), dtype=float)
        if self.proba_source == "pyfunc":
            with threads_for_rows(len(X)):
                return np.asarray(self.model.predict(self._features(X)), dtype=float)
        if self.proba_source == "pyfunc_positive":
            with threads_for_rows(len(X)):
                output = self._served_predict(self._features(X))
            positive = _positive_class(output, len(X))
            return np.column_stack([1.0 - positive, positive])
        raise AttributeError(self.no_proba_reason or "model has no predict_proba")

    @property
    def labels_follow_proba(self) -> bool:
        """True when the model's ``predict`` is, by its library's definition,
        ``classes_[argmax(predict_proba)]``: an MLflow scikit-learn model served with
        ``predict`` whose final estimator is one of :data:`ARGMAX_PREDICTORS` (exact
        type). Then one probability pass gives both outputs, halving prediction time."""
        if self.proba_source != "raw" or self.classes_ is None:
            return False
        flavors = getattr(getattr(self.model, "metadata", None), "flavors", None) or {}
        pyfunc = flavors.get("python_function") or {}
        if pyfunc.get("loader_module") != "mlflow.sklearn":
            return False
        if pyfunc.get("predict_fn", "predict") != "predict":
            return False
        return _final_estimator_name(self.raw_model) in ARGMAX_PREDICTORS

    def _detect_proba(self) -> None:
        raw = self.raw_model
        if raw is not None and hasattr(raw, "predict_proba") and hasattr(raw, "classes_"):
            self.proba_source = "raw"
            self.classes_ = np.asarray(raw.classes_)
            return
        self.no_proba_reason = (
            "the raw model has no predict_proba"
            if raw is not None
            else "the pyfunc model exposes no raw model with predict_proba"
        )

    def detect_pyfunc_proba(self, sample: pd.DataFrame, labels: np.ndarray) -> None:
        """Accept a pyfunc whose output has one column per class, each a probability."""
        if self.has_proba or not self.is_classifier or len(sample) == 0:
            return
        try:
            output = self._served_predict(self._features(sample.head(64)))
        except Exception:  # noqa: BLE001 - prediction errors are diagnosed elsewhere
            return
        if not isinstance(output, (pd.DataFrame, np.ndarray)):
            return
        values = np.asarray(output, dtype=object)
        if self._detect_positive_probability(values, labels):
            return
        if values.ndim != 2 or values.shape[1] < 2:
            return
        classes = np.unique(labels)
        try:
            numeric = values.astype(float)
        except (TypeError, ValueError):
            return
        rows_sum_to_one = np.allclose(numeric.sum(axis=1), 1.0, atol=1e-3)
        if rows_sum_to_one and numeric.min() >= 0 and values.shape[1] == len(classes):
            columns = getattr(output, "columns", None)
            if columns is not None and set(map(str, columns)) == set(map(str, classes)):
                order = {str(c): c for c in classes}
                self.classes_ = np.asarray([order[str(c)] for c in columns])
            else:
                self.classes_ = classes
            self.proba_source = "pyfunc"
            self.no_proba_reason = None
