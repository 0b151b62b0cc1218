"""Run Deepchecks' default vision suites on image classification data, one outcome per check.

Why not ``suite.run()``: it wants a model or a torch DataLoader, recomputes image
properties in every check, renders figures, and stops being useful when one check raises.
Instead we

* take the checks (with their default conditions) from Deepchecks' own vision
  ``data_integrity()``, ``train_test_validation()`` and ``model_evaluation()``;
* hand Deepchecks our arrays through a plain batch loader: H x W x C uint8 images,
  integer class ids and the *precomputed* class probabilities as predictions (no model
  object, no torch model is ever called);
* give every check deepfix's own image properties
  (:data:`mlflow_deepfix.testing.content.image_features.IMAGE_PROPERTIES`, numpy, vectorised), computed
  once per split and shared by all checks, so ``values`` keys are our snake_case names;
* draw one seeded random sample of at most ``sample_size`` images per split and run every
  check on it (the PPS and weak-segment checks on its first half), each inside its own
  ``try``.

Checks run **one after the other**, not on a thread pool as the tabular ones: Deepchecks'
vision context reseeds numpy's, Python's and torch's *global* generators for every check
and some checks draw from them, so threads would make outcomes depend on scheduling. The
run also holds OpenMP / BLAS pools to one thread (``threadpoolctl``, process-wide for its
duration): the models the checks fit (a 10-iteration gradient-boosted domain classifier,
small trees) are tiny, and spinning OpenMP threads made Image Dataset Drift ten times
slower on a loaded 2-core machine (4.7 s instead of 0.4 s on 1,500 images).

Labels outside ``classes`` (a class the model never saw) get their own ids after the
model's classes, with probability 0: New Labels reports them, and the model is scored as
never predicting them, which is what happened.

``deepchecks.vision`` (and so torch) is imported only when :func:`run_image_checks` runs,
after :func:`mlflow_deepfix.checks._compat_image.apply`.
"""

from __future__ import annotations

import logging
import math
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import Any

import numpy as np
import pandas as pd

from mlflow_deepfix.checks._args import validate_run_args
from mlflow_deepfix.checks._catalog import DATA_INTEGRITY, CheckSpec
from mlflow_deepfix.checks._condense import log_run
from mlflow_deepfix.checks._image_catalog import (
    DETECTION_ONLY,
    IMAGE_CHECK_CATALOG,
    NEEDS_TRAIN_PROBA,
    condense_image,
)
from mlflow_deepfix.checks._runner import _joblib_threads, _merge, _not_relevant, _sorted_classes
from mlflow_deepfix.errors import DeepfixInputError
from mlflow_deepfix.schemas import CheckOutcome
from mlflow_deepfix.testing.content.image_features import IMAGE_PROPERTIES, image_properties

logger = logging.getLogger(__name__)

#: images per split the checks see when ``sample_size`` is None
DEFAULT_SAMPLE_SIZE = 10_000
#: images per batch handed to Deepchecks
BATCH_SIZE = 256
#: relative tolerance on probability rows summing to 1 (rows within it are renormalised)
PROBA_TOLERANCE = 0.01
_SPLITS = ("train", "test")


@dataclass
class ImageCheckInputs:
    """What the image checks need.

    Images are H x W x C uint8 arrays with C in {1, 3}
    (:func:`mlflow_deepfix.testing.content.image_features.to_uint8_images` makes them). ``classes`` are
    the model's class labels, sorted, in the column order of ``probabilities``
    (``{"train": N x K, "test": M x K}``, either may be absent).
    """

    train_images: list[np.ndarray] | None
    test_images: list[np.ndarray]
    train_labels: np.ndarray | None
    test_labels: np.ndarray
    classes: list
    probabilities: dict[str, np.ndarray] | None = None
    model_skip_reason: str | None = None


# --------------------------------------------------------------------------- validation


def _check_images(images: Any, split: str) -> None:
    if not isinstance(images, (list, tuple)) or not images:
        raise DeepfixInputError(f"{split}_images must be a non-empty list of images; got "
                                f"{type(images).__name__} of length "
                                f"{len(images) if hasattr(images, '__len__') else '?'}")
    for i, image in enumerate(images):
        if (not isinstance(image, np.ndarray) or image.dtype != np.uint8 or image.ndim != 3
                or image.shape[2] not in (1, 3)):
            raise DeepfixInputError(
                f"{split}_images[{i}] must be an H x W x C uint8 array with C in (1, 3); got "
                f"{getattr(image, 'dtype', type(image).__name__)} "
                f"{getattr(image, 'shape', '')} (convert the column with "
                "mlflow_deepfix.testing.content.image_features.to_uint8_images)")


def _check_labels(labels: Any, n: int, split: str) -> np.ndarray:
    array = np.asarray(labels, dtype=object) if labels is not None else None
    if array is None or array.ndim != 1 or len(array) != n:
        raise DeepfixInputError(f"{split}_labels must be a 1-D array with one label per image "
                                f"({n}); got {getattr(array, 'shape', None)}")
    missing = np.flatnonzero(pd.isna(array))
    if len(missing):
        raise DeepfixInputError(f"{split}_labels has {len(missing)} missing label(s), first at "
                                f"position {int(missing[0])}")
    return array


def _check_proba(proba: Any, n: int, k: int, split: str) -> np.ndarray:
    try:
        array = np.asarray(proba, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DeepfixInputError(f"probabilities[{split!r}] must be numeric: {exc}") from exc
    if array.shape != (n, k):
        raise DeepfixInputError(f"probabilities[{split!r}] must have shape ({n}, {k}) (images x "
                                f"classes); got {array.shape}")
    if not np.isfinite(array).all() or (array < 0).any():
        raise DeepfixInputError(f"probabilities[{split!r}] must be finite and non-negative")
    sums = array.sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1.0) > PROBA_TOLERANCE)
    if len(bad):
        raise DeepfixInputError(f"probabilities[{split!r}] rows must sum to 1; row "
                                f"{int(bad[0])} sums to {sums[bad[0]]:.4f}")
    return array / sums[:, None]


def _validate(inputs: ImageCheckInputs, suites: Sequence[str], sample_size: int | None,
              seed: int) -> list[str]:
    suites = validate_run_args(suites, sample_size, seed)
    if (inputs.train_images is None) != (inputs.train_labels is None):
        raise DeepfixInputError("train_images and train_labels must be given together")
    for split in _SPLITS:
        images = getattr(inputs, f"{split}_images")
        if images is None:
            continue
        _check_images(images, split)
        _check_labels(getattr(inputs, f"{split}_labels"), len(images), split)
    given = set(inputs.probabilities or {})
    if given - set(_SPLITS) or ("train" in given and inputs.train_images is None):
        raise DeepfixInputError(f"probabilities keys must be 'train' (with train_images) and/or "
                                f"'test'; got {sorted(given)}")
    if given and not inputs.classes:
        raise DeepfixInputError("classes must name the probability columns")
    return suites


# ------------------------------------------------------------------------ the plan


class _Properties:
    """deepfix's image properties as a Deepchecks property list. Each property's method
    gets a batch's list of images; the values come from frames computed once per split
    and registered per batch list (a list not registered is computed, all properties
    together, once)."""

    def __init__(self, names: Sequence[str]):
        self.names = list(names)
        #: id(image list) -> (the list, its properties)
        self._frames: dict[int, tuple[list[np.ndarray], pd.DataFrame]] = {}

    def register(self, images: list[np.ndarray], frame: pd.DataFrame) -> None:
        self._frames[id(images)] = (images, frame)

    def _column(self, name: str, images: list[np.ndarray]) -> list[float | None]:
        known = self._frames.get(id(images))
        if known is None or known[0] is not images:
            self.register(images, image_properties(images))
            known = self._frames[id(images)]
        return [None if math.isnan(x) else float(x) for x in known[1][name]]

    def as_deepchecks(self) -> list[dict[str, Any]]:
        return [{"name": name, "method": partial(self._column, name), "output_type": "numerical"}
                for name in self.names]


def _batch_wrapper_class() -> type:
    from deepchecks.vision.vision_data.batch_wrapper import BatchWrapper

    class _Batch(BatchWrapper):
        """A batch converted to numpy once and shared read-only by every check (Deepchecks
        converts, and copies the images, on every access). Images are already validated
        H x W x C uint8 arrays: the list is handed over as it is."""

        numpy_images = cached_property(lambda self: list(self.original_images))
        numpy_labels = cached_property(BatchWrapper.numpy_labels.fget)
        numpy_predictions = cached_property(BatchWrapper.numpy_predictions.fget)
        numpy_image_identifiers = cached_property(BatchWrapper.numpy_image_identifiers.fget)

        def __len__(self) -> int:
            return len(self.original_image_identifiers)

    return _Batch


class _Loader:
    """A re-iterable batch loader over prepared batches (already in a seeded order)."""

    def __init__(self, batches: list[dict[str, Any]]):
        self._batches = batches

    def __iter__(self):
        return iter(self._batches)

    def __len__(self) -> int:
        return len(self._batches)


@dataclass
class _Split:
    name: str
    #: positions of the sampled images in the caller's split, in the order fed
    rows: np.ndarray
    images: list[np.ndarray]
    label_ids: np.ndarray
    proba: np.ndarray | None
    data: Any = None  # VisionData
    batches: list[Any] = field(default_factory=list)  # _Batch wrappers


def _sample_rows(images: list[np.ndarray], cap: int, rng: np.random.Generator) -> np.ndarray:
    """A seeded random order of at most ``cap`` images, starting with one that passes
    Deepchecks' format check (it looks at the first image only and rejects one whose
    pixels are all <= 1, e.g. a black image)."""
    rows = rng.permutation(len(images))[:cap]
    valid = next((i for i, r in enumerate(rows) if images[r].max() > 1), None)
    if valid:
        rows = np.concatenate([rows[valid:valid + 1], rows[:valid], rows[valid + 1:]])
    return rows


def _varying(frame: pd.DataFrame) -> list[str]:
    """The properties that vary over the sampled images of both splits: colour properties
    of grey image sets (always missing) and sizes of same-sized images (constant) would
    tell no check anything and cost each of them time."""
    names = [name for name in IMAGE_PROPERTIES if frame[name].nunique(dropna=False) > 1]
    if len(names) < 2:  # Weak Segments Performance needs two; keep every defined one
        names = [name for name in IMAGE_PROPERTIES if frame[name].notna().any()]
    return names


class _Plan:
    """Samples, VisionData objects, batches and properties shared by every check."""

    def __init__(self, inputs: ImageCheckInputs, sample_size: int, seed: int):
        from deepchecks.vision import VisionData

        self.inputs, self.sample_size, self.seed = inputs, sample_size, seed
        given = list(inputs.classes or [])
        seen = [lab for split in _SPLITS if getattr(inputs, f"{split}_labels") is not None
                for lab in pd.unique(np.asarray(getattr(inputs, f"{split}_labels"), dtype=object))]
        known = set(given)
        unknown = list(dict.fromkeys(x for x in seen if x not in known))
        extra = _sorted_classes(unknown)[0] if unknown else []
        self.universe: list[Any] = given + extra
        if extra and given:
            logger.info("deepfix image checks: labels %s are not among the model's classes",
                        extra[:10])
        ids = {label: i for i, label in enumerate(self.universe)}
        rng = np.random.default_rng(seed)
        probabilities = inputs.probabilities or {}
        self.splits: dict[str, _Split] = {}
        for split in _SPLITS:
            images = getattr(inputs, f"{split}_images")
            if images is None:
                continue
            rows = _sample_rows(images, sample_size, rng)
            labels = np.asarray(getattr(inputs, f"{split}_labels"), dtype=object)
            proba = None
            if probabilities.get(split) is not None:
                full = _check_proba(probabilities[split], len(images), len(given), split)[rows]
                proba = np.hstack([full, np.zeros((len(rows), len(extra)))]) if extra else full
            self.splits[split] = _Split(
                split, rows, [images[r] for r in rows],
                np.array([ids[label] for label in labels[rows]], dtype=np.int64), proba)
        frames = {name: image_properties(split.images) for name, split in self.splits.items()}
        self.properties = _Properties(_varying(pd.concat(frames.values())))
        self.deepchecks_properties = self.properties.as_deepchecks()
        batch_class = _batch_wrapper_class()
        label_map = {i: str(label) for i, label in enumerate(self.universe)}
        from deepchecks.vision.utils.vision_properties import PropertiesInputType

        for split in self.splits.values():
            starts = range(0, len(split.rows), BATCH_SIZE)
            batches = [self._batch(split, start) for start in starts]
            split.data = VisionData(_Loader(batches), task_type="classification",
                                    label_map=label_map, dataset_name=split.name.capitalize(),
                                    reshuffle_data=False)
            for start, batch in zip(starts, batches):
                wrapper = batch_class(batch, split.data.task_type, start)
                self.properties.register(wrapper.numpy_images,
                                         frames[split.name].iloc[start:start + BATCH_SIZE])
                wrapper.vision_properties(self.deepchecks_properties, PropertiesInputType.IMAGES)
                split.batches.append(wrapper)

    @staticmethod
    def _batch(split: _Split, start: int) -> dict[str, Any]:
        stop = start + BATCH_SIZE
        batch = {"images": split.images[start:stop], "labels": split.label_ids[start:stop],
                 "image_identifiers": [str(r) for r in split.rows[start:stop]]}
        if split.proba is not None:
            batch["predictions"] = split.proba[start:stop]
        return batch

    def class_names(self, split: str) -> list[str]:
        """Names of the class ids a confusion matrix of this split has (sorted ids of the
        labels and of the predicted classes)."""
        s = self.splits[split]
        ids = set(s.label_ids.tolist())
        if s.proba is not None:
            ids |= set(np.argmax(s.proba, axis=1).tolist())
        return [str(self.universe[i]) for i in sorted(ids)]


# ------------------------------------------------------------------------ running


#: images per split seen by the expensive checks (PPS per property and class, a tree
#: search over properties), as a function of the sample size
_BOUNDED: dict[str, Callable[[int], int]] = {
    "Property Label Correlation": lambda s: max(s // 2, 100),
    "Property Label Correlation Change": lambda s: max(s // 2, 100),
    "Weak Segments Performance": lambda s: max(s // 2, 100),
}


#: checks whose per-class metrics (precision, recall, F1) Deepchecks cannot compute
#: with a single class
_NEEDS_TWO_CLASSES = frozenset({"Class Performance", "Simple Model Comparison"})


def _skip_reason(spec: CheckSpec, plan: _Plan) -> str | None:
    if spec.name in DETECTION_ONLY:
        return "Check is relevant for object detection only; deepfix runs image classification"
    if spec.name == "Label Property Outliers":
        return ("Deepchecks defines label properties for object detection and segmentation "
                "only, none for image classification")
    if spec.scope == "pair" and "train" not in plan.splits:
        return "no training data"
    if spec.needs_proba and plan.splits["test"].proba is None:
        return plan.inputs.model_skip_reason or "no class probabilities were given"
    if spec.name in NEEDS_TRAIN_PROBA and plan.splits["train"].proba is None:
        return "no class probabilities were given for the training split"
    if spec.name in _NEEDS_TWO_CLASSES and len(plan.universe) < 2:
        return f"only one class ({plan.universe[0]!r}): per-class scores are undefined"
    return None


def _feed(check: Any, context: Any, split: _Split, kind: Any) -> int:
    """Give the check the split's batches (up to its ``n_samples``); images fed."""
    data = split.data
    for batch in split.batches:
        data.update_cache(len(batch), batch.numpy_labels, batch.numpy_predictions)
        check.update(context, batch, kind)
        if check.n_samples is not None and data.number_of_images_cached >= check.n_samples:
            break
    return data.number_of_images_cached


def _compute(check: Any, plan: _Plan, split: str | None) -> tuple[Any, int]:
    """Run one check the way Deepchecks' ``check.run`` does, on our shared batches; the
    result and the number of images the check saw (of the test split for pairs)."""
    from deepchecks.core.checks import DatasetKind
    from deepchecks.vision.context import Context

    if split is not None:  # one dataset, in the context's first slot
        s = plan.splits[split]
        context = Context(s.data, random_state=plan.seed, with_display=False)
        check.initialize_run(context, DatasetKind.TRAIN)
        n_images = _feed(check, context, s, DatasetKind.TRAIN)
        result = check.compute(context, DatasetKind.TRAIN)
        context.finalize_check_result(result, check, DatasetKind.TRAIN)
        return result, n_images
    train, test = plan.splits["train"], plan.splits["test"]
    context = Context(train.data, test.data, random_state=plan.seed, with_display=False)
    check.initialize_run(context)
    _feed(check, context, train, DatasetKind.TRAIN)
    n_images = _feed(check, context, test, DatasetKind.TEST)
    result = check.compute(context)
    context.finalize_check_result(result, check)
    return result, n_images


def _run_unit(check: Any, spec: CheckSpec, plan: _Plan, split: str | None) -> CheckOutcome:
    from deepchecks.core.errors import DeepchecksProcessError

    two_splits = (spec.suite == DATA_INTEGRITY and spec.both_splits and "train" in plan.splits)
    suffix = f" ({split})" if split and two_splits else ""
    start = time.perf_counter()
    try:
        with _joblib_threads():
            result, n_images = _compute(check, plan, split)
        return condense_image(spec.name, spec.suite, result, time.perf_counter() - start, suffix,
                              n_images=n_images,
                              class_names=plan.class_names(split or "test"))
    except Exception as exc:  # one failing check must not stop the others
        seconds = round(time.perf_counter() - start, 4)
        reason = f"{type(exc).__name__}: {exc}"
        if isinstance(exc, DeepchecksProcessError) and "unable to train an error model" in str(exc):
            outcome, reason = "skipped", f"no weak segment could be found ({reason})"
        elif _not_relevant(exc):
            outcome = "skipped"
        else:
            outcome = "errored"
            logger.warning("deepfix image checks: %s%s errored: %s", spec.name, suffix, reason,
                           exc_info=logger.isEnabledFor(logging.DEBUG))
        return CheckOutcome(name=spec.name, suite=spec.suite, outcome=outcome, reason=reason,
                            duration_seconds=seconds)


def _splits_of(check: Any, spec: CheckSpec, plan: _Plan) -> list[str | None]:
    from deepchecks.vision.base_checks import SingleDatasetCheck

    if not isinstance(check, SingleDatasetCheck):
        return [None]
    if spec.suite == DATA_INTEGRITY and "train" in plan.splits:
        return ["train", "test"] if spec.both_splits else ["train"]
    return ["test"]


def _suite_checks(suite: str, properties: list[dict[str, Any]] | None) -> list[Any]:
    from deepchecks.vision import suites as vision_suites

    factory = getattr(vision_suites, suite)
    return list(factory(image_properties=properties).checks.values())


def run_image_checks(inputs: ImageCheckInputs, suites: Sequence[str], *,
                     sample_size: int | None, seed: int,
                     progress: bool = False) -> list[CheckOutcome]:
    """Run every check of the chosen Deepchecks vision suites on image classification
    data; one outcome per check, in Deepchecks' suite order. Never raises because a check
    failed (that check is ``errored``; checks that do not apply are ``skipped`` with the
    reason); raises :class:`~mlflow_deepfix.errors.DeepfixInputError` for invalid inputs.

    Parameters
    ----------
    inputs : ImageCheckInputs
    suites : any of ``data_integrity``, ``train_test_validation``, ``model_evaluation``
    sample_size : images per split the checks see (None: 10,000), a seeded random sample
    seed : seeds the sample and every check; same inputs and seed give the same outcomes
    progress : show a tqdm bar
    """
    suites = _validate(inputs, suites, sample_size, seed)
    from mlflow_deepfix.checks import _compat_image

    _compat_image.apply()
    from threadpoolctl import threadpool_limits
    from tqdm.auto import tqdm

    from mlflow_deepfix._progress import bar_options

    started = time.perf_counter()
    outcomes: list[CheckOutcome] = []
    with warnings.catch_warnings(), threadpool_limits(limits=1):
        warnings.simplefilter("ignore")
        try:
            plan = _Plan(inputs, sample_size or DEFAULT_SAMPLE_SIZE, int(seed))
        except DeepfixInputError:
            raise
        except Exception as exc:  # noqa: BLE001 - Deepchecks refused the data: every check errs
            reason = f"Deepchecks could not load the images: {type(exc).__name__}: {exc}"
            logger.warning("deepfix image checks: %s", reason)
            return [CheckOutcome(name=check.name(), suite=suite, outcome="errored", reason=reason)
                    for suite in suites for check in _suite_checks(suite, None)]
        checks = [(suite, check) for suite in suites
                  for check in _suite_checks(suite, plan.deepchecks_properties)]
        for suite, check in tqdm(checks, desc="deepfix image checks", unit="check",
                                 leave=False, **bar_options(progress)):
            name = check.name()
            spec = IMAGE_CHECK_CATALOG.get(name) or CheckSpec(name, suite, "single", value="")
            reason = _skip_reason(spec, plan)
            if reason:
                outcomes.append(CheckOutcome(name=name, suite=suite, outcome="skipped",
                                             reason=reason))
                continue
            bound = _BOUNDED.get(name)
            check.n_samples = bound(plan.sample_size) if bound else None
            parts = [(split or "", _run_unit(check, spec, plan, split))
                     for split in _splits_of(check, spec, plan)]
            outcomes.append(_merge(name, parts))
    log_run("image checks", outcomes, started, logger)
    return outcomes
