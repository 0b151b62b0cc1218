"""Dataset statistics for the testing step: per column, per split and train vs test.

Why this exists next to Deepchecks: the diagnosis rules need a few cheap, exact
aggregates (duplicate share, train/test overlap, label-like association, ...) that do
not depend on Deepchecks' version, sampling or conditions, and that never contain a
single raw row, so that they can be written to ``artifact_data.json`` as they are.

Everything is vectorised. Per-column work that costs more than a pass over the column
(the target association) runs on a seeded sample of at most ``max_rows`` rows; per-value
work (types, string variants) runs on a column's distinct values, not its rows.
100k rows x 33 columns per split take a few hundred milliseconds.
"""

from __future__ import annotations

import datetime as _dt
import logging
import re
import warnings
from typing import Any, Literal

import numpy as np
import pandas as pd
from pandas.api import types as ptypes
from pandas.util import hash_pandas_object
from sklearn.metrics import normalized_mutual_info_score

from mlflow_deepfix.schemas import ColumnStats, DatasetSummary, SplitComparison, SplitStats

logger = logging.getLogger(__name__)

#: task names understood here: the contract's three, plus MLflow's ``model_type`` words
_TASK_IS_CLASSIFICATION = {
    "binary_classification": True,
    "multiclass_classification": True,
    "classifier": True,
    "regression": False,
    "regressor": False,
}

#: integer columns with at most this many distinct values (and at most
#: ``_CAT_MAX_UNIQUE_SHARE`` of the rows) are inferred categorical
_CAT_MAX_UNIQUE = 10
_CAT_MAX_UNIQUE_SHARE = 0.05
#: a value is an outlier beyond this many IQRs outside the inter-quartile range
_OUTLIER_IQRS = 5.0
#: quantiles stored as a column's "min" and "max": robust extremes, never one row's value
#: (privacy, see mlflow_deepfix.privacy; the outlier rule only needs their magnitude)
ROBUST_EXTREMES = (0.005, 0.995)
#: IQR of a normal distribution divided by its q99 - q01 range, used when the IQR is 0
_IQR_PER_Q01_Q99 = 1.349 / 4.653
#: the most frequent distinct strings of a column examined for case/space variants
_MAX_STRING_VALUES = 2_000
#: at most this many classes get a one-vs-rest association (the most frequent ones)
_MAX_ASSOC_CLASSES = 20
#: label_distribution keeps this many classes; the rest are summed under ``<other>``
_MAX_LABEL_KEYS = 100
#: fewest non-missing values for monotonicity or an association to mean anything
_MIN_ROWS = 20
#: names of identifier columns: an ``id``/``index``/``key``... token, or camelCase ``userId``
_ID_NAME = re.compile(r"(?i:(^|[_\W])(id|idx|index|key|row|uuid|guid)($|[_\W]))|[a-z](Id|ID)$")
_NON_WORD = re.compile(r"[\W_]+")
#: decoration around numbers written as text: currency, thousands separators, %, spaces
_NUMBER_DECORATION = re.compile(r"[\s$€£¥,%]")
#: distinct values of a text column examined for numbers stored as text
_MAX_NUMERIC_TEXT_VALUES = 20_000


# --------------------------------------------------------------------------- helpers


def is_classification(task: str) -> bool:
    """True for a classification task; raises for an unknown task name."""
    try:
        return _TASK_IS_CLASSIFICATION[task]
    except (KeyError, TypeError):
        raise ValueError(
            f"task={task!r} is not supported; accepted: "
            + ", ".join(repr(t) for t in _TASK_IS_CLASSIFICATION)
        ) from None


def _label_key(value: Any) -> str | None:
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        number = float(value)
        if np.isnan(number):
            return None
        if np.isfinite(number) and number.is_integer() and abs(number) < 1e15:
            return str(int(number))
        return repr(number)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def label_keys(values: Any) -> np.ndarray:
    """Labels as comparable strings (object array, ``None`` where missing).

    ``1``, ``1.0``, ``np.int64(1)`` and ``"1"`` all become ``"1"``, so labels read with
    different dtypes in train, test and predictions (an int column that gained a NaN and
    became float, say) still compare equal. Works on distinct values only: fast.
    """
    if isinstance(values, pd.Series):
        series = values
    else:
        array = np.asarray(values)
        series = pd.Series(array.ravel() if array.ndim != 1 else array)
    try:
        codes, uniques = pd.factorize(series, use_na_sentinel=True)
    except TypeError:  # unhashable values (lists, dicts): use their text
        codes, uniques = pd.factorize(
            series.map(lambda v: v if pd.api.types.is_scalar(v) else repr(v)), use_na_sentinel=True
        )
    keys = np.empty(len(uniques) + 1, dtype=object)
    if ptypes.infer_dtype(uniques, skipna=False) == "string":  # the common case, in C
        keys[:-1] = np.asarray(uniques, dtype=object)
    else:
        keys[:-1] = [_label_key(u) for u in uniques]
    keys[-1] = None
    return keys[codes]  # code -1 (missing) picks the trailing None


def _is_integral(values: np.ndarray) -> bool:
    finite = values[np.isfinite(values)]
    return finite.size > 0 and bool(np.all(finite == np.round(finite)))


def _is_object_like(dtype: Any) -> bool:
    return dtype == object or ptypes.is_string_dtype(dtype)


def _is_plain_numeric(dtype: Any) -> bool:
    return (
        ptypes.is_numeric_dtype(dtype)
        and not ptypes.is_bool_dtype(dtype)
        and not ptypes.is_complex_dtype(dtype)
        and not isinstance(dtype, pd.CategoricalDtype)
    )


def _family(value: Any) -> str:
    """The broad Python type of one value; a mix of families is a data-type problem."""
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, (int, float, np.integer, np.floating)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (_dt.date, _dt.datetime, np.datetime64, pd.Timestamp)):
        return "datetime"
    if isinstance(value, bytes):
        return "bytes"
    return type(value).__name__


def _value_counts(series: pd.Series) -> pd.Series:
    """Counts of the non-missing distinct values, most frequent first."""
    try:
        counts = series.value_counts(dropna=True, sort=True)
    except TypeError:  # unhashable values (lists, dicts): count their text
        counts = series.dropna().astype(str).value_counts(sort=True)
    if isinstance(series.dtype, pd.CategoricalDtype):
        counts = counts[counts > 0]
    return counts


def _numeric_view(series: pd.Series, kind: str) -> np.ndarray | None:
    """The column as float64 (NaN where missing), or None when it is not numeric."""
    dtype = series.dtype
    try:
        if ptypes.is_bool_dtype(dtype) or _is_plain_numeric(dtype):
            return series.to_numpy(dtype=float, na_value=np.nan)
        if ptypes.is_datetime64_any_dtype(dtype):
            return None
        if kind == "numeric" and _is_object_like(dtype):
            return pd.to_numeric(series, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    except (TypeError, ValueError):
        return None
    return None


def _association_view(series: pd.Series, kind: str) -> np.ndarray | None:
    """Numeric values for a rank correlation (datetimes as epoch ns), else None."""
    if kind in ("numeric",):
        return _numeric_view(series, kind)
    if kind == "datetime":
        try:
            values = (
                series.to_numpy(dtype="datetime64[ns]")
                if series.dt.tz is None
                else (
                    series.dt.tz_convert("UTC")
                    .dt.tz_localize(None)
                    .to_numpy(dtype="datetime64[ns]")
                )
            )
            out = values.astype("int64").astype(float)
            out[np.isnat(values)] = np.nan
            return out
        except (TypeError, ValueError, AttributeError):
            return None
    return None


def _kind(series: pd.Series, is_cat: bool, families: dict[str, int] | None) -> str:
    dtype = series.dtype
    if ptypes.is_bool_dtype(dtype):
        return "boolean"
    if ptypes.is_datetime64_any_dtype(dtype):
        return "datetime"
    if isinstance(dtype, pd.CategoricalDtype):
        return "categorical"
    if ptypes.is_complex_dtype(dtype) or ptypes.is_timedelta64_dtype(dtype):
        return "other"
    if _is_plain_numeric(dtype):
        return "categorical" if is_cat else "numeric"
    if _is_object_like(dtype):
        if is_cat:
            return "categorical"
        families = families or {}
        if not families:
            return "other"
        dominant = max(families, key=families.__getitem__)
        return {
            "number": "numeric",
            "string": "text",
            "bool": "boolean",
            "datetime": "datetime",
        }.get(dominant, "other")
    return "other"


def _families(counts: pd.Series, dtype: Any) -> dict[str, int]:
    """Rows per value family; numeric-looking strings count as ``number``."""
    if len(counts) == 0:
        return {}
    values = pd.Series(counts.index, dtype=object)
    if (ptypes.is_string_dtype(dtype) and dtype != object) or ptypes.infer_dtype(
        values, skipna=True
    ) == "string":
        families = pd.Series("string", index=values.index, dtype=object)
    else:
        families = values.map(_family).astype(object)
    is_string = (families == "string").to_numpy()
    if is_string.any():
        looks_numeric = pd.to_numeric(values[is_string], errors="coerce").notna().to_numpy()
        idx = np.flatnonzero(is_string)[looks_numeric]
        families.iloc[idx] = "number"
    totals = pd.Series(counts.to_numpy(), index=families.to_numpy()).groupby(level=0).sum()
    return {str(k): int(v) for k, v in totals.items() if v > 0}


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


def _outlier_fraction(finite: np.ndarray, q: np.ndarray, n_obs: int) -> float:
    q01, q25, _, q75, q99 = q
    iqr = q75 - q25
    if iqr <= 0:  # mostly one value: fall back to the q01-q99 spread, scaled like an IQR
        iqr = (q99 - q01) * _IQR_PER_Q01_Q99
    if iqr <= 0 or n_obs == 0:
        return 0.0
    low, high = q25 - _OUTLIER_IQRS * iqr, q75 + _OUTLIER_IQRS * iqr
    return float(np.count_nonzero((finite < low) | (finite > high)) / n_obs)


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


# --------------------------------------------------------------------------- association


def sample_index(n: int, max_rows: int, seed: int) -> np.ndarray:
    """Sorted positions of a seeded sample of ``max_rows`` of ``n`` rows (all when fewer)."""
    if n <= max_rows:
        return np.arange(n)
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(n, size=max_rows, replace=False))


def _ranks(x: np.ndarray) -> np.ndarray:
    """Average ranks (ties share their mean rank), as ``scipy.stats.rankdata`` but
    several times faster on this stack."""
    order = np.argsort(x, kind="quicksort")
    ordered = x[order]
    change = np.empty(x.size, dtype=bool)
    change[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=change[1:])
    starts = np.flatnonzero(change)
    ends = np.append(starts[1:], x.size)
    ranks = np.empty(x.size, dtype=float)
    ranks[order] = np.repeat((starts + ends - 1) / 2.0 + 1.0, ends - starts)
    return ranks


def _pearson_columns(x: np.ndarray, targets: np.ndarray) -> float:
    """max |Pearson| of vector ``x`` with each column of ``targets``."""
    xc = x - x.mean()
    sx = np.sqrt((xc * xc).sum())
    if sx == 0:
        return 0.0
    tc = targets - targets.mean(axis=0)
    st = np.sqrt((tc * tc).sum(axis=0))
    ok = st > 0
    if not ok.any():
        return 0.0
    corr = (xc @ tc[:, ok]) / (sx * st[ok])
    return float(np.clip(np.nanmax(np.abs(corr)), 0.0, 1.0))


def _somers_d(ranks: np.ndarray, codes: np.ndarray, classes: np.ndarray) -> float:
    """max over ``classes`` of |2 AUC - 1| (Somers' D) of the ranked feature against
    each one-vs-rest indicator. Unlike Spearman against a 0/1 label (at most ~0.87), it
    reaches 1 when the feature separates a class perfectly: the leakage signal."""
    n = ranks.size
    n_codes = int(codes.max()) + 1 if codes.size else 0
    positives = np.bincount(codes, minlength=n_codes)[classes].astype(float)
    rank_sums = np.bincount(codes, weights=ranks, minlength=n_codes)[classes]
    ok = (positives > 0) & (positives < n)
    if not ok.any():
        return 0.0
    positives, rank_sums = positives[ok], rank_sums[ok]
    auc = (rank_sums - positives * (positives + 1) / 2.0) / (positives * (n - positives))
    return float(np.clip(np.max(np.abs(2.0 * auc - 1.0)), 0.0, 1.0))


class _Target:
    """The label of the association sample, prepared once for every column."""

    def __init__(self, y: pd.Series, classification: bool):
        self.classification = classification
        if classification:
            keys = label_keys(y)
            codes, uniques = pd.factorize(pd.Series(keys, dtype=object), use_na_sentinel=True)
            self.valid = codes >= 0
            self.codes = codes
            freq = np.bincount(codes[self.valid], minlength=len(uniques))
            top = np.argsort(-freq, kind="stable")[:_MAX_ASSOC_CLASSES]
            # a class of a handful of rows makes |2 AUC - 1| of pure noise large
            n_valid = int(self.valid.sum())
            sizeable = (freq[top] >= _MIN_ROWS) & (n_valid - freq[top] >= _MIN_ROWS)
            if sizeable.any():
                top = top[sizeable]
            if len(uniques) == 2:
                top = top[:1]
            self.classes = top
            self.n_classes = len(uniques)
        else:
            values = pd.to_numeric(y, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
            self.valid = np.isfinite(values)
            self.values = values
            self.value_ranks = _ranks(values) if self.valid.all() else None
            codes = np.full(len(values), -1, dtype=np.int64)
            if self.valid.sum() > 0:
                binned = pd.qcut(values[self.valid], q=10, labels=False, duplicates="drop")
                codes[self.valid] = np.asarray(binned, dtype=np.int64)
            self.codes = codes
            self.n_classes = len(np.unique(codes[self.valid]))

    def rank_association(self, x: np.ndarray) -> float | None:
        mask = self.valid & ~np.isnan(x)
        if mask.sum() < _MIN_ROWS:
            return None
        ranks = _ranks(x[mask])
        if self.classification:
            return _somers_d(ranks, self.codes[mask], self.classes)
        return _pearson_columns(
            ranks, (self.value_ranks if mask.all() else _ranks(self.values[mask]))[:, None]
        )

    def nmi(self, x: pd.Series) -> float | None:
        mask = self.valid
        if mask.sum() < _MIN_ROWS:
            return None
        try:
            codes, _ = pd.factorize(x[mask], use_na_sentinel=False)
        except TypeError:
            codes, _ = pd.factorize(x[mask].astype(str), use_na_sentinel=False)
        if len(np.unique(codes)) < 2:
            return 0.0
        return float(normalized_mutual_info_score(self.codes[mask], codes))


# --------------------------------------------------------------------------- columns


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


# --------------------------------------------------------------------------- hashing


def _canonical(series: pd.Series, as_: str) -> pd.Series:
    """The column in a form whose hash does not depend on incidental dtypes."""
    if as_ == "float":
        if ptypes.is_bool_dtype(series.dtype) or _is_plain_numeric(series.dtype):
            return pd.Series(series.to_numpy(dtype=float, na_value=np.nan))
        return pd.Series(
            pd.to_numeric(series, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        )
    if as_ == "str":
        dtype = series.dtype
        if isinstance(dtype, pd.CategoricalDtype):
            dtype = dtype.categories.dtype
        if ptypes.is_string_dtype(dtype) and dtype != object:
            # already text: only the container differs (str, string[pyarrow], category)
            return pd.Series(series.astype(object).to_numpy())
        return pd.Series(label_keys(series), dtype=object)
    return series.reset_index(drop=True)


def _hash_kind(series: pd.Series) -> str:
    dtype = series.dtype
    if ptypes.is_bool_dtype(dtype) or _is_plain_numeric(dtype):
        return "float"
    if isinstance(dtype, pd.CategoricalDtype) and _is_plain_numeric(dtype.categories.dtype):
        return "float"
    if ptypes.is_datetime64_any_dtype(dtype):
        return "native"
    return "str"


def _joint_hash_kind(*columns: pd.Series) -> str:
    kinds = {_hash_kind(c) for c in columns}
    if len(kinds) == 1:
        return kinds.pop()
    if kinds == {"float", "str"}:
        # numbers stored as text on one side: compare as numbers when they all parse
        for column in columns:
            if _hash_kind(column) == "str":
                parsed = pd.to_numeric(column, errors="coerce")
                if int(parsed.notna().sum()) != int(column.notna().sum()):
                    return "str"
        return "float"
    return "str"


def _row_hashes(frame: pd.DataFrame, columns: list[str], kinds: dict[str, str]) -> np.ndarray:
    if not columns:
        return np.zeros(len(frame), dtype=np.uint64)
    canonical = pd.DataFrame({i: _canonical(frame[c], kinds[c]) for i, c in enumerate(columns)})
    try:
        return hash_pandas_object(canonical, index=False).to_numpy()
    except TypeError:  # unhashable cell values
        return hash_pandas_object(canonical.astype(str), index=False).to_numpy()


# --------------------------------------------------------------------------- public API


def infer_cat_features(frame: pd.DataFrame, feature_names: list[str]) -> list[str]:
    """Categorical features of ``frame``, by a simple documented rule.

    A feature is categorical when its dtype is object, string, category or bool, or when
    it holds integers (int dtype, or float whose values are all whole numbers) with at
    most 10 distinct values that are also at most 5% of its non-missing rows. Datetimes
    and other numbers are not categorical.
    """
    categorical = []
    for name in feature_names:
        if name not in frame.columns:
            continue
        series = frame[name]
        dtype = series.dtype
        if (
            _is_object_like(dtype)
            or isinstance(dtype, pd.CategoricalDtype)
            or ptypes.is_bool_dtype(dtype)
        ):
            categorical.append(name)
            continue
        if not _is_plain_numeric(dtype):
            continue
        values = series.to_numpy(dtype=float, na_value=np.nan)
        if not (ptypes.is_integer_dtype(dtype) or _is_integral(values)):
            continue
        n_obs = int(np.count_nonzero(~np.isnan(values)))
        n_unique = int(series.nunique(dropna=True))
        if n_obs and n_unique <= _CAT_MAX_UNIQUE and n_unique <= _CAT_MAX_UNIQUE_SHARE * n_obs:
            categorical.append(name)
    return categorical


def split_stats(
    frame: pd.DataFrame,
    *,
    name: Literal["train", "test"],
    label: str,
    task: str,
    feature_names: list[str],
    cat_features: list[str],
    seed: int = 0,
    max_rows: int = 50_000,
    target_association: bool | None = None,
) -> SplitStats:
    """Statistics of one split: every non-label column, duplicates, conflicts, label.

    ``target_association`` (default: only for the ``train`` split) adds each column's
    association with the label, in [0, 1], computed on a seeded sample of at most
    ``max_rows`` rows. Numeric and datetime columns: a rank correlation, |Spearman|
    against a regression target, |Somers' D| = |2 AUC - 1| one-vs-rest (maximum over
    the classes) against a class label, because Spearman against a 0/1 label cannot
    exceed ~0.87 even for a feature that separates the classes perfectly. Other columns:
    normalised mutual information (a regression target binned into deciles). ``summarize_dataset`` also asks for it on ``test`` when no
    training split exists, so that leakage can still be seen.
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    if name not in ("train", "test"):
        raise ValueError(f"name={name!r} is not supported; accepted: 'train', 'test'")
    if not isinstance(max_rows, int) or max_rows < 1:
        raise ValueError(f"max_rows={max_rows!r} must be a positive integer")
    classification = is_classification(task)
    n_rows = len(frame)
    cat_set = set(cat_features or [])
    features = [c for c in feature_names if c in frame.columns and c != label]
    others = [c for c in frame.columns if c != label and c not in set(features)]
    has_label = label in frame.columns
    if not has_label:
        logger.warning("split %r has no label column %r", name, label)

    if target_association is None:
        target_association = name == "train"
    sample = sample_index(n_rows, max_rows, seed)
    target = None
    if target_association and has_label and n_rows:
        target = _Target(frame[label].iloc[sample].reset_index(drop=True), classification)

    columns = []
    for column in features + others:
        series = frame[column]
        if isinstance(series, pd.DataFrame):  # duplicated column name: take the first
            series = series.iloc[:, 0]
        columns.append(
            _column_stats(series, is_cat=column in cat_set, target=target, sample=sample)
        )

    stats: dict[str, Any] = {
        "name": name,
        "n_rows": n_rows,
        "n_columns": frame.shape[1],
        "columns": columns,
    }
    if n_rows == 0:
        return SplitStats(**stats)

    kinds = {c: _hash_kind(frame[c]) for c in features}
    feature_hash = _row_hashes(frame, features, kinds)
    if has_label:
        keys = label_keys(frame[label])
        label_missing = np.array([k is None for k in keys], dtype=bool)
        label_codes, _ = pd.factorize(pd.Series(keys, dtype=object), use_na_sentinel=False)
        row_hash = hash_pandas_object(
            pd.DataFrame({"f": feature_hash, "y": label_codes}), index=False
        ).to_numpy()
        stats["label_missing_fraction"] = float(label_missing.mean())
        if features:
            pairs = pd.DataFrame({"f": feature_hash, "y": label_codes})[~label_missing]
            distinct = pairs.drop_duplicates()
            conflicted = distinct["f"][distinct["f"].duplicated(keep=False)].unique()
            stats["conflicting_label_fraction"] = float(
                np.isin(pairs["f"].to_numpy(), conflicted).sum() / n_rows
            )
        if classification:
            stats["label_distribution"] = _distribution(keys[~label_missing])
        else:
            stats["label_stats"] = _label_stats(frame[label])
    else:
        row_hash = feature_hash
    if features or has_label:
        stats["duplicate_fraction"] = float(pd.Series(row_hash).duplicated().mean())
    return SplitStats(**stats)


def _distribution(keys: np.ndarray) -> dict[str, float]:
    if len(keys) == 0:
        return {}
    shares = pd.Series(keys, dtype=object).value_counts(normalize=True, sort=True)
    out = {str(k): float(v) for k, v in shares.iloc[:_MAX_LABEL_KEYS].items()}
    if len(shares) > _MAX_LABEL_KEYS:
        out["<other>"] = float(shares.iloc[_MAX_LABEL_KEYS:].sum())
    return out


def _label_stats(label: pd.Series) -> dict[str, float]:
    values = pd.to_numeric(label, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return {}
    q = np.quantile(finite, [0.01, 0.5, 0.99])
    low, high = np.quantile(finite, ROBUST_EXTREMES)
    return {
        "mean": float(finite.mean()),
        "std": float(finite.std(ddof=1)) if finite.size > 1 else 0.0,
        "min": float(low),
        "max": float(high),
        "q01": float(q[0]),
        "q50": float(q[1]),
        "q99": float(q[2]),
    }


def _dtype_family(dtype: Any) -> str:
    if isinstance(dtype, pd.CategoricalDtype):
        return "category"
    if ptypes.is_bool_dtype(dtype):
        return "bool"
    if ptypes.is_integer_dtype(dtype):
        return "int"
    if ptypes.is_float_dtype(dtype):
        return "float"
    if ptypes.is_datetime64_any_dtype(dtype):
        return "datetime"
    if _is_object_like(dtype):
        return "string"
    return str(dtype)


def _unseen_fraction(train: pd.Series, test: pd.Series) -> float:
    """Share of test rows holding a non-missing value never seen in train (values
    compared through :func:`label_keys`, so ``1`` and ``1.0`` are the same)."""
    if len(test) == 0:
        return 0.0
    try:
        seen = set(label_keys(pd.Series(pd.unique(train.dropna().to_numpy()), dtype=object)))
        test_values = pd.unique(test.dropna().to_numpy())
    except TypeError:  # unhashable values: compare every row's key
        seen = set(label_keys(train))
        keys = label_keys(test)
        return float(np.mean([k is not None and k not in seen for k in keys]))
    test_keys = label_keys(pd.Series(test_values, dtype=object))
    new = [v for v, k in zip(test_values, test_keys) if k is not None and k not in seen]
    if not new:
        return 0.0
    return float(test.isin(new).mean())


def _to_datetime(series: pd.Series) -> pd.Series:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return pd.to_datetime(series, errors="coerce", utc=True)
        except (TypeError, ValueError, OverflowError):
            return pd.Series(pd.NaT, index=series.index, dtype="datetime64[ns, UTC]")


def compare_splits(
    train: pd.DataFrame,
    test: pd.DataFrame,
    *,
    label: str,
    task: str,
    feature_names: list[str],
    cat_features: list[str],
    datetime_col: str | None,
) -> SplitComparison:
    """How ``test`` relates to ``train``: shared rows, schema, unseen values, dates.

    Rows are compared through a 64-bit hash of their features, after numbers are cast
    to float (so ``int64`` 1 equals ``float64`` 1.0) and text and categories to plain
    strings; a column holding numbers on one side and numeric text on the other is
    compared as numbers.
    """
    for arg, value in (("train", train), ("test", test)):
        if not isinstance(value, pd.DataFrame):
            raise TypeError(f"{arg} must be a pandas DataFrame, got {type(value).__name__}")
    classification = is_classification(task)
    out: dict[str, Any] = {
        "test_to_train_ratio": len(test) / len(train) if len(train) else 0.0,
    }
    train_columns, test_columns = list(train.columns), list(test.columns)
    in_train, in_test = set(train_columns), set(test_columns)
    out["columns_only_in_train"] = [c for c in train_columns if c not in in_test]
    out["columns_only_in_test"] = [c for c in test_columns if c not in in_train]
    common = [c for c in train_columns if c in in_test]
    out["dtype_mismatches"] = {
        c: f"{train[c].dtype} -> {test[c].dtype}"
        for c in common
        if _dtype_family(train[c].dtype) != _dtype_family(test[c].dtype)
    }

    common_set = set(common)
    features = [c for c in feature_names if c in common_set and c != label]
    if features and len(train) and len(test):
        kinds = {c: _joint_hash_kind(train[c], test[c]) for c in features}
        train_hash = _row_hashes(train, features, kinds)
        test_hash = _row_hashes(test, features, kinds)
        out["overlap_fraction"] = float(pd.Series(test_hash).isin(train_hash).mean())

    unseen = {}
    for column in cat_features or []:
        if column in set(common) and column != label:
            share = _unseen_fraction(train[column], test[column])
            if share > 0:
                unseen[column] = share
    out["unseen_category_fraction"] = unseen
    if classification and label in set(common):
        out["unseen_label_fraction"] = _unseen_fraction(train[label], test[label])

    if datetime_col and datetime_col in train.columns and datetime_col in test.columns:
        train_dates = _to_datetime(train[datetime_col])
        test_dates = _to_datetime(test[datetime_col]).dropna()
        latest = train_dates.max()
        if len(test_dates) and not pd.isna(latest):
            out["test_before_train_fraction"] = float((test_dates < latest).mean())
    elif datetime_col:
        logger.warning("datetime_col %r is not in both splits; date checks skipped", datetime_col)
    return SplitComparison(**out)


def summarize_dataset(
    train: pd.DataFrame | None,
    test: pd.DataFrame,
    *,
    label: str,
    task: str,
    feature_names: list[str],
    cat_features: list[str] | None,
    index_col: str | None = None,
    datetime_col: str | None = None,
    seed: int = 0,
    max_rows: int = 50_000,
) -> DatasetSummary:
    """Both splits' statistics and their comparison (no raw rows).

    ``cat_features=None`` infers them with :func:`infer_cat_features` from the training
    split (or the test split when there is none). Without a training split the target
    association is computed on the test split instead.
    """
    reference = train if train is not None else test
    if cat_features is None:
        cat_features = infer_cat_features(reference, feature_names)
    common = {
        "label": label,
        "task": task,
        "feature_names": feature_names,
        "cat_features": cat_features,
        "seed": seed,
        "max_rows": max_rows,
    }
    train_stats = split_stats(train, name="train", **common) if train is not None else None
    test_stats = split_stats(test, name="test", target_association=train is None, **common)
    comparison = None
    if train is not None:
        comparison = compare_splits(
            train,
            test,
            label=label,
            task=task,
            feature_names=feature_names,
            cat_features=cat_features,
            datetime_col=datetime_col,
        )
    return DatasetSummary(
        target=label,
        feature_names=list(feature_names),
        cat_features=list(cat_features),
        index_col=index_col,
        datetime_col=datetime_col,
        train=train_stats,
        test=test_stats,
        comparison=comparison,
    )
