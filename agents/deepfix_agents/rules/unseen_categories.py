"""unseen_categories: categories or labels in test never seen in training."""

from __future__ import annotations

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, interp, pct
from deepfix_agents.rules._ordered import copied_share, ordered_extrapolation
from deepfix_agents.rules._runtime import (
    crash_detail,
    crash_score,
    crashes_for,
    input_unseen_counts,
)
from deepfix_agents.rules.feature_drift import period_drift_without_harm
from deepfix_agents.rules.prediction_drift import large_feature_shift

#: share of test rows holding a category never seen in train (worst feature) -> score
CATEGORY_SCORE = ((0.01, 0.0), (0.03, 0.2), (0.1, 0.45), (0.25, 0.65), (0.5, 0.8), (0.8, 0.9))
#: share of test rows whose label never occurs in train -> score; every such row is
#: necessarily misclassified, so even small shares matter
LABEL_SCORE = ((0.0, 0.0), (0.005, 0.3), (0.02, 0.5), (0.05, 0.65), (0.15, 0.8), (0.3, 0.9))
#: near-unique columns (ids, free text, numbers stored as text) always show new values:
#: factor by the column's distinct-value share in train
UNIQUENESS_FACTOR = ((0.05, 1.0), (0.3, 0.6), (0.8, 0.3))
#: added per further feature with >= 3% unseen rows, up to MAX_COLUMN_BONUS
COLUMN_BONUS, MAX_COLUMN_BONUS = 0.05, 0.1
#: a column of numeric codes whose whole value range moved by one offset (the same number
#: of values, lowest and highest both shifted by it: 0/1 read as -1/0) holds no new
#: category but the old ones moved, a shift of the column that feature drift measures:
#: at most low here
BLOCK_SHIFT_CAP = 0.39
#: a numeric column whose test values all lie at or beyond one end of its training range
#: (a year on a chronological split) holds the later values of an ordered number, not
#: unknown category codes: at most low unless the rows with those values score worse than
#: the column's other test rows beyond noise (this many standard errors)
EXTRAPOLATION_CAP = 0.39
HARM_Z = 2.0


def _segment_harm(artifact, name: str, side: str, train) -> float | None:
    """The largest z of the error of the test rows holding a value beyond the training
    range over the error of the column's other test rows (per-row error spreads from the
    segment scores, binomial for error rates when absent); None when nothing is measured."""
    worst = None
    for seg in artifact.performance.segments if artifact.performance else ():
        if seg.feature != name or seg.sibling_error is None or not seg.sibling_n_rows:
            continue
        try:
            value = float(seg.value)
        except (TypeError, ValueError):
            continue
        if (side == "above" and value <= train.max) or (side == "below" and value >= train.min):
            continue
        sd, rest_sd = seg.error_std, seg.rest_error_std
        if sd is None or rest_sd is None:
            if artifact.task == "regression":
                continue
            p = (seg.error * seg.n_rows + seg.sibling_error * seg.sibling_n_rows) / (
                seg.n_rows + seg.sibling_n_rows
            )
            sd = rest_sd = (p * (1 - p)) ** 0.5
        se = (sd**2 / max(seg.n_rows, 1) + rest_sd**2 / seg.sibling_n_rows) ** 0.5
        z = (seg.error - seg.sibling_error) / se if se > 0 else 0.0
        worst = z if worst is None else max(worst, z)
    return worst


def block_offset(train, test) -> float | None:
    """The offset by which a numeric-coded column's whole range moved between the splits
    (``test.min - train.min == test.max - train.max != 0``, as many distinct values on
    both sides), else None."""
    if train is None or test is None:
        return None
    values = (train.min, train.max, test.min, test.max)
    if any(v is None for v in values) or train.n_unique < 2 or train.n_unique != test.n_unique:
        return None
    low, high = test.min - train.min, test.max - train.max
    scale = max(abs(train.max - train.min), 1e-12)
    if abs(low) <= 1e-9 * scale or abs(low - high) > 1e-9 * scale:
        return None
    return low


def harmless_extrapolation(artifact, name: str) -> str | None:
    """The side (see ``ordered_extrapolation``) when column ``name``'s new test values
    extend its training range along the split and cost the model nothing the values
    themselves explain (:func:`_harmless_extrapolation_reading`). Test rows that copy
    training rows (train/test overlap) are set aside when reading the split's direction:
    they hold old values by construction."""
    reading = _harmless_extrapolation_reading(artifact, name)
    return reading[0] if reading is not None else None


def _harmless_extrapolation_reading(artifact, name: str) -> tuple[str, bool, str | None] | None:
    """:func:`harmless_extrapolation`'s side, whether every test value lies past the
    training range (``ordered_extrapolation`` without copies set aside: True) or only the
    test rows that are not copies of training rows do (False), and, when the rows with
    the new values do score worse, why that is still no harm of unknown values (the
    chronological reading of ``feature_drift.period_drift_without_harm``), so the wording
    reuses the reading the decision made.

    Two measurements clear an ordered number extended along the split: its rows score
    no worse than the column's other test rows beyond ``HARM_Z`` standard errors; or the
    split is chronological and the baseline ladder, fitted on the same training rows,
    scores on the later period what it scored in cross-validation, with this model level
    with it or short of it for a reason of its own (``period_drift_without_harm``: it
    errs as much on its training rows, or falls as far short of the ladder there). Then
    the later values are no harder to predict for a simple model, and what this model
    alone loses on them is its own weakness (a kernel or a net that extrapolates badly, an
    overfitted fit), which the rules that measure the model name, not a category the
    model could never have learnt."""
    dataset = artifact.dataset
    if dataset.train is None or dataset.test is None:
        return None
    train, test = dataset.train.column(name), dataset.test.column(name)
    # every test value past the range: that reading does not depend on the copies, so it
    # is the side whenever it holds; otherwise the copies are set aside
    every = ordered_extrapolation(train, test)
    side = every if every is not None else ordered_extrapolation(
        train, test, copied_share(artifact)
    )
    if side is None:
        return None
    z = _segment_harm(artifact, name, side, train)
    if z is None or z < HARM_Z:
        return side, every is not None, None
    period = period_drift_without_harm(artifact)
    return (side, every is not None, period) if period is not None else None


@register_rule
class UnseenCategories(Rule):
    id = "unseen_categories"
    name = "Test data holds categories or labels never seen in training"
    detects = (
        "Categorical feature values, or class labels, that occur in the evaluation data but "
        "never in the training data."
    )
    why = (
        "The model has learned nothing about a category it never saw: encoders map it to an "
        "all-zero vector or an error, so those rows get a default guess. A test label absent "
        "from training can never be predicted, so every such row is an error by construction."
    )
    example = (
        "35% of the test loans have the purpose 'solar', 'medical' or 'wedding', which did not "
        "exist when the training data was collected."
    )
    fixes = (
        (
            "Split so that every category occurs on both sides (`train_test_split(..., "
            "stratify=df['purpose'])` for one key column) or deliberately hold out new categories "
            "and report that score separately."
        ),
        (
            "Collect training data that covers the categories seen in production, or map new "
            "values to known groups (e.g. 'solar' -> 'home') before predicting."
        ),
        (
            "Make the encoder handle unknowns explicitly: `OneHotEncoder(handle_unknown="
            "'infrequent_if_exist', min_frequency=...)` or an explicit 'other' bucket, and monitor "
            "the share of unknown values in production."
        ),
        (
            "For labels: train on every class you expect to predict; a class missing from "
            "training needs data, not tuning."
        ),
    )
    severity_policy = (
        "Features: the worst feature's share of test rows with an unseen category, 3% -> 0.2, "
        "10% -> 0.45, 25% -> 0.65, 50% -> 0.8, 80% -> 0.9, multiplied by a factor for "
        "near-unique columns where new values are normal (distinct share in train 5% -> x1, "
        "30% -> x0.6, 80% -> x0.3), +0.05 per further affected feature (up to +0.1). Labels: "
        "share of test rows with an unseen label, 0.5% -> 0.3, 2% -> 0.5, 5% -> 0.65, "
        "15% -> 0.8, 30% -> 0.9. Deepchecks' New Category / New Label Train Test corroborate. "
        "A column of numeric codes whose whole range moved by one offset (as many distinct "
        "values, lowest and highest both shifted by it) holds no new category but moved "
        "codes, a shift of the column: at most 0.39 (low), and the check's share of it is "
        "not counted. So is a numeric column whose test values all lie at or beyond one end "
        "of its training range (a year on a chronological split: the split runs along the "
        "ordered number and its next values are expected), unless the rows holding the new "
        "values score worse than the column's other test rows by 2 standard errors or more. "
        "Test rows that copy training rows (train/test overlap) hold old values by "
        "construction and are set aside: the other test rows' mean, the copies taken at the "
        "training mean, at or beyond the training range reads the same way."
    )
    explains = ("feature_drift", "label_drift", "prediction_drift", "weak_segment")

    def explains_for(self, artifact):
        """New categories explain shifted category shares, not a numeric feature that
        moved a long way on its own (a unit change, a recalibrated sensor): then feature
        drift is a second, independent bug and keeps its own finding."""
        if large_feature_shift(artifact) is not None:
            return tuple(c for c in self.explains if c != "feature_drift")
        return self.explains
    checks = ("New Category Train Test", "New Label Train Test")

    def detect_runtime(self, artifact):
        """The model (e.g. a OneHotEncoder with handle_unknown='error') crashed on a
        category it never saw in training."""
        for failure in crashes_for(artifact, self.id):
            # the model's input columns only: a date column the signature drops is
            # "unseen" on every time-ordered split but did not crash the model
            counts = input_unseen_counts(failure) or failure.unseen_counts
            column = max(counts, key=lambda c: (counts[c], c)) if counts else None
            yield self.signal(
                "runtime",
                score=crash_score(failure),
                confidence=0.85 if counts else 0.6,
                detail=crash_detail(failure, counts, "row(s) with an unseen category"),
                value=sum(counts.values()) or None,
                column=column,
                crashed=True,
                crash_fix=(
                    "Make the encoder tolerate new categories "
                    "(OneHotEncoder(handle_unknown='infrequent_if_exist' or 'ignore')) and "
                    "retrain on data that covers the categories seen in production"
                    + (f"; {column!r} has {counts[column]} such row(s)." if column else ".")
                ),
            )

    def detect_dataset(self, artifact):
        dataset = artifact.dataset
        comparison = dataset.comparison
        if comparison is None or dataset.train is None:
            return
        features = set(dataset.feature_names)
        scored = []
        for name, share in sorted(comparison.unseen_category_fraction.items()):
            if name not in features or share <= 0:
                continue
            column = dataset.train.column(name)
            uniqueness = column.unique_fraction if column is not None else 0.0
            score = interp(share, CATEGORY_SCORE) * interp(uniqueness, UNIQUENESS_FACTOR)
            offset = block_offset(column, dataset.test.column(name))
            if offset is not None:
                score = min(score, BLOCK_SHIFT_CAP)
            reading = (
                _harmless_extrapolation_reading(artifact, name) if offset is None else None
            )
            beyond = reading[0] if reading is not None else None
            every = reading is not None and reading[1]
            period = reading[2] if reading is not None else None
            if beyond is not None:
                score = min(score, EXTRAPOLATION_CAP)
            scored.append((score, name, share, uniqueness, offset, beyond, every, period))
        affected = [s for s in scored if s[2] >= 0.03 and s[4] is None and s[5] is None]
        if scored:
            score, name, share, uniqueness, offset, beyond, every, period = max(
                scored, key=lambda t: (t[0], t[1])
            )
            score += min(COLUMN_BONUS * max(len(affected) - 1, 0), MAX_COLUMN_BONUS)
            if offset is not None:
                score = min(score, BLOCK_SHIFT_CAP)
            if beyond is not None:
                score = min(score, EXTRAPOLATION_CAP)
            if score > 0:
                detail = f"{pct(share)} of test rows hold a value of {name!r} never seen in train"
                if uniqueness >= 0.3:
                    detail += f" (the column is {pct(uniqueness)} distinct values in train)"
                if offset is not None:
                    detail += (
                        f"; its whole range moved by {offset:+g} (as many values, lowest and "
                        "highest both shifted): the old codes moved, a shift of the column "
                        "rather than new categories: low"
                    )
                if beyond is not None:
                    where = (
                        f"every test value lies {beyond}"
                        if every
                        else f"the test rows that are not copies of training rows lie {beyond}"
                    )
                    detail += (
                        f"; {where} the training range (the split runs "
                        "along this ordered number, e.g. later years) and "
                        + (
                            f"{period}: extrapolation of an ordered "
                            "value, not unknown categories: low"
                            if period is not None
                            else "its rows score no worse than the column's other test rows "
                            "beyond noise: extrapolation of an ordered value, not unknown "
                            "categories: low"
                        )
                    )
                if len(affected) > 1:
                    detail += f"; {len(affected)} features have >= 3% unseen values"
                facts = {"block_offset": offset} if offset is not None else {}
                if beyond is not None:
                    facts["beyond_range"] = beyond
                yield self.signal(
                    "dataset",
                    score=score,
                    confidence=0.9 if uniqueness < 0.3 else 0.6,
                    detail=detail,
                    value=share,
                    column=name,
                    share=share,
                    n_columns=max(len(affected), 1),
                    **facts,
                )
        label_share = comparison.unseen_label_fraction
        if artifact.task != "regression" and label_share > 0:
            yield self.signal(
                "dataset",
                score=interp(label_share, LABEL_SCORE),
                confidence=0.95,
                detail=f"{pct(label_share)} of test rows have a label that never occurs in train",
                value=label_share,
                label_share=label_share,
            )

    def detect_deepchecks(self, artifact):
        features = set(artifact.dataset.feature_names)
        check = artifact.check("New Category Train Test")
        if check is not None and check.outcome == "not_passed":
            shares = sorted(
                (
                    (c, v)
                    for c, v in check.values.items()
                    if c in features and v is not None and 0 < v <= 1
                ),
                key=lambda kv: (-kv[1], kv[0]),
            )
            dataset = artifact.dataset
            moved = {
                c for c, _ in shares
                if dataset.train is not None
                and block_offset(dataset.train.column(c), dataset.test.column(c)) is not None
            }
            # a column whose codes moved as a block holds no new category (see
            # ``block_offset``); the check counts its moved values as new ones; nor does an
            # ordered number extended along the split without harm (``ordered_extrapolation``)
            moved |= {c for c, _ in shares if harmless_extrapolation(artifact, c) is not None}
            shares = [(c, v) for c, v in shares if c not in moved]
            if shares:
                name, share = shares[0]
                yield self.check_signal(
                    check,
                    score=interp(share, CATEGORY_SCORE),
                    confidence=0.7,
                    column=name,
                    share=share,
                )
            elif not moved:
                # no per-column shares to read: the check's own verdict, unless every
                # column it named only moved as a block or extends an ordered range
                yield self.check_signal(check, score=self.check_score, confidence=0.5)
        check = artifact.check("New Label Train Test")
        if check is not None and check.outcome == "not_passed" and check.value:
            yield self.check_signal(
                check,
                score=interp(check.value, LABEL_SCORE),
                confidence=0.8,
                label_share=check.value,
            )

    def title(self, signals, artifact):
        if self.fact(signals, "crashed"):
            column = self.fact(signals, "column")
            where = f" in {column!r}" if column else ""
            return f"The model crashes on categories never seen in training{where}"
        strongest = self.strongest(signals)
        label_share = self.fact(signals, "label_share")
        if label_share is not None and (
            "label_share" in strongest.facts or self.fact(signals, "column") is None
        ):
            return f"{pct(label_share)} of test rows have a label never seen in training"
        column, share = self.fact(signals, "column"), self.fact(signals, "share")
        if column is not None:
            n = self.fact(signals, "n_columns", 1)
            more = f" (and {n - 1} more feature(s))" if n > 1 else ""
            return f"{pct(share)} of test rows have a {column!r} value never seen in training{more}"
        return self.name

    def explanation(self, signals, artifact):
        if self.fact(signals, "label_share") is not None and self.fact(signals, "column") is None:
            return (
                "Some test rows belong to classes that do not exist in the training data. The "
                "model can only predict classes it was trained on, so all of these rows are "
                "guaranteed errors and the test set does not describe the problem the model "
                "was built for."
            )
        return (
            "Part of the evaluation data holds category values the model never saw during "
            "training. It has no learned behaviour for them, so those rows get a default guess "
            "and the score on them says nothing about the model. Either the split separated "
            "categories, or the population changed since the training data was collected."
        )
