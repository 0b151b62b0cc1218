"""Run Deepchecks' default tabular suites fast, one outcome per check.

Why not ``suite.run()``: it calls the model again in several checks, computes
permutation importance on the full test set, renders plotly figures, runs expensive
checks on every row, and stops being useful when one check raises. Instead we

* take the checks (with their default conditions) from Deepchecks' own
  ``data_integrity()``, ``train_test_validation()`` and ``model_evaluation()``, so the
  list follows Deepchecks;
* call the model once per split and hand Deepchecks the predictions and probabilities
  (``Context(y_pred_*, y_proba_*)``), plus model-native feature importances or a small
  seeded permutation importance;
* bound the expensive checks by ``sample_size`` (see ``_catalog.CheckSpec.rows``) and
  seed every one of them;
* run the checks on a small thread pool, each inside its own ``try``, and condense each
  result into a :class:`~mlflow_deepfix.schemas.CheckOutcome` (no rows, no HTML).
"""

from __future__ import annotations

import logging
import os
import time
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from deepchecks.core.checks import DatasetKind
from deepchecks.core.errors import (
    DatasetValidationError,
    DeepchecksNotSupportedError,
    DeepchecksProcessError,
    ModelValidationError,
    NotEnoughSamplesError,
)
from deepchecks.tabular import Context, Dataset
from deepchecks.tabular.base_checks import ModelOnlyCheck, SingleDatasetCheck
from deepchecks.tabular.suites import data_integrity, model_evaluation, train_test_validation

from mlflow_deepfix.checks._args import validate_run_args
from mlflow_deepfix.checks._catalog import (
    CHECK_CATALOG,
    DATA_INTEGRITY,
    CheckSpec,
)
from mlflow_deepfix.checks._condense import condense, log_run, strip_numpy_reprs
from mlflow_deepfix.checks._pps_memo import shared_pps
from mlflow_deepfix.checks._wide import MAX_CHECK_FEATURES, select_check_features
from mlflow_deepfix.errors import DeepfixInputError
from mlflow_deepfix.native_threads import one_native_thread
from mlflow_deepfix.schemas import CheckOutcome

if TYPE_CHECKING:
    from mlflow_deepfix.inputs.model_adapter import ModelAdapter

logger = logging.getLogger(__name__)

#: rows per split that expensive checks see when ``sample_size`` is None
DEFAULT_SAMPLE_SIZE = 10_000
#: rows of the fallback permutation importance (one shuffle per feature)
PERMUTATION_ROWS = 1_000
#: Multivariate Drift explains (feature importance) drift scores from this value, the
#: threshold of its condition in Deepchecks' default suite
MULTIVARIATE_EXPLAIN_ABOVE = 0.25
#: rows timed by Model Inference Time
INFERENCE_ROWS = 1_000
#: cells of the one batched predict of the permutation importance (rows x columns x
#: shuffled columns): wide frames get fewer rows rather than gigabytes
PERMUTATION_CELLS = 20_000_000

TASKS = ("binary_classification", "multiclass_classification", "regression")
_LABEL_TYPE = {"binary_classification": "binary",
               "multiclass_classification": "multiclass",
               "regression": "regression"}
_SUITE_FACTORIES = {"data_integrity": data_integrity,
                    "train_test_validation": train_test_validation,
                    "model_evaluation": model_evaluation}
_NOT_RELEVANT = ("irrelevant", "does not contain", "is relevant for", "relevant only",
                 "not supplied", "requires data to have")


@dataclass
class CheckInputs:
    """What the checks need: both splits as frames, the task, and the model.

    ``train``/``test`` hold the features, the label and, when given, ``index_col`` /
    ``datetime_col``. ``predictions`` / ``probabilities`` (``{"train": ..., "test": ...}``)
    may carry outputs already computed by the caller, so the model is not called again.
    """

    train: pd.DataFrame | None
    test: pd.DataFrame
    label: str
    task: str
    feature_names: list[str]
    cat_features: list[str]
    model: ModelAdapter | None
    index_col: str | None = None
    datetime_col: str | None = None
    feature_importance: dict[str, float] | None = None
    model_skip_reason: str | None = None
    predictions: dict[str, np.ndarray] | None = None
    probabilities: dict[str, np.ndarray] | None = None


# --------------------------------------------------------------------------- validation


def _validate(inputs: CheckInputs, suites: Sequence[str], sample_size: int | None,
              seed: int) -> list[str]:
    suites = validate_run_args(suites, sample_size, seed)
    if inputs.task not in TASKS:
        raise DeepfixInputError(f"task must be one of {', '.join(TASKS)}; got {inputs.task!r}")
    for split, frame in (("train", inputs.train), ("test", inputs.test)):
        if frame is None:
            continue
        if not isinstance(frame, pd.DataFrame) or frame.empty:
            raise DeepfixInputError(f"{split} must be a non-empty pandas DataFrame; got "
                                    f"{type(frame).__name__} of length {len(frame)}")
        needed = [inputs.label, *inputs.feature_names,
                  *(c for c in (inputs.index_col, inputs.datetime_col) if c)]
        missing = [c for c in needed if c not in frame.columns]
        if missing:
            raise DeepfixInputError(f"{split} lacks the columns {missing}; it has "
                                    f"{list(frame.columns)[:20]}")
    if not inputs.feature_names:
        raise DeepfixInputError("feature_names must name at least one column; got []")
    return suites


# ------------------------------------------------------------------------ preparation


def _frames(inputs: CheckInputs) -> tuple[pd.DataFrame | None, pd.DataFrame]:
    """Only the columns Deepchecks needs, with disjoint indexes (Deepchecks matches
    precomputed predictions to rows by index)."""
    columns = list(dict.fromkeys([*inputs.feature_names, inputs.label,
                                  *(c for c in (inputs.index_col, inputs.datetime_col) if c)]))
    train = None
    offset = 0
    if inputs.train is not None:
        train = inputs.train[columns].copy()
        train.index = pd.RangeIndex(len(train))
        offset = len(train)
    test = inputs.test[columns].copy()
    test.index = pd.RangeIndex(offset, offset + len(test))
    return train, test


def _dataset(frame: pd.DataFrame, inputs: CheckInputs) -> Dataset:
    features = list(inputs.feature_names)
    return Dataset(
        frame, label=inputs.label, features=features,
        cat_features=[c for c in inputs.cat_features if c in features],
        index_name=inputs.index_col, datetime_name=inputs.datetime_col,
        label_type=_LABEL_TYPE[inputs.task],
    )


@dataclass
class _Predictions:
    y_pred: dict[str, np.ndarray] = field(default_factory=dict)
    y_proba: dict[str, np.ndarray] = field(default_factory=dict)
    classes: list[Any] | None = None
    failure: str | None = None


def _sorted_classes(classes: Sequence[Any]) -> tuple[list[Any], np.ndarray]:
    try:
        order = np.argsort(np.asarray(classes), kind="stable")
    except TypeError:
        order = np.argsort([str(c) for c in classes], kind="stable")
    return [classes[i] for i in order], order


def _predict(inputs: CheckInputs, frames: dict[str, pd.DataFrame]) -> _Predictions:
    """The model's outputs, one call per split (and one more for probabilities)."""
    out = _Predictions()
    model = inputs.model
    classification = inputs.task != "regression"
    given_pred = inputs.predictions or {}
    given_proba = inputs.probabilities or {}
    try:
        for split, frame in frames.items():
            features = frame[inputs.feature_names]
            pred = given_pred.get(split)
            pred = np.asarray(pred if pred is not None else model.predict(features))
            out.y_pred[split] = _one_per_row(pred, len(frame), "predictions")
            if classification and (given_proba.get(split) is not None
                                   or getattr(model, "has_proba", False)):
                proba = given_proba.get(split)
                proba = proba if proba is not None else model.predict_proba(features)
                proba = np.asarray(proba, dtype=float)
                if proba.ndim != 2 or len(proba) != len(frame):
                    raise ValueError(f"probabilities of shape {proba.shape} for "
                                     f"{len(frame)} rows (expected rows x classes)")
                out.y_proba[split] = proba
        if classification:
            if out.y_proba and model is not None and model.classes_ is not None:
                classes, order = _sorted_classes(list(model.classes_))
                out.y_proba = {s: p[:, order] for s, p in out.y_proba.items()}
                out.classes = classes
            else:
                labels = pd.concat([f[inputs.label] for f in frames.values()]
                                   + [pd.Series(p) for p in out.y_pred.values()]).dropna()
                out.classes = _sorted_classes(list(pd.unique(labels)))[0]
    except Exception as exc:  # noqa: BLE001 - any model error disables model checks
        out = _Predictions(failure=f"the model's predict failed: {type(exc).__name__}: {exc}")
        logger.warning("deepfix checks: %s", out.failure)
    return out


def _one_per_row(values: np.ndarray, n_rows: int, what: str) -> np.ndarray:
    """``values`` as one value per row, or a ValueError naming the shape received."""
    if values.ndim == 2 and values.shape[1] == 1:
        values = values[:, 0]
    if values.ndim != 1 or len(values) != n_rows:
        raise ValueError(f"{what} of shape {values.shape} for {n_rows} rows "
                         "(expected one value per row)")
    return values


def _feature_importance(inputs: CheckInputs, test: pd.DataFrame, preds: _Predictions,
                        seed: int, shuffled: Sequence[str] | None = None) -> pd.Series | None:
    """Model-native importances when given; else a small seeded permutation importance
    (PERMUTATION_ROWS test rows, one shuffle per feature, one batched predict), never
    Deepchecks' (10,000 rows x 5 repeats x one predict per feature).

    ``shuffled`` (default: every feature) are the features the checks see; the model
    still receives all of ``inputs.feature_names``.
    """
    features = list(shuffled) if shuffled is not None else list(inputs.feature_names)
    if inputs.feature_importance:
        given = pd.Series({f: max(float(inputs.feature_importance.get(f, 0.0)), 0.0)
                           for f in features})
        if given.sum() > 0 and set(inputs.feature_importance) & set(features):
            return given / given.sum()
        logger.info("deepfix checks: feature_importance does not cover feature_names; "
                    "using permutation importance")
    if inputs.model is None or preds.failure:
        return None
    rng = np.random.default_rng(seed)
    width = len(inputs.feature_names) * (len(features) + 1)
    n_rows = max(min(PERMUTATION_ROWS, PERMUTATION_CELLS // max(width, 1)), 10)
    rows = test.iloc[np.sort(rng.permutation(len(test))[:n_rows])]
    rows = rows[rows[inputs.label].notna()]
    X, y = rows[list(inputs.feature_names)].reset_index(drop=True), rows[inputs.label].to_numpy()
    if len(X) < 10:
        return None
    # One batched predict: block 0 is X, block i+1 is X with feature i shuffled.
    blocks = [X]
    for column in features:
        shuffled = X.copy()
        shuffled[column] = X[column].to_numpy()[rng.permutation(len(X))]
        blocks.append(shuffled)
    try:
        pred = np.asarray(inputs.model.predict(pd.concat(blocks, ignore_index=True)))
    except Exception as exc:  # noqa: BLE001 - importance is optional
        logger.info("deepfix checks: permutation importance failed (%s: %s)",
                    type(exc).__name__, exc)
        return None
    pred = pred.reshape(len(blocks), len(X))
    if inputs.task == "regression":
        errors = pred.astype(float) - y.astype(float)
        scores = -np.sqrt(np.mean(errors ** 2, axis=1))
    else:
        scores = np.mean(pred == y, axis=1)
    drops = dict(zip(features, np.maximum(scores[0] - scores[1:], 0.0)))
    importance = pd.Series(drops)
    return importance / importance.sum() if importance.sum() > 0 else None


# ------------------------------------------------------------------------ the contexts


class _ImportanceTimeout:
    """A view of a Context with another ``feature_importance_timeout``: 0 skips the
    permutation importance Multivariate Drift computes for its domain classifier, None
    computes it whatever the machine's speed (a timeout would make runs differ)."""

    def __init__(self, context: Context, timeout: int | None):
        self._context = context
        self.feature_importance_timeout = timeout

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)


class _DropExpectedWarnings(logging.Filter):
    """Deepchecks warns when feature importance is skipped, which we ask for on purpose
    (Multivariate Drift without drift to explain, contexts without importance)."""

    _EXPECTED = ("Features importance was not calculated", "Could not find model's classes")

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(self._EXPECTED)


logging.getLogger("deepchecks").addFilter(_DropExpectedWarnings())


@dataclass
class _Unit:
    """One check run on one split (or on the pair)."""

    spec: CheckSpec
    split: str | None
    run: Callable[[], Any]
    #: applied to the raw result before conditions are evaluated
    adjust: Callable[[Any], None] | None = None


class _Plan:
    """Datasets, predictions and contexts shared by every check of one run."""

    def __init__(self, inputs: CheckInputs, sample_size: int, seed: int,
                 max_features: int = MAX_CHECK_FEATURES):
        self.sample_size, self.seed = sample_size, seed
        # the model always receives every feature; wide frames' checks see the top ones
        self.model_inputs = inputs
        kept = select_check_features(inputs.test, inputs.feature_names,
                                     importance=inputs.feature_importance, limit=max_features)
        self.capped = len(kept) < len(inputs.feature_names)
        if self.capped:
            inputs = replace(inputs, feature_names=kept,
                             cat_features=[c for c in inputs.cat_features if c in set(kept)])
        self.inputs = inputs
        full_train, full_test = _frames(self.model_inputs)
        self._full = {"train": full_train, "test": full_test}
        self._model_datasets: dict[str, Dataset] = {}
        train, test = _frames(inputs) if self.capped else (full_train, full_test)
        self.train = _dataset(train, inputs) if train is not None else None
        self.test = _dataset(test, inputs)
        frames = ({"test": full_test} if full_train is None
                  else {"train": full_train, "test": full_test})
        self.model_skip: str | None = None
        self.preds = _Predictions()
        if inputs.model is None and not inputs.predictions:
            self.model_skip = inputs.model_skip_reason or "no model was given"
        else:
            self.preds = _predict(self.model_inputs, frames)
            self.model_skip = self.preds.failure
        self.importance = None
        if not self.model_skip:
            try:
                self.importance = _feature_importance(
                    self.model_inputs, full_test, self.preds, seed, shuffled=kept)
            except Exception as exc:  # noqa: BLE001 - importance is optional
                logger.info("deepfix checks: feature importance failed (%s: %s)",
                            type(exc).__name__, exc)
        if self.importance is not None and self.capped:
            part = self.importance.reindex(kept).fillna(0.0)
            self.importance = part / part.sum() if part.sum() > 0 else None
        try:
            self.context = self._main_context()
        except Exception as exc:
            if self.model_skip:
                raise
            self.model_skip = (f"Deepchecks could not use the model's outputs "
                               f"({type(exc).__name__}: {exc})")
            logger.warning("deepfix checks: %s", self.model_skip)
            self.preds, self.importance = _Predictions(), None
            self.context = self._main_context()

    def model_dataset(self, split: str) -> Dataset:
        """The split with every feature, for checks that call the model itself."""
        if not self.capped:
            return self.dataset(split)
        if split not in self._model_datasets:
            self._model_datasets[split] = _dataset(self._full[split], self.model_inputs)
        return self._model_datasets[split]

    # The main context: precomputed outputs, no real model (so Deepchecks cannot call it).
    def _main_context(self) -> Context:
        p = self.preds if not self.model_skip else _Predictions()
        first = self.train if self.train is not None else self.test
        second = self.test if self.train is not None else None
        first_split = "train" if self.train is not None else "test"
        context = Context(
            first, second, None, feature_importance=self.importance, with_display=False,
            y_pred_train=p.y_pred.get(first_split),
            y_pred_test=p.y_pred.get("test") if second is not None else None,
            y_proba_train=p.y_proba.get(first_split),
            y_proba_test=p.y_proba.get("test") if second is not None else None,
            model_classes=p.classes,
        )
        # Resolve lazy properties now, before threads share the context.
        _ = context.feature_importance, context.task_type
        if context.task_type.value != "regression":
            _ = context.observed_classes, context.model_classes
        return context

    def kind(self, split: str) -> DatasetKind:
        """The Context slot of a split: a test-only run puts test in the train slot."""
        if split == "test" and self.train is not None:
            return DatasetKind.TEST
        return DatasetKind.TRAIN

    def dataset(self, split: str) -> Dataset:
        return self.train if split == "train" else self.test

    def small_context(self, train: Dataset, test: Dataset | None, model: Any = None,
                      *, full: bool = False) -> Context:
        """A context of its own; ``full``: on :meth:`model_dataset` (every feature)."""
        importance = None if full and self.capped else self.importance
        return Context(train, test, model, feature_importance=importance,
                       feature_importance_timeout=0, with_display=False,
                       model_classes=self.preds.classes)


# --------------------------------------------------------------------- per-check tuning


def _configure(check: Any, spec: CheckSpec, plan: _Plan) -> None:
    """Seed every check; bound the expensive ones (CheckSpec.rows says how)."""
    s = plan.sample_size
    if hasattr(check, "random_state"):
        check.random_state = plan.seed
    bounded = {
        "Outlier Sample Detection": max(s // 4, 100),
        "Weak Segments Performance": max(s // 2, 100),
        "Feature Label Correlation": max(s // 2, 100), "Feature Feature Correlation": s,
        "Identifier Label Correlation": max(s // 2, 100),
        "Feature Label Correlation Change": max(s // 2, 100),
        "Multivariate Drift": s, "Simple Model Comparison": s, "Unused Features": s,
        "Boosting Overfit": s, "Train Test Samples Mix": s,
        "Model Inference Time": INFERENCE_ROWS,
    }
    if spec.name in bounded and hasattr(check, "n_samples"):
        check.n_samples = bounded[spec.name]
    if spec.name == "Outlier Sample Detection":
        check.timeout = 600  # bounded by n_samples; a timeout would make runs differ
    if spec.name == "Weak Segments Performance":
        check.n_top_features = 5


def _row_hashes(frame: pd.DataFrame) -> pd.Series:
    return pd.util.hash_pandas_object(frame, index=False)


def _conflicting_labels_unit(check: Any, spec: CheckSpec, plan: _Plan, split: str) -> _Unit:
    """Only rows whose features repeat can conflict: Deepchecks sees those (plus a few
    filler rows, so the frame is never empty) and the share is rescaled to all rows."""
    dataset = plan.dataset(split)
    data = dataset.data
    repeated = _row_hashes(data[dataset.features]).duplicated(keep=False).to_numpy(copy=True)
    repeated[: min(100, len(data))] = True
    subset = dataset.copy(data[repeated])
    scale = len(subset.data) / len(data)

    def adjust(result: Any) -> None:
        result.value["percent_of_conflicting_samples"] *= scale

    return _Unit(spec, split, lambda: check.run_logic(plan.small_context(subset, None),
                                                      DatasetKind.TRAIN), adjust)


def _samples_mix_unit(check: Any, spec: CheckSpec, plan: _Plan) -> _Unit:
    """A seeded sample of test; of train, only rows whose hash matches a test row (plus
    a few filler rows): the others cannot change the share Deepchecks computes."""
    test = plan.test.sample(plan.sample_size, random_state=plan.seed)
    columns = [*test.features, test.label_name]
    test_hashes = set(_row_hashes(test.data[columns]))
    train_data = plan.train.data
    keep = _row_hashes(train_data[columns]).isin(test_hashes).to_numpy(copy=True)
    keep[: min(100, len(train_data))] = True
    train = plan.train.copy(train_data[keep])
    check.n_samples = None
    return _Unit(spec, None, lambda: check.run_logic(plan.small_context(train, test)))


def _multivariate_unit(check: Any, spec: CheckSpec, plan: _Plan) -> _Unit:
    """The domain classifier's permutation importance (most of this check's time) is
    computed only when the drift fails the default condition, on half the sample."""

    def run() -> Any:
        result = check.run_logic(_ImportanceTimeout(plan.context, 0))
        drift = result.value.get("domain_classifier_drift_score") or 0
        if drift >= MULTIVARIATE_EXPLAIN_ABOVE:
            check.n_samples = max(plan.sample_size // 2, 100)
            explained = check.run_logic(_ImportanceTimeout(plan.context, None))
            result.value["domain_classifier_feature_importance"] = (
                explained.value["domain_classifier_feature_importance"])
        return result

    return _Unit(spec, None, run)


class _PredictOnly:
    """The user's model as Model Inference Time sees it: its ``predict`` (the call a
    deployment makes), nothing Deepchecks could mistake for class metadata."""

    def __init__(self, model: Any):
        self.predict = model.predict


def _boosting_model(plan: _Plan) -> tuple[Any | None, str | None]:
    from deepchecks.tabular.checks.model_evaluation.boosting_overfit import PartialBoostingModel
    from deepchecks.utils.model import get_model_of_pipeline

    raw = getattr(plan.inputs.model, "raw_model", None)
    estimator = get_model_of_pipeline(raw) if raw is not None else None
    name = type(estimator).__name__ if estimator is not None else type(plan.inputs.model).__name__
    if name in PartialBoostingModel._SUPPORTED_MODELS:
        return raw, None
    return None, (f"Check is relevant for Boosting models of type "
                  f"{', '.join(PartialBoostingModel._SUPPORTED_MODELS)}, but received model "
                  f"of type {name}")


def _model_unit(check: Any, spec: CheckSpec, plan: _Plan) -> _Unit | str:
    """Checks that need the model object itself, on small samples."""
    if plan.inputs.model is None:
        return "it needs the model object; only predictions were given"
    n = plan.sample_size if spec.name == "Boosting Overfit" else INFERENCE_ROWS
    test = plan.model_dataset("test").sample(n, random_state=plan.seed)
    if spec.name == "Model Inference Time":
        return _Unit(spec, "test", lambda: check.run_logic(
            plan.small_context(test, None, _PredictOnly(plan.inputs.model), full=True),
            DatasetKind.TRAIN))
    raw, reason = _boosting_model(plan)
    if raw is None:
        return reason or "not a boosting model"
    train = plan.model_dataset("train").sample(n, random_state=plan.seed)
    return _Unit(spec, None, lambda: check.run_logic(
        plan.small_context(train, test, raw, full=True)))


# ------------------------------------------------------------------------ running


def _skip_reason(spec: CheckSpec, plan: _Plan) -> str | None:
    if spec.scope == "pair" and plan.train is None:
        return "no training data"
    if spec.needs_model and plan.model_skip:
        return plan.model_skip
    if (spec.needs_proba and plan.inputs.task != "regression"
            and not plan.preds.y_proba):
        why = getattr(plan.inputs.model, "no_proba_reason", None) or "no probabilities given"
        return f"the model gives no class probabilities ({why})"
    return None


def _units(check: Any, spec: CheckSpec, plan: _Plan) -> list[_Unit] | str:
    _configure(check, spec, plan)
    if spec.name in ("Model Inference Time", "Boosting Overfit"):
        unit = _model_unit(check, spec, plan)
        return unit if isinstance(unit, str) else [unit]
    if spec.name == "Train Test Samples Mix":
        return [_samples_mix_unit(check, spec, plan)]
    if spec.name == "Multivariate Drift":
        return [_multivariate_unit(check, spec, plan)]
    if isinstance(check, SingleDatasetCheck):
        splits = ["test"]
        if spec.suite == DATA_INTEGRITY and plan.train is not None:
            splits = ["train", "test"] if spec.both_splits else ["train"]
        if spec.name == "Conflicting Labels" and plan.inputs.task != "regression":
            return [_conflicting_labels_unit(check, spec, plan, s) for s in splits]
        return [_Unit(spec, s, (lambda s=s: check.run_logic(plan.context, plan.kind(s))))
                for s in splits]
    if isinstance(check, ModelOnlyCheck):
        return [_Unit(spec, None, lambda: check.run_logic(plan.context))]
    return [_Unit(spec, None, lambda: check.run_logic(plan.context))]


def _not_relevant(exc: BaseException) -> bool:
    message = str(exc).lower()
    if isinstance(exc, (DeepchecksNotSupportedError, NotEnoughSamplesError)):
        return True
    if isinstance(exc, (ModelValidationError, DatasetValidationError)):
        return any(marker in message for marker in _NOT_RELEVANT)
    return False


def _execute(unit: _Unit, plan: _Plan, check: Any) -> CheckOutcome:
    two_splits = (unit.spec.suite == DATA_INTEGRITY and unit.spec.both_splits
                  and plan.train is not None)
    suffix = f" ({unit.split})" if unit.split and two_splits else ""
    start = time.perf_counter()
    try:
        with _joblib_threads(), one_native_thread():  # the check pool is the parallelism
            result = unit.run()
        if unit.adjust is not None:
            unit.adjust(result)
        result.check = check
        result.process_conditions()
        return condense(unit.spec.name, unit.spec.suite, result,
                        time.perf_counter() - start, suffix)
    except Exception as exc:
        seconds = round(time.perf_counter() - start, 4)
        reason = strip_numpy_reprs(f"{type(exc).__name__}: {exc}")
        if isinstance(exc, DeepchecksProcessError) and "unable to train an error model" in str(exc):
            reason = f"no weak segment could be found ({reason})"
            outcome = "skipped"
        elif _not_relevant(exc):
            outcome = "skipped"
        else:
            outcome = "errored"
            logger.warning("deepfix checks: %s%s errored: %s", unit.spec.name, suffix, reason,
                           exc_info=logger.isEnabledFor(logging.DEBUG))
        return CheckOutcome(name=unit.spec.name, suite=unit.spec.suite, outcome=outcome,
                            reason=reason, duration_seconds=seconds)


class _joblib_threads:
    """Deepchecks asks scikit-learn for ``n_jobs=-1`` (process pools) in places; on a
    small machine, and with checks already in parallel, threads are much faster."""

    def __enter__(self) -> None:
        try:
            from joblib import parallel_config
        except ImportError:  # joblib < 1.3
            from joblib import parallel_backend as parallel_config
        self._config = parallel_config(backend="threading")
        self._config.__enter__()

    def __exit__(self, *exc: object) -> None:
        self._config.__exit__(*exc)


_ORDER = {"not_passed": 3, "errored": 2, "passed": 1, "skipped": 0}


def _merge(name: str, parts: list[tuple[str, CheckOutcome]]) -> CheckOutcome:
    """One outcome for a check run on both splits: the worse verdict and headline, per
    key the higher value, and each split's headline as ``train_value``/``test_value``."""
    if len(parts) == 1:
        return parts[0][1]
    outcomes = [o for _, o in parts]
    worst = max(outcomes, key=lambda o: _ORDER[o.outcome])
    values: dict[str, float] = {}
    details: dict[str, str] = {}
    for split, outcome in parts:
        for key, value in outcome.values.items():
            values[key] = max(value, values.get(key, value))
        details.update(outcome.details)
        if outcome.value is not None:
            values[f"{split}_value"] = outcome.value
    headlines = [o.value for o in outcomes if o.value is not None]
    reasons = [f"{split}: {o.reason}" for split, o in parts if o.reason]
    if len(reasons) == len(parts) and len({o.reason for o in outcomes}) == 1:
        reasons = [outcomes[0].reason]
    return CheckOutcome(
        name=name, suite=worst.suite, outcome=worst.outcome,
        value=max(headlines) if headlines else None, values=values, details=details,
        conditions=[c for o in outcomes for c in o.conditions],
        reason="; ".join(reasons) or None,
        duration_seconds=round(sum(o.duration_seconds for o in outcomes), 4),
    )


def run_checks(inputs: CheckInputs, suites: Sequence[str], *, sample_size: int | None,
               seed: int, progress: bool = True,
               max_features: int = MAX_CHECK_FEATURES) -> list[CheckOutcome]:
    """Run every check of the chosen Deepchecks suites; one outcome per check, in
    Deepchecks' suite order. Never raises because a check failed (that check is
    ``errored``); raises :class:`~mlflow_deepfix.errors.DeepfixInputError` for invalid
    arguments.

    Parameters
    ----------
    inputs : CheckInputs
    suites : any of ``data_integrity``, ``train_test_validation``, ``model_evaluation``
    sample_size : rows per split that expensive checks see (None: 10,000)
    seed : seeds every random choice; same inputs and seed give the same outcomes
    progress : show a tqdm bar
    max_features : columns the checks see at most (see ``_wide``); the model gets all
    """
    suites = _validate(inputs, suites, sample_size, seed)
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plan = _Plan(inputs, sample_size or DEFAULT_SAMPLE_SIZE, int(seed), max_features)
        ordered: list[tuple[str, str]] = []
        skipped: dict[str, CheckOutcome] = {}
        jobs: list[tuple[_Unit, Any]] = []
        for suite in suites:
            for check in _SUITE_FACTORIES[suite]().checks.values():
                name = check.name()
                spec = CHECK_CATALOG.get(name) or CheckSpec(name, suite, "single", value="")
                ordered.append((name, suite))
                reason = _skip_reason(spec, plan)
                units = reason or _prepare(check, spec, plan)
                if isinstance(units, str):
                    skipped[name] = CheckOutcome(name=name, suite=suite, outcome="skipped",
                                                 reason=units)
                    continue
                jobs.extend((unit, check) for unit in units)
        with shared_pps():  # train PPS: once for Feature Label Correlation (+ Change)
            results = _run_parallel(jobs, plan, progress)
    outcomes = []
    for name, suite in ordered:
        if name in skipped:
            outcomes.append(skipped[name])
        else:
            outcomes.append(_merge(name, results[name]))
    log_run("checks", outcomes, started, logger)
    return outcomes


def _prepare(check: Any, spec: CheckSpec, plan: _Plan) -> list[_Unit] | str:
    try:
        return _units(check, spec, plan)
    except Exception as exc:  # noqa: BLE001 - preparing one check must not stop the others
        return [_Unit(spec, None, _raiser(exc))]


def _raiser(exc: BaseException) -> Callable[[], Any]:
    def run() -> Any:
        raise exc

    return run


def _run_parallel(jobs: list[tuple[_Unit, Any]], plan: _Plan,
                  progress: bool) -> dict[str, list[tuple[str, CheckOutcome]]]:
    from tqdm.auto import tqdm

    from mlflow_deepfix._progress import bar_options

    results: dict[str, list[tuple[str, CheckOutcome]]] = {}
    workers = max(1, min(4, os.cpu_count() or 1))
    # Longest first, so the pool is not left waiting on one slow check at the end.
    order = sorted(range(len(jobs)), key=lambda i: -jobs[i][0].spec.cost)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="deepfix-check") as pool, \
            tqdm(total=len(jobs), desc="deepfix checks", unit="check", leave=False,
                 **bar_options(progress)) as bar:
        futures = {pool.submit(_execute, jobs[i][0], plan, jobs[i][1]): i for i in order}
        for future in as_completed(futures):
            unit = jobs[futures[future]][0]
            outcome = future.result()
            results.setdefault(unit.spec.name, []).append((unit.split or "", outcome))
            bar.set_postfix_str(unit.spec.name, refresh=False)
            bar.update()
            logger.debug("deepfix checks: %s%s %s in %.2f s", unit.spec.name,
                         f" ({unit.split})" if unit.split else "", outcome.outcome,
                         outcome.duration_seconds)
    for parts in results.values():
        parts.sort(key=lambda p: p[0] != "train")  # train first, for stable merging
    return results
