"""identifier_leakage: an id, index or date that predicts the label."""

from __future__ import annotations

import math
import re

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, interp, pct

#: association beyond the noise margin (see :func:`association_margin`) -> score
ID_SCORE = ((0.0, 0.0), (0.1, 0.25), (0.25, 0.5), (0.45, 0.7), (0.65, 0.85), (0.85, 0.95))
#: Deepchecks' predictive power score of an identifier -> score
PPS_SCORE = ((0.05, 0.0), (0.2, 0.35), (0.4, 0.6), (0.6, 0.8), (0.8, 0.9))
#: share of test index values also found in train (Index Train Test Leakage) -> score
INDEX_SHARE_SCORE = ((0.0, 0.0), (0.01, 0.15), (0.05, 0.35), (0.2, 0.55), (0.5, 0.7))
#: the model cannot exploit an identifier it is not fed: the finding is about the data
NOT_FED_FACTOR = 0.4
#: a date fed to the model may carry a real trend: part of its association is legitimate
DATE_FEATURE_FACTOR = 0.7
#: the association is computed on at most this many rows (mlflow_deepfix.testing.stats)
ASSOCIATION_ROWS = 50_000

_ID_NAME = re.compile(
    r"(^|[_\W])(id|idx|index|key|row|uuid|guid|record|rowid)($|[_\W])|id$", re.IGNORECASE
)
#: kinds whose association is a rank statistic (Somers' D / Spearman); for text and
#: categories it is a mutual information that near-unique values inflate
_RANKED_KINDS = ("numeric", "datetime", "boolean")


def association_margin(artifact, split) -> float:
    """Noise margin of a column-label association on ``split``: three standard errors
    of the association of an unrelated column.

    Classification associations are Somers' D (|2 AUC - 1|, one class against the
    rest) whose standard error under independence is ``1 / sqrt(3 n p (1 - p))`` for a
    class of share ``p`` (the rarest class gives the widest); regression associations
    are |Spearman| with standard error ``1 / sqrt(n)``. Small splits thus need larger
    associations before an identifier or a date counts as predictive.
    """
    n = max(min(split.n_rows, ASSOCIATION_ROWS), 1)
    if artifact.task != "regression" and split.label_distribution:
        shares = [s for k, s in split.label_distribution.items() if 0 < s < 1 and k != "<other>"]
        p = min(shares) if shares else 0.5
        se = 1.0 / math.sqrt(3.0 * n * p * (1.0 - p))
    else:
        se = 1.0 / math.sqrt(n)
    return min(3.0 * se, 0.6)


def id_reason(column, dataset) -> str | None:
    """Why ``column`` counts as an identifier, or None."""
    if column.name == dataset.target:
        return None
    if column.name == dataset.index_col:
        return "declared as index_col"
    if column.name == dataset.datetime_col:
        return "declared as datetime_col"
    if column.monotonic:
        return (
            "an index-like column (distinct integers in a counter's range or ordered with the rows)"
        )
    if _ID_NAME.search(column.name) and column.unique_fraction >= 0.95:
        return "named like an identifier with (almost) one distinct value per row"
    return None


def identifier_columns(artifact):
    """(column, reason, fed) for every identifier-like column of the training split (or
    of the test split when there is no training split)."""
    dataset = artifact.dataset
    split = dataset.train or dataset.test
    features = set(dataset.feature_names)
    found = []
    for column in split.columns:
        reason = id_reason(column, dataset)
        if reason is not None:
            found.append((column, reason, column.name in features))
    return split, found


@register_rule
class IdentifierLeakage(Rule):
    id = "identifier_leakage"
    name = "An identifier predicts the label"
    detects = (
        "An id, row index or date column whose values are associated with the label, "
        "because ids were assigned after sorting by outcome, per source, or over time."
    )
    why = (
        "An identifier carries no causal information about the outcome. When it predicts "
        "the label anyway, a model fed that column learns the bookkeeping of this dataset "
        "(which id range holds which class) and fails on new records with new ids."
    )
    example = (
        "The export was sorted by diagnosis before a running `record_id` was assigned; a "
        "random forest splits on `record_id < 100213` and scores 0.99."
    )
    fixes = (
        (
            "Drop identifier columns before training: `X = df.drop(columns=['record_id', "
            "'customer_id'])`, or select features explicitly in a `ColumnTransformer` so ids "
            "cannot slip in."
        ),
        (
            "Find out why the id encodes the label (sorted export, ids per source system, ids "
            "assigned over time) and shuffle before assigning ids or splitting: "
            "`df.sample(frac=1, random_state=0)`."
        ),
        (
            "When several rows share an id (the same customer or patient), split by it: "
            "`GroupShuffleSplit` / `GroupKFold(groups=df['customer_id'])`."
        ),
        (
            "Pass the id as `index_col` (and dates as `datetime_col`) so that deepfix checks "
            "them for leakage instead of treating them as features."
        ),
    )
    severity_policy = (
        "Score from the identifier's association with the label on train (Somers' D for "
        "classes, |Spearman| for regression) minus a noise margin of three standard errors "
        "(about 3/sqrt(n)): 0.1 -> 0.25, 0.25 -> 0.5, 0.45 -> 0.7, 0.65 -> 0.85, 0.85 -> 0.95. "
        "x0.4 when the model is not fed the column (the ids still reveal a sorted or "
        "label-dependent export), x0.7 for a date fed as a feature (a trend may be real). "
        "Deepchecks' Identifier Label Correlation PPS 0.2 -> 0.35, 0.4 -> 0.6, 0.6 -> 0.8 "
        "(same factors); Index Train Test Leakage share 5% -> 0.35, 20% -> 0.55. String ids "
        "are judged by Deepchecks only (their mutual information is inflated by uniqueness)."
    )
    explains = ("unused_features",)
    checks = ("Identifier Label Correlation", "Index Train Test Leakage")

    def detect_dataset(self, artifact):
        split, found = identifier_columns(artifact)
        margin = association_margin(artifact, split)
        dataset = artifact.dataset
        for column, reason, fed in found:
            association = column.target_association
            if association is None or column.kind not in _RANKED_KINDS:
                continue
            if column.name == dataset.datetime_col and not fed:
                continue  # a date the model does not see: temporal_leakage's business
            score = interp(association - margin, ID_SCORE)
            if score <= 0:
                continue
            factor = 1.0 if fed else NOT_FED_FACTOR
            if fed and column.kind == "datetime":
                factor = DATE_FEATURE_FACTOR
            use = "the model is fed it" if fed else "the model does not use it"
            yield self.signal(
                "dataset",
                score=score * factor,
                confidence=0.85 if fed else 0.6,
                detail=(
                    f"{column.name!r} ({reason}) has association {association:.2f} with the "
                    f"label on {split.name} (noise margin {margin:.2f}); {use}"
                ),
                value=association,
                column=column.name,
                association=association,
                fed=fed,
            )

    def detect_model(self, artifact):
        importances = artifact.model.feature_importances
        if not importances:
            return
        average = 1.0 / len(importances)
        for signal in self.detect_dataset(artifact):
            name = signal.facts["column"]
            share = importances.get(name, 0.0)
            if signal.facts["fed"] and share >= 2 * average:
                yield self.signal(
                    "model",
                    score=min(signal.score, 0.5),
                    confidence=0.7,
                    detail=f"the model puts {pct(share)} of its importance on {name!r}",
                    value=share,
                    column=name,
                    importance=share,
                )

    def detect_deepchecks(self, artifact):
        dataset = artifact.dataset
        features = set(dataset.feature_names)
        check = artifact.check("Identifier Label Correlation")
        if check is not None and check.outcome == "not_passed":
            # values: <column> -> PPS of index_col / datetime_col (plus per-split headlines
            # such as ``train_value``, which are not columns)
            known = {dataset.index_col, dataset.datetime_col} | {
                c.name for split in (dataset.train, dataset.test) if split for c in split.columns
            }
            scored = sorted(
                ((c, v) for c, v in check.values.items() if c in known and v is not None),
                key=lambda kv: (-kv[1], kv[0]),
            )
            for name, pps in scored[:2]:
                fed = name in features
                if name == dataset.datetime_col and not fed:
                    continue
                factor = 1.0 if fed else NOT_FED_FACTOR
                score = interp(pps, PPS_SCORE) * factor
                if score > 0:
                    yield self.check_signal(
                        check, score=score, confidence=0.7, column=name, pps=pps, fed=fed
                    )
            if not scored and check.value:
                yield self.check_signal(
                    check, score=interp(check.value, PPS_SCORE) * 0.7, confidence=0.5
                )
        check = artifact.check("Index Train Test Leakage")
        if check is not None and check.outcome == "not_passed" and check.value:
            yield self.check_signal(
                check,
                score=interp(check.value, INDEX_SHARE_SCORE),
                confidence=0.6,
                index_share=check.value,
                column=dataset.index_col,
            )

    def title(self, signals, artifact):
        column = self.fact(signals, "column")
        association = self.fact(signals, "association")
        fed = self.fact(signals, "fed")
        if column is not None and association is not None:
            tail = (
                "and the model is fed it"
                if fed
                else "(the model does not use it, but the rows are ordered or numbered by outcome)"
            )
            return (
                f"Identifier {column!r} predicts the label (association {association:.2f}) {tail}"
            )
        pps = self.fact(signals, "pps")
        if column is not None and pps is not None:
            return f"Identifier {column!r} predicts the label (Deepchecks PPS {pps:.2f})"
        share = self.fact(signals, "index_share")
        if share is not None:
            return f"{pct(share)} of test index values also occur in the training data"
        return self.name

    def explanation(self, signals, artifact):
        column = self.fact(signals, "column", "an identifier column")
        if (
            self.fact(signals, "index_share") is not None
            and self.fact(signals, "association") is None
        ):
            return (
                f"Many test rows carry an index value ({column!r}) that also occurs in training. "
                "If the index identifies an entity (a customer, a patient), the same entity sits on "
                "both sides of the split and the test score measures recognition, not prediction."
            )
        return (
            f"{column!r} is a bookkeeping column (an id, row number or date), yet its values tell "
            "the classes apart: the records were numbered after sorting by outcome, or ids come "
            "from different systems per outcome. A model that uses it learns which id range "
            "holds which answer, scores well here, and fails on new records whose ids say nothing."
        )
