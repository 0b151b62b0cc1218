"""Splits that run along an ordered number: a year column whose test values all come after
its training values is a chronological split, dated or not. Shared by the rules that read
a later period differently (unseen categories, feature drift, overfitting) without one
rule importing another."""

from __future__ import annotations

#: an ordered axis needs at least this many distinct training values: a two-valued column
#: (a 0/1 flag, a planted shift pushing a flag past its range) is a flag, not a time axis
MIN_AXIS_VALUES = 3


def ordered_extrapolation(train, test, copied: float = 0.0) -> str | None:
    """``'above'`` when every test value of a numeric column is at or above its training
    maximum (``'below'``: at or below its minimum) while the test values are not all one
    old value, else None. The split then runs along this column (a chronological split by
    year): its new values are the next values of an ordered number, which every such split
    shows by construction, not codes the encoder has never learned. ``copied`` (the share
    of test rows that copy training rows) sets those rows aside
    (:func:`_past_range_beside_copies`)."""
    if train is None or test is None:
        return None
    values = (train.min, train.max, test.min, test.max)
    if any(v is None for v in values) or train.n_unique < 2:
        return None
    if test.min >= train.max and test.max > train.max:
        return "above"
    if test.max <= train.min and test.min < train.min:
        return "below"
    return _past_range_beside_copies(train, test, copied)


def _past_range_beside_copies(train, test, copied: float) -> str | None:
    """The side when the test rows that are not copies of training rows lie past the
    training range on average, the copied rows (``copied``: the share of test rows that
    are exact training rows) set aside; else None.

    A copied training row carries a training value of every column by construction, so a
    chronological split whose test split also holds copies of old rows no longer has all
    its test values past the training range, though its own rows still are. The copies
    are drawn from the training rows and so carry the training mean: the mean of the other
    test rows is ``(test.mean - copied * train.mean) / (1 - copied)``. When that lies at or
    beyond the training maximum (minimum), the uncopied rows are the later (earlier)
    period of the ordered number and the copies are a separate bug (train/test overlap)."""
    if not 0 < copied < 1 or train.mean is None or test.mean is None:
        return None
    rest = (test.mean - copied * train.mean) / (1 - copied)
    if test.max > train.max and rest >= train.max:
        return "above"
    if test.min < train.min and rest <= train.min:
        return "below"
    return None


def ordered_split_axis(artifact) -> str | None:
    """The first numeric column (in artifact order) along which the split runs forward in
    time: every test value at or above the training maximum, some above it, and at least
    :data:`MIN_AXIS_VALUES` distinct training values. None when there is none.

    A panel or a pooled series split by year (routes 1997-1999 trained, 1999-2000 tested)
    carries no ``datetime_col`` but is as chronological as a dated split: its test period
    differs from the training period by construction, which is the honest split, not a
    bug."""
    copied = copied_share(artifact)
    return _first_axis(
        artifact, lambda train, test: ordered_extrapolation(train, test, copied) == "above"
    )


def copied_share(artifact) -> float:
    """The share of test rows that are exact copies of training rows (0 when unmeasured):
    they hold training values of every column by construction, so the split's direction
    is read from the other test rows (see ``ordered_extrapolation``)."""
    comparison = artifact.dataset.comparison
    return (comparison.overlap_fraction or 0.0) if comparison is not None else 0.0


def uncopied_share(share: float, copied: float) -> float:
    """``share`` of the test rows dated before (or on a date of) the training period,
    read from the test rows that do not copy a training row (``copied``: their share,
    :func:`copied_share`, the test rows whose feature row equals a training row's).

    A copied training row carries that row's training date, so it lies inside the
    training period by construction: it is train/test overlap's evidence, not a split
    that mixes periods (DEV: every planted overlap on a dated series read as that same
    share of test rows dated before the latest training date, and ranked a temporal
    leakage beside or above the overlap). The copies are counted among the dated-before
    rows and set aside from both the count and the test rows, as
    :func:`ordered_extrapolation` reads a split's direction beside copies. A split with
    every test row before the training period still reads 100% whatever the copies
    (the overlap compares feature rows, not dates, so a natural duplicate dated later
    can only lower a partial share by its own weight)."""
    if not 0 < copied < 1:
        return share
    return max(share - copied, 0.0) / (1.0 - copied)


def reversed_split_axis(artifact) -> str | None:
    """The first numeric column (in artifact order) along which the split runs backward in
    time: every test value at or below the training minimum, some below it, the newest
    test value equal to the oldest training value, and at least :data:`MIN_AXIS_VALUES`
    distinct training values. None when there is none.

    Rows kept in period order and split with the test rows taken from the start (a
    reversed chronological split of a panel by year) put the test split wholly before
    the training split along that column, and the cut falls inside one period, which
    then opens the training split and closes the test split. A shifted input moves its
    test values to new ones below the training range and shares none with it."""
    return _first_axis(
        artifact,
        lambda train, test: ordered_extrapolation(train, test) == "below" and test.max == train.min,
    )


def _first_axis(artifact, runs_along) -> str | None:
    """The first training column (in artifact order) with at least
    :data:`MIN_AXIS_VALUES` distinct values for which ``runs_along(train, test)`` holds
    on its two splits' statistics; None without both splits or such a column."""
    dataset = artifact.dataset
    if dataset.train is None or dataset.test is None:
        return None
    for train in dataset.train.columns:
        if train.n_unique >= MIN_AXIS_VALUES and runs_along(train, dataset.test.column(train.name)):
            return train.name
    return None
