"""Run Deepchecks' default NLP suites offline and deterministically, one outcome per check.

The text counterpart of :mod:`._runner`. As there, the check list and default
conditions come from Deepchecks' own suites (``deepchecks.nlp.suites``
``data_integrity()``, ``train_test_validation()``, ``model_evaluation()``; plus
Confusion Matrix Report, see :mod:`._text_catalog`), each check runs inside its own
``try`` and its result is condensed into a :class:`~mlflow_deepfix.schemas.CheckOutcome`.
What differs, and why:

* **nothing is downloaded** -- Deepchecks gets deepfix's own per-sample properties
  (:func:`mlflow_deepfix.testing.content.text_features.text_properties`, never its built-in ones, which
  need fasttext and hub models), precomputed embeddings, and an offline tokenizer for
  Unknown Tokens (skipped without one, rather than letting Deepchecks fetch
  ``bert-base-uncased``); :mod:`._compat_text` removes the per-sample
  ``nltk.download`` calls. Checks that need an input we lack are skipped with a reason.
* **no model object** -- the caller's predictions / probabilities go into the
  Context (Deepchecks' ``_DummyModel``); the model is never called here.
* **sequential, not threaded** -- Deepchecks' NLP code seeds and draws from numpy's
  *global* random state (``TextData.sample``, the prediction look-ups, the choice of
  segment columns), so checks running side by side would make results depend on thread
  scheduling. The checks are fast once nothing is downloaded (seconds for thousands of
  texts), and the global ``random`` / ``numpy.random`` states are restored afterwards.
* **labels as strings** -- Deepchecks turns text-classification labels and predictions
  into ``str``; deepfix does it first (integral floats as ints: ``1.0`` -> ``"1"``),
  so that classes, labels, predictions and probability columns agree.
"""

from __future__ import annotations

import contextlib
import logging
import math
import random
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from mlflow_deepfix.checks._args import validate_run_args
from mlflow_deepfix.checks._catalog import DATA_INTEGRITY, CheckSpec
from mlflow_deepfix.checks._condense import _num, log_run, to_outcome
from mlflow_deepfix.checks._text_catalog import (
    COUNTS_SAMPLES,
    N_SAMPLES_KEY,
    NEEDS_EMBEDDINGS,
    NEEDS_METADATA,
    NEEDS_PROPERTIES,
    NEEDS_TOKENIZER,
    TEXT_CHECK_CATALOG,
    TEXT_CHECK_NEEDS,
    TEXT_CONDENSERS,
    TEXT_EXTRA_CHECKS,
)
from mlflow_deepfix.errors import DeepfixInputError
from mlflow_deepfix.schemas import CheckOutcome

logger = logging.getLogger(__name__)

#: rows per split that expensive checks see when ``sample_size`` is None
DEFAULT_SAMPLE_SIZE = 10_000
#: properties / metadata columns the segment checks search (the most related to the
#: model's per-sample loss, or to being labelled)
SEGMENT_COLUMNS = 5
TEXT_TASKS = ("binary_classification", "multiclass_classification")
#: tolerance of Deepchecks on probability rows summing to 1
_PROBA_EPS = 1e-3


@dataclass
class TextCheckInputs:
    """What the text checks need; see :func:`run_text_checks`.

    ``properties`` / ``embeddings`` / ``predictions`` / ``probabilities`` / ``metadata``
    map ``"train"`` / ``"test"`` to one row per text, in the order of the texts.
    Probability columns follow ``classes`` (when ``classes`` is None: the sorted
    distinct labels and predictions).
    """

    train_texts: list[str] | None
    test_texts: list[str]
    train_labels: np.ndarray | None
    test_labels: np.ndarray
    task: str
    properties: dict[str, pd.DataFrame]
    embeddings: dict[str, np.ndarray] | None = None
    predictions: dict[str, np.ndarray] | None = None
    probabilities: dict[str, np.ndarray] | None = None
    classes: list | None = None
    metadata: dict[str, pd.DataFrame] | None = None
    tokenizer: Any | None = None
    model_skip_reason: str | None = None


# --------------------------------------------------------------------------- validation


def _validate(inputs: TextCheckInputs, suites: Sequence[str], sample_size: int | None,
              seed: int) -> list[str]:
    suites = validate_run_args(suites, sample_size, seed)
    if inputs.task not in TEXT_TASKS:
        raise DeepfixInputError(f"text checks support the tasks {', '.join(TEXT_TASKS)}; got "
                                f"{inputs.task!r}")
    splits = {"test": (inputs.test_texts, inputs.test_labels)}
    if inputs.train_texts is not None:
        splits["train"] = (inputs.train_texts, inputs.train_labels)
    for split, (texts, labels) in splits.items():
        if texts is None or isinstance(texts, str) or len(texts) == 0:
            raise DeepfixInputError(f"{split}_texts must be a non-empty list of texts")
        if labels is None or len(labels) != len(texts):
            raise DeepfixInputError(
                f"{split}_labels must hold one label per text ({len(texts)}); got "
                f"{'None' if labels is None else len(labels)}")
        for name, given in (("properties", inputs.properties), ("embeddings", inputs.embeddings),
                            ("predictions", inputs.predictions),
                            ("probabilities", inputs.probabilities),
                            ("metadata", inputs.metadata)):
            value = (given or {}).get(split)
            if value is not None and len(value) != len(texts):
                raise DeepfixInputError(f"{name}[{split!r}] has {len(value)} rows; {split} has "
                                        f"{len(texts)} texts")
    return suites


# ------------------------------------------------------------------------ preparation


def _label_str(value: Any) -> str | None:
    """The string Deepchecks would make of a label, integral floats written as ints."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    try:
        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        pass
    return str(value)


def _labels(values: Sequence[Any]) -> list[str | None]:
    return [_label_str(v) for v in values]


def _texts(values: Sequence[Any]) -> list[str]:
    """Deepchecks wants str only: missing texts become the empty string."""
    out = []
    for value in values:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            out.append("")
        else:
            out.append(value if isinstance(value, str) else str(value))
    return out


@dataclass
class _Outputs:
    """The model's outputs as Deepchecks wants them (str classes, sorted)."""

    classes: list[str] | None = None
    y_pred: dict[str, np.ndarray] = field(default_factory=dict)
    y_proba: dict[str, np.ndarray] = field(default_factory=dict)
    #: why model checks are skipped; None when predictions exist
    skip: str | None = None
    #: why probability checks are skipped; None when probabilities exist
    proba_skip: str | None = None
    #: why train/test model checks are skipped when the train split has no predictions
    missing_train: str = "no predictions were given for the training split"


def _outputs(inputs: TextCheckInputs, splits: list[str]) -> _Outputs:
    out = _Outputs()
    given_pred = {s: p for s, p in (inputs.predictions or {}).items() if p is not None}
    given_proba = {s: p for s, p in (inputs.probabilities or {}).items() if p is not None}
    if inputs.model_skip_reason:
        out.skip = inputs.model_skip_reason
    elif not given_pred and not given_proba:
        out.skip = "no predictions were given"
    if out.skip:
        out.proba_skip = out.skip
        return out
    labels = {"test": inputs.test_labels, "train": inputs.train_labels}
    if inputs.classes is not None:
        given_classes = [_label_str(c) for c in inputs.classes]
    else:
        observed = {c for s in splits for c in _labels(labels[s])}
        observed |= {c for p in given_pred.values() for c in _labels(p)}
        given_classes = sorted(c for c in observed if c is not None)
    order = np.argsort(np.asarray(given_classes, dtype=object).astype(str), kind="stable")
    out.classes = [given_classes[i] for i in order]
    problems: dict[str, str] = {}
    for split in splits:
        proba = given_proba.get(split)
        if proba is not None:
            proba = np.asarray(proba, dtype=float)
            problem = _proba_problem(proba, len(out.classes))
            if problem:
                problems[split] = f"the {split} probabilities are unusable: {problem}"
                out.proba_skip = problems[split]
            else:
                out.y_proba[split] = proba[:, order]
        pred = given_pred.get(split)
        if pred is not None:
            out.y_pred[split] = np.asarray(_labels(pred), dtype=object)
        elif split in out.y_proba:
            out.y_pred[split] = np.asarray(out.classes, dtype=object)[
                out.y_proba[split].argmax(axis=1)]
    if out.proba_skip:
        out.y_proba = {}
    elif "test" not in out.y_proba:
        out.proba_skip = "no class probabilities were given for the test split"
    if "test" not in out.y_pred:
        out.skip = problems.get("test") or "no predictions were given for the test split"
    out.missing_train = problems.get("train") or "no predictions were given for the training split"
    return out


def _proba_problem(proba: np.ndarray, n_classes: int) -> str | None:
    if proba.ndim != 2 or proba.shape[1] != n_classes:
        return f"shape {proba.shape}, expected (n, {n_classes}) (one column per class)"
    if not np.isfinite(proba).all():
        return "they hold NaN or infinite values"
    if (np.abs(proba.sum(axis=1) - 1) > _PROBA_EPS).any():
        return "rows do not sum to 1"
    return None


def _association(frame: pd.DataFrame, target: pd.Series) -> pd.Series:
    """|Spearman| of numeric columns, correlation ratio of the others, with ``target``."""
    scores = {}
    target = target.astype(float)
    for column in frame.columns:
        values = frame[column]
        if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
            score = values.rank().corr(target.rank())
        else:
            groups = target.groupby(values.astype(str).to_numpy()).agg(["mean", "count"])
            total = ((target - target.mean()) ** 2).sum()
            between = (groups["count"] * (groups["mean"] - target.mean()) ** 2).sum()
            score = math.sqrt(between / total) if total > 0 else 0.0
        scores[column] = abs(score) if _num(score) is not None else 0.0
    return pd.Series(scores, dtype=float)


def _top_columns(frame: pd.DataFrame | None, target: pd.Series | None) -> list[str] | None:
    """The SEGMENT_COLUMNS columns most associated with ``target`` (ties by name); None
    (all columns) when there are no more than that."""
    if frame is None or frame.shape[1] <= SEGMENT_COLUMNS:
        return None
    if target is None:
        return sorted(frame.columns, key=str)[:SEGMENT_COLUMNS]
    scores = _association(frame.reset_index(drop=True), target.reset_index(drop=True))
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], str(kv[0])))
    return [name for name, _ in ranked[:SEGMENT_COLUMNS]]


def _log_loss(labels: list[str | None], proba: np.ndarray, classes: list[str]) -> pd.Series:
    index = {c: i for i, c in enumerate(classes)}
    loss = np.full(len(labels), np.nan)
    for row, label in enumerate(labels):
        if label in index:
            loss[row] = -math.log(max(float(proba[row, index[label]]), 1e-12))
    return pd.Series(loss)


# --------------------------------------------------------------------------- the plan


class _NoTokenizer:
    """Stands in for a tokenizer while Deepchecks' suite is built (its Unknown Tokens
    would download ``bert-base-uncased`` otherwise); the check is then skipped."""

    is_fast = False
    unk_token_id = 0
    model_max_length = 0

    def tokenize(self, text: str) -> list[str]:  # pragma: no cover - never run
        return text.split()

    def convert_tokens_to_ids(self, token: str) -> int:  # pragma: no cover - never run
        return 1


@dataclass
class _Unit:
    spec: CheckSpec
    split: str | None
    run: Callable[[], Any]
    #: the number of samples the check sees, stored in its value for the condensers
    n_samples: int | None = None


class _Plan:
    """TextData objects, model outputs and contexts shared by every check of one run."""

    def __init__(self, inputs: TextCheckInputs, sample_size: int, seed: int):
        from deepchecks.nlp import TextData

        self.inputs, self.sample_size, self.seed = inputs, sample_size, seed
        self.splits = ["test"] if inputs.train_texts is None else ["train", "test"]
        self.labels = {"test": _labels(inputs.test_labels)}
        texts = {"test": _texts(inputs.test_texts)}
        if inputs.train_texts is not None:
            self.labels["train"] = _labels(inputs.train_labels)
            texts["train"] = _texts(inputs.train_texts)
        self.properties = {s: p.reset_index(drop=True) for s, p in (inputs.properties or {}).items()
                           if p is not None and s in self.splits}
        self.embeddings = {s: np.asarray(e) for s, e in (inputs.embeddings or {}).items()
                           if e is not None and s in self.splits}
        self.metadata = {s: m.reset_index(drop=True) for s, m in (inputs.metadata or {}).items()
                         if m is not None and s in self.splits}
        self.outputs = _outputs(inputs, self.splits)
        self.data: dict[str, Any] = {}
        for split in self.splits:
            data = TextData(raw_text=texts[split], label=self.labels[split],
                            task_type="text_classification", name=split.capitalize())
            if split in self.properties and self.properties[split].shape[1]:
                data.set_properties(self.properties[split], categorical_properties=[])
            if split in self.metadata and self.metadata[split].shape[1]:
                data.set_metadata(self.metadata[split])
            if split in self.embeddings:
                data.set_embeddings(self.embeddings[split], verbose=False)
            self.data[split] = data
        self.context = self._context()

    @property
    def has_train(self) -> bool:
        return "train" in self.data

    def _context(self) -> Any:
        out = self.outputs
        first = "train" if self.has_train else "test"
        second = "test" if self.has_train else None
        kwargs: dict[str, Any] = {}
        if not out.skip:
            kwargs = {"train_pred": out.y_pred.get(first),
                      "train_proba": out.y_proba.get(first),
                      "test_pred": out.y_pred.get("test") if second else None,
                      "test_proba": out.y_proba.get("test") if second else None,
                      "model_classes": out.classes}
        try:
            return self.small_context(self.data[first], self.data.get(second) if second else None,
                                      **kwargs)
        except Exception as exc:  # bad outputs must not stop the data checks
            if not kwargs:
                raise
            out.skip = out.proba_skip = (f"Deepchecks rejected the predictions: "
                                         f"{type(exc).__name__}: {exc}")
            logger.warning("deepfix text checks: %s", out.skip)
            return self.small_context(self.data[first], self.data.get(second) if second else None)

    def small_context(self, train: Any, test: Any | None = None, **kwargs: Any) -> Any:
        from deepchecks.nlp import Context

        return Context(train, test, with_display=False, random_state=self.seed, **kwargs)

    def kind(self, split: str) -> Any:
        from deepchecks.core.checks import DatasetKind

        if split == "test" and self.has_train:
            return DatasetKind.TEST
        return DatasetKind.TRAIN

    def sampled(self, split: str, n: int) -> Any:
        data = self.data[split]
        return data if len(data) <= n else data.sample(n, random_state=self.seed)

    def labelled_context(self, split: str) -> Any:
        """A one-split context of the labelled samples of ``split`` with their
        predictions (for checks that, unlike most, do not drop unlabelled samples)."""
        rows = [i for i, label in enumerate(self.labels[split]) if label is not None]
        data = self.data[split].copy(rows_to_use=rows)
        data.name = "Train"
        return self.small_context(data, train_pred=self.outputs.y_pred[split][rows],
                                  model_classes=self.outputs.classes)

    def loss(self, split: str) -> pd.Series | None:
        proba = self.outputs.y_proba.get(split)
        if proba is None:
            return None
        return _log_loss(self.labels[split], proba, self.outputs.classes or [])


# ------------------------------------------------------------------------- the checks


def _suite_checks(suite: str, plan: _Plan) -> list[Any]:
    """Deepchecks' checks of ``suite`` with their default conditions, seeded."""
    from deepchecks.nlp import checks as nlp_checks
    from deepchecks.nlp.suites import data_integrity, model_evaluation, train_test_validation

    factory = {"data_integrity": data_integrity, "train_test_validation": train_test_validation,
               "model_evaluation": model_evaluation}[suite]
    # The suite passes its kwargs to every check; only Unknown Tokens reads `tokenizer`.
    tokenizer = plan.inputs.tokenizer if plan.inputs.tokenizer is not None else _NoTokenizer()
    checks = list(factory(random_state=plan.seed, tokenizer=tokenizer).checks.values())
    for name, extra_suite in TEXT_EXTRA_CHECKS.items():
        if extra_suite == suite:
            checks.append(getattr(nlp_checks, name.replace(" ", ""))(random_state=plan.seed))
    return checks


def _skip_reason(spec: CheckSpec, plan: _Plan) -> str | None:
    needs = TEXT_CHECK_NEEDS.get(spec.name, frozenset())
    splits = plan.splits if spec.scope != "single" or spec.suite == DATA_INTEGRITY else ["test"]
    if spec.scope == "pair" and not plan.has_train:
        return "no training data"
    if NEEDS_PROPERTIES in needs and not all(s in plan.properties for s in splits):
        return "no text properties were given"
    if NEEDS_EMBEDDINGS in needs and not all(s in plan.embeddings for s in splits):
        return ("no text embeddings were given (they need the [kb] extra: torch, "
                "sentence-transformers and the MiniLM model package)")
    if NEEDS_METADATA in needs and not all(
            s in plan.metadata and plan.metadata[s].shape[1] >= 2 for s in splits):
        return "it needs at least two metadata columns (columns other than the text)"
    if NEEDS_TOKENIZER in needs and plan.inputs.tokenizer is None:
        return ("no offline tokenizer is available (it comes with the [kb] extra: "
                "transformers and the MiniLM model package); Deepchecks' default would be "
                "downloaded from the Hugging Face hub")
    if spec.needs_model and plan.outputs.skip:
        return plan.outputs.skip
    if spec.needs_model and spec.scope == "pair" and "train" not in plan.outputs.y_pred:
        return plan.outputs.missing_train
    if spec.needs_proba and plan.outputs.proba_skip:
        return plan.outputs.proba_skip
    return None


def _units(check: Any, spec: CheckSpec, plan: _Plan) -> list[_Unit]:
    """How each check runs: on which split(s), on how many rows."""
    s, name = plan.sample_size, spec.name
    if hasattr(check, "random_state"):
        check.random_state = plan.seed
    largest = max(len(d) for d in plan.data.values())
    bounded = {"Unknown Tokens": s, "Special Characters": s,
               "Property Label Correlation": max(s // 2, 100),
               "Under Annotated Property Segments": max(s // 2, 100),
               "Under Annotated Meta Data Segments": max(s // 2, 100),
               "Property Segments Performance": max(s // 2, 100),
               "Metadata Segments Performance": max(s // 2, 100)}
    if hasattr(check, "n_samples"):
        # every other check sees all rows (Deepchecks' defaults cap them at 100,000+)
        check.n_samples = bounded.get(name, max(largest, check.n_samples or 0))
    if name == "Text Embeddings Drift":
        check.sample_size = s  # 'auto' reduction is PCA (UMAP only serves displays)
    if name == "Train Test Samples Mix":
        test = plan.sampled("test", s)
        check.n_samples = largest
        return [_Unit(spec, None, lambda: check.run_logic(
            plan.small_context(plan.data["train"], test)), len(test))]
    if name == "Frequent Substrings":
        # pre-sampled: Deepchecks' own sampling path re-counts with a loop that fails
        # on TextData; on <= n_samples rows it is never taken
        def frequent(split: str) -> _Unit:
            data = plan.sampled(split, s)

            def run() -> Any:
                check.n_samples = len(data)
                return check.run_logic(plan.small_context(data), plan.kind("train"))

            return _Unit(spec, split, run, len(data))

        return [frequent(split) for split in plan.splits]
    if name in ("Property Segments Performance", "Metadata Segments Performance",
                "Under Annotated Property Segments", "Under Annotated Meta Data Segments"):
        _choose_segment_columns(check, name, plan)
    if name == "Confusion Matrix Report" and None in plan.labels["test"]:
        return [_Unit(spec, "test", lambda: check.run_logic(plan.labelled_context("test"),
                                                            plan.kind("train")))]
    single = spec.scope == "single"
    if not single:
        return [_Unit(spec, None, lambda: check.run_logic(plan.context))]
    splits = plan.splits if spec.suite == DATA_INTEGRITY else ["test"]
    return [_Unit(spec, split, (lambda split=split: check.run_logic(plan.context,
                                                                    plan.kind(split))),
                  min(len(plan.data[split]), getattr(check, "n_samples", None) or largest))
            for split in splits]


def _choose_segment_columns(check: Any, name: str, plan: _Plan) -> None:
    """Deepchecks picks ``n_top`` segment columns *at random*; we pick the ones most
    related to what the segments are about: the model's per-sample log loss (test), or
    whether a sample is labelled (Under Annotated, train when there is one)."""
    by_metadata = "Meta" in name
    split = "test" if "Performance" in name else plan.splits[0]
    frame = (plan.metadata if by_metadata else plan.properties).get(split)
    if "Performance" in name:
        target = plan.loss(split)
    else:
        target = pd.Series([label is not None for label in plan.labels[split]], dtype=float)
    columns = _top_columns(frame, target)
    check.columns, check.n_top_features = columns, None


# ------------------------------------------------------------------------ running


def condense_text(name: str, suite: str, result: Any, seconds: float,
                  suffix: str = "") -> CheckOutcome:
    """One Deepchecks NLP ``CheckResult`` -> :class:`CheckOutcome`."""
    condensed = TEXT_CONDENSERS[name](result.value)
    return to_outcome(name, suite, result, seconds, condensed, suffix, drop_missing=True)


def _message_only(value: Any) -> str | None:
    """Deepchecks' way of saying a check found nothing to do (e.g. segment checks with
    > 95% of samples labelled, or no weak segment to report)."""
    if isinstance(value, dict) and set(value) == {"message"}:
        return str(value["message"])
    return None


def _not_relevant(exc: BaseException) -> bool:
    from mlflow_deepfix.checks._runner import _not_relevant as tabular_not_relevant

    return tabular_not_relevant(exc)


def _execute(unit: _Unit, check: Any, two_splits: bool) -> CheckOutcome:
    spec = unit.spec
    suffix = f" ({unit.split})" if unit.split and two_splits else ""
    start = time.perf_counter()
    try:
        result = unit.run()
        message = _message_only(result.value)
        if message is not None:
            return CheckOutcome(name=spec.name, suite=spec.suite, outcome="skipped",
                                reason=message,
                                duration_seconds=round(time.perf_counter() - start, 4))
        result.check = check
        result.process_conditions()
        if spec.name in COUNTS_SAMPLES and unit.n_samples is not None:
            result = _WithValue(result, unit.n_samples)
        return condense_text(spec.name, spec.suite, result, time.perf_counter() - start, suffix)
    except Exception as exc:
        seconds = round(time.perf_counter() - start, 4)
        reason = f"{type(exc).__name__}: {exc}"
        outcome = "skipped" if _not_relevant(exc) else "errored"
        if outcome == "errored":
            logger.warning("deepfix text checks: %s%s errored: %s", spec.name, suffix, reason,
                           exc_info=logger.isEnabledFor(logging.DEBUG))
        return CheckOutcome(name=spec.name, suite=spec.suite, outcome=outcome, reason=reason,
                            duration_seconds=seconds)


class _WithValue:
    """A result whose value also carries the number of samples the check saw, for the
    condensers (added after the conditions ran: some iterate over the value)."""

    def __init__(self, result: Any, n_samples: int | None):
        self._result = result
        self.value = dict(result.value)
        if n_samples is not None:
            self.value[N_SAMPLES_KEY] = n_samples

    def __getattr__(self, name: str) -> Any:
        return getattr(self._result, name)


@contextlib.contextmanager
def _seeded_globals(seed: int) -> Iterator[None]:
    """Seed ``random`` and ``numpy.random`` (which Deepchecks' NLP code draws from) and
    restore the caller's states afterwards."""
    py_state, np_state = random.getstate(), np.random.get_state()
    random.seed(seed)
    np.random.seed(seed % 2**32)
    try:
        yield
    finally:
        random.setstate(py_state)
        np.random.set_state(np_state)


def run_text_checks(inputs: TextCheckInputs, suites: Sequence[str], *, sample_size: int | None,
                    seed: int, progress: bool = False) -> list[CheckOutcome]:
    """Run every check of the chosen Deepchecks NLP suites; one outcome per check, in
    suite order (see :data:`TEXT_CHECK_CATALOG` for what each outcome's numbers mean).
    Never raises because a check failed (that check is ``errored``; one that does not
    apply, or lacks an input, is ``skipped`` with a reason); raises
    :class:`~mlflow_deepfix.errors.DeepfixInputError` for invalid arguments. Nothing is
    downloaded.

    Parameters
    ----------
    inputs : TextCheckInputs
    suites : any of ``data_integrity``, ``train_test_validation``, ``model_evaluation``
    sample_size : rows per split that expensive checks see (None: 10,000)
    seed : seeds every random choice; same inputs and seed give the same outcomes
    progress : show a tqdm bar
    """
    from mlflow_deepfix.checks import _compat_text

    suites = _validate(inputs, suites, sample_size, seed)
    _compat_text.apply()
    from tqdm.auto import tqdm

    from mlflow_deepfix._progress import bar_options
    from mlflow_deepfix.checks._runner import _merge

    started = time.perf_counter()
    outcomes: list[CheckOutcome] = []
    with warnings.catch_warnings(), _seeded_globals(int(seed)), _quiet_deepchecks():
        warnings.simplefilter("ignore")
        plan = _plan(inputs, sample_size or DEFAULT_SAMPLE_SIZE, int(seed))
        jobs: list[tuple[str, str, list[_Unit] | str, Any]] = []
        for suite in suites:
            for check in _suite_checks(suite, plan):
                name = check.name()
                spec = TEXT_CHECK_CATALOG.get(name) or CheckSpec(name, suite, "single", value="")
                reason = _skip_reason(spec, plan) if name in TEXT_CONDENSERS else (
                    "deepfix does not know this check's result")
                units = reason or _prepare(check, spec, plan)
                jobs.append((name, suite, units, check))
        n_units = sum(len(u) for _, _, u, _ in jobs if not isinstance(u, str))
        with tqdm(total=n_units, desc="deepfix text checks", unit="check",
                  leave=False, **bar_options(progress)) as bar:
            for name, suite, units, check in jobs:
                if isinstance(units, str):
                    outcomes.append(CheckOutcome(name=name, suite=suite, outcome="skipped",
                                                 reason=units))
                    continue
                two = suite == DATA_INTEGRITY and plan.has_train and len(units) > 1
                parts = []
                for unit in units:
                    parts.append((unit.split or "", _execute(unit, check, two)))
                    bar.set_postfix_str(name, refresh=False)
                    bar.update()
                outcomes.append(_merge(name, parts))
    log_run("text checks", outcomes, started, logger)
    return outcomes


def _plan(inputs: TextCheckInputs, sample_size: int, seed: int) -> _Plan:
    """The shared plan; Deepchecks' rejections of the data itself (labels, properties,
    metadata or embeddings of a form it cannot take) become :class:`DeepfixInputError`."""
    from deepchecks.core.errors import DeepchecksBaseError

    try:
        return _Plan(inputs, sample_size, seed)
    except (DeepchecksBaseError, TypeError, ValueError) as exc:
        raise DeepfixInputError(f"Deepchecks cannot use the text data: {type(exc).__name__}: "
                                f"{exc}") from exc


def _prepare(check: Any, spec: CheckSpec, plan: _Plan) -> list[_Unit]:
    try:
        return _units(check, spec, plan)
    except Exception as exc:  # noqa: BLE001 - preparing one check must not stop the others
        return [_Unit(spec, None, _raiser(exc))]


def _raiser(exc: BaseException) -> Callable[[], Any]:
    def run() -> Any:
        raise exc

    return run


class _DropExpectedWarnings(logging.Filter):
    """Deepchecks logs a warning for things we do on purpose (a chosen subset of segment
    columns, properties given as custom ones)."""

    _EXPECTED = ("Could not find model's classes",
                 "Train and Test datasets have different properties")

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(self._EXPECTED)


@contextlib.contextmanager
def _quiet_deepchecks() -> Iterator[None]:
    log = logging.getLogger("deepchecks")
    quiet = _DropExpectedWarnings()
    log.addFilter(quiet)
    try:
        yield
    finally:
        log.removeFilter(quiet)
