"""Case specs and their deterministic generation, building and harm measurement.

A case is ``<category>.<dataset>.<model>.<magnitude>.s<seed>`` (two-bug cases join
two categories and two magnitudes with ``+``; clean controls are
``clean.<dataset>.<model>.none.s<seed>``). :func:`generate_cases` picks, for every
category, dataset x model x magnitude combinations in a round-robin over the datasets
the injector applies to, so that every category is spread over as many datasets as
possible and the counts stay balanced.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from mlflow_deepfix.bench.corpus.datasets import DATASET_BATCHES, load_dataset
from mlflow_deepfix.bench.corpus.injectors import INJECTORS

# The behaviour categories' injectors (issue 15) live in their own module and register
# into INJECTORS when imported, after the contract categories', so that no existing case
# id changes. Imported here (cases is what every corpus entry point loads first) rather
# than from injectors.py, which would make the two modules import each other.
from mlflow_deepfix.bench.corpus import injectors_behaviour  # noqa: E402,F401,I001
from mlflow_deepfix.bench.corpus.models import MODEL_FAMILIES
from mlflow_deepfix.bench.corpus.workflow import Served, Workflow, fit_and_serve, new_workflow

logger = logging.getLogger(__name__)

#: bump when the generated cases change (a new injector, other magnitudes ...)
CORPUS_VERSION = "3"
# 3: label_drift records how far the test labels really moved (``label_shift``,
#    ``label_shift_z``) and counts only beyond sampling noise (definition v4, stop 48);
#    the cases themselves are those of version 2, byte for byte
# 2: feature_drift keeps integer columns integer; harm adds ECE and balanced accuracy
#    of the workflow without the bug (``*_reference``), and class_imbalance,
#    poor_calibration and prediction_drift count only with measured harm
#    (stop 28: three datasets added with cases of their own; no existing case changed,
#    so the version, which names what an existing case id means, stays)

#: buggy cases per category in the full corpus
PER_CATEGORY = 24
#: pairs of independent injectors planted together
TWO_BUG_PAIRS: tuple[tuple[str, str], ...] = (
    ("duplicate_samples", "train_test_overlap"),
    ("feature_drift", "unseen_categories"),
    ("missing_values", "outliers"),
    ("target_leakage", "class_imbalance"),
    ("label_drift", "constant_feature"),
    ("data_type_issues", "feature_drift"),
    ("conflicting_labels", "split_size_mismatch"),
    ("identifier_leakage", "missing_values"),
    ("outliers", "weak_segment"),
    ("unused_features", "train_test_overlap"),
)
PER_PAIR = 6


@dataclass(frozen=True)
class CaseSpec:
    """What to build: the planted categories (empty for a clean control) and where."""

    categories: tuple[str, ...]
    dataset: str
    model: str
    magnitudes: tuple[str, ...]
    seed: int = 0

    @property
    def id(self) -> str:
        cat = "+".join(self.categories) or "clean"
        mag = "+".join(self.magnitudes) or "none"
        return f"{cat}.{self.dataset}.{self.model}.{mag}.s{self.seed}"

    @property
    def kind(self) -> str:
        return {0: "clean", 1: "single"}.get(len(self.categories), "two_bug")

    @classmethod
    def from_id(cls, case_id: str) -> CaseSpec:
        cat, dataset, model, mag, seed = case_id.split(".")
        categories = () if cat == "clean" else tuple(cat.split("+"))
        magnitudes = () if mag == "none" else tuple(mag.split("+"))
        return cls(categories, dataset, model, magnitudes, int(seed.lstrip("s")))


def _rng_seed(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")


def _combos(category: str, datasets: tuple[str, ...]) -> list[tuple[str, str]]:
    inj = INJECTORS[category]
    return [(d, f) for d in datasets for f in MODEL_FAMILIES
            if inj.applies(load_dataset(d), f)]


def _round_robin(pairs: list[tuple[str, str]], n: int, salt: str) -> list[tuple[str, str]]:
    """``n`` pairs taking datasets in turn (each dataset's models in a seeded order)."""
    rng = np.random.default_rng(_rng_seed(salt))
    by_dataset: dict[str, list[str]] = {}
    for d, f in pairs:
        by_dataset.setdefault(d, []).append(f)
    for d, families in by_dataset.items():
        by_dataset[d] = list(rng.permutation(families))
    order = list(rng.permutation(sorted(by_dataset)))
    chosen: list[tuple[str, str]] = []
    round_ = 0
    while len(chosen) < n and any(round_ < len(v) for v in by_dataset.values()):
        for d in order:
            if round_ < len(by_dataset[d]) and len(chosen) < n:
                chosen.append((str(d), str(by_dataset[d][round_])))
        round_ += 1
    return chosen


def _draw(datasets: tuple[str, ...], *, per_category: int, per_pair: int, seed: int,
          clean: bool, salt: str = "") -> list[CaseSpec]:
    """Single bugs, two-bug pairs and clean controls drawn among ``datasets``."""
    specs: list[CaseSpec] = []
    for category, inj in INJECTORS.items():
        chosen = _round_robin(_combos(category, datasets), per_category, category + salt)
        for i, (d, f) in enumerate(chosen):
            levels = inj.levels_for(load_dataset(d), f)
            specs.append(CaseSpec((category,), d, f, (levels[i % len(levels)],), seed))
    for a, b in TWO_BUG_PAIRS:
        pairs = sorted(set(_combos(a, datasets)) & set(_combos(b, datasets)))
        for i, (d, f) in enumerate(_round_robin(pairs, per_pair, f"{a}+{b}{salt}")):
            levels_a = INJECTORS[a].levels_for(load_dataset(d), f)
            levels_b = INJECTORS[b].levels_for(load_dataset(d), f)
            # the middle and blatant magnitudes: two subtle bugs may not both be visible
            la = levels_a[min(len(levels_a) - 1, 1 + i % 2)]
            lb = levels_b[min(len(levels_b) - 1, 1 + (i + 1) % 2)]
            specs.append(CaseSpec((a, b), d, f, (la, lb), seed))
    if clean:
        specs.extend(CaseSpec((), d, f, (), seed) for d in datasets for f in MODEL_FAMILIES)
    return specs


def generate_cases(
    *, per_category: int = PER_CATEGORY, per_pair: int = PER_PAIR, seed: int = 0,
    clean: bool = True,
) -> list[CaseSpec]:
    """The whole corpus, deterministically: single bugs, two-bug pairs, clean controls.

    The datasets come in batches (:data:`~mlflow_deepfix.bench.corpus.datasets.DATASET_BATCHES`):
    the core datasets' cases first, then each added batch's, drawn among that batch's
    datasets only with the counts scaled to its size. Adding a batch never changes an
    earlier case (which dataset, model and magnitude each category's i-th case uses),
    so cached artifacts stay valid and scores before and after compare case for case.
    """
    specs: list[CaseSpec] = []
    for index in range(len(DATASET_BATCHES)):
        specs += draw_batch(index, per_category=per_category, per_pair=per_pair, seed=seed,
                            clean=clean)
    return specs


def draw_batch(index: int, *, per_category: int = PER_CATEGORY, per_pair: int = PER_PAIR,
               seed: int = 0, clean: bool = True) -> list[CaseSpec]:
    """The cases of dataset batch ``index``, drawn among its own datasets with the counts
    scaled to its size against the core batch's (the core batch: the counts as given)."""
    batch = DATASET_BATCHES[index]
    if index == 0:
        return _draw(batch, per_category=per_category, per_pair=per_pair, seed=seed,
                     clean=clean)
    share = len(batch) / len(DATASET_BATCHES[0])
    return _draw(batch, per_category=max(1, round(per_category * share)),
                 per_pair=max(1, round(per_pair * share)), seed=seed, clean=clean,
                 salt=batch_salt(index))


def batch_salt(index: int) -> str:
    """The seed salt of batch ``index``: none for the core, then ``@added``,
    ``@added2``, ... (the first added batch's salt predates the batches)."""
    return "" if index == 0 else "@added" if index == 1 else f"@added{index}"


# --------------------------------------------------------------------------- building


@dataclass
class BuiltCase:
    spec: CaseSpec
    served: Served
    metadata: dict[str, Any] = field(default_factory=dict)


def _workflow(spec: CaseSpec, *, with_bugs: bool, without: str | None = None) -> Workflow:
    """The case's workflow, with its bugs planted (``without``: all but that one)."""
    dataset = load_dataset(spec.dataset)
    wf = new_workflow(dataset, spec.model, spec.seed, _rng_seed(spec.id))
    if with_bugs:
        for category, magnitude in zip(spec.categories, spec.magnitudes):
            if category == without:
                continue
            inj = INJECTORS[category]
            if not inj.applies(dataset, spec.model) or magnitude not in inj.levels_for(
                dataset, spec.model
            ):
                raise ValueError(f"injector {category!r} does not apply to {spec.dataset}/"
                                 f"{spec.model}")
            inj.apply(wf, inj.levels[magnitude])
    return wf


def _score(task: str, y: np.ndarray, pred: np.ndarray) -> float | None:
    """Accuracy (classification) or R^2 (regression); None when not computable."""
    from sklearn.metrics import accuracy_score, r2_score

    try:
        if task == "regression":
            return float(r2_score(np.asarray(y, float), np.asarray(pred, float)))
        return float(accuracy_score(np.asarray(y).astype(str), np.asarray(pred).astype(str)))
    except Exception:  # noqa: BLE001 - wrong-task outputs etc. are scored as None
        return None


def _predict(served: Served, frame: pd.DataFrame) -> np.ndarray | None:
    try:
        return np.asarray(served.model.predict(frame.drop(columns=[served.target])))
    except Exception:  # noqa: BLE001 - a crashing model is a finding, not a build error
        return None


def _ece(y: np.ndarray, proba: np.ndarray, classes: np.ndarray) -> float:
    conf = proba.max(axis=1)
    correct = classes[proba.argmax(axis=1)].astype(str) == np.asarray(y).astype(str)
    bins = np.minimum((conf * 10).astype(int), 9)
    return float(sum(abs(correct[bins == b].mean() - conf[bins == b].mean())
                     * (bins == b).mean() for b in range(10) if (bins == b).any()))


def _f1_gain(y: np.ndarray, proba: np.ndarray, classes: np.ndarray) -> float:
    from sklearn.metrics import f1_score

    positive = classes[1]
    truth = np.asarray(y).astype(str) == str(positive)
    at_default = f1_score(truth, proba[:, 1] >= 0.5, zero_division=0)
    best = max(f1_score(truth, proba[:, 1] >= t, zero_division=0)
               for t in np.linspace(0.02, 0.98, 49))
    return float(best - at_default)


def _balanced_accuracy(y: pd.Series, pred: np.ndarray) -> float | None:
    """Mean recall over the test classes (None when not computable): what a rare class
    loses shows here, where plain accuracy hardly moves."""
    from sklearn.metrics import balanced_accuracy_score

    try:
        return float(balanced_accuracy_score(np.asarray(y).astype(str),
                                             np.asarray(pred).astype(str)))
    except Exception:  # noqa: BLE001 - wrong-task outputs etc. are scored as None
        return None


def _probability_measures(spec: CaseSpec, served: Served) -> dict[str, float]:
    """ECE of the served classifier's probabilities on its test split, and for a binary
    task the F1 a better threshold would gain (empty without probabilities)."""
    raw = served.raw
    if not hasattr(raw, "predict_proba") or spec.model == "pyfunc_labels":
        return {}
    try:
        X = served.test.drop(columns=[served.target])[list(raw.feature_names_in_)]
        proba = np.asarray(raw.predict_proba(X))
        y = served.test[served.target].to_numpy()
        out = {"ece": _ece(y, proba, raw.classes_)}
        if proba.shape[1] == 2:
            out["f1_gain"] = _f1_gain(y, proba, raw.classes_)
        return out
    except Exception as error:  # noqa: BLE001 - no probabilities: nothing to measure
        logger.debug("%s: no probability measurements (%s)", spec.id, error)
        return {}


def _served_on(task: str, y: np.ndarray, pred: np.ndarray, rows: np.ndarray,
               smoothed: bool = False) -> tuple[float, float]:
    """How well the test ``rows`` are served (higher is better) and its standard error:
    accuracy, or minus the mean absolute error over the target's standard deviation.
    ``smoothed``: the accuracy's standard error from (k+1)/(n+2), finite for rows that are
    all right or all wrong (the few rows of a planted segment)."""
    n = int(rows.sum())
    if task == "regression":
        spread = float(np.std(y.astype(float))) or 1.0
        errors = np.abs(y[rows].astype(float) - pred[rows].astype(float)) / spread
        return -errors.mean(), errors.std(ddof=1) / np.sqrt(n)
    right = int((y[rows].astype(str) == pred[rows].astype(str)).sum())
    p = right / n
    q = (right + 1) / (n + 2) if smoothed else p
    return p, np.sqrt(q * (1 - q) / n)


def _group_shortfall(task: str, served: Served, pred: np.ndarray) -> tuple[float, float] | None:
    """How much worse the planted group (``DISADVANTAGED_GROUP``) of the sensitive column
    is served than the best other group (>= 20 test rows each), with its standard error:
    in accuracy, or in mean absolute error over the target's standard deviation. Signed:
    a planted group served *better* is a negative shortfall, not a disparity the bug
    made (the groups are a random 40/60 split, so some gap either way is chance)."""
    y = served.test[served.target].to_numpy()
    planted = injectors_behaviour.DISADVANTAGED_GROUP
    out = None
    for column in served.config["sensitive_features"]:
        groups = served.test[column].astype(str).to_numpy()
        stats = {}
        for g in np.unique(groups):
            rows = groups == g
            if rows.sum() < 20:
                continue
            stats[g] = _served_on(task, y, pred, rows)
        if planted not in stats or len(stats) < 2:
            continue
        best = max((g for g in stats if g != planted), key=lambda g: stats[g][0])
        shortfall = stats[best][0] - stats[planted][0]
        se = float(np.hypot(stats[best][1], stats[planted][1]))
        if out is None or shortfall > out[0]:
            out = (float(shortfall), se)
    return out


#: fewest test rows in the planted segment for its shortfall to be measured at all (the
#: z gate below judges whether the rows there are enough to tell the shortfall from noise)
MIN_SEGMENT_ROWS = 5


def _segment_shortfall(task: str, served: Served, pred: np.ndarray,
                       segment: tuple[str, Any]) -> tuple[float, float] | None:
    """How much worse the planted weak segment (``column == value``) of the test rows is
    served than the rest of the test rows, with its standard error: in accuracy, or in
    mean absolute error over the target's standard deviation. Signed like
    :func:`_group_shortfall`: a segment served no worse than the rest is no harm, however
    many of its labels the injector shuffled (a model that already errs there, or a
    target the shuffle barely moves, shows none). The accuracy's standard error uses
    (k+1)/(n+2) so a segment or a rest that is all right or all wrong keeps a finite z."""
    column, value = segment
    if column not in served.test.columns:
        return None
    y = served.test[served.target].to_numpy()
    values = served.test[column].to_numpy()
    inside = values == value
    if not inside.any():
        inside = served.test[column].astype(str).to_numpy() == str(value)
    if inside.sum() < MIN_SEGMENT_ROWS or (~inside).sum() < MIN_SEGMENT_ROWS:
        return None
    rest, rest_se = _served_on(task, y, pred, ~inside, smoothed=True)
    seg, seg_se = _served_on(task, y, pred, inside, smoothed=True)
    return float(rest - seg), float(np.hypot(rest_se, seg_se))


def _label_shift(task: str, served: Served, favoured: Any) -> tuple[float, float] | None:
    """How far the label_drift injector really moved the test labels from the training
    labels, in the direction it pushed, with its standard error: the favoured class's
    share on test minus on train (pooled two-proportion standard error), or on a
    regression (``favoured == "high"``) the test target mean minus the training one, in
    training standard deviations (Welch). Signed: a test split that ends up favouring
    the class less than training does is no unrepresentative split of the planted kind.
    The injector resamples 70% of an already small test split, so a mild weight can move
    the labels by less than two random splits of the same data differ."""
    y_train, y_test = served.train[served.target], served.test[served.target]
    n_train, n_test = len(y_train), len(y_test)
    if n_train < 2 or n_test < 2:
        return None
    if task == "regression":
        train, test = y_train.astype(float).to_numpy(), y_test.astype(float).to_numpy()
        spread = float(np.std(train, ddof=1)) or 1.0
        se = np.sqrt(np.var(train, ddof=1) / n_train + np.var(test, ddof=1) / n_test)
        return float((test.mean() - train.mean()) / spread), float(se / spread)
    key = str(favoured)
    p_train = float((y_train.astype(str) == key).mean())
    p_test = float((y_test.astype(str) == key).mean())
    pooled = (p_train * n_train + p_test * n_test) / (n_train + n_test)
    se = np.sqrt(pooled * (1 - pooled) * (1 / n_train + 1 / n_test))
    return p_test - p_train, float(se)


#: minimum measured harm for a case to count (category -> (measure, threshold))
HARM_REQUIRED: dict[str, tuple[str, float]] = {
    "underfitting": ("score_drop", 0.05),
    "degenerate_predictions": ("score_drop", 0.03),
    "preprocessing_mismatch": ("score_drop", 0.05),
    "overfitting": ("train_test_gap", 0.10),
    # worse calibrated than the same workflow without the bug: a model family that is
    # poorly calibrated anyway (naive Bayes) is no planted miscalibration, and a rule
    # that flagged it would flag its clean control too
    "poor_calibration": ("ece_excess", 0.05),
    "decision_threshold": ("f1_gain", 0.05),
    # a rare class is a cause only where it costs that class: balanced accuracy (mean
    # recall over the classes) below the clean workflow's, same bar as the others
    "class_imbalance": ("balanced_accuracy_drop", 0.05),
    # labels unchanged, features nudged: the moved predictions cost test score (same
    # bar as a shortcut, the other test-only shift of inputs)
    "prediction_drift": ("score_drop", 0.02),
    # behaviour categories (issue 15): the shortcut must cost the model on the test
    # split, and the groups must really be served unequally
    "spurious_correlation": ("score_drop", 0.02),
    "group_disparity": ("group_shortfall", 0.05),
    # the planted segment must be served measurably worse than the rest of the test rows
    # (same bar as a disparity: the shuffle can leave a segment no worse than the rest)
    "weak_segment": ("segment_shortfall", 0.05),
    # the test labels must have moved the way the injector pushed them; how far is
    # judged by significance alone (HARM_BEYOND_NOISE): any shift that two random splits
    # would not give is an unrepresentative test split (corpus definition v4)
    "label_drift": ("label_shift", 0.0),
}
#: corpus v1's bars (an absolute ECE, rarity and nudges counted without harm), kept to
#: score both definitions on the same artifacts (``corpus_split.py score --definition v1``)
HARM_REQUIRED_V1: dict[str, tuple[str, float]] = {
    **{k: v for k, v in HARM_REQUIRED.items()
       if k not in ("class_imbalance", "prediction_drift", "label_drift")},
    "poor_calibration": ("ece", 0.05),
}
#: planted categories that, measured, can also be another category (category -> the
#: other): on a binary task the decision_threshold injector (a low positive rate with the
#: default threshold) and the class_imbalance injector (one class made rare) plant one
#: mechanism, and the same workflow can meet both categories' bars in
#: :data:`HARM_REQUIRED` (a threshold that would gain F1 *and* balanced accuracy below
#: the clean twin's). Such a case is, by the corpus's own definitions, both bugs, and a
#: diagnosis naming either names it (corpus definition v3, decided at stop 31 before
#: scoring; ``corpus_split.py score --definition v2`` scores without it).
SAME_MECHANISM: dict[str, str] = {
    "decision_threshold": "class_imbalance",
    "class_imbalance": "decision_threshold",
}


def also_named(category: str, harm: dict[str, Any]) -> tuple[str, ...]:
    """The other categories a diagnosis may name for planted ``category``: the category
    of the same mechanism (:data:`SAME_MECHANISM`) where the recorded harm meets that
    category's bar too; none otherwise."""
    other = SAME_MECHANISM.get(category)
    if other is None:
        return ()
    measure_name, threshold = HARM_REQUIRED[other]
    value = harm.get(measure_name)
    return (other,) if value is not None and value >= threshold else ()


#: harm that must also stand out from sampling noise (category -> (z measure, minimum)):
#: the disparity's groups are a random split of the test rows, so a gap of 0.05 between
#: them arises by chance where the per-group scores are noisy (small groups, heavy-tailed
#: targets); the planted group's shortfall must reach one-sided 95% significance
HARM_BEYOND_NOISE: dict[str, tuple[str, float]] = {
    "group_disparity": ("group_shortfall_z", 1.645),
    "weak_segment": ("segment_shortfall_z", 1.645),
    # the favoured class's share (or the target mean) on test against train: a shift
    # within sampling noise is what any random split gives, not a planted one
    "label_drift": ("label_shift_z", 1.645),
}
#: the bars definition v3 (stops 31-47) applied: label drift counted at any realised shift
HARM_REQUIRED_V3: dict[str, tuple[str, float]] = {
    k: v for k, v in HARM_REQUIRED.items() if k != "label_drift"
}


def _baseline(task: str, served: Served) -> float | None:
    """The trivial model's test score: the training majority class, or the mean."""
    y_train, y_test = served.train[served.target], served.test[served.target]
    if task == "regression":
        return _score(task, y_test, np.full(len(y_test), float(y_train.astype(float).mean())))
    majority = str(y_train.astype(str).mode()[0])
    return float((y_test.astype(str) == majority).mean())


#: how much a clean control's test score must beat the trivial baseline (accuracy of
#: the majority class, or R^2 of the training mean)
CLEAN_MARGIN = 0.03


def _with_z(name: str, found: tuple[float, float] | None) -> dict[str, Any]:
    """A shortfall and its standard error as harm keys: ``name`` and ``name_z``."""
    if found is None:
        return {}
    shortfall, se = found
    return {name: shortfall, f"{name}_z": shortfall / se if se > 0 else None}


#: categories whose harm is read against the same workflow without that bug on
#: measures another bug moves too (a leak lifts balanced accuracy): in a two-bug case
#: the reference keeps the other bug, for one bug it is the clean twin
TWIN_RELATIVE = ("class_imbalance", "poor_calibration")


def _reference_measures(spec: CaseSpec, clean: Served,
                        clean_pred: np.ndarray | None) -> dict[str, float]:
    """Balanced accuracy and ECE of the same workflow without the twin-relative bug of
    ``spec`` (``clean`` when it has one bug): keys ``*_reference``."""
    relative = [c for c in spec.categories if c in TWIN_RELATIVE]
    reference, pred = clean, clean_pred
    if len(spec.categories) > 1 and relative:
        if len(relative) > 1:
            raise ValueError(f"{spec.id}: one twin-relative category per case, got {relative}")
        reference = fit_and_serve(_workflow(spec, with_bugs=True, without=relative[0]))
        pred = _predict(reference, reference.test)
    out: dict[str, float] = {}
    if pred is not None:
        balanced = _balanced_accuracy(reference.test[reference.target], pred)
        if balanced is not None:
            out["balanced_accuracy_reference"] = balanced
    ece = _probability_measures(spec, reference).get("ece")
    if ece is not None:
        out["ece_reference"] = ece
    return out


def measure(spec: CaseSpec, served: Served,
            segment: tuple[str, Any] | None = None,
            favoured_label: Any = None) -> dict[str, Any]:
    """Harm measured against the same workflow without the bug, on the same seed
    (``segment``: the weak segment an injector planted, see :attr:`Workflow.segment`;
    ``favoured_label``: the label a label_drift injector favoured, see
    :attr:`Workflow.favoured_label`)."""
    task = load_dataset(spec.dataset).task
    out: dict[str, Any] = {}
    pred = _predict(served, served.test)
    out["score_test"] = _score(task, served.test[served.target], pred) if pred is not None else None
    pred_train = _predict(served, served.train)
    out["score_train"] = (_score(task, served.train[served.target], pred_train)
                          if pred_train is not None else None)
    out["score_baseline"] = _baseline(task, served)
    if spec.categories:
        clean = fit_and_serve(_workflow(spec, with_bugs=False))
        clean_pred = _predict(clean, clean.test)
        out["score_clean"] = _score(task, clean.test[clean.target], clean_pred)
        out["score_baseline_clean"] = _baseline(task, clean)
        if task != "regression":
            out.update(_reference_measures(spec, clean, clean_pred))
    if task != "regression":
        out.update(_probability_measures(spec, served))
        if pred is not None:
            out["balanced_accuracy"] = _balanced_accuracy(served.test[served.target], pred)
    if out.get("score_test") is not None and out.get("score_clean") is not None:
        out["score_drop"] = out["score_clean"] - out["score_test"]
    if out.get("ece") is not None and out.get("ece_reference") is not None:
        out["ece_excess"] = out["ece"] - out["ece_reference"]
    if (out.get("balanced_accuracy") is not None
            and out.get("balanced_accuracy_reference") is not None):
        out["balanced_accuracy_drop"] = (out["balanced_accuracy_reference"]
                                         - out["balanced_accuracy"])
    if pred is not None and served.config.get("sensitive_features"):
        out.update(_with_z("group_shortfall", _group_shortfall(task, served, pred)))
    if pred is not None and segment is not None:
        out.update(_with_z("segment_shortfall",
                           _segment_shortfall(task, served, pred, segment)))
    if favoured_label is not None:
        out.update(_with_z("label_shift", _label_shift(task, served, favoured_label)))
    if out.get("score_test") is not None and out.get("score_train") is not None:
        out["train_test_gap"] = out["score_train"] - out["score_test"]
    return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in out.items()}


def validity(spec: CaseSpec, harm: dict[str, Any],
             required: dict[str, tuple[str, float]] | None = None) -> tuple[bool, str]:
    """Whether the planted bug measurably harms the model (for the harm-based
    categories); a case that fails this is excluded from scoring, with the reason.
    ``required``: the bars (default :data:`HARM_REQUIRED`)."""
    required = HARM_REQUIRED if required is None else required
    if not spec.categories:
        # a clean control must be a healthy workflow: clearly better than the trivial
        # baseline (a model no better than it is a true alarm, not a false one)
        test, base = harm.get("score_test"), harm.get("score_baseline")
        if test is None or base is None or test - base < CLEAN_MARGIN:
            return False, f"clean control not better than the trivial baseline ({test} vs {base})"
        return True, ""
    clean, base = harm.get("score_clean"), harm.get("score_baseline_clean")
    if clean is None or base is None or clean - base < CLEAN_MARGIN:
        return False, f"the workflow without the bug is not healthy ({clean} vs {base})"
    for category in spec.categories:
        if category not in required:
            continue
        measure_name, threshold = required[category]
        value = harm.get(measure_name)
        if value is None:
            if category in ("preprocessing_mismatch", "degenerate_predictions",
                            "underfitting") and harm.get("score_test") is None:
                continue  # the served model cannot even be scored: harm is total
            return False, f"{category}: {measure_name} not measurable"
        if value < threshold:
            return False, f"{category}: {measure_name}={value:.3f} < {threshold}"
        if category in HARM_BEYOND_NOISE:
            z_name, z_min = HARM_BEYOND_NOISE[category]
            z = harm.get(z_name)
            if z is None or z < z_min:
                return False, f"{category}: {z_name}={z} < {z_min} (within sampling noise)"
    return True, ""


def build_case(spec: CaseSpec) -> BuiltCase:
    """Build the workflow of ``spec``: split, inject, fit, serve, measure."""
    wf = _workflow(spec, with_bugs=True)
    served = fit_and_serve(wf)
    harm = measure(spec, served, wf.segment, wf.favoured_label)
    valid, reason = validity(spec, harm)
    metadata = {
        "case_id": spec.id,
        "corpus_version": CORPUS_VERSION,
        "spec": asdict(spec),
        "kind": spec.kind,
        "expected": list(spec.categories),
        "dataset": spec.dataset,
        "task": load_dataset(spec.dataset).task,
        "model": spec.model,
        "magnitudes": list(spec.magnitudes),
        "harm": harm,
        "valid": valid,
        "invalid_reason": reason,
        "notes": wf.notes,
        "n_train": len(served.train),
        "n_test": len(served.test),
    }
    return BuiltCase(spec, served, metadata)
