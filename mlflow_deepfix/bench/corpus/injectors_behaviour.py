"""Fault injectors for the behaviour categories (issue 15): fragile predictions, an
overconfident slice, a group disparity and a spurious shortcut.

They register into the same :data:`~mlflow_deepfix.bench.corpus.injectors.INJECTORS`
registry as the contract categories' injectors (imported at the end of that module,
so their cases come after the others' in :func:`~mlflow_deepfix.bench.corpus.cases.
generate_cases` and no existing case id changes). Like the others they work on any
dataset the ``applies`` predicate admits, pick the columns they touch by their
association with the target, and claim them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from mlflow_deepfix.bench.corpus.datasets import CorpusDataset
from mlflow_deepfix.bench.corpus.injectors import (
    _TREE_FAMILIES,
    Tempered,
    _has_probabilities,
    _label_codes,
    _pick_rows,
    injector,
)
from mlflow_deepfix.bench.corpus.workflow import Workflow

#: datasets big enough that a quarter / two fifths of the test split (30% of the rows)
#: holds the tens of rows a slice or a group needs to be measured
MIN_ROWS_FOR_GROUPS = 500


def _enough_rows(d: CorpusDataset) -> bool:
    return len(d.frame) >= MIN_ROWS_FOR_GROUPS


# --------------------------------------------------------------------------- fragile


@injector(
    "fragile_predictions",
    {"code_share50": 0.5, "code_share70": 0.7, "code_share90": 0.9},
    applies=lambda d, f: f in _TREE_FAMILIES,
    description="a 10-value site code read as a number by a tree model, each code with "
    "its own effect on the label (for a share of the rows): a neighbouring code, an "
    "unrelated site, flips the prediction",
)
def _fragile(wf: Workflow, share: float) -> None:
    name = "site_code"
    codes = np.arange(100, 110)
    y = wf.train[wf.target]
    if wf.is_classification:
        labels = np.sort(y.unique())
        effect = {c: labels[i % len(labels)] for i, c in enumerate(wf.rng.permutation(codes))}
    else:
        scale = 2.0 * share * float(y.astype(float).std() or 1.0)
        effect = dict(zip(codes, wf.rng.choice([-scale, scale], codes.size)))
    for split in ("train", "test"):
        frame = getattr(wf, split).copy()
        code = wf.rng.choice(codes, len(frame))
        frame[name] = code.astype(np.int64)
        if wf.is_classification:
            hit = wf.rng.random(len(frame)) < share
            values = frame[wf.target].to_numpy(copy=True)
            values[hit] = np.array([effect[c] for c in code[hit]], dtype=values.dtype)
            frame[wf.target] = values
        else:
            frame[wf.target] = frame[wf.target].astype(float) + np.array(
                [effect[c] for c in code])
        setattr(wf, split, frame)
    wf.numeric.append(name)
    wf.claimed.add(name)
    # the user declares the code categorical (it is one); only the model reads it as a
    # number. Declared, the evaluator moves it to a neighbouring code however few rows
    # the test split has (its inference needs 10 levels to be <= 5% of the rows)
    wf.config["cat_features"] = [*wf.categorical, name]
    wf.notes.append(f"code column {name!r} (10 unordered codes) read as a number, "
                    f"deciding {share:.0%} of the labels")


# --------------------------------------------------------------------------- confidence


class SliceSharpened(Tempered):
    """A fitted classifier whose probabilities are sharpened (raised to ``power`` and
    renormalised) on the rows where ``column`` >= ``threshold``: the served model is
    surer than it has any reason to be on that slice, and right nowhere more often."""

    def __init__(self, model: Any = None, column: str = "", threshold: float = 0.0,
                 power: float = 1.0):
        super().__init__(model, power)
        self.column = column
        self.threshold = threshold

    def predict_proba(self, X):
        proba = np.asarray(self.model.predict_proba(X), dtype=float)
        inside = pd.to_numeric(pd.DataFrame(X)[self.column], errors="coerce").to_numpy() \
            >= self.threshold
        proba[inside] = self.temper(proba[inside])
        return proba


@injector(
    "overconfident_slice",
    {"sharp_mild": (0.2, 4.0), "sharp_mid": (0.35, 8.0), "sharp_strong": (0.5, 16.0)},
    applies=lambda d, f: d.is_classification and _has_probabilities(f) and _enough_rows(d),
    description="on the top quartile of an informative feature a share of the labels "
    "follows no pattern (both splits) and the served model's probabilities are sharpened "
    "there (raised to a power): confidently wrong on that slice",
)
def _overconfident(wf: Workflow, level: Any) -> None:
    share, power = level
    (col,) = wf.informative(1)
    values = pd.to_numeric(wf.train[col])
    # the upper quartile as the evaluator describes it ("> q75"); with ties at q75 (pixel
    # intensities, scores) the smallest value above it, so the slice is never empty
    above = values[values > values.quantile(0.75)]
    threshold = float(above.min()) if (values > values.quantile(0.75)).mean() >= 0.1 \
        else float(values.quantile(0.75))
    for split in ("train", "test"):
        frame = getattr(wf, split).copy()
        rows = np.flatnonzero(pd.to_numeric(frame[col]).to_numpy() >= threshold)
        hit = rows[_pick_rows(wf.rng, len(rows), share)] if len(rows) else rows
        values = frame[wf.target].to_numpy(copy=True)
        labels = np.sort(frame[wf.target].unique())
        # another class than the row's own: a wrong label, not a shuffled one
        for i in hit:
            others = labels[labels != values[i]]
            values[i] = others[wf.rng.integers(len(others))]
        frame[wf.target] = values
        setattr(wf, split, frame)

    def sharpen(wf: Workflow, model: Any) -> Any:
        return SliceSharpened(model, col, threshold, power)  # fitted already: no refit

    wf.after_fit.append(sharpen)
    wf.notes.append(f"slice {col} >= {threshold:.4g}: {share:.0%} wrong labels, "
                    f"probabilities raised to the power {power:g}")


# --------------------------------------------------------------------------- fairness

_GROUP_COLUMN = "demographic_group"
#: the group whose features are garbled: the one the model must serve worse for the
#: case to count (``cases.measure`` measures its shortfall, not any gap)
DISADVANTAGED_GROUP = "B"


@injector(
    "group_disparity",
    {"garbled50": 0.5, "garbled75": 0.75, "garbled100": 1.0},
    applies=lambda d, f: _enough_rows(d),
    description="a sensitive column (named in sensitive_features, not read by the "
    "model) whose group B (40% of rows) has a share of its most informative features' "
    "values (a third of them, at least three) garbled (swapped between B's rows, so their spread is unchanged) "
    "in both splits: the model serves B worse",
)
def _disparity(wf: Workflow, share: float) -> None:
    # a third of the numeric features (at least three): with many redundant features
    # (breast cancer, digits) three garbled ones would change nothing
    cols = wf.informative(min(len(wf.numeric), max(3, len(wf.numeric) // 3)))
    for split in ("train", "test"):
        frame = getattr(wf, split).copy()
        group = np.where(wf.rng.random(len(frame)) < 0.4, DISADVANTAGED_GROUP, "A").astype(object)
        rows = np.flatnonzero(group == DISADVANTAGED_GROUP)
        for col in cols:
            hit = rows[wf.rng.random(rows.size) < share]
            values = frame[col].to_numpy(copy=True)
            values[hit] = values[wf.rng.permutation(hit)]
            frame[col] = values
        frame[_GROUP_COLUMN] = group
        setattr(wf, split, frame)
    wf.config["sensitive_features"] = [_GROUP_COLUMN]
    wf.config.setdefault("extra_columns", []).append(_GROUP_COLUMN)
    wf.claimed.add(_GROUP_COLUMN)
    wf.notes.append(f"group B of {_GROUP_COLUMN!r}: {share:.0%} of {cols} garbled")


# --------------------------------------------------------------------------- spurious

_SHORTCUT_NAMES = ("batch_reading", "scanner_signal", "device_score")


@injector(
    "spurious_correlation",
    {"shortcut_weak": 1.0, "shortcut_mid": 0.6, "shortcut_strong": 0.3},
    description="a shortcut column that follows the label in training (label code plus "
    "noise) and, in the evaluation data, has the same distribution but no link to it",
)
def _spurious(wf: Workflow, noise: float) -> None:
    name = _SHORTCUT_NAMES[wf.seed % len(_SHORTCUT_NAMES)]
    y = wf.train[wf.target]
    if wf.is_classification:
        code = _label_codes(y)
        code = (code - code.mean()) / (code.std() or 1.0)
    else:
        values = y.astype(float)
        code = ((values - values.mean()) / (values.std() or 1.0)).to_numpy()
    shortcut = np.round(50 + 10 * (code + wf.rng.normal(0, noise, len(code))), 3)
    wf.train = wf.train.assign(**{name: shortcut})
    # the same values, drawn independently of the evaluation rows' labels
    wf.test = wf.test.assign(**{name: wf.rng.choice(shortcut, len(wf.test), replace=True)})
    wf.numeric.append(name)
    wf.claimed.add(name)
    wf.notes.append(f"shortcut column {name!r} (noise sd {noise}) linked to the label in "
                    "training only")
