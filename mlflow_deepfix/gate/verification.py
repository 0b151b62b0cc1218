"""Fix verification: did a retrained model fix what the old one got wrong, without
breaking what the old one got right?

A retrained model's headline score can rise while it starts failing on rows that the
model in production handled well; users then see regressions that the average hides.
The study of model-fixing approaches (arXiv 2512.23745) measures this with two numbers
computed on the same evaluation rows, which this module implements:

* **repair rate** (RR): the share of the baseline's *wrong* predictions that the
  candidate gets *right*;
* **negative flip rate** (NFR): the share of the baseline's *correct* predictions that
  the candidate gets *wrong* (a "negative flip", i.e. a regression fault).

"Correct" means ``prediction == label`` for classification. For regression it means an
absolute error of at most ``tolerance``; by default the tolerance is the *baseline's
median absolute error* on the same rows, so half of the baseline's predictions count
as correct and RR/NFR say how the candidate moves rows across that line. Pass an
explicit tolerance (in target units) when the business has one.

Besides RR/NFR, the verification compares the task's main metric (accuracy; r2 and
rmse for regression) and the deepfix finding categories of both models: categories the
baseline had and the candidate no longer has are *resolved*, new ones *introduced*.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

logger = logging.getLogger(__name__)

#: main metrics per task family, in the order they are reported
CLASSIFICATION_METRICS = ("accuracy",)
REGRESSION_METRICS = ("r2", "rmse")


@dataclass(frozen=True)
class FixVerification:
    """Candidate vs baseline on the same rows. Rates are ``None`` when undefined
    (RR when the baseline made no mistake, NFR when it got nothing right)."""

    task: str
    n_rows: int
    baseline_metrics: dict[str, float]
    candidate_metrics: dict[str, float]
    n_baseline_wrong: int
    n_baseline_correct: int
    n_repaired: int
    n_broken: int
    repair_rate: float | None
    negative_flip_rate: float | None
    findings_resolved: list[str] = field(default_factory=list)
    findings_introduced: list[str] = field(default_factory=list)
    #: regression only: the absolute error below which a prediction counts as correct
    tolerance: float | None = None

    def metrics(self) -> dict[str, float]:
        """The ``deepfix_*`` metrics logged on the candidate's gate run (undefined rates
        are left out rather than logged as NaN)."""
        out: dict[str, float] = {}
        if self.repair_rate is not None:
            out["deepfix_repair_rate"] = float(self.repair_rate)
        if self.negative_flip_rate is not None:
            out["deepfix_negative_flip_rate"] = float(self.negative_flip_rate)
        for name, value in self.baseline_metrics.items():
            out[f"deepfix_baseline_{name}"] = float(value)
        for name, value in self.candidate_metrics.items():
            out[f"deepfix_candidate_{name}"] = float(value)
        out["deepfix_findings_resolved"] = float(len(self.findings_resolved))
        out["deepfix_findings_introduced"] = float(len(self.findings_introduced))
        return out

    def rows(self) -> list[tuple[str, Any]]:
        """Key/value rows for the "Fix verification" section of report.html."""
        rows: list[tuple[str, Any]] = []
        for name in self.candidate_metrics:
            change = (
                f"{_fmt(self.baseline_metrics.get(name))} (baseline) -> "
                f"{_fmt(self.candidate_metrics[name])} (candidate)"
            )
            rows.append((name, change))
        repaired = (
            f"{_pct(self.repair_rate)}: {self.n_repaired} of the baseline's "
            f"{self.n_baseline_wrong} wrong predictions are now right"
        )
        broken = (
            f"{_pct(self.negative_flip_rate)}: {self.n_broken} of the baseline's "
            f"{self.n_baseline_correct} correct predictions are now wrong"
        )
        rows.append(("repair rate", repaired))
        rows.append(("negative flip rate", broken))
        if self.tolerance is not None:
            rows.append(("correct means", f"absolute error <= {self.tolerance:.4g}"))
        rows.append(("findings resolved", ", ".join(self.findings_resolved) or "none"))
        rows.append(("findings introduced", ", ".join(self.findings_introduced) or "none"))
        rows.append(("rows compared", self.n_rows))
        return rows


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _pct(value: float | None) -> str:
    return "undefined" if value is None else f"{100 * value:.1f}%"


def _as_1d(values: Any, name: str) -> np.ndarray:
    if isinstance(values, pd.DataFrame):
        if values.shape[1] != 1:
            raise ValueError(
                f"{name} must be one-dimensional (one prediction per row); got a frame with "
                f"{values.shape[1]} columns."
            )
        values = values.iloc[:, 0]
    array = np.asarray(values)
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    if array.ndim != 1:
        raise ValueError(
            f"{name} must be one-dimensional (one prediction per row); got shape {array.shape}."
        )
    return array


def _same_labels(y_true: np.ndarray, y_pred: np.ndarray) -> np.ndarray:
    """Element-wise label equality that tolerates 1 vs 1.0 vs "1" (models and file
    readers disagree on label dtypes)."""
    try:
        return np.asarray(y_true.astype(float) == y_pred.astype(float))
    except (TypeError, ValueError):
        return np.asarray(
            pd.Series(y_true).astype(str).to_numpy() == pd.Series(y_pred).astype(str).to_numpy()
        )


def correct_mask(
    y_true: Any, y_pred: Any, *, task: str, tolerance: float | None = None
) -> np.ndarray:
    """Boolean array: is each prediction correct?

    Classification: the predicted label equals the true one. Regression: the absolute
    error is at most ``tolerance`` (required for regression).
    """
    y_true = _as_1d(y_true, "y_true")
    y_pred = _as_1d(y_pred, "y_pred")
    if len(y_true) != len(y_pred):
        raise ValueError(
            f"y_true and y_pred must have the same length; got {len(y_true)} and {len(y_pred)}."
        )
    if task == "regression":
        if tolerance is None or not math.isfinite(tolerance) or tolerance < 0:
            raise ValueError(
                f"tolerance must be a finite number >= 0 for regression; got {tolerance!r}."
            )
        error = np.abs(y_true.astype(float) - y_pred.astype(float))
        return np.asarray(error <= tolerance)
    return _same_labels(y_true, y_pred)


def flip_rates(
    baseline_correct: np.ndarray, candidate_correct: np.ndarray
) -> tuple[float | None, float | None, dict[str, int]]:
    """(repair rate, negative flip rate, counts) from two correctness masks."""
    baseline_correct = np.asarray(baseline_correct, dtype=bool)
    candidate_correct = np.asarray(candidate_correct, dtype=bool)
    wrong = ~baseline_correct
    counts = {
        "baseline_wrong": int(wrong.sum()),
        "baseline_correct": int(baseline_correct.sum()),
        "repaired": int((wrong & candidate_correct).sum()),
        "broken": int((baseline_correct & ~candidate_correct).sum()),
    }
    repair = counts["repaired"] / counts["baseline_wrong"] if counts["baseline_wrong"] else None
    nfr = counts["broken"] / counts["baseline_correct"] if counts["baseline_correct"] else None
    return repair, nfr, counts


def main_metrics(y_true: Any, y_pred: Any, *, task: str) -> dict[str, float]:
    """accuracy (classification) or r2 and rmse (regression)."""
    y_true = _as_1d(y_true, "y_true")
    y_pred = _as_1d(y_pred, "y_pred")
    if task == "regression":
        from sklearn.metrics import r2_score

        truth = y_true.astype(float)
        pred = y_pred.astype(float)
        return {
            "r2": float(r2_score(truth, pred)),
            "rmse": float(np.sqrt(np.mean((truth - pred) ** 2))),
        }
    return {"accuracy": float(np.mean(_same_labels(y_true, y_pred)))}


def default_tolerance(y_true: Any, baseline_pred: Any) -> float:
    """The baseline's median absolute error (see the module docstring)."""
    error = np.abs(
        _as_1d(y_true, "y_true").astype(float) - _as_1d(baseline_pred, "y_pred").astype(float)
    )
    return float(np.median(error))


def compare_findings(
    baseline_categories: Iterable[str], candidate_categories: Iterable[str]
) -> tuple[list[str], list[str]]:
    """(resolved, introduced) finding categories, each sorted, duplicates removed."""
    baseline = set(baseline_categories)
    candidate = set(candidate_categories)
    return sorted(baseline - candidate), sorted(candidate - baseline)


def verify_fix(
    y_true: Any,
    baseline_pred: Any,
    candidate_pred: Any,
    *,
    task: str,
    baseline_categories: Iterable[str] = (),
    candidate_categories: Iterable[str] = (),
    tolerance: float | None = None,
) -> FixVerification:
    """Compare a candidate's predictions with a baseline's on the same rows.

    Parameters
    ----------
    y_true, baseline_pred, candidate_pred : array-like of shape (n_rows,)
        Labels and both models' predictions (class labels for classification).
    task : str
        ``"binary_classification"``, ``"multiclass_classification"`` or ``"regression"``.
    baseline_categories, candidate_categories : iterable of str
        Category ids of each model's deepfix findings.
    tolerance : float, optional
        Regression only: the absolute error below which a prediction counts as correct;
        default: the baseline's median absolute error.
    """
    accepted = ("binary_classification", "multiclass_classification", "regression")
    if task not in accepted:
        raise ValueError(f"task must be one of {accepted}; got {task!r}.")
    y_true = _as_1d(y_true, "y_true")
    baseline_pred = _as_1d(baseline_pred, "baseline_pred")
    candidate_pred = _as_1d(candidate_pred, "candidate_pred")
    if not len(y_true) == len(baseline_pred) == len(candidate_pred):
        raise ValueError(
            "y_true, baseline_pred and candidate_pred must have the same length; got "
            f"{len(y_true)}, {len(baseline_pred)} and {len(candidate_pred)}."
        )
    if len(y_true) == 0:
        raise ValueError("fix verification needs at least one row; got 0.")
    if task == "regression":
        if tolerance is None:
            tolerance = default_tolerance(y_true, baseline_pred)
    else:
        tolerance = None
    baseline_ok = correct_mask(y_true, baseline_pred, task=task, tolerance=tolerance)
    candidate_ok = correct_mask(y_true, candidate_pred, task=task, tolerance=tolerance)
    repair, nfr, counts = flip_rates(baseline_ok, candidate_ok)
    resolved, introduced = compare_findings(baseline_categories, candidate_categories)
    result = FixVerification(
        task=task,
        n_rows=len(y_true),
        baseline_metrics=main_metrics(y_true, baseline_pred, task=task),
        candidate_metrics=main_metrics(y_true, candidate_pred, task=task),
        n_baseline_wrong=counts["baseline_wrong"],
        n_baseline_correct=counts["baseline_correct"],
        n_repaired=counts["repaired"],
        n_broken=counts["broken"],
        repair_rate=repair,
        negative_flip_rate=nfr,
        findings_resolved=resolved,
        findings_introduced=introduced,
        tolerance=tolerance,
    )
    logger.info(
        "fix verification: repair rate %s, negative flip rate %s, resolved %s, introduced %s",
        _pct(repair),
        _pct(nfr),
        resolved or "none",
        introduced or "none",
    )
    return result
