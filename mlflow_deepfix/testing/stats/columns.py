"""Per-column statistics (:class:`ColumnStats`): missing share, quantiles, outliers,
string variants, numbers stored as text, monotonic identifiers, target association."""

from __future__ import annotations

import logging
import re
from typing import Any

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from mlflow_deepfix.schemas import ColumnStats
from mlflow_deepfix.testing.stats.association import _MIN_ROWS, _Target
from mlflow_deepfix.testing.stats.column_types import (
    _association_view,
    _families,
    _is_integral,
    _is_object_like,
    _is_plain_numeric,
    _kind,
    _numeric_view,
    _value_counts,
)

logger = logging.getLogger(__name__)


#: a value is an outlier beyond this many IQRs outside the inter-quartile range
_OUTLIER_IQRS = 5.0
#: quantiles stored as a column's "min" and "max": robust extremes, never one row's value
#: (privacy, see mlflow_deepfix.privacy; the outlier rule only needs their magnitude)
ROBUST_EXTREMES = (0.005, 0.995)
#: IQR of a normal distribution divided by its q99 - q01 range, used when the IQR is 0
_IQR_PER_Q01_Q99 = 1.349 / 4.653
#: a separated group of flagged values (see :func:`_outlier_gap`) holds at least this many
#: rows and this share of the column: a gap under the top one or two values of a long
#: natural tail says nothing about the rest of it
_GAP_MIN_ROWS = 2
_GAP_MIN_SHARE = 0.001
#: the most frequent distinct strings of a column examined for case/space variants
_MAX_STRING_VALUES = 2_000
#: names of identifier columns: an ``id``/``index``/``key``... token, or camelCase ``userId``
_ID_NAME = re.compile(r"(?i:(^|[_\W])(id|idx|index|key|row|uuid|guid)($|[_\W]))|[a-z](Id|ID)$")
_NON_WORD = re.compile(r"[\W_]+")
#: decoration around numbers written as text: currency, thousands separators, %, spaces
_NUMBER_DECORATION = re.compile(r"[\s$€£¥,%]")
#: distinct values of a text column examined for numbers stored as text
_MAX_NUMERIC_TEXT_VALUES = 20_000


def _string_mismatch(counts: pd.Series, n_obs: int) -> float:
    """Share of rows holding a minority variant of a string that differs from another
    value only by case, whitespace or punctuation (``"Yes"``, ``"yes "``, ``"YES"``)."""
    if n_obs == 0 or len(counts) < 2:
        return 0.0
    counts = counts.iloc[:_MAX_STRING_VALUES]
    values = pd.Series(counts.index, dtype=object)
    is_str = values.map(lambda v: isinstance(v, str)).to_numpy(dtype=bool)
    if is_str.sum() < 2:
        return 0.0
    strings = values[is_str].astype(str)
    # numbers such as "1.0" and "10" would collide once punctuation is dropped
    numeric = pd.to_numeric(strings, errors="coerce").notna().to_numpy()
    strings = strings[~numeric]
    if len(strings) < 2:
        return 0.0
    normal = strings.str.lower().str.replace(_NON_WORD, "", regex=True)
    frame = pd.DataFrame({"norm": normal.to_numpy(), "count": counts.to_numpy()[is_str][~numeric]})
    frame = frame[frame["norm"] != ""]
    grouped = frame.groupby("norm")["count"].agg(["size", "sum", "max"])
    variants = grouped[grouped["size"] > 1]
    return float((variants["sum"] - variants["max"]).sum() / n_obs)


def _numeric_string_fraction(counts: pd.Series, n_obs: int) -> float:
    """Share of the non-missing values that are text reading as a number once currency
    signs, thousands separators, percent signs and spaces are removed ("$52,300",
    " 1.5", "12%"). Estimated on the most frequent ``_MAX_NUMERIC_TEXT_VALUES``
    distinct values (exact below that)."""
    if n_obs == 0 or len(counts) == 0:
        return 0.0
    counts = counts.iloc[:_MAX_NUMERIC_TEXT_VALUES]
    values = pd.Series(counts.index, dtype=object)
    is_str = values.map(lambda v: isinstance(v, str)).to_numpy(dtype=bool)
    weights = counts.to_numpy(dtype=float)
    covered = weights.sum()
    if not is_str.any() or covered == 0:
        return 0.0
    cleaned = values[is_str].astype(str).str.replace(_NUMBER_DECORATION, "", regex=True)
    numeric = pd.to_numeric(cleaned, errors="coerce").notna().to_numpy()
    return float(weights[is_str][numeric].sum() / covered)


def _outlier_fences(q: np.ndarray) -> tuple[float, float, float] | None:
    """(low fence, high fence, IQR) of a column's quantiles (q01, q25, q50, q75, q99);
    None when the column has no spread."""
    q01, q25, _, q75, q99 = q
    iqr = q75 - q25
    if iqr <= 0:  # mostly one value: fall back to the q01-q99 spread, scaled like an IQR
        iqr = (q99 - q01) * _IQR_PER_Q01_Q99
    if iqr <= 0:
        return None
    return float(q25 - _OUTLIER_IQRS * iqr), float(q75 + _OUTLIER_IQRS * iqr), float(iqr)


def _outlier_fraction(finite: np.ndarray, q: np.ndarray, n_obs: int) -> float:
    fences = _outlier_fences(q)
    if fences is None or n_obs == 0:
        return 0.0
    low, high, _ = fences
    return float(np.count_nonzero((finite < low) | (finite > high)) / n_obs)


def _outlier_gap(finite: np.ndarray, q: np.ndarray) -> float | None:
    """Decades of the widest empty interval on the log scale that separates a group of
    values beyond the 5-IQR fences (at least :data:`_GAP_MIN_ROWS` rows and
    :data:`_GAP_MIN_SHARE` of the column) from every value nearer the bulk; see
    ``ColumnStats.outlier_gap``. ``finite`` is sorted. The value below the gap counts as
    at least the IQR, so a bulk around zero is measured by its spread, not by log(0).
    Only the flagged rows are scanned: a vector over a few percent of the column."""
    fences = _outlier_fences(q)
    if fences is None:
        return None
    low, high, iqr = fences
    need = max(_GAP_MIN_ROWS, int(np.ceil(_GAP_MIN_SHARE * finite.size)))
    widest = None
    # the high side as is, the low side mirrored (values typed x1000 on negative rows)
    first_high = int(np.searchsorted(finite, high, side="right"))
    last_low = int(np.searchsorted(finite, low, side="left"))
    for values, start in ((finite, first_high), (-finite[::-1], finite.size - last_low)):
        # b: a flagged value with at least `need` values at or beyond it; a: the one before
        stop = values.size - need + 1
        if start < 1 or stop <= start:
            continue
        above = values[start:stop]
        below = np.maximum(values[start - 1:stop - 1], iqr)
        with np.errstate(divide="ignore", invalid="ignore"):
            gaps = np.log10(above / below)
        gaps = gaps[np.isfinite(gaps)]
        if gaps.size:
            widest = max(widest or 0.0, float(gaps.max()), 0.0)
    return None if widest is None else round(widest, 3)


def _is_monotonic(series: pd.Series, ordered: np.ndarray | None, n_unique: int, n_obs: int) -> bool:
    """Index-like: strictly monotone with the row order, or a near-unique integer
    counter (dense range of distinct integers, possibly shuffled by the split)."""
    if n_obs < _MIN_ROWS or n_unique < 0.95 * n_obs:
        return False
    observed = series.dropna()
    if n_unique == n_obs:
        try:
            if observed.is_monotonic_increasing or observed.is_monotonic_decreasing:
                return True
        except TypeError:
            pass
    if ordered is None or ptypes.is_bool_dtype(series.dtype):
        return False
    finite = ordered[np.isfinite(ordered)]
    if finite.size < _MIN_ROWS or not _is_integral(finite):
        return False
    span = float(finite[-1] - finite[0]) + 1.0
    # a counter subsampled by a split: at most 5 integers of its range per value kept
    return span <= 5.0 * n_unique or bool(_ID_NAME.search(str(series.name)))


def _sorted_counts(numeric: np.ndarray) -> tuple[np.ndarray, int, int]:
    """Sorted non-NaN values, number of distinct values and count of the most frequent,
    by one sort instead of a hash table (numeric columns are mostly distinct)."""
    ordered = np.sort(numeric[~np.isnan(numeric)])
    if ordered.size == 0:
        return ordered, 0, 0
    change = np.empty(ordered.size, dtype=bool)
    change[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=change[1:])
    starts = np.flatnonzero(change)
    runs = np.diff(np.append(starts, ordered.size))
    return ordered, int(starts.size), int(runs.max())


def _sorted_quantiles(ordered: np.ndarray, qs: tuple[float, ...]) -> np.ndarray:
    """numpy's default (linear) quantiles of an already sorted array."""
    pos = np.asarray(qs) * (ordered.size - 1)
    low = np.floor(pos).astype(int)
    high = np.minimum(low + 1, ordered.size - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def _column_stats(
    series: pd.Series, *, is_cat: bool, target: _Target | None, sample: np.ndarray
) -> ColumnStats:
    n = len(series)
    n_obs = n - int(series.isna().sum())
    dtype = series.dtype
    fast = ptypes.is_bool_dtype(dtype) or _is_plain_numeric(dtype)
    families: dict[str, int] = {}
    counts = None
    if fast:
        numeric = series.to_numpy(dtype=float, na_value=np.nan)
        ordered, n_unique, top = _sorted_counts(numeric)
        kind = _kind(series, is_cat, families)
    else:
        counts = _value_counts(series)
        n_unique = len(counts)
        top = int(counts.iloc[0]) if n_unique else 0
        if _is_object_like(dtype) or isinstance(dtype, pd.CategoricalDtype):
            families = _families(counts, dtype)
        kind = _kind(series, is_cat, families)
        numeric = _numeric_view(series, kind)
        ordered = np.sort(numeric[~np.isnan(numeric)]) if numeric is not None else None
    out: dict[str, Any] = {
        "name": str(series.name),
        "dtype": str(dtype),
        "kind": kind,
        "missing_fraction": (n - n_obs) / n if n else 0.0,
        "n_unique": n_unique,
        "unique_fraction": n_unique / n_obs if n_obs else 0.0,
        "top_fraction": top / n_obs if n_obs else 0.0,
        "mixed_types": len(families) > 1,
    }
    if families.get("string") and counts is not None:
        out["string_mismatch_fraction"] = _string_mismatch(counts, n_obs)
    if counts is not None and _is_object_like(dtype):
        out["numeric_string_fraction"] = _numeric_string_fraction(counts, n_obs)

    if ordered is not None:
        # sorted: infinities sit at both ends, the finite values in between
        finite = ordered[np.isfinite(ordered)]
        out["n_inf"] = int(ordered.size - finite.size)
        if finite.size:
            q = _sorted_quantiles(finite, (0.01, 0.25, 0.5, 0.75, 0.99))
            # robust extremes: the exact min/max is the value of a single row
            low, high = _sorted_quantiles(finite, ROBUST_EXTREMES)
            out.update(
                mean=float(finite.mean()),
                std=float(finite.std(ddof=1)) if finite.size > 1 else 0.0,
                min=float(low),
                max=float(high),
                q01=float(q[0]),
                q50=float(q[2]),
                q99=float(q[4]),
            )
            if kind == "numeric":
                out["outlier_fraction"] = _outlier_fraction(finite, q, n_obs)
                if out["outlier_fraction"] > 0:
                    out["outlier_gap"] = _outlier_gap(finite, q)
    elif counts is not None and families.get("number"):
        # inf hiding among the values of an object column
        values = pd.Series(counts.index, dtype=object)
        is_inf = values.map(lambda v: isinstance(v, (float, np.floating)) and bool(np.isinf(v)))
        out["n_inf"] = int(counts.to_numpy()[is_inf.to_numpy(dtype=bool)].sum())

    out["monotonic"] = _is_monotonic(series, ordered, n_unique, n_obs)

    if target is not None and target.n_classes >= 2:
        part = series.iloc[sample]
        view = (
            numeric[sample]
            if numeric is not None and kind == "numeric"
            else _association_view(part, kind)
        )
        try:
            out["target_association"] = (
                target.rank_association(view) if view is not None else target.nmi(part)
            )
        except (TypeError, ValueError) as exc:  # keep the other statistics
            logger.warning("target association of column %r failed: %s", series.name, exc)
    return ColumnStats(**out)
