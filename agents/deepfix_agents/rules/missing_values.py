"""missing_values: nulls, NaN and mixed null markers in features or labels."""

from __future__ import annotations

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, interp, pct
from deepfix_agents.rules._runtime import crash_detail, crash_score, crashes_for

#: share of missing cells in the worst informative column -> score
COLUMN_SCORE = ((0.01, 0.1), (0.05, 0.25), (0.2, 0.45), (0.5, 0.6), (0.9, 0.7), (1.0, 0.75))
LABEL_SCORE = ((0.0, 0.3), (0.05, 0.5), (0.2, 0.7))


@register_rule
class MissingValues(Rule):
    id = "missing_values"
    name = "Missing values in features or labels"
    detects = (
        "Features or labels with null/NaN values, including columns that are entirely empty "
        "and several null markers mixed in one column ('', 'NA', None, NaN)."
    )
    why = (
        "Many models cannot take NaN at all, and silent imputation or row dropping changes "
        "what the model learns; missingness that differs between splits or correlates with "
        "the label biases both training and evaluation."
    )
    example = "30% of `income` is NaN in training and filled with 0, which the model reads as poverty."
    fixes = (
        "Impute inside the model so training and inference match: "
        "`make_pipeline(SimpleImputer(strategy='median', add_indicator=True), model)`.",
        "Drop columns that are (almost) entirely empty; they carry no signal.",
        "Unify null markers at load time: `pd.read_csv(..., na_values=['', 'NA', 'N/A', '?'])`.",
        "Or use a model that handles NaN natively (`HistGradientBoostingClassifier`), and check "
        "why values are missing: missingness that depends on the label is itself a leak.",
    )
    severity_policy = (
        "Score from the worst feature's missing share (1% -> 0.1, 5% -> 0.25, 20% -> 0.45, "
        "50% -> 0.6, 100% -> 0.75), +0.1 when that feature matters to the model (native "
        "importance above average); missing labels: 0.3 at any share up to 0.7 at 20%."
    )
    checks = ("Percent Of Nulls", "Mixed Nulls")

    def detect_dataset(self, artifact):
        dataset = artifact.dataset
        importances = artifact.model.feature_importances
        average = 1.0 / max(len(importances), 1)
        for split in (dataset.train, dataset.test):
            if split is None:
                continue
            columns = [
                c
                for c in split.columns
                if c.name != dataset.target and c.name in dataset.feature_names and c.missing_fraction > 0
            ]
            if columns:
                worst = max(columns, key=lambda c: (c.missing_fraction, c.name))
                score = interp(worst.missing_fraction, COLUMN_SCORE)
                if importances.get(worst.name, 0.0) > average:
                    score += 0.1
                empty = [c.name for c in columns if c.missing_fraction >= 0.999]
                detail = (
                    f"{len(columns)} feature(s) have missing values in {split.name}; worst "
                    f"{worst.name!r} is {pct(worst.missing_fraction)} missing"
                )
                if empty:
                    detail += f"; entirely empty: {empty[:5]}"
                yield self.signal(
                    "dataset",
                    score=score,
                    confidence=0.95,
                    detail=detail,
                    value=worst.missing_fraction,
                    column=worst.name,
                    share=worst.missing_fraction,
                    split=split.name,
                    n_columns=len(columns),
                )
            if split.label_missing_fraction > 0:
                yield self.signal(
                    "dataset",
                    score=interp(split.label_missing_fraction, LABEL_SCORE),
                    confidence=0.95,
                    detail=f"{pct(split.label_missing_fraction)} of {split.name} labels are missing",
                    value=split.label_missing_fraction,
                    label_share=split.label_missing_fraction,
                    split=split.name,
                )

    def detect_runtime(self, artifact):
        for failure in crashes_for(artifact, self.id):
            counts = failure.nan_counts
            column = max(counts, key=lambda c: (counts[c], c)) if counts else None
            yield self.signal(
                "runtime",
                score=crash_score(failure),
                confidence=0.9,
                detail=crash_detail(failure, counts, "NaN"),
                value=sum(counts.values()) or None,
                column=column,
                crashed=True,
                crash_fix=(
                    "Impute before predict inside the model (a SimpleImputer step in the "
                    f"pipeline) or use an estimator that accepts NaN; {column!r} and "
                    f"{max(len(counts) - 1, 0)} other column(s) hold NaN."
                ),
            )

    def title(self, signals, artifact):
        if self.fact(signals, "crashed"):
            return f"The model crashes on missing values (e.g. in {self.fact(signals, 'column')!r})"
        column, share = self.fact(signals, "column"), self.fact(signals, "share")
        if column is not None:
            n = self.fact(signals, "n_columns", 1)
            more = f" (and {n - 1} more column(s))" if n > 1 else ""
            return f"{pct(share)} of {column!r} is missing{more}"
        label_share = self.fact(signals, "label_share", 0.0)
        return f"{pct(label_share)} of labels are missing"

    def explanation(self, signals, artifact):
        return (
            "Some values are missing. Depending on the model they are silently dropped, filled "
            "with a default, or make prediction fail; either way the model learns from a "
            "distorted picture. Where values are missing, and whether that depends on the label, "
            "matters as much as how many."
        )
