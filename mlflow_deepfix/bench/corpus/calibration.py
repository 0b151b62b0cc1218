"""Fitting the optional calibration model (:mod:`deepfix_agents.calibration`) on the
corpus, and scoring it on held-out datasets only.

Training rows are the findings of the training folds' cases; a finding's label is
whether its category is one of the case's planted categories (clean controls' findings
are all negatives; invalid cases are left out). The ``medium_threshold`` is the
smallest probability that keeps the training folds' clean controls at or under
:data:`TARGET_CLEAN_ALARMS` with a medium+ finding, so it too is fitted on the training
folds only. Each control's probability for that count comes from a model fitted without
its dataset (an inner leave-one-dataset-out): the model fitted on a control's own
findings learns to give them low probabilities, so a threshold read off them is too
low for a dataset the model never saw (it let 5 of 54 held-out clean controls warn where
the training folds allowed 2 %).
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from pathlib import Path

import numpy as np
from deepfix_agents.calibration import (
    CALIBRATION_VERSION,
    NUMERIC_FEATURES,
    Calibration,
    apply_calibration,
    feature_vector,
    rules_fingerprint,
)

from mlflow_deepfix.bench.corpus.runner import CaseOutcome
from mlflow_deepfix.bench.corpus.scoring import MEDIUM_OR_WORSE, counts_as_miss, folds
from mlflow_deepfix.schemas import CATEGORIES

logger = logging.getLogger(__name__)

TARGET_CLEAN_ALARMS = 0.02
REGULARISATION_C = 0.5


def _rows(outcomes: list[CaseOutcome]) -> tuple[np.ndarray, np.ndarray]:
    X, y = [], []
    for o in outcomes:
        if not o.valid or (o.error and not counts_as_miss(o.error)):
            continue
        for f in o.findings:
            X.append(feature_vector(f))
            named = {n for e in o.expected for n in o.names(e)}
            y.append(1 if f["category"] in named else 0)
    return np.asarray(X, float), np.asarray(y, int)


def _worst_probability(o: CaseOutcome, cal: Calibration) -> float:
    """The highest probability among a case's medium+ findings (0 without one): the
    case warns under any threshold at or below it."""
    probs = [cal.probability(f) for f in o.findings if f["severity"] in MEDIUM_OR_WORSE]
    return max(probs, default=0.0)


def _clean_controls(outcomes: list[CaseOutcome]) -> list[CaseOutcome]:
    return [o for o in outcomes if o.kind == "clean" and o.valid and not o.error]


def _out_of_fold_worst(outcomes: list[CaseOutcome], cal: Calibration) -> list[float]:
    """Each clean control's worst probability under a model fitted without its dataset,
    as a dataset the shipped model never saw will meet it. A dataset whose other
    datasets leave nothing to fit (a single-dataset corpus) falls back to ``cal``."""
    worst: list[float] = []
    for _dataset, (train, test) in folds(outcomes).items():
        clean = _clean_controls(test)
        if not clean:
            continue
        inner = _fit_model(train, fitted_on="inner fold") or cal
        worst += [_worst_probability(o, inner) for o in clean]
    return worst


def _threshold(outcomes: list[CaseOutcome], cal: Calibration) -> float:
    """Smallest threshold keeping the clean controls' out-of-fold medium+ share <= target."""
    worst = _out_of_fold_worst(outcomes, cal)
    if not worst:
        return 0.5
    allowed = int(np.floor(TARGET_CLEAN_ALARMS * len(worst)))
    ordered = sorted(worst, reverse=True)
    # alarms are the cases with worst >= threshold: put the threshold just above the
    # (allowed+1)-th highest so at most ``allowed`` stay
    cut = ordered[allowed] if allowed < len(ordered) else 0.0
    return float(min(0.99, cut + 1e-6)) if cut > 0 else 0.0


def _fit_model(outcomes: list[CaseOutcome], *, fitted_on: str) -> Calibration | None:
    """The logistic model alone (threshold left at 0.5), None when there is nothing to
    learn."""
    from sklearn.linear_model import LogisticRegression

    X, y = _rows(outcomes)
    if len(y) < 20 or len(set(y.tolist())) < 2:
        return None
    mean = X.mean(axis=0)
    scale = X.std(axis=0)
    scale[scale == 0] = 1.0
    model = LogisticRegression(C=REGULARISATION_C, max_iter=2000)
    model.fit((X - mean) / scale, y)
    return Calibration(
        version=CALIBRATION_VERSION, categories=CATEGORIES, numeric_features=NUMERIC_FEATURES,
        mean=tuple(float(v) for v in mean), scale=tuple(float(v) for v in scale),
        coef=tuple(float(v) for v in model.coef_[0]), intercept=float(model.intercept_[0]),
        medium_threshold=0.5, fitted_on=fitted_on, rules_fingerprint=rules_fingerprint(),
    )


def fit_calibration(outcomes: list[CaseOutcome], *, fitted_on: str = "") -> Calibration | None:
    """A calibration fitted on ``outcomes`` (None when there is nothing to learn)."""
    cal = _fit_model(outcomes, fitted_on=fitted_on)
    if cal is None:
        return None
    return replace(cal, medium_threshold=round(_threshold(outcomes, cal), 6))


def calibrated_outcome(o: CaseOutcome, cal: Calibration) -> CaseOutcome:
    return replace(o, findings=apply_calibration(o.findings, cal))


def held_out_calibrated(outcomes: list[CaseOutcome]) -> list[CaseOutcome] | None:
    """Every case diagnosed by the calibration fitted without its dataset."""
    result: dict[str, CaseOutcome] = {}
    for held_out, (train, test) in folds(outcomes).items():
        cal = fit_calibration(train, fitted_on=f"all datasets but {held_out}")
        if cal is None:
            return None
        for o in test:
            result[o.case_id] = calibrated_outcome(o, cal)
    return [result[o.case_id] for o in outcomes]


def write_shipped(outcomes: list[CaseOutcome], path: Path) -> Calibration:
    """Fit on every dataset of the corpus and write the JSON file shipped with the
    package (its held-out quality is what :func:`held_out_calibrated` measures)."""
    datasets = sorted({o.dataset for o in outcomes})
    cal = fit_calibration(outcomes, fitted_on=f"corpus datasets: {', '.join(datasets)}")
    if cal is None:
        raise ValueError("not enough findings to fit a calibration")
    Path(path).write_text(json.dumps(cal.to_json(), indent=1) + "\n", encoding="utf-8")
    return cal
