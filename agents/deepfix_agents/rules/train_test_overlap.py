"""train_test_overlap: test rows that also appear in the training data."""

from __future__ import annotations

import math

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, interp, pct
from deepfix_agents.rules.duplicate_samples import expected_chance_overlap

#: overlap share -> impact score
OVERLAP_SCORE = ((0.005, 0.15), (0.02, 0.3), (0.05, 0.45), (0.1, 0.65), (0.2, 0.85), (0.5, 1.0))
#: shared rows predicted no better than the others (within this many noise units): the
#: overlap does not inflate this model's score, the finding is capped at low
NOISE_UNITS = 2.0
#: when the features take so few distinct values that chance alone explains at least half
#: of the shared rows (:func:`expected_chance_overlap`), they are mostly natural repeats
#: of common profiles, not leaked rows (as for duplicates within a split); natural repeats
#: are also the typical, easy rows, so their better score does not prove memorisation
NATURAL_FACTOR = 0.5
HARMLESS_CAP = 0.35
#: at most this many shared test rows are one row of evidence: a pipeline that leaks
#: copies many rows, while one coincidence is what measured data of finite resolution
#: gives by chance (the cardinality estimate of :func:`expected_chance_overlap` assumes
#: independent uniform columns and misses clustered natural twins, e.g. two flowers
#: measured alike to 0.1 cm), and too few rows to measure what they do to the score.
#: The share still sets the score (it is what the row can inflate); the confidence is
#: that of one observation, a coin flip between a leak and a coincidence
FEW_ROWS = 1
FEW_ROWS_CONFIDENCE = 0.5
#: ... and below low (no finding of its own) unless a measurement shows it inflating the
#: score: one row moves an accuracy on n test rows by at most 1/n, less than the noise of
#: that score (about 0.5/sqrt(n)) for any test split of more than 4 rows, so it cannot
#: measurably inflate it, and as a top finding it pushed planted causes of the same
#: severity down (it ranks first among equals: split before model layer)
FEW_ROWS_CAP = 0.19
#: the noise of a mean score over n test rows is about this many rows times sqrt(n)
#: (the standard error of an accuracy near 0.5 is 0.5/sqrt(n)): fewer shared rows than
#: that cannot measurably inflate the score either, and count as few (:meth:`few`)
NOISE_ROWS = 0.5


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
        "5% -> 0.45, 10% -> 0.65, 20% -> 0.85 (critical), 50% -> 1.0. Measured (tabular): "
        "when the shared test rows are predicted no better than the others (within 2 noise "
        "units), the overlap does not inflate this model's score (natural repeats with their "
        "own labels) and the finding is capped at 0.35 (low); so is it when chance explains "
        "the overlap (below), even if the shared rows are predicted better: common profiles "
        "are the dense, easy rows and new data repeats them at the same rate. When the features take so few "
        "distinct values that chance alone explains at least half of the shared rows "
        "(expected share 1 - exp(-n_train / C), C the number of distinct feature rows the "
        "training columns can take), the score is halved: natural repeats of common profiles. "
        "A single shared test row, or fewer than 0.5*sqrt(n) of n test rows, is too few to "
        "tell twins from copies: confidence 0.5, and below low (not reported) unless "
        "measured inflating the score: k rows move the score by at most k/n, under the "
        "score's noise (about 0.5/sqrt(n))."
    )
    explains = ("duplicate_samples", "conflicting_labels")

    def explains_for(self, artifact):
        """Copies *within* a split are a fact of their own (measured per split), not a
        consequence of rows shared *across* the splits: when a split holds duplicates,
        both findings stand (two independent bugs each keep their finding). The same
        holds for rows of one split that share their features with another label."""
        dataset = artifact.dataset
        splits = [s for s in (dataset.train, dataset.test) if s is not None]
        own = set()
        if max((s.duplicate_fraction for s in splits), default=0.0) > 0:
            own.add("duplicate_samples")
        if max((s.conflicting_label_fraction for s in splits), default=0.0) > 0:
            own.add("conflicting_labels")
        return tuple(c for c in self.explains if c not in own)
    checks = ("Train Test Samples Mix",)
    modality_fixes = {
        "text": (
            "De-duplicate the corpus on normalised text (lower-case, no punctuation, collapsed "
            "whitespace) *before* splitting, then split again; re-evaluate on the clean test "
            "set.",
            "Split by source so that all texts of one author, thread, product or document "
            "land on one side (`GroupShuffleSplit(groups=df.author_id)`); near-identical "
            "texts from one source leak just like exact copies.",
            "Check for near-duplicates across the split too (MinHash or embedding cosine "
            "similarity > 0.95) and drop them from the test set.",
        ),
        "image": (
            "De-duplicate images by content hash (and perceptual hash for re-encoded copies) "
            "*before* splitting, then split again and re-evaluate.",
            "Split by capture: all images of one patient, scene, camera session or object "
            "land on one side (`GroupShuffleSplit(groups=df.session_id)`); burst shots and "
            "crops of one frame leak like copies.",
            "Keep a frozen, de-duplicated test set and check every new training batch "
            "against its hashes.",
        ),
    }

    def detect_intervention(self, artifact):
        """What the shared rows do to the score: a memorised copy is predicted better."""
        rows = artifact.intervention("overlap_rows")
        if rows is None or rows.change is None:
            return
        better = -rows.change > NOISE_UNITS * (rows.noise or 0.0)
        metric = rows.metric.replace("_", " ")
        yield self.signal(
            "intervention",
            score=0.0,
            confidence=0.7,
            detail=(
                f"the {rows.n_rows} test rows also found in train have {metric} "
                f"{rows.score_after:.3f} vs {rows.score_before:.3f} on the others (noise "
                f"{rows.noise or 0:.3f}): "
                + (
                    "they are predicted better, the test score is inflated"
                    if better
                    else "they are predicted no better, the overlap does not inflate this "
                    "model's score: low"
                )
            ),
            value=rows.change,
            check="overlap_rows",
            inflated=better,
        )

    def measured_harmless(self, signals):
        measured = [s for s in signals if s.source == "intervention"]
        return bool(measured) and not any(s.facts.get("inflated") for s in measured)

    def confidence(self, signals):
        """The Deepchecks mix counts the same single row as the statistics: two views of
        one observation are not two pieces of evidence, so a one-row overlap stays at
        :data:`FEW_ROWS_CONFIDENCE` (unless a measurement shows the row inflating the score)."""
        confidence = super().confidence(signals)
        if any(s.facts.get("few") for s in signals) and not any(
            s.facts.get("inflated") for s in signals
        ):
            return min(confidence, FEW_ROWS_CONFIDENCE)
        return confidence

    def score(self, signals):
        best = max(s.score for s in signals)
        inflated = any(s.facts.get("inflated") for s in signals)
        if any(s.facts.get("few") for s in signals) and not inflated:
            return min(best, FEW_ROWS_CAP)
        measured = [s for s in signals if s.source == "intervention"]
        if measured and (not inflated or self.chance_explained(signals)):
            return min(best, HARMLESS_CAP)
        return best

    @staticmethod
    def chance_explained(signals) -> bool:
        """Whether chance explains the overlap (:meth:`natural`): then the shared rows are
        the common profiles, which new data repeats at the same rate, so the test score is
        what deployment sees, not inflated; and common profiles are the dense, easy rows
        that any model predicts better, so their better score measures density, not
        memorisation, and does not lift the finding above low."""
        return any(s.facts.get("natural") for s in signals if s.source == "dataset")

    @staticmethod
    def shared_rows(artifact, share: float) -> int | None:
        """How many test rows ``share`` stands for (None without a test split)."""
        test = artifact.dataset.test
        if test is None or not test.n_rows:
            return None
        return round(share * test.n_rows)

    def few(self, artifact, share: float) -> bool:
        """Whether ``share`` is too few test rows to inflate the score measurably: at most
        :data:`FEW_ROWS`, or fewer than the score's noise in rows. k shared rows move a
        mean score over n test rows by at most k/n, while its noise is about
        ``NOISE_ROWS / sqrt(n)``, so below ``NOISE_ROWS * sqrt(n)`` rows even a perfectly
        memorised copy hides in the noise (2 of 97 test rows: 2.1 % against a noise of
        5 %); a leaking pipeline copies far more (the least planted leak is 10 %)."""
        rows = self.shared_rows(artifact, share)
        if rows is None or rows <= 0:
            return False
        n_test = artifact.dataset.test.n_rows
        return rows <= max(FEW_ROWS, NOISE_ROWS * math.sqrt(n_test))

    def natural(self, artifact, share: float) -> tuple[float, bool]:
        """(share of test rows expected to coincide with a training row by chance, whether
        chance explains at least half of ``share``)."""
        expected = expected_chance_overlap(artifact)
        return expected, share > 0 and expected >= 0.5 * share

    def detect_dataset(self, artifact):
        comparison = artifact.dataset.comparison
        if comparison is None or comparison.overlap_fraction <= 0:
            return
        share = comparison.overlap_fraction
        expected, natural = self.natural(artifact, share)
        detail = (
            f"{pct(share)} of test {self.samples(artifact)} have an identical "
            f"{'(normalised) copy' if artifact.dataset.content_column else 'feature row'} "
            "in train"
        )
        if natural:
            detail += (
                f" ({pct(expected)} expected by chance: the features take few distinct values,"
                " so common profiles repeat)"
            )
        few = self.few(artifact, share)
        if few:
            detail += (
                " (too few rows to move the score past its noise: as likely natural twins"
                " as leaked copies)"
            )
        yield self.signal(
            "dataset",
            score=interp(share, OVERLAP_SCORE) * (NATURAL_FACTOR if natural else 1.0),
            confidence=FEW_ROWS_CONFIDENCE if few else 0.6 if natural else 0.95,
            detail=detail,
            value=share,
            share=share,
            natural=natural,
            few=few,
        )

    def detect_deepchecks(self, artifact):
        for signal in self.failed_check_share(
            artifact, "Train Test Samples Mix", OVERLAP_SCORE, confidence=0.85
        ):
            if self.natural(artifact, signal.facts.get("share") or 0.0)[1]:
                # the check counts the same natural repeats as the dataset signal: the
                # same discount on its score, and no surer than that signal (0.6)
                signal = signal.model_copy(update={
                    "score": round(signal.score * NATURAL_FACTOR, 4),
                    "confidence": min(signal.confidence, 0.6),
                    "facts": {**signal.facts, "natural": True},
                })
            if self.few(artifact, signal.facts.get("share") or 0.0):
                signal = signal.model_copy(update={
                    "confidence": min(signal.confidence, FEW_ROWS_CONFIDENCE),
                    "facts": {**signal.facts, "few": True},
                })
            yield signal

    def title(self, signals, artifact):
        share = self.fact(signals, "share", 0.0)
        if share >= 0.999:
            return (
                "The evaluation data is the training data: every test "
                f"{self.samples(artifact)[:-1]} appears in train"
            )
        return f"{pct(share)} of test {self.samples(artifact)} also appear in the training data"

    def explanation(self, signals, artifact):
        share = self.fact(signals, "share", 0.0)
        return (
            f"About {pct(share)} of the rows you evaluated on are copies of rows the model was "
            "trained on. The model has already seen their answers, so the test score is "
            "inflated and tells you little about new data. This usually comes from duplicates "
            "in the raw data, several rows per entity split at random, or evaluating on a "
            "frame that was also used for training."
        )
