"""Make Deepchecks 0.19.1 (its last release) import and run on today's stack.

Deepchecks stopped at 0.19.1 while its dependencies moved on. Without help it does not
import on setuptools >= 81, numpy >= 2 or scikit-learn >= 1.8, and several default
tabular checks error on pandas >= 3, numpy >= 2.4 and scikit-learn >= 1.6. We do not
pin those libraries down; instead :func:`apply` fixes Deepchecks' own call sites:

* **source edits** -- a few exact, line-preserving text substitutions in named
  Deepchecks modules, made by an import hook while those modules load (tracebacks keep
  pointing at the right file and line). numpy, pandas and scikit-learn themselves are
  never modified.
* **a temporary ``pkg_resources``** providing only what Deepchecks uses, present in
  ``sys.modules`` during the Deepchecks import only, so that other libraries that probe
  for ``pkg_resources`` do not find a half-implemented one.
* **two method wrappers** on Deepchecks' ``DeepcheckScorer`` so that the models it hands
  to scikit-learn scorers carry the estimator tags scikit-learn >= 1.6 asks for (and, for
  regression, a ``predict`` method that is really named ``predict``).

Every patch is feature-detected (applied only when the installed library lacks what
Deepchecks expects, or, for scikit-learn, when a scorer actually rejects a model shaped
like Deepchecks') and says which upstream change it answers. On the last stack Deepchecks
supported (numpy 1.26, pandas 2.3, scikit-learn 1.7, setuptools < 81) only the
scikit-learn patches whose breakage predates it are applied (``sklearn_mse_squared``,
``sklearn_scorer_mse_squared``, ``sklearn_scorer_needs_proba``,
``sklearn_regressor_view``); ``scripts/check_old_stack.sh`` runs the tests there.

Not patchable: on pandas >= 3 a text column built from mixed missing markers gets the
``str`` dtype, whose only missing value is NaN, so ``pd.NA`` and ``None`` are already
NaN when Mixed Nulls looks (it finds fewer kinds than there were). The workaround is to
build such columns with ``dtype=object`` (README, "Deepchecks compatibility").
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import inspect
import logging
import re
import sys
import types
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

logger = logging.getLogger(__name__)

_DC = "deepchecks.tabular"


@dataclass(frozen=True)
class SourceEdit:
    """Replace every match of ``pattern`` (a regex) by ``replacement`` in ``module``."""

    module: str
    pattern: str
    replacement: str


@dataclass(frozen=True)
class Patch:
    """One compatibility fix: what it answers, when it is needed, what it changes."""

    name: str
    answers: str
    needed: Callable[[], bool]
    edits: tuple[SourceEdit, ...] = ()
    #: run after Deepchecks is imported (for fixes that are not source edits)
    after_import: Callable[[], None] | None = None


@dataclass
class CompatState:
    """What :func:`apply` found and did; inspected by tests and logged at debug level."""

    applied: bool = False
    needed: list[str] = field(default_factory=list)
    #: patch name -> modules whose source was edited
    edited: dict[str, list[str]] = field(default_factory=dict)
    #: edits whose pattern no longer matches (Deepchecks changed): "patch: module"
    unmatched: list[str] = field(default_factory=list)
    pkg_resources_shim: bool = False


STATE = CompatState()


# ----------------------------------------------------------------- feature detection


def _numpy_lacks_aliases() -> bool:
    import numpy as np

    return not all(hasattr(np, name) for name in ("Inf", "NaN", "NINF"))


def _numpy_rejects_interpolation() -> bool:
    import numpy as np

    return "interpolation" not in inspect.signature(np.quantile).parameters


def _pandas_lacks_applymap() -> bool:
    import pandas as pd

    return not hasattr(pd.DataFrame, "applymap")


def _pandas_stack_keeps_nan() -> bool:
    import numpy as np
    import pandas as pd

    return len(pd.DataFrame([[1.0, np.nan]]).stack()) == 2


def _sklearn_lacks_max_error_scorer() -> bool:
    from sklearn.metrics import get_scorer

    try:
        get_scorer("max_error")
    except (KeyError, ValueError):
        return True
    return False


def _sklearn_mse_lacks_squared() -> bool:
    from sklearn.metrics import mean_squared_error

    return "squared" not in inspect.signature(mean_squared_error).parameters


def _sklearn_make_scorer_lacks_needs_proba() -> bool:
    from sklearn.metrics import make_scorer

    return "needs_proba" not in inspect.signature(make_scorer).parameters


def _scorer_rejects(estimator_type: str) -> bool:
    """Whether a scikit-learn scorer rejects a model shaped like the ones Deepchecks
    hands it: no ``__sklearn_tags__``, only the retired ``_estimator_type``, and (like
    Deepchecks' ``_DummyModel``) ``predict`` bound to a method of another name."""
    import warnings

    import numpy as np
    from sklearn.metrics import get_scorer

    class _DeepchecksLike:
        _estimator_type = estimator_type
        classes_ = np.array([0, 1])

        def __init__(self) -> None:
            self.predict = self._predict

        def _predict(self, X: Any) -> Any:
            return np.array([0, 1, 0, 1])

        def fit(self, X: Any, y: Any) -> Any:  # pragma: no cover - never called
            return self

    scorer = get_scorer("accuracy" if estimator_type == "classifier" else "r2")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scorer(_DeepchecksLike(), np.zeros((4, 1)), np.array([0, 1, 0, 1]))
    except (AttributeError, ValueError, TypeError):
        return True
    return False


def _sklearn_rejects_untagged_classifier() -> bool:
    return _scorer_rejects("classifier")


def _sklearn_rejects_deepchecks_regressor() -> bool:
    return _scorer_rejects("regressor")


def _pkg_resources_missing() -> bool:
    if "pkg_resources" in sys.modules:
        return False
    return importlib.util.find_spec("pkg_resources") is None


# ---------------------------------------------------------------- post-import fixes


def _tags(estimator_type: str) -> Any:
    from sklearn.utils import ClassifierTags, RegressorTags, Tags, TargetTags

    return Tags(
        estimator_type=estimator_type,
        target_tags=TargetTags(required=True),
        classifier_tags=ClassifierTags() if estimator_type == "classifier" else None,
        regressor_tags=RegressorTags() if estimator_type == "regressor" else None,
    )


def _classifier_tags(self: Any) -> Any:
    return _tags("classifier")


class _RegressorView:
    """A tagged stand-in for a regression model that has no scikit-learn tags
    (Deepchecks' ``_DummyModel``, ``PerfectModel``, ``PartialBoostingModel``, or any
    plain object with ``predict``); everything else is delegated to the model."""

    _estimator_type = "regressor"  # what scikit-learn < 1.6 reads instead of tags

    def __init__(self, model: Any):
        self._model = model

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    def predict(self, X: Any) -> Any:
        return self._model.predict(X)

    def __sklearn_tags__(self) -> Any:
        return _tags("regressor")


def _tag_classification_wrapper() -> None:
    """Deepchecks hands classification scorers a wrapper class local to
    ``DeepcheckScorer._wrap_classification_model`` that only sets the retired
    ``_estimator_type``; we give the returned wrapper classifier tags."""
    from deepchecks.tabular.metric_utils.scorers import DeepcheckScorer

    original = DeepcheckScorer._wrap_classification_model
    if getattr(original, "_deepfix_patched", False):
        return

    def _wrap_classification_model(self: Any, model: Any, data_: Any) -> Any:
        wrapper = original(self, model, data_)
        if not hasattr(type(wrapper), "__sklearn_tags__"):
            type(wrapper).__sklearn_tags__ = _classifier_tags
        return wrapper

    _wrap_classification_model._deepfix_patched = True  # type: ignore[attr-defined]
    DeepcheckScorer._wrap_classification_model = _wrap_classification_model


def _view_regression_models() -> None:
    """Deepchecks hands regression scorers the model itself, often one of its own
    helpers (``_DummyModel``, ``PerfectModel``, ``PartialBoostingModel``) with no tags
    and, for ``_DummyModel``, ``predict`` bound to ``_predict``. We put such models
    behind :class:`_RegressorView`, which has both."""
    from deepchecks.tabular.metric_utils.scorers import DeepcheckScorer

    original = DeepcheckScorer._run_score
    if getattr(original, "_deepfix_patched", False):
        return

    def _run_score(self: Any, model: Any, data: Any, label_col: Any) -> Any:
        if self.model_classes is None and _needs_regressor_view(model):
            model = _RegressorView(model)
        return original(self, model, data, label_col)

    _run_score._deepfix_patched = True  # type: ignore[attr-defined]
    DeepcheckScorer._run_score = _run_score


def _needs_regressor_view(model: Any) -> bool:
    predict = getattr(model, "predict", None)
    return not hasattr(type(model), "__sklearn_tags__") or (
        getattr(predict, "__name__", "predict") != "predict"
    )


# ------------------------------------------------------------------------ the patches

PATCHES: tuple[Patch, ...] = (
    Patch(
        name="numpy2_aliases",
        answers="numpy 2.0 (NEP 52) removed the aliases np.Inf, np.NaN and np.NINF",
        needed=_numpy_lacks_aliases,
        edits=(
            SourceEdit(f"{_DC}.checks.model_evaluation.performance_bias", r"\bnp\.Inf\b",
                       "np.inf"),
            SourceEdit(f"{_DC}.checks.model_evaluation.segment_performance", r"\bnp\.NaN\b",
                       "np.nan"),
            SourceEdit(f"{_DC}.checks.data_integrity.feature_feature_correlation",
                       r"\bnp\.NaN\b", "np.nan"),
            SourceEdit("deepchecks.utils.abstracts.weak_segment_abstract", r"\bnp\.NaN\b",
                       "np.nan"),
            SourceEdit("deepchecks.utils.performance.partition", r"\bnp\.NINF\b", "-np.inf"),
        ),
    ),
    Patch(
        name="numpy_quantile_method",
        answers="numpy 2.4 removed quantile/percentile(interpolation=), renamed to method= "
        "in numpy 1.22 (Outlier Sample Detection, String Length Out Of Bounds)",
        needed=_numpy_rejects_interpolation,
        edits=(
            SourceEdit(f"{_DC}.checks.data_integrity.outlier_sample_detection",
                       r"interpolation='higher'", "method='higher'"),
            SourceEdit(f"{_DC}.checks.data_integrity.string_length_out_of_bounds",
                       r"interpolation='nearest'", "method='nearest'"),
        ),
    ),
    Patch(
        name="pandas3_applymap",
        answers="pandas 3.0 removed DataFrame.applymap, renamed to DataFrame.map in pandas "
        "2.1 (Train Test Samples Mix)",
        needed=_pandas_lacks_applymap,
        edits=(
            SourceEdit(f"{_DC}.checks.train_test_validation.train_test_samples_mix",
                       r"duplicates_df\.applymap\(", "duplicates_df.map("),
        ),
    ),
    Patch(
        name="pandas3_stack",
        answers="pandas 3.0 made DataFrame.stack keep missing values (the future_stack "
        "implementation of 2.1); Feature Feature Correlation's condition masks the matrix "
        "and stacks it, so every pair counted as highly correlated and the check always "
        "failed -- no error, a wrong verdict",
        needed=_pandas_stack_keeps_nan,
        edits=(
            SourceEdit(f"{_DC}.checks.data_integrity.feature_feature_correlation",
                       r"result\[result > threshold\]\.stack\(\)",
                       "result[result > threshold].stack().dropna()"),
        ),
    ),
    Patch(
        name="sklearn_max_error_scorer",
        answers="scikit-learn 1.8 removed the 'max_error' scorer, renamed 'neg_max_error' in "
        "1.6 (same sign); Deepchecks builds it when its scorers module is imported",
        needed=_sklearn_lacks_max_error_scorer,
        edits=(
            SourceEdit(f"{_DC}.metric_utils.scorers", r"get_scorer\('max_error'\)",
                       "get_scorer('neg_max_error')"),
        ),
    ),
    Patch(
        name="sklearn_mse_squared",
        answers="scikit-learn 1.6 removed mean_squared_error(squared=False) "
        "(Regression Error Distribution, Regression Systematic Error)",
        needed=_sklearn_mse_lacks_squared,
        edits=tuple(
            SourceEdit(f"{_DC}.checks.model_evaluation.{module}",
                       r"mean_squared_error\(y_test, y_pred, squared=False\)",
                       "mean_squared_error(y_test, y_pred) ** 0.5")
            for module in ("regression_error_distribution", "regression_systematic_error")
        ),
    ),
    Patch(
        name="sklearn_scorer_mse_squared",
        answers="scikit-learn 1.6 removed mean_squared_error(squared=), deprecated in 1.4 "
        "for root_mean_squared_error; Deepchecks' scorer list still builds "
        "make_scorer(mean_squared_error, squared=...) for 'mse'/'rmse' (and their long "
        "names), which raises TypeError when scored (Single Dataset Performance's default "
        "regression metric, any check given those scorer names)",
        needed=_sklearn_mse_lacks_squared,
        edits=(
            SourceEdit(f"{_DC}.metric_utils.scorers",
                       r"make_scorer\(mean_squared_error, squared=True\)",
                       "make_scorer(mean_squared_error)"),
            # root_mean_squared_error is imported inline to keep the line count
            SourceEdit(f"{_DC}.metric_utils.scorers",
                       r"make_scorer\(mean_squared_error, squared=False\)",
                       "make_scorer(__import__('sklearn.metrics', fromlist=['_'])"
                       ".root_mean_squared_error)"),
        ),
    ),
    Patch(
        name="sklearn_scorer_needs_proba",
        answers="scikit-learn 1.6 removed make_scorer(needs_proba=), deprecated in 1.4 for "
        "response_method='predict_proba'; Deepchecks' 'roc_auc_per_class' and binary "
        "'neg_log_loss' scorers pass needs_proba=True, which then reaches the metric as a "
        "keyword and raises TypeError when scored",
        needed=_sklearn_make_scorer_lacks_needs_proba,
        edits=(
            SourceEdit(f"{_DC}.metric_utils.scorers", r"needs_proba=True",
                       "response_method='predict_proba'"),
        ),
    ),
    Patch(
        name="sklearn_tags_classifier",
        answers="scikit-learn 1.6 (PR #29677) replaced _estimator_type by __sklearn_tags__ "
        "and later releases raise without it; Deepchecks' scorer wrapper for classifiers "
        "lacks it (Train Test Performance, Simple Model Comparison, Weak Segments "
        "Performance, Boosting Overfit, Multivariate Drift)",
        needed=_sklearn_rejects_untagged_classifier,
        after_import=_tag_classification_wrapper,
    ),
    Patch(
        name="sklearn_regressor_view",
        answers="scikit-learn scorers check regressors' tags (1.6+) and, in 1.4-1.7, that "
        "their prediction method is named 'predict'; Deepchecks' own regression helpers "
        "fail both (Simple Model Comparison, Weak Segments Performance, Boosting Overfit, "
        "Train Test Performance on regression)",
        needed=_sklearn_rejects_deepchecks_regressor,
        after_import=_view_regression_models,
    ),
)


# ---------------------------------------------------------------- the import machinery


class _PatchedSourceLoader(importlib.machinery.SourceFileLoader):
    """Compile a module from its source with the edits applied (bypassing .pyc caches,
    which hold the unedited code)."""

    def __init__(self, fullname: str, path: str, edits: list[tuple[str, SourceEdit]]):
        super().__init__(fullname, path)
        self._edits = edits

    def get_code(self, fullname: str) -> types.CodeType:
        source = self.get_source(fullname) or ""
        for patch_name, edit in self._edits:
            source, count = re.subn(edit.pattern, edit.replacement, source)
            if count:
                modules = STATE.edited.setdefault(patch_name, [])
                if fullname not in modules:  # a patch may edit one module twice
                    modules.append(fullname)
                logger.debug("deepchecks compat: %s edited %s (%d)", patch_name, fullname, count)
            else:
                STATE.unmatched.append(f"{patch_name}: {fullname}")
                logger.warning(
                    "deepchecks compat: %s found nothing to edit in %s; Deepchecks may have "
                    "changed, so the check that uses it may error", patch_name, fullname
                )
        return compile(source, self.path, "exec", dont_inherit=True)


class _PatchFinder(importlib.abc.MetaPathFinder):
    def __init__(self, edits: dict[str, list[tuple[str, SourceEdit]]]):
        self._edits = edits

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname not in self._edits:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            return spec
        spec.loader = _PatchedSourceLoader(fullname, spec.origin, self._edits[fullname])
        return spec


def _pkg_resources_shim() -> types.ModuleType:
    """setuptools 81 removed ``pkg_resources``. Deepchecks uses ``parse_version``
    (core/serialization/dataframe/html.py) and ``working_set`` entries' ``.key``
    (utils/display.py, to look for PyQt); both come from packaging / importlib.metadata."""
    from packaging.version import parse

    module = types.ModuleType("pkg_resources", "deepfix shim: only what Deepchecks uses")
    module.parse_version = parse  # type: ignore[attr-defined]

    class _Working:
        def __iter__(self):  # a fresh list each time, like pkg_resources.working_set
            for dist in importlib.metadata.distributions():
                name = dist.metadata["Name"] or ""
                yield types.SimpleNamespace(key=name.lower(), project_name=name,
                                            version=dist.version)

    module.working_set = _Working()  # type: ignore[attr-defined]
    return module


def _modules_to_load() -> list[str]:
    return [
        "deepchecks",
        "deepchecks.tabular",
        "deepchecks.tabular.checks",
        "deepchecks.tabular.suites",
        "deepchecks.tabular.metric_utils.scorers",
        # the Deepchecks modules that import pkg_resources, some only loaded on demand
        "deepchecks.core.serialization.dataframe.html",
        "deepchecks.utils.display",
    ]


@contextlib.contextmanager
def _pkg_resources_during_import() -> Iterator[None]:
    """While Deepchecks is imported, and only then, provide :func:`_pkg_resources_shim`
    as ``pkg_resources`` when no real one is installed (recorded in :data:`STATE`)."""
    shim = _pkg_resources_missing()
    STATE.pkg_resources_shim = shim
    if shim:
        STATE.needed.append("pkg_resources_shim")
        sys.modules["pkg_resources"] = _pkg_resources_shim()
    try:
        yield
    finally:
        if shim:
            # Deepchecks keeps its own references; nobody else should find the shim.
            del sys.modules["pkg_resources"]


def install(
    patches: Sequence[Patch],
    modules: Sequence[str],
    *,
    preloaded_warning: str,
    log: logging.Logger = logger,
    during_import: Callable[[], AbstractContextManager[Any]] = contextlib.nullcontext,
) -> list[Patch]:
    """Apply the needed ones of ``patches`` while importing ``modules``; return them.

    The one procedure behind the tabular, text (:mod:`._compat_text`) and image
    (:mod:`._compat_image`) ``apply`` functions, so that the three Deepchecks packages
    are patched, and recorded in :data:`STATE`, the same way: pick the patches whose
    ``needed()`` is true and add their names to ``STATE.needed``; warn (``log``,
    ``preloaded_warning`` with one ``%s`` for the module names) about edited modules
    already in ``sys.modules``, which the edits can no longer reach; with the import
    hook in ``sys.meta_path`` (and inside ``during_import()``), import ``modules`` and
    then every edited module; remove the hook; run each patch's ``after_import`` and
    record it in ``STATE.edited``. Idempotence and locking are the callers' business.
    """
    needed = [p for p in patches if p.needed()]
    STATE.needed.extend(p.name for p in needed if p.name not in STATE.needed)
    edits: dict[str, list[tuple[str, SourceEdit]]] = {}
    for patch in needed:
        for edit in patch.edits:
            edits.setdefault(edit.module, []).append((patch.name, edit))
    preloaded = sorted(m for m in edits if m in sys.modules)
    if preloaded:
        log.warning(preloaded_warning, ", ".join(preloaded))
    with during_import():
        finder = _PatchFinder(edits)
        sys.meta_path.insert(0, finder)
        try:
            for name in (*modules, *sorted(edits)):
                importlib.import_module(name)
        finally:
            sys.meta_path.remove(finder)
    for patch in needed:
        if patch.after_import is not None:
            patch.after_import()
            STATE.edited.setdefault(patch.name, []).append("after_import")
    return needed


def apply() -> CompatState:
    """Apply the needed patches and import Deepchecks' tabular package. Idempotent.

    Must run before anything else imports Deepchecks (``import mlflow_deepfix.checks``
    does it first thing); when Deepchecks is already loaded, source edits can no longer
    take effect and a warning says so.
    """
    if STATE.applied:
        return STATE
    STATE.needed = []
    install(
        PATCHES, _modules_to_load(),
        preloaded_warning="deepchecks compat: %s already imported before mlflow_deepfix.checks; "
        "import mlflow_deepfix.checks first so that Deepchecks can be patched",
        during_import=_pkg_resources_during_import,
    )
    STATE.applied = True
    logger.debug("deepchecks compat: needed %s, applied %s", STATE.needed, sorted(STATE.edited))
    return STATE
