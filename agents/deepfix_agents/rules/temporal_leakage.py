"""temporal_leakage: test dates that precede training dates."""

from __future__ import annotations

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, interp, pct
from deepfix_agents.rules._ordered import copied_share, reversed_split_axis, uncopied_share
from deepfix_agents.rules.identifier_leakage import association_margin

#: share of test rows dated before the latest training date -> base score
BEFORE_SCORE = ((0.0, 0.0), (0.02, 0.15), (0.1, 0.35), (0.3, 0.55), (0.6, 0.7), (0.9, 0.8))
#: how strongly the label depends on time (date-label association beyond its noise
#: margin) -> factor on the base score: without a trend, mixing periods costs little
TIME_DEPENDENCE_FACTOR = ((0.0, 0.4), (0.05, 0.6), (0.15, 0.9), (0.3, 1.0))
#: factor when the dependence on time cannot be measured (date stored as text, ...)
UNKNOWN_DEPENDENCE_FACTOR = 0.7
#: share of test rows whose date also occurs in train (Deepchecks' duplicates check)
DUPLICATE_DATE_SCORE = ((0.0, 0.0), (0.05, 0.15), (0.2, 0.3), (0.5, 0.45))


def time_dependence(artifact, axis: str | None = None) -> tuple[float | None, float | None]:
    """(association of the date column, or of the undated time ``axis`` such as a year,
    with the label on train, the part of it beyond the noise margin), or (None, None)
    when it was not measured as a rank statistic: only a date or a numeric axis has one
    (a year encoded as a category is measured by mutual information, which says nothing
    of a trend)."""
    dataset = artifact.dataset
    split = dataset.train
    name = axis or dataset.datetime_col
    if split is None or not name:
        return None, None
    column = split.column(name)
    ranked = "numeric" if axis else "datetime"
    if column is None or column.kind != ranked or column.target_association is None:
        return None, None
    association = column.target_association
    return association, max(association - association_margin(artifact, split), 0.0)


def _uncopied_check(artifact, name: str, copied: float):
    """(check, share): Deepchecks' date-leakage check ``name`` and the share of test rows
    it flags, read from the rows that do not copy a training row
    (:func:`_ordered.uncopied_share`); the share is 0 unless the check did not pass."""
    check = artifact.check(name)
    if check is None or check.outcome != "not_passed" or not check.value:
        return check, 0.0
    return check, uncopied_share(check.value, copied)


@register_rule
class TemporalLeakage(Rule):
    id = "temporal_leakage"
    name = "The model is tested on data older than data it was trained on"
    detects = (
        "Test rows dated before the latest training date (needs `datetime_col`): a random or "
        "reversed split of time-stamped data, so the model learns from the future of the "
        "period it is evaluated on. Without a date, a split that runs backward along an "
        "ordered column such as a year (every test row at or before the oldest training "
        "period)."
    )
    why = (
        "In production a model only ever sees the past. When training includes later data "
        "than the test rows, trends and recent patterns leak into the evaluation, and the "
        "test score overstates how the model will do on genuinely new periods."
    )
    example = (
        "Daily sales sorted newest-first are split without shuffling: the model trains on "
        "2023-2024 and is evaluated on 2022, where it already knows how the trend continues."
    )
    fixes = (
        (
            "Split by time: train on everything before a cut-off date and test on what comes "
            "after, e.g. `df = df.sort_values('date'); cut = int(len(df) * 0.8); train, test = "
            "df.iloc[:cut], df.iloc[cut:]`."
        ),
        (
            "Cross-validate with `TimeSeriesSplit` (optionally with a `gap`) instead of `KFold` "
            "or `train_test_split(shuffle=True)`."
        ),
        (
            "Build features only from information available at each row's timestamp (lags and "
            "rolling windows that look backwards only)."
        ),
        (
            "Leave a gap between the training and test periods when labels mature late "
            "(e.g. churn observed 90 days after the snapshot)."
        ),
    )
    severity_policy = (
        "Base score from the share of test rows dated before the latest training date: "
        "2% -> 0.15, 10% -> 0.35, 30% -> 0.55, 60% -> 0.7, >= 90% -> 0.8, read from the test "
        "rows that do not copy a training row (a copy carries its training date: train/test "
        "overlap, not a mixed period). Multiplied by how "
        "much the label depends on time, measured as the date column's association with the "
        "label on train beyond its noise margin (3 standard errors): 0 -> x0.4 (no trend: "
        "mixing periods costs little, at most low), 0.05 -> x0.6, 0.15 -> x0.9, >= 0.3 -> x1.0; "
        "x0.7 when it cannot be measured. Deepchecks' Date Train Test Leakage Overlap gives the "
        "same share (corroboration); Date Train Test Leakage Duplicates 20% -> 0.3 (same factor). "
        "Undated: a split backward along an ordered column (every test value at or below its "
        "training minimum, the newest test value equal to it, 3+ training values) counts as "
        "100% of test rows before the latest training date, the factor from that column's "
        "rank association with the label (x0.7 when it is encoded as a category)."
    )
    explains = ("label_drift", "feature_drift", "prediction_drift", "overfitting")
    checks = ("Date Train Test Leakage Overlap", "Date Train Test Leakage Duplicates")

    def _factor(self, artifact, axis: str | None = None) -> tuple[float, float | None]:
        association, dependence = time_dependence(artifact, axis)
        if dependence is None:
            return UNKNOWN_DEPENDENCE_FACTOR, None
        return interp(dependence, TIME_DEPENDENCE_FACTOR), association

    def detect_dataset(self, artifact):
        comparison = artifact.dataset.comparison
        if comparison is None:
            return
        share = comparison.test_before_train_fraction
        if artifact.dataset.datetime_col is None and share is None:
            yield from self._reversed_axis(artifact)
            return
        copied = copied_share(artifact)
        if share:
            share = uncopied_share(share, copied)
        if not share:
            return
        factor, association = self._factor(artifact)
        column = artifact.dataset.datetime_col
        detail = f"{pct(share)} of test rows are dated before the latest training date ({column!r})"
        if 0 < copied < 1:
            detail += f", the {pct(copied)} that copy training rows set aside"
        if association is not None:
            detail += f"; the date's association with the label on train is {association:.2f}"
        yield self._before_signal(share, column, factor, association, detail)

    def _before_signal(self, share, column, factor, association, detail):
        """The dataset signal of ``share`` of the test rows lying before the training
        period along ``column`` (a date, or an undated ordered axis), scored by the share
        times the time-dependence ``factor``: one scoring for both readings."""
        return self.signal(
            "dataset",
            score=interp(share, BEFORE_SCORE) * factor,
            confidence=0.9 if factor >= 0.6 else 0.6,
            detail=detail,
            value=share,
            share=share,
            column=column,
            association=association,
            trend=factor >= 0.6,
        )

    def _reversed_axis(self, artifact):
        """An undated split that runs backward along an ordered column such as a year
        (:func:`_ordered.reversed_split_axis`): every test row comes from the oldest
        period of the training split or before it, the same fact a dated split reports
        as 100% of test rows before the latest training date, scored alike (the axis's
        association with the label measures the time dependence)."""
        column = reversed_split_axis(artifact)
        if column is None:
            return
        factor, association = self._factor(artifact, column)
        detail = (
            f"every test row lies at or before the oldest training value of {column!r}: the "
            "split runs backward along it (an undated panel or series split by period)"
        )
        if association is not None:
            detail += f"; its association with the label on train is {association:.2f}"
        yield self._before_signal(1.0, column, factor, association, detail)

    def detect_deepchecks(self, artifact):
        factor, association = self._factor(artifact)
        copied = copied_share(artifact)
        check, share = _uncopied_check(artifact, "Date Train Test Leakage Overlap", copied)
        if share:
            yield self.check_signal(
                check,
                score=interp(share, BEFORE_SCORE) * factor,
                confidence=0.75,
                share=share,
                association=association,
                trend=factor >= 0.6,
            )
        check, share = _uncopied_check(artifact, "Date Train Test Leakage Duplicates", copied)
        if share:
            yield self.check_signal(
                check,
                score=interp(share, DUPLICATE_DATE_SCORE) * factor,
                confidence=0.5,
                duplicate_share=share,
            )

    def title(self, signals, artifact):
        share = self.fact(signals, "share")
        if share is not None:
            trend = " while the label changes over time" if self.fact(signals, "trend") else ""
            return f"{pct(share)} of test rows are older than the newest training rows{trend}"
        duplicate = self.fact(signals, "duplicate_share", 0.0)
        return f"{pct(duplicate)} of test rows share their date with training rows"

    def explanation(self, signals, artifact):
        text = (
            "The split mixes time: the model was trained on rows from later than many of the rows "
            "it is tested on, so it has effectively seen the future of its own evaluation period. "
        )
        if self.fact(signals, "trend"):
            text += (
                "The label changes with time in this data, so that glimpse of the future makes the "
                "test score look better than what the model will achieve on the next period."
            )
        else:
            text += (
                "The label shows little dependence on time here, so the damage is probably small, "
                "but a time-based split is the honest way to evaluate a model used on future data."
            )
        return text
