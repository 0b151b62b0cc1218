"""conflicting_labels: identical features with different labels."""

from __future__ import annotations

import math

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, interp, pct
from deepfix_agents.rules.duplicate_samples import MIN_REFERENCE_DUPLICATES, expected_chance_duplicates

#: share of rows whose features repeat with a different label -> score
CONFLICT_SCORE = ((0.01, 0.0), (0.03, 0.2), (0.08, 0.4), (0.15, 0.6), (0.3, 0.8), (0.5, 0.9))
#: conflicts in the test split blur the evaluation rather than what is learned
TEST_FACTOR = 0.8
#: when the features often coincide by chance, conflicts mostly show that the features
#: do not determine the label (irreducible noise), not an annotation error
NATURAL_FACTOR = 0.5
#: expected chance collision share above which conflicts count as natural
NATURAL_COLLISIONS = 0.05
#: the training split's conflicting share, as a part of the test rows found in train,
#: above which the repeats account for the overlap (the overlap may be a third larger)
REPEATS_COVER_OVERLAP = 0.75


def _group_share(n: float, cells: float) -> float:
    """Share of ``n`` rows drawn from ``cells`` equally likely cells that share their
    cell with another row."""
    return -math.expm1(-(n - 1.0) / cells)


def calibrated_conflict_share(reference, n_rows: int) -> float | None:
    """The conflict share a regression target shows at ``n_rows`` rows of data like
    ``reference`` (the other split). A continuous target almost never repeats, so two
    rows with the same features nearly always "conflict": the share is the share of
    rows whose features coincide with another row's, which grows with the row count.
    The number of distinct feature rows ``C`` is fitted to ``reference``'s share at its
    size (balls in bins), then the share is read at ``n_rows``. None when
    ``reference`` holds too few conflicting rows to calibrate on."""
    if reference is None or reference.n_rows <= 1 or n_rows <= 1:
        return None
    share, n = reference.conflicting_label_fraction, reference.n_rows
    if share * n < MIN_REFERENCE_DUPLICATES or share >= 0.99:
        return None
    cells = (n - 1.0) / -math.log1p(-share)
    return _group_share(n_rows, cells)


@register_rule
class ConflictingLabels(Rule):
    id = "conflicting_labels"
    name = "Identical rows carry different labels"
    detects = (
        "Rows whose feature values are identical but whose labels differ, within one split: "
        "double annotation with disagreement, merged sources with different label codes, or "
        "features too coarse to tell the cases apart."
    )
    why = (
        "The model cannot satisfy both labels for the same input, so conflicting rows are "
        "pure label noise: they cap the achievable score, blur the decision boundary and "
        "make predicted probabilities less reliable; in the test split they make a correct "
        "model look wrong."
    )
    example = (
        "20% of the cases were annotated a second time with the opposite diagnosis and both "
        "copies were kept in the training table."
    )
    fixes = (
        (
            "List the conflicts and resolve them at the source: "
            "`g = df.groupby(feature_cols)[target].nunique(); conflicts = g[g > 1]`; keep the "
            "adjudicated label (majority vote, senior annotator) and drop the rest."
        ),
        (
            "When sources were merged, map their label codes to one scheme before concatenating, "
            "and deduplicate on the features afterwards."
        ),
        (
            "If identical inputs genuinely have different outcomes, the features are missing "
            "information: add features that separate the cases, or model probabilities and "
            "judge with calibrated metrics rather than accuracy."
        ),
        (
            "Use noise-robust training or label-cleaning tools (e.g. cleanlab's "
            "`find_label_issues`) to review suspicious labels."
        ),
    )
    severity_policy = (
        "Score from the share of rows whose features occur with more than one label: "
        "1% -> 0, 3% -> 0.2, 8% -> 0.4, 15% -> 0.6, 30% -> 0.8, 50% -> 0.9. x0.8 in the test "
        "split; x0.5 when the features are so coarse that chance alone makes at least 5% of "
        "rows coincide (then conflicts reflect irreducible noise); with a regression target, "
        "conflicts (natural or not) count only beyond the share the other split's conflicts "
        "predict at this split's size (a continuous target makes every coincidence a "
        "conflict). Deepchecks' Conflicting "
        "Labels share corroborates through the same table, with the same x0.5 for coarse "
        "features; natural conflicts do not explain underfitting (they cap every model)."
    )
    explains = ("underfitting", "poor_calibration", "weak_segment")
    checks = ("Conflicting Labels",)
    modality_fixes = {
        "text": (
            "Review the conflicting texts and fix their labels: export each group of "
            "identical (normalised) texts with its labels and let an annotator decide, or "
            "keep the majority label.",
            "Write down labelling guidelines for the ambiguous cases these texts show (sarcasm,"
            " mixed sentiment, very short texts) and measure annotator agreement (Cohen's "
            "kappa) before labelling more.",
            "When several annotators label the same text, aggregate their votes (majority, or "
            "a label model such as Dawid-Skene) instead of keeping one row per vote.",
            "Use cleanlab's `find_label_issues` on out-of-fold probabilities to find "
            "mislabelled texts beyond the exact repeats.",
        ),
        "image": (
            "Review the images that carry several labels and fix them: export each group of "
            "identical images with its labels and let an annotator decide.",
            "Tighten the annotation protocol (class definitions with example images, a second "
            "reader for borderline cases) and measure inter-annotator agreement.",
            "Use cleanlab's `find_label_issues` on out-of-fold probabilities to find "
            "mislabelled images beyond the exact repeats.",
        ),
    }

    def detect_dataset(self, artifact):
        dataset = artifact.dataset
        # both splits share the feature columns: features coarse enough to coincide by
        # chance in the (larger) training split make the test split's coincidences
        # natural too, at its own size (the calibration below reads them at that size)
        coarse = self.natural(artifact)
        for split, factor in ((dataset.train, 1.0), (dataset.test, TEST_FACTOR)):
            if split is None or split.conflicting_label_fraction <= 0:
                continue
            share = split.conflicting_label_fraction
            natural = coarse or expected_chance_duplicates(artifact, split) >= NATURAL_COLLISIONS
            counted = share
            if artifact.task == "regression":
                # only what the other split's coincidences do not predict at this size;
                # measured, so it holds whether or not the columns' cardinalities cross
                # the natural-collision line (a test split shrunk from 360 to 252 rows
                # fell below it and read its 22% chance conflicts as annotation errors)
                other = dataset.test if split is dataset.train else dataset.train
                expected = calibrated_conflict_share(other, split.n_rows)
                if expected is not None:
                    counted = max(share - expected, 0.0)
            score = interp(counted, CONFLICT_SCORE) * factor * (NATURAL_FACTOR if natural else 1.0)
            if score <= 0:
                continue
            detail = (
                f"{pct(share)} of {split.name} {self.samples(artifact)} share their "
                f"{'content' if dataset.content_column else 'features'} with one of another label"
            )
            if natural:
                detail += " (the features take few distinct values, so some coincide by chance)"
            yield self.signal(
                "dataset",
                score=score,
                confidence=0.6 if natural else 0.95,
                detail=detail,
                value=share,
                share=share,
                split=split.name,
                natural=natural,
            )

    def natural(self, artifact) -> bool:
        """Whether the training features are so coarse that chance alone makes rows
        coincide (:data:`NATURAL_COLLISIONS`): conflicts then show features that cannot
        separate the labels, not labels that disagree."""
        train = artifact.dataset.train
        return train is not None and expected_chance_duplicates(artifact, train) >= NATURAL_COLLISIONS

    def explains_for(self, artifact):
        """Natural conflicts (:meth:`natural`) cap every model alike, the ladder's too:
        they explain neither a model that lags the simple baselines nor one at chance
        (that finding is underfitting's, which says when the labels look unrelated to
        the features)."""
        if self.natural(artifact):
            return tuple(c for c in self.explains if c != "underfitting")
        if self._repeats_cover_overlap(artifact):
            return (*self.explains, "train_test_overlap")
        return self.explains

    @staticmethod
    def _repeats_cover_overlap(artifact) -> bool:
        """Rows repeated with another label are copies of one feature row: a random split
        sends some copies to test while their twins stay in train, so the share of test
        rows found in train is at most about the training split's conflicting share. When
        that share covers the overlap (allowing the overlap a third more, for sampling),
        the overlap is the repeats' consequence, not a second bug. An overlap well beyond
        the repeats (half the test rows against 30 % conflicting) is an independent bug
        and keeps its own finding (issue 12 C)."""
        dataset = artifact.dataset
        comparison = dataset.comparison
        if dataset.train is None or comparison is None or comparison.overlap_fraction <= 0:
            return False
        covered = REPEATS_COVER_OVERLAP * comparison.overlap_fraction
        return dataset.train.conflicting_label_fraction >= covered

    def detect_deepchecks(self, artifact):
        natural = self.natural(artifact)
        for signal in self.failed_check_share(
            artifact, "Conflicting Labels", CONFLICT_SCORE, confidence=0.7
        ):
            if natural:
                # the same discount as the dataset signal's: the Deepchecks share counts
                # the same natural coincidences
                signal = signal.model_copy(update={
                    "score": round(signal.score * NATURAL_FACTOR, 4),
                    "facts": {**signal.facts, "natural": True},
                })
            yield signal

    def title(self, signals, artifact):
        share = self.fact(signals, "share", 0.0)
        split = {"train": "training", "test": "test"}.get(self.fact(signals, "split"), "training")
        if artifact.dataset.content_column:
            what = self.samples(artifact)
            return f"{pct(share)} of {split} {what} appear more than once with different labels"
        return f"{pct(share)} of {split} rows have identical features but a different label"

    def explanation(self, signals, artifact):
        share = self.fact(signals, "share", 0.0)
        if self.fact(signals, "natural"):
            return (
                f"{pct(share)} of the rows look exactly like another row but have a different "
                "label. The features take only a few distinct values, so different cases often "
                "look identical: the features do not carry enough information to separate them, "
                "which limits any model's accuracy."
            )
        return (
            f"{pct(share)} of the rows look exactly like another row but have a different label. "
            "A model cannot give two answers for the same input, so these rows are label noise: "
            "they limit the best achievable score and blur what the model learns. This typically "
            "comes from double annotation with disagreement or from merging sources that code "
            "labels differently."
        )
