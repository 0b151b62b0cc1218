"""Perturbation robustness: do predictions survive small, realistic input changes?

A model whose decision moves when a reading wobbles by a few percent of its natural
spread, when a word gets a typo or an image gets a little brighter, will give different
answers to the same case in production. This module measures that on a bounded, seeded
sample of the evaluation rows (at most :data:`MAX_ROWS`):

* numeric features: Gaussian noise of :data:`NOISE_FRACTION` x the feature's spread
  (inter-quartile range on the training data, else its standard deviation); integer
  columns (and float columns holding only whole numbers) stay whole numbers;
* numeric features on a *discrete scale* (at most :data:`MAX_SCALE_LEVELS` distinct
  values, each seen :data:`MIN_REPEATS` times on average: years of schooling 9, 12, 14,
  16, 17, 20; a 1-5 rating; a count of children) are never given values between their
  levels: such values never occur in real data, and a model that only ever saw the
  levels (a nearest-neighbour model breaking distance ties, a tree splitting between
  two levels) may answer them arbitrarily, which is a property of the probe, not of the
  model. The same noise is drawn, and a row moves to the adjacent observed level only
  when the noise carries it past the midpoint between the two levels, so a move
  happens as often as the noise makes it a small change on that scale (levels far apart
  relative to the spread are almost never crossed). When the noise would move fewer
  than :data:`MIN_MOVED_SHARE` of the rows, the column is not perturbed at all and the
  reason is reported (a move to another level there is a different case, not a wobble);
* categorical features: a swap to the *neighbouring* frequent level (ordered or
  integer-coded categories with at least :data:`MIN_LEVELS` levels holding
  :data:`MIN_LEVEL_SHARE` of the rows each: the next level up or down). Unordered labels
  ("rent", "own") and short scales (a 0/1 flag) are left as they are: a swap there
  changes what the row says, so a changed prediction would not be fragility. Only
  categories the user *declared* are swapped so: a declared integer code (a site or
  branch code) is a label whose order means nothing, and a model that flips between
  neighbouring codes reads it as a number. Numbers that are categorical only by the
  evaluator's inference (few whole values) are quantities on a discrete scale (years
  of schooling), where moving every row a whole level (12 -> 14 years) is no small
  change: they are perturbed as discrete scales (below);
* text: typos (two adjacent letters swapped), case, punctuation and whitespace;
* images: brightness (+8% of the range), contrast (x0.9) and a one-pixel shift.

Each input is perturbed on its own (to name the fragile ones) and all together (for
the headline flip rate and score drop). Everything is seeded: same inputs, same numbers.
"""

from __future__ import annotations

import logging
import string
from collections.abc import Callable

import numpy as np
import pandas as pd

from mlflow_deepfix.schemas import FeatureFragility, RobustnessSummary

logger = logging.getLogger(__name__)

MAX_ROWS = 500
#: at most this many tabular features are perturbed one by one (most important first)
MAX_FEATURES = 25
NOISE_FRACTION = 0.05
MIN_LEVEL_SHARE = 0.02
#: a neighbouring level is a *small* change only on a scale of this many levels (an
#: adjacent age band of eight); on a shorter scale it changes what the row says
MIN_LEVELS = 5
#: a numeric column with at most this many distinct values is a discrete scale (the
#: same bound as the categorical levels of the confidence slices) ...
MAX_SCALE_LEVELS = 20
#: ... when each value is seen this many times on average (a continuous column of a
#: small reference sample has few distinct values only because it has few rows)
MIN_REPEATS = 5
#: a discrete scale whose levels the noise would cross for fewer than this share of
#: the rows is not perturbed (the noise cannot make a realistic small change there)
MIN_MOVED_SHARE = 0.01
#: regression: a prediction "flips" when it moves by more than this x std(target)
REGRESSION_FLIP = 0.2
_PUNCTUATION = set(string.punctuation)


def headline_score(task: str, y_true: np.ndarray, y_pred: np.ndarray) -> tuple[str, float]:
    """Accuracy (classification) or R^2 (regression) of ``y_pred``: the score every
    behaviour probe reports its drops in."""
    if task == "regression":
        y, p = np.asarray(y_true, float), np.asarray(y_pred, float)
        total = float(((y - y.mean()) ** 2).sum())
        return "r2", (1.0 - float(((y - p) ** 2).sum()) / total) if total > 0 else 0.0
    return "accuracy", float(np.mean(np.asarray(y_true).astype(str) == np.asarray(y_pred).astype(str)))


def _outputs_are_labels(predicted: np.ndarray, y_true: np.ndarray) -> bool:
    """Whether most of a classifier's outputs are labels seen in the evaluation data."""
    labels = set(np.asarray(y_true).astype(str))
    return bool(np.isin(np.asarray(predicted).astype(str), list(labels)).mean() >= 0.5)


def changed(task: str, before: np.ndarray, after: np.ndarray, target_std: float) -> np.ndarray:
    """Per row: did the prediction change (another label, or a large move)?"""
    if task == "regression":
        tolerance = REGRESSION_FLIP * (target_std if target_std > 0 else 1.0)
        return np.abs(np.asarray(after, float) - np.asarray(before, float)) > tolerance
    return np.asarray(before).astype(str) != np.asarray(after).astype(str)


# --------------------------------------------------------------------------- tabular


def _spread(reference: pd.Series) -> float:
    values = pd.to_numeric(reference, errors="coerce").to_numpy(dtype=float)
    values = values[np.isfinite(values)]
    if values.size < 2:
        return 0.0
    q25, q75 = np.percentile(values, [25, 75])
    return float(q75 - q25) if q75 > q25 else float(values.std())


def _numeric_noise(reference: pd.Series) -> tuple[str, Callable] | str | None:
    """Noise within a fraction of the spread; snapped to the observed levels on a
    discrete scale (see the module docstring), or a reason why the column is left alone.
    ``None`` when the column has no spread."""
    spread = _spread(reference)
    if spread <= 0:
        return None
    sigma = NOISE_FRACTION * spread
    values = pd.to_numeric(reference, errors="coerce").to_numpy(dtype=float)
    values = values[np.isfinite(values)]
    levels = np.unique(values)
    if levels.size < 2:  # a constant (its std can be a rounding error above zero)
        return None
    if levels.size <= MAX_SCALE_LEVELS and values.size >= MIN_REPEATS * levels.size:
        return _discrete_scale_noise(values, levels, sigma)
    integral = pd.api.types.is_integer_dtype(reference.dtype) or bool(
        values.size and np.all(values == np.round(values))
    )

    def perturb(column: pd.Series, rng: np.random.Generator) -> pd.Series:
        values = column.to_numpy(dtype=float, na_value=np.nan)
        noisy = values + rng.normal(0.0, sigma, size=values.size)
        if integral:
            noisy = np.round(noisy)
            if pd.api.types.is_integer_dtype(column.dtype):
                return pd.Series(noisy, index=column.index).astype(column.dtype, errors="ignore")
        return pd.Series(noisy, index=column.index, dtype=float)

    return f"noise of {NOISE_FRACTION:.0%} of its spread", perturb


def moved_share(values: np.ndarray, levels: np.ndarray, sigma: float) -> float:
    """Expected share of ``values`` (each one of ``levels``, sorted) that Gaussian noise
    of ``sigma`` carries past the midpoint to a neighbouring level."""
    from math import erfc, sqrt

    if levels.size < 2 or sigma <= 0:
        return 0.0
    midpoints = (levels[:-1] + levels[1:]) / 2.0
    lower = np.concatenate([[-np.inf], midpoints])
    upper = np.concatenate([midpoints, [np.inf]])

    def tail(distance: float) -> float:  # P(noise > distance)
        return 0.0 if not np.isfinite(distance) else 0.5 * erfc(distance / (sigma * sqrt(2.0)))

    per_level = np.array([tail(v - lo) + tail(hi - v) for v, lo, hi in zip(levels, lower, upper)])
    counts = np.searchsorted(levels, values)
    return float(per_level[counts].mean()) if values.size else 0.0


def _discrete_scale_noise(
    values: np.ndarray, levels: np.ndarray, sigma: float
) -> tuple[str, Callable] | str:
    share = moved_share(values, levels, sigma)
    if share < MIN_MOVED_SHARE:
        return (
            f"a discrete scale of {levels.size} values: noise of {NOISE_FRACTION:.0%} of "
            f"its spread would move {share:.1%} of rows to another level (values in "
            "between never occur); another level is a different case, not a wobble"
        )
    midpoints = (levels[:-1] + levels[1:]) / 2.0

    def perturb(column: pd.Series, rng: np.random.Generator) -> pd.Series:
        original = column.to_numpy(dtype=float, na_value=np.nan)
        noisy = original + rng.normal(0.0, sigma, size=original.size)
        finite = np.isfinite(original)
        # the level each value sits at, and the level the noise carries it to: a row
        # changes only when the two differ (an unseen test value is not snapped unless moved)
        at = np.searchsorted(midpoints, np.where(finite, original, 0.0))
        to = np.searchsorted(midpoints, np.where(finite, noisy, 0.0))
        moved = finite & (at != to)
        out = np.where(moved, levels[np.clip(to, 0, levels.size - 1)], original)
        if pd.api.types.is_integer_dtype(column.dtype):
            return pd.Series(out, index=column.index).astype(column.dtype, errors="ignore")
        return pd.Series(out, index=column.index, dtype=float)

    return (
        f"noise of {NOISE_FRACTION:.0%} of its spread, snapped to the {levels.size} "
        "observed levels", perturb
    )


def _neighbour_swap(reference: pd.Series) -> tuple[str, Callable] | str:
    """Adjacent frequent level for ordered or integer-coded categories; unordered
    labels get a reason instead."""
    dtype = reference.dtype
    ordered = isinstance(dtype, pd.CategoricalDtype) and dtype.ordered
    numeric = pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
    if not (ordered or numeric):
        return "unordered categories have no neighbour: a swap would change the row's meaning"
    shares = reference.value_counts(normalize=True)
    levels = list(dtype.categories) if ordered else sorted(shares.index)
    frequent = [v for v in levels if shares.get(v, 0.0) >= MIN_LEVEL_SHARE]
    if len(frequent) < MIN_LEVELS:
        return (
            f"{len(frequent)} frequent levels: a neighbouring level would change the row's "
            "meaning, not perturb it"
        )
    position = {v: i for i, v in enumerate(frequent)}

    def perturb(column: pd.Series, rng: np.random.Generator) -> pd.Series:
        steps = rng.choice([-1, 1], size=len(column))
        out = column.copy()
        values = column.to_numpy(dtype=object)
        for i, value in enumerate(values):
            where = position.get(value)
            if where is None:
                continue
            j = where + steps[i]
            j = j if 0 <= j < len(frequent) else where - steps[i]
            out.iloc[i] = frequent[j]
        return out

    return "swap to the neighbouring frequent level", perturb


# --------------------------------------------------------------------------- content


def _typo(text: str, rng: np.random.Generator) -> str:
    words = text.split(" ")
    long_words = [i for i, w in enumerate(words) if sum(ch.isalpha() for ch in w) > 3]
    if not long_words:
        return text
    i = long_words[rng.integers(len(long_words))]
    word = words[i]
    j = int(rng.integers(1, len(word) - 2)) if len(word) > 3 else 0
    words[i] = word[:j] + word[j + 1] + word[j] + word[j + 2 :]
    return " ".join(words)


def _case(text: str, rng: np.random.Generator) -> str:
    return text.upper() if rng.random() < 0.5 else text.title()


def _punctuation(text: str, rng: np.random.Generator) -> str:
    stripped = "".join(ch for ch in text if ch not in _PUNCTUATION)
    return stripped if stripped != text else text + "!"


def _whitespace(text: str, rng: np.random.Generator) -> str:
    return "  " + text.replace(" ", "  ") + " "


TEXT_PERTURBATIONS: dict[str, Callable[[str, np.random.Generator], str]] = {
    "typos": _typo,
    "case": _case,
    "punctuation": _punctuation,
    "whitespace": _whitespace,
}


def _as_image(value) -> np.ndarray:
    return np.asarray(value, dtype=float)


def _brightness(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """+8% of the image's own dynamic range; bright pixels saturate as in a camera."""
    low, high = float(image.min()), float(image.max())
    return np.clip(image + 0.08 * (high - low), min(low, 0.0), high)


def _contrast(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return image.mean() + 0.9 * (image - image.mean())


#: a shift is "small" when one pixel is at most this share of the image's side; smaller
#: images (8x8 digits: one pixel is 12%) are not shifted
MAX_SHIFT_SHARE = 0.035


def _shift(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    axis = int(rng.integers(2))
    return np.roll(image, int(rng.choice([-1, 1])), axis=axis)


IMAGE_PERTURBATIONS: dict[str, Callable[[np.ndarray, np.random.Generator], np.ndarray]] = {
    "brightness +8%": _brightness,
    "contrast x0.9": _contrast,
    "one-pixel shift": _shift,
}


# --------------------------------------------------------------------------- measure


def measure_robustness(
    predict: Callable[[pd.DataFrame], np.ndarray],
    test: pd.DataFrame,
    *,
    target: str,
    task: str,
    feature_names: list[str],
    cat_features: list[str],
    reference: pd.DataFrame | None = None,
    importances: dict[str, float] | None = None,
    modality: str = "tabular",
    content_column: str | None = None,
    seed: int = 0,
    max_rows: int = MAX_ROWS,
    declared_cat_features: list[str] | None = None,
) -> RobustnessSummary:
    """Flip rate and score drop under small perturbations, per input and all together.

    ``predict`` takes a frame of the evaluation rows (every column but the target);
    ``reference`` (the training split, else ``test``) gives each feature's spread.
    ``declared_cat_features``: those of ``cat_features`` the user declared (``None``: all
    of them); a numeric column categorical by inference only is a discrete scale.
    """
    from mlflow_deepfix.testing.stats.sampling import sample_index

    rows = test.iloc[sample_index(len(test), max_rows, seed)].reset_index(drop=True)
    features, y_true = rows.drop(columns=[target]), rows[target].to_numpy()
    reference = reference if reference is not None else test
    target_std = float(pd.to_numeric(test[target], errors="coerce").std() or 0.0) if task == "regression" else 0.0
    base = predict(features)
    metric, base_score = headline_score(task, y_true, base)
    if task != "regression" and not _outputs_are_labels(base, y_true):
        # a regressor served as a classifier: every tiny move of a continuous output
        # would count as a flip; that is the wrong task, not fragility
        return RobustnessSummary(
            n_rows=len(rows), metric=metric, base_score=round(base_score, 4),
            noise_fraction=NOISE_FRACTION,
            not_perturbed={"(all inputs)": "the model's outputs are not class labels: "
                           "flips are not measured"},
        )

    perturbations: dict[str, tuple[str, str, str, Callable]] = {}
    not_perturbed: dict[str, str] = {}
    if modality == "tabular":
        ranked = sorted(
            (f for f in feature_names if f in features.columns),
            key=lambda f: (-(importances or {}).get(f, 0.0), f),
        )
        for name in ranked[:MAX_FEATURES]:
            source = reference[name] if name in reference.columns else test[name]
            inferred_number = (
                declared_cat_features is not None
                and name not in declared_cat_features
                and pd.api.types.is_numeric_dtype(source.dtype)
                and not pd.api.types.is_bool_dtype(source.dtype)
            )
            if name in cat_features and not inferred_number:
                made = _neighbour_swap(source)
                kind = "categorical"
            else:
                made = _numeric_noise(source) or "no spread to perturb within"
                kind = "numeric"
            if isinstance(made, str):
                not_perturbed[name] = made
                continue
            words, func = made
            perturbations[name] = (name, kind, words, _column_func(name, func))
        for name in ranked[MAX_FEATURES:]:
            not_perturbed[name] = f"beyond the {MAX_FEATURES} most important features"
    elif content_column is not None:
        table = dict(TEXT_PERTURBATIONS if modality == "text" else IMAGE_PERTURBATIONS)
        convert = str if modality == "text" else _as_image
        if modality == "image" and len(features):
            side = min(np.asarray(features[content_column].iloc[0]).shape[:2])
            if 1.0 / max(side, 1) > MAX_SHIFT_SHARE:
                table.pop("one-pixel shift")
                not_perturbed[f"{content_column}: one-pixel shift"] = (
                    f"images of {side} pixels: one pixel is not a small shift"
                )
        for label, func in table.items():
            key = f"{content_column}: {label}"
            perturbations[key] = (
                key, modality, label, _content_func(content_column, func, convert)
            )

    # every perturbed copy of the sample goes to the model in one call: the per-call
    # overhead of a pyfunc (schema enforcement, conversions) dominates on small samples
    keys = sorted(perturbations)
    frames = []
    for position, key in enumerate(keys):
        frames.append(perturbations[key][3](features, np.random.default_rng([seed, position])))
    if keys:
        rng = np.random.default_rng([seed, len(keys) + 1])
        everything = features
        for key in keys:
            everything = perturbations[key][3](everything, rng)
        frames.append(everything)
    outputs = batched_predict(predict, frames)

    fragilities = []
    for key, after in zip(keys, outputs):
        name, kind, words, _ = perturbations[key]
        flips = changed(task, base, after, target_std)
        fragilities.append(
            FeatureFragility(
                feature=name,
                kind=kind,
                perturbation=words,
                flip_rate=round(float(flips.mean()), 4),
                score_drop=round(base_score - headline_score(task, y_true, after)[1], 4),
            )
        )
    fragilities.sort(key=lambda f: (-f.flip_rate, f.feature))

    flip_rate, score_drop = 0.0, 0.0
    if keys:
        after = outputs[-1]
        flip_rate = float(changed(task, base, after, target_std).mean())
        score_drop = base_score - headline_score(task, y_true, after)[1]
    return RobustnessSummary(
        n_rows=len(rows),
        metric=metric,
        base_score=round(base_score, 4),
        flip_rate=round(flip_rate, 4),
        score_drop=round(score_drop, 4),
        noise_fraction=NOISE_FRACTION,
        features=fragilities,
        not_perturbed=not_perturbed,
    )


def batched_predict(
    predict: Callable[[pd.DataFrame], np.ndarray], frames: list[pd.DataFrame]
) -> list[np.ndarray]:
    """Predictions for each frame, from one call on their concatenation."""
    if not frames:
        return []
    stacked = pd.concat(frames, ignore_index=True)
    output = np.asarray(predict(stacked))
    bounds = np.cumsum([0] + [len(f) for f in frames])
    return [output[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def _column_func(name: str, func: Callable) -> Callable:
    def apply(frame: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
        out = frame.copy()
        out[name] = func(frame[name], rng).to_numpy()
        return out

    return apply


def _content_func(column: str, func: Callable, convert: Callable) -> Callable:
    def apply(frame: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
        out = frame.copy()
        values = [func(convert(v), rng) for v in frame[column].tolist()]
        series = pd.Series(values, index=frame.index, dtype=object)
        out[column] = series
        return out

    return apply
