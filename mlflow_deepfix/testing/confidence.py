"""Confidence by slice: where is the model sure and wrong, or unsure but right?

A global calibration error (``poor_calibration``) averages over every row; it misses a
model that is well calibrated overall but *confidently wrong on one group* ("age > 62
and smoker = yes: 40% of confident predictions wrong"), which is the case a user acts
on with full trust. This module searches simple slices of the evaluation rows (each
categorical level, the lower and upper quartile of each numeric feature, and pairs of
the most suspicious single slices) and compares, on the slice's confident predictions
(top probability >= :data:`CONFIDENT`), what the model *claims* (its mean top
probability: a claimed error rate of one minus it) with what it *achieves* (the observed
error rate, with a Wilson interval). Comparing with the claim, not with the error rate
of other rows, matters both ways: a slice where the model says 0.99 and is wrong one
time in ten is overconfident even if rows elsewhere (said 0.85) are wrong more often,
and a slice of borderline rows said 0.82 and wrong one time in five is calibrated even
if rows elsewhere (said 0.99) are almost never wrong.

Global miscalibration stays ``poor_calibration``'s: the expected error rate of a slice
is its claimed error rate plus the overconfidence (observed minus claimed error rate,
when positive) the model shows *outside* the slice on predictions of the same class in
the same confidence band (:data:`CONFIDENCE_BANDS`; with fewer than :data:`MIN_ROWS`
such rows, the same class at any confidence, then every confident row, unless the slice
holds all but a handful of the confident predictions: then the overconfidence of the
other rows at any confidence, since a slice compared with itself can never stand out).
A model that is overconfident everywhere, or about one class everywhere, therefore has
no slice; a slice is kept when the lower end of its interval clears that expected rate by
:data:`MIN_EXCESS`. Slices where the model hedges (top probability < :data:`UNSURE` on
average) while the lower end of its accuracy interval lies well above that claim are
kept too ("needlessly unsure"). For a listed overconfident slice the noise model of its
error count is recorded too (``expected_wrong``, ``expected_wrong_var``): if the model
erred on each confident row with the probability the expected rate gives it (one minus
its confidence, plus the outside overconfidence), the count of wrong answers is
Poisson-binomial with that mean and variance, so a reader can test observed against
expected errors with the right standard error (small when the model says 0.99 on every
row, larger when it says 0.85) instead of the Wilson interval's, which is centred on the
observed rate. Bounded: at most :data:`MAX_ROWS` rows,
:data:`MAX_FEATURES` features, pairs among the best :data:`PAIR_POOL` single slices.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from mlflow_deepfix.schemas import ConfidenceSummary, SliceConfidence
from mlflow_deepfix.intervals import wilson

MAX_ROWS = 20_000
MAX_FEATURES = 20
PAIR_POOL = 8
CONFIDENT = 0.8
UNSURE = 0.65
#: a slice needs this many confident rows (overconfident) or rows (underconfident)
MIN_ROWS = 30
MAX_LEVELS = 20
Z = 1.96
#: a slice is listed when its interval clears the expected rate by this much
MIN_EXCESS = 0.02
#: confidence bands in which the model's overconfidence outside a slice is measured
#: (a model may be calibrated at 0.85 and overconfident at 0.99)
CONFIDENCE_BANDS = (0.9, 0.95, 0.99)


@dataclass
class _Slice:
    description: str
    features: tuple[str, ...]
    mask: np.ndarray


def _fmt(value: float) -> str:
    return f"{value:.3g}"


def single_slices(frame: pd.DataFrame, features: list[str], cat_features: list[str]) -> list[_Slice]:
    """Each frequent level of a categorical, the lower and upper quartile of a numeric."""
    slices = []
    for name in features:
        column = frame[name]
        if name in cat_features or not pd.api.types.is_numeric_dtype(column.dtype):
            counts = column.astype(str).value_counts()
            if len(counts) > MAX_LEVELS:
                continue
            as_text = column.astype(str).to_numpy()
            for level in sorted(counts.index):
                slices.append(_Slice(f"{name} = {level}", (name,), as_text == level))
            continue
        values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
        finite = values[np.isfinite(values)]
        if finite.size < MIN_ROWS or np.unique(finite).size < 4:
            continue
        low, high = np.percentile(finite, [25, 75])
        slices.append(_Slice(f"{name} <= {_fmt(low)}", (name,), values <= low))
        slices.append(_Slice(f"{name} > {_fmt(high)}", (name,), values > high))
    return slices


def measure_confidence(
    test: pd.DataFrame,
    *,
    target: str,
    proba: np.ndarray,
    predicted: np.ndarray,
    feature_names: list[str],
    cat_features: list[str],
    importances: dict[str, float] | None = None,
    seed: int = 0,
    max_rows: int = MAX_ROWS,
) -> ConfidenceSummary:
    """Overconfident and underconfident slices of the evaluation rows."""
    from mlflow_deepfix.testing.stats.sampling import sample_index

    keep = sample_index(len(test), max_rows, seed)
    frame = test.iloc[keep].reset_index(drop=True)
    top = np.asarray(proba, dtype=float)[keep].max(axis=1)
    right = np.asarray(frame[target]).astype(str) == np.asarray(predicted)[keep].astype(str)
    confident = top >= CONFIDENT
    confident_wrong = confident & ~right
    n_confident = int(confident.sum())
    overall_wrong = confident_wrong.sum() / n_confident if n_confident else 0.0
    labels = np.asarray(predicted)[keep].astype(str)
    classes = np.unique(labels[confident])
    band = np.digitize(top, CONFIDENCE_BANDS)

    def overconfidence(where: np.ndarray) -> float:
        """Observed minus claimed error rate of the confident rows in ``where`` (>= 0:
        an underconfident rest of the data lowers no slice's expectation)."""
        n_where = int(where.sum())
        if not n_where:
            return 0.0
        observed = confident_wrong[where].sum() / n_where
        claimed = 1.0 - float(top[where].mean())
        return max(0.0, float(observed) - claimed)

    def expected_rate(mask: np.ndarray) -> tuple[float, float]:
        """The confident-error rate the model claims on the slice (one minus its mean top
        probability there), plus the overconfidence it shows *outside* the slice on the
        same class in the same confidence band: global miscalibration, or one class's,
        is ``poor_calibration``'s, not a slice's. Also the variance of the slice's
        confident-error count if the model erred at exactly that rate, row by row."""
        outside = confident & ~mask
        inside = mask & confident
        # a slice that holds nearly all the confident predictions (fewer than MIN_ROWS
        # outside it) would be compared with itself and could never stand out: then the
        # model's calibration on the other rows, at any confidence, is the comparison
        others = ~mask
        alone = int(outside.sum()) < MIN_ROWS and int(others.sum()) >= MIN_ROWS
        elsewhere = (
            max(0.0, float((~right[others]).mean()) - (1.0 - float(top[others].mean())))
            if alone
            else 0.0
        )
        total = 0.0
        variance = 0.0
        for c in classes:
            of_class = labels == c
            for b in np.unique(band[inside & of_class]):
                rows = inside & of_class & (band == b)
                # the closest comparison with enough rows: same class and band outside,
                # same class outside, else every confident row (the slice included:
                # without a comparison, the model as a whole is the suspect)
                for where in (outside & of_class & (band == b), outside & of_class, confident):
                    if where.sum() >= MIN_ROWS or where is confident:
                        break
                rest = overconfidence(where)
                if where is confident and alone:
                    rest = elsewhere
                claimed = 1.0 - float(top[rows].mean())
                total += int(rows.sum()) * (claimed + rest)
                # each row is wrong with probability (1 - its confidence) + rest under the
                # null: the error count is Poisson-binomial, variance sum p(1 - p)
                chance = np.clip(1.0 - top[rows] + rest, 0.0, 1.0)
                variance += float(np.sum(chance * (1.0 - chance)))
        return total / max(int(inside.sum()), 1), variance
    overall_right = float(right.mean())

    ranked = sorted(
        (f for f in feature_names if f in frame.columns),
        key=lambda f: (-(importances or {}).get(f, 0.0), f),
    )[:MAX_FEATURES]
    singles = single_slices(frame, ranked, cat_features)

    def over(candidate: _Slice) -> SliceConfidence | None:
        mask = candidate.mask & confident
        n = int(mask.sum())
        if n < MIN_ROWS:
            return None
        wrong = int((mask & ~right).sum())
        low, high = wilson(wrong, n)
        # the expected rate is at least the claimed one: most slices stop here, cheaply
        if low <= 1.0 - float(top[mask].mean()) + MIN_EXCESS:
            return None
        expected, variance = expected_rate(candidate.mask)
        if low <= expected + MIN_EXCESS:
            return None
        return SliceConfidence(
            description=candidate.description,
            features=list(candidate.features),
            kind="overconfident",
            n_rows=int(candidate.mask.sum()),
            share=round(float(candidate.mask.mean()), 4),
            n_confident=n,
            rate=round(wrong / n, 4),
            rate_low=round(low, 4),
            rate_high=round(high, 4),
            overall_rate=round(expected, 4),
            mean_confidence=round(float(top[mask].mean()), 4),
            share_of_confident_errors=round(
                wrong / max(int(confident_wrong.sum()), 1), 4
            ),
            n_wrong=wrong,
            expected_wrong=round(expected * n, 4),
            expected_wrong_var=round(variance, 4),
        )

    def under(candidate: _Slice) -> SliceConfidence | None:
        n = int(candidate.mask.sum())
        if n < MIN_ROWS:
            return None
        mean_top = float(top[candidate.mask].mean())
        correct = int((candidate.mask & right).sum())
        low, high = wilson(correct, n)
        if mean_top >= UNSURE or low <= max(overall_right, mean_top + 0.15):
            return None
        return SliceConfidence(
            description=candidate.description,
            features=list(candidate.features),
            kind="underconfident",
            n_rows=n,
            share=round(n / len(frame), 4),
            n_confident=int((candidate.mask & confident).sum()),
            rate=round(correct / n, 4),
            rate_low=round(low, 4),
            rate_high=round(high, 4),
            overall_rate=round(overall_right, 4),
            mean_confidence=round(mean_top, 4),
        )

    # pairs: the single slices with the most confident errors, two different features
    pool = sorted(
        singles, key=lambda s: (-int((s.mask & confident_wrong).sum()), s.description)
    )[:PAIR_POOL]
    pairs = [
        _Slice(f"{a.description} and {b.description}", a.features + b.features, a.mask & b.mask)
        for i, a in enumerate(pool)
        for b in pool[i + 1 :]
        if a.features != b.features
    ]
    found = [s for s in (over(c) for c in singles + pairs) if s is not None]
    found += [s for s in (under(c) for c in singles) if s is not None]
    found.sort(key=lambda s: (-_excess(s), s.description))
    return ConfidenceSummary(
        n_rows=len(frame),
        threshold=CONFIDENT,
        confident_error_rate=round(float(overall_wrong), 4),
        n_confident=n_confident,
        n_slices_searched=len(singles) + len(pairs),
        slices=_distinct(found)[:10],
    )


def _excess(item: SliceConfidence) -> float:
    """How far the slice stands out beyond its interval, weighted by its size."""
    if item.kind == "overconfident":
        return (item.rate_low - item.overall_rate) * math.sqrt(item.share)
    return (item.rate_low - item.mean_confidence) * math.sqrt(item.share) * 0.5


def _distinct(slices: list[SliceConfidence]) -> list[SliceConfidence]:
    """Overlapping slices are one finding, not several: a pair is dropped when one of its
    halves is listed above it, unless the pair's rate is clearly higher (its interval
    above the half's), in which case the pair, the more precise description, replaces
    the half; a single slice is dropped when a pair above it contains it."""
    kept: list[SliceConfidence] = []
    for item in slices:
        halves = item.description.split(" and ")
        inside = [k for k in kept if k.description in halves]
        if inside:
            if len(halves) > 1 and all(item.rate_low > k.rate_high for k in inside):
                kept = [item if k is inside[0] else k for k in kept if k is inside[0] or k not in inside]
            continue
        if any(item.description in k.description.split(" and ") for k in kept):
            continue
        kept.append(item)
    return kept
