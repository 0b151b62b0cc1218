"""train_test_overlap: test rows that also appear in the training data."""

from __future__ import annotations

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, interp, pct

#: overlap share -> impact score
OVERLAP_SCORE = ((0.005, 0.15), (0.02, 0.3), (0.05, 0.45), (0.1, 0.65), (0.2, 0.85), (0.5, 1.0))


@register_rule
class TrainTestOverlap(Rule):
    id = "train_test_overlap"
    name = "Test rows also appear in the training data"
    detects = (
        "Rows of the evaluation data whose feature values are identical to rows of the "
        "training data, including the extreme case of evaluating on the training set itself."
    )
    why = (
        "A model is graded on examples it has already seen, so the test score measures "
        "memory rather than generalisation and overstates how the model will do on new data."
    )
    example = (
        "The dataset holds repeated measurements of the same entity; a random split puts "
        "copies on both sides, and 38% of test rows are exact copies of training rows."
    )
    fixes = (
        "Drop exact duplicates before splitting: `df = df.drop_duplicates(subset=feature_cols)`.",
        "Split by entity so that all rows of one patient/customer/device land on one side: "
        "`GroupShuffleSplit` or `GroupKFold` with `groups=df['entity_id']`.",
        "Re-evaluate on a held-out set that the training pipeline never touched and report "
        "that score instead.",
    )
    severity_policy = (
        "Score from the share of test rows found in train: 0.5% -> 0.15, 2% -> 0.3, "
        "5% -> 0.45, 10% -> 0.65, 20% -> 0.85 (critical), 50% -> 1.0."
    )
    explains = ("duplicate_samples", "conflicting_labels")
    checks = ("Train Test Samples Mix",)

    def detect_dataset(self, artifact):
        comparison = artifact.dataset.comparison
        if comparison is None or comparison.overlap_fraction <= 0:
            return
        share = comparison.overlap_fraction
        yield self.signal(
            "dataset",
            score=interp(share, OVERLAP_SCORE),
            confidence=0.95,
            detail=f"{pct(share)} of test rows have an identical feature row in train",
            value=share,
            share=share,
        )

    def detect_deepchecks(self, artifact):
        return self.failed_check_share(
            artifact, "Train Test Samples Mix", OVERLAP_SCORE, confidence=0.85
        )

    def title(self, signals, artifact):
        share = self.fact(signals, "share", 0.0)
        if share >= 0.999:
            return "The evaluation data is the training data: every test row appears in train"
        return f"{pct(share)} of test rows also appear in the training data"

    def explanation(self, signals, artifact):
        share = self.fact(signals, "share", 0.0)
        return (
            f"About {pct(share)} of the rows you evaluated on are copies of rows the model was "
            "trained on. The model has already seen their answers, so the test score is "
            "inflated and tells you little about new data. This usually comes from duplicates "
            "in the raw data, several rows per entity split at random, or evaluating on a "
            "frame that was also used for training."
        )
