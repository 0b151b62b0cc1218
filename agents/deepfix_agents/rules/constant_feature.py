"""constant_feature: a feature with a single value."""

from __future__ import annotations

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, interp, pct
from deepfix_agents.rules._ladder import at_chance
from deepfix_agents.rules.underfitting import signal_is_learnable

#: share of the model's features that are constant in training -> score. A constant
#: column costs no accuracy by itself; many of them reveal a broken join or feed.
CONSTANT_SHARE_SCORE = (
    (0.0, 0.25),
    (0.1, 0.35),
    (0.25, 0.45),
    (0.5, 0.6),
    (0.8, 0.75),
    (1.0, 0.85),
)
#: several constant columns point at a systematic failure (a join that matched nothing,
#: a feed that stopped) rather than at one odd column: at least medium
SYSTEMATIC_COUNT, SYSTEMATIC_SCORE = 3, 0.4
#: a feature that varies in training but is frozen in the evaluation data: the model
#: relies on a value that no longer moves (a stuck feed at inference)
FROZEN_IN_TEST_SCORE = 0.35
FROZEN_IMPORTANT_SCORE = 0.6
#: a single value plus more than this share of missing cells is a value/missing flag
FLAG_MISSING_SHARE = 0.05


def constant_columns(split, features: set[str]) -> list[str]:
    """Feature columns of ``split`` with one distinct value (entirely empty columns are
    left to missing_values; one value plus many missing cells is a usable flag)."""
    if split is None or split.n_rows < 2:
        return []
    return sorted(
        c.name
        for c in split.columns
        if c.name in features
        and c.n_unique <= 1
        and c.missing_fraction < 0.999
        and (c.n_unique == 0 or c.missing_fraction <= FLAG_MISSING_SHARE)
    )


@register_rule
class ConstantFeature(Rule):
    id = "constant_feature"
    name = "Features hold a single value"
    detects = (
        "Model input columns that take one value in every row of the training data, or that "
        "vary in training but are frozen in the evaluation data."
    )
    why = (
        "A constant column carries no information: it costs memory and time and is usually "
        "the visible trace of a failed join, a stuck sensor or a default filled in upstream. "
        "A feature frozen only at evaluation time is worse: the model relies on it and now "
        "receives a value that never changes."
    )
    example = (
        "Five columns from a failed lab-system join hold 0.0 in every row; the model ignores "
        "them and nobody notices that the lab data never arrived."
    )
    fixes = (
        (
            "Trace the column back to its source (join keys, sensor, default values) and repair "
            "the feed if the column should carry information."
        ),
        (
            "Otherwise drop it inside the pipeline so training and inference stay aligned: "
            "`make_pipeline(VarianceThreshold(0.0), model)` or `ColumnTransformer(..., "
            "remainder='drop')`."
        ),
        (
            "Add a data validation step that fails when a feature's distinct count drops to one "
            "(e.g. a pandera or Great Expectations check on `nunique() > 1`)."
        ),
    )
    severity_policy = (
        "Constant in training: score from the share of model features that are constant, "
        "0.25 for one column, 10% -> 0.35, 25% -> 0.45, 50% -> 0.6, 80% -> 0.75, all -> 0.85 "
        "(a single constant column is harmless for accuracy, so at most low); at least 0.4 when "
        "3 or more columns are constant (a systematic failure upstream). Varying in "
        "training but constant in the evaluation data: 0.35, or 0.6 when the model's native "
        "importance for it is above average. Deepchecks' Is Single Value corroborates. "
        "Columns constant in training with a model no better than chance and no baseline "
        "better either (underfitting's 'labels unrelated to the features'): the stuck "
        "columns explain the chance finding (folded in at medium or above). Columns "
        "constant in training also explain rows that share their features with another "
        "label or across the splits when chance explains those coincidences (the "
        "remaining features take few values: conflicting labels' and train/test overlap's "
        "own 'natural' readings); coincidences beyond chance stay findings of their own."
    )
    explains = ("unused_features",)
    checks = ("Is Single Value",)

    def explains_for(self, artifact):
        """Columns stuck at one value in training, and a model that finds no relation
        between the remaining features and the labels (no better than chance, and no
        simple baseline better either): the information the stuck columns should carry
        never arrived, the likelier upstream cause of 'no signal' than labels that no
        longer belong to their rows. The reasoner folds the chance finding into this one
        only when it stands at medium or above (several stuck columns; a single constant
        column, say one level missing from a small training sample, stays low). The
        rows' chance coincidences the stuck columns leave behind are explained too
        (:meth:`_coincidences`)."""
        dataset = artifact.dataset
        reference = dataset.train or dataset.test
        if reference is None or not constant_columns(reference, set(dataset.feature_names)):
            return self.explains
        explained = (*self.explains, *self._coincidences(artifact))
        measured = at_chance(artifact)
        if measured is None or signal_is_learnable(artifact, measured) is True:
            return explained
        return (*explained, "underfitting")

    @staticmethod
    def _coincidences(artifact) -> tuple[str, ...]:
        """Rows that share their features by chance (with another label, or across the
        splits) where columns are stuck: a stuck column no longer tells rows apart, so
        the rows differ only in the remaining features, and when those take so few
        values that chance alone explains the coincidences (the rules' own ``natural``
        readings), the stuck columns are their upstream cause. Coincidences beyond
        chance (copied rows, relabelled copies) are not explained."""
        from deepfix_agents.rules import RULES

        found = []
        if RULES.get("conflicting_labels")().natural(artifact):
            found.append("conflicting_labels")
        comparison = artifact.dataset.comparison
        if (
            comparison is not None
            and comparison.overlap_fraction > 0
            and RULES.get("train_test_overlap")().natural(artifact, comparison.overlap_fraction)[1]
        ):
            found.append("train_test_overlap")
        return tuple(found)

    def detect_dataset(self, artifact):
        dataset = artifact.dataset
        features = set(dataset.feature_names)
        reference = dataset.train or dataset.test
        constant = constant_columns(reference, features)
        n_features = len([c for c in reference.columns if c.name in features]) or 1
        if constant:
            share = len(constant) / n_features
            score = interp(share, CONSTANT_SHARE_SCORE)
            if len(constant) >= SYSTEMATIC_COUNT:
                score = max(score, SYSTEMATIC_SCORE)
            yield self.signal(
                "dataset",
                score=score,
                confidence=0.95,
                detail=(
                    f"{len(constant)} of {n_features} features hold a single value in "
                    f"{reference.name}: {constant[:8]}"
                ),
                value=share,
                columns=constant,
                n_features=n_features,
                share=share,
            )
        if dataset.train is None:
            return
        frozen = [c for c in constant_columns(dataset.test, features) if c not in set(constant)]
        if not frozen:
            return
        importances = artifact.model.feature_importances
        average = 1.0 / max(len(importances), 1)
        important = [c for c in frozen if importances.get(c, 0.0) > average]
        yield self.signal(
            "dataset",
            score=FROZEN_IMPORTANT_SCORE if important else FROZEN_IN_TEST_SCORE,
            confidence=0.9,
            detail=(
                f"{len(frozen)} feature(s) vary in train but hold a single value in test: "
                f"{frozen[:8]}" + (f"; the model relies on {important[:3]}" if important else "")
            ),
            value=len(frozen),
            frozen=frozen,
            important=important,
        )

    def detect_deepchecks(self, artifact):
        check = artifact.check("Is Single Value")
        if check is None or check.outcome != "not_passed":
            return
        features = set(artifact.dataset.feature_names)
        single = sorted(
            c for c, v in check.values.items() if c in features and v is not None and v <= 1
        )
        n_features = len(features) or 1
        share = len(single) / n_features if single else 0.0
        yield self.check_signal(
            check,
            score=interp(share, CONSTANT_SHARE_SCORE) if single else 0.25,
            confidence=0.7,
            **({"columns": single, "n_features": n_features, "share": share} if single else {}),
        )

    def title(self, signals, artifact):
        columns = self.fact(signals, "columns")
        if columns:
            n, total = len(columns), self.fact(signals, "n_features", len(columns))
            if n == 1:
                return f"Feature {columns[0]!r} holds a single value in every training row"
            return f"{n} of {total} features ({pct(n / total)}) hold a single value, e.g. {columns[:3]}"
        frozen = self.fact(signals, "frozen")
        if frozen:
            return f"{len(frozen)} feature(s) vary in training but are frozen in the test data: {frozen[:3]}"
        return self.name

    def explanation(self, signals, artifact):
        if self.fact(signals, "frozen") and not self.fact(signals, "columns"):
            return (
                "Some features change from row to row in the training data but hold one single "
                "value in the evaluation data. The model learned to use them and now always "
                "receives the same value, which usually means a feed or a join broke on the "
                "inference side."
            )
        return (
            "Some input columns hold the same value in every row, so they tell the model nothing. "
            "On their own they do not hurt accuracy, but they are usually the trace of a problem "
            "upstream: a join that found no match, a sensor that got stuck, or a default that was "
            "filled in everywhere. Check whether the information they should carry is missing."
        )
