"""split_size_mismatch: a split too small or disproportionate to be trusted."""

from __future__ import annotations

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, interp
from deepfix_agents.rules.constant_feature import constant_columns
from deepfix_agents.rules.overfitting import _clip, noise_margin
from deepfix_agents.rules.unused_features import collected_noise

#: rows in the test split -> score. Below ~30 rows no score is reliable; a 95% interval
#: for an accuracy measured on n rows is about +-1/sqrt(n) wide (+-0.2 at 25 rows,
#: +-0.1 at 100 rows).
SMALL_TEST_SCORE = ((20, 0.85), (30, 0.7), (50, 0.5), (100, 0.3), (200, 0.12), (400, 0.0))
#: test/train row ratio -> factor on SMALL_TEST_SCORE. A small test split carved from a
#: large dataset is an avoidable mistake; from a small dataset it is all one has (then
#: the remedy is cross-validation, and the finding weighs less).
PROPORTION_FACTOR = ((0.05, 1.0), (0.25, 0.6))
#: test/train row ratio from which the test split is a conventional share of the data
#: (a 20 % test share or more): then a small test split is a small dataset, not a split
#: mistake. No larger test split was affordable without starving training, and no harm
#: to this model is measured (the remedy, cross-validation, changes how the score is
#: reported, not the model), so its score stays below low (no finding of its own) and it
#: explains nothing: the rules that measure drift, calibration, a train/test gap or a
#: weak segment on these rows already weigh their sampling noise at these split sizes,
#: and a planted-looking symptom must not be folded into, or ranked behind, a split that
#: could not have been better
PROPORTIONAL_RATIO = 0.25
PROPORTIONAL_CAP = 0.19
#: factor when there is no training split to compare with
UNKNOWN_PROPORTION_FACTOR = 0.8
#: test/train row ratio above 1 -> score: the model learns from less data than it is
#: judged on (often train_size and test_size swapped)
LARGE_TEST_SCORE = ((1.0, 0.0), (1.5, 0.25), (3.0, 0.5), (6.0, 0.7), (10.0, 0.8), (20.0, 0.9))
#: training rows -> factor on LARGE_TEST_SCORE: 50,000 training rows are plenty even if
#: the test split is larger
TRAIN_SIZE_FACTOR = ((200, 1.0), (2_000, 0.7), (20_000, 0.4))
#: training rows per model feature -> score: too few rows to estimate one weight each
ROWS_PER_FEATURE_SCORE = ((1.0, 0.7), (3.0, 0.45), (5.0, 0.3), (10.0, 0.0))
#: few rows per feature is a risk, not a measured harm: a model given too few rows either
#: memorises them (the overfitting rule measures what that costs on test, against the
#: baselines) or is regularised enough not to. Alone it stays below medium, so it neither
#: outranks nor absorbs the overfitting it would cause. When this model shows no
#: train/test gap beyond the test score's noise (one standard error,
#: :func:`deepfix_agents.rules.overfitting.noise_margin`), the few rows measurably cost it
#: nothing: at most ``PROPORTIONAL_CAP`` (no finding of its own)
FEW_ROWS_CAP = 0.39


def proportional(ratio: float | None) -> bool:
    """The test split is a conventional share of the data (see :data:`PROPORTIONAL_RATIO`)."""
    return ratio is not None and ratio >= PROPORTIONAL_RATIO


def small_test_score(n_test: int, ratio: float | None) -> float:
    """Score of a test split of ``n_test`` rows, ``ratio`` = test/train rows (None: no
    training split)."""
    factor = interp(ratio, PROPORTION_FACTOR) if ratio is not None else UNKNOWN_PROPORTION_FACTOR
    score = interp(n_test, SMALL_TEST_SCORE) * factor
    return min(score, PROPORTIONAL_CAP) if proportional(ratio) else score


def _metric_wobble(n: int) -> float:
    """Half-width of a 95% interval of an accuracy near 0.5 measured on ``n`` rows."""
    return 1.96 * 0.5 / max(n, 1) ** 0.5


@register_rule
class SplitSizeMismatch(Rule):
    id = "split_size_mismatch"
    name = "A split is too small or disproportionate"
    detects = (
        "A test split too small for its score to mean anything, a training split much smaller "
        "than the test split, or fewer training rows than the model has features to learn."
    )
    why = (
        "A score measured on a few dozen rows moves by tens of points with the luck of the "
        "draw, so comparisons, drift and per-segment results built on it are noise. A model "
        "trained on a small fraction of the data wastes most of the information available."
    )
    example = (
        "`train_test_split(X, y, test_size=25)` was meant as 25%: 3,000 rows train the model "
        "and 25 rows judge it, so the accuracy moves by +-0.2 from one seed to the next."
    )
    fixes = (
        (
            "Use proportional sizes: `train_test_split(X, y, test_size=0.2, stratify=y)` (a float "
            "is a share, an int is a row count; check which one you passed)."
        ),
        (
            "With little data, report cross-validated scores with their spread instead of one "
            "small test split: `cross_val_score(model, X, y, cv=StratifiedKFold(5))` or "
            "`RepeatedStratifiedKFold`."
        ),
        (
            "Make sure the training split is the larger one; if `train_size` and `test_size` were "
            "swapped, swap them back and retrain."
        ),
        (
            "Report a confidence interval with any score measured on a small split (e.g. "
            "bootstrap the test rows) before drawing conclusions."
        ),
    )
    severity_policy = (
        "Small test split: rows 20 -> 0.85, 30 -> 0.7, 50 -> 0.5, 100 -> 0.3, 200 -> 0.12, "
        "400 -> 0, multiplied by x1.0 when test/train < 0.05 (a larger test split was "
        "affordable) down to x0.6 at test/train 0.25, x0.8 without a training split; from "
        "test/train 0.25 (a test share of 20 % or more) the split is the conventional share "
        "of a small dataset, not a mistake, and no harm to the model is measured: at most "
        "0.19 (no finding) and it explains no symptom. "
        "Large test split: test/train 1.5 -> 0.25, 3 -> 0.5, 6 -> 0.7, 10 -> 0.8, 20 -> 0.9, "
        "x1.0 up to 200 training rows, x0.7 at 2,000, x0.4 at 20,000. Training rows per model "
        "feature that relates to the label (collected noise columns, the unused_features "
        "finding, are its cause, not a shortage of rows): 1 -> 0.7, 3 -> 0.45, 5 -> 0.3, 10 -> 0, at most 0.39 (low: the harm of too few rows "
        "is the overfitting it causes, measured by that rule), at most 0.19 (no finding) when "
        "the model's test score is within one standard error of its training score (no "
        "memorisation: no harm measured). Deepchecks' Datasets Size Comparison "
        "corroborates."
    )
    explains = (
        "weak_segment",
        "label_drift",
        "feature_drift",
        "prediction_drift",
        "poor_calibration",
        "decision_threshold",
        "overfitting",
        "underfitting",
    )
    checks = ("Datasets Size Comparison",)

    def explains_for(self, artifact):
        """A training split too small for the data (fewer training than test rows, or
        too few rows per feature) also explains a feature that holds one value in every
        training row but varies in the test rows: a rare value the few training rows did
        not happen to draw. A column constant in both splits is a stuck feed of its own
        (two independent bugs keep two findings).

        A small test split that is the conventional share of a small dataset (see
        :data:`PROPORTIONAL_RATIO`) explains nothing: the split could not have been
        better, and the symptoms' own rules weigh their noise at this split size."""
        if not self._scarce_training(artifact):
            return self.explains if self._avoidable_small_test(artifact) else ()
        dataset = artifact.dataset
        features = set(dataset.feature_names)
        constant = constant_columns(dataset.train, features)
        in_test = set(constant_columns(dataset.test, features))
        if constant and not in_test & set(constant):
            return (*self.explains, "constant_feature")
        return self.explains

    def _avoidable_small_test(self, artifact) -> bool:
        """A small test split carved from data that could afford a larger one (not the
        conventional share of a small dataset, see :data:`PROPORTIONAL_RATIO`)."""
        dataset = artifact.dataset
        n_train = dataset.train.n_rows if dataset.train is not None else None
        ratio = dataset.test.n_rows / n_train if n_train else None
        return not proportional(ratio)

    def _scarce_training(self, artifact) -> bool:
        return any(
            s.facts.get("kind") in ("large_test", "few_rows") for s in self.detect_dataset(artifact)
        )

    def detect_dataset(self, artifact):
        dataset = artifact.dataset
        n_test = dataset.test.n_rows
        train = dataset.train
        n_train = train.n_rows if train is not None else None
        ratio = n_test / n_train if n_train else None
        facts = {"n_test": n_test, "n_train": n_train}

        score = small_test_score(n_test, ratio)
        if score > 0:
            detail = (
                f"the test split has {n_test} rows; a score measured on it is only known to "
                f"about +-{_metric_wobble(n_test):.2f}"
            )
            if n_train:
                detail += f" (training split: {n_train} rows)"
            yield self.signal(
                "dataset",
                score=score,
                confidence=0.9,
                detail=detail,
                value=n_test,
                kind="small_test",
                proportional=proportional(ratio),
                **facts,
            )

        if ratio is not None and ratio > 1.0:
            score = interp(ratio, LARGE_TEST_SCORE) * interp(n_train, TRAIN_SIZE_FACTOR)
            if score > 0:
                yield self.signal(
                    "dataset",
                    score=score,
                    confidence=0.9,
                    detail=f"the test split has {ratio:.1f}x as many rows as the training split ({n_test} vs {n_train})",
                    value=ratio,
                    kind="large_test",
                    ratio=ratio,
                    **facts,
                )

        n_features = len(dataset.feature_names)
        # collected noise (many features with no label association, the unused_features
        # finding) is not a shortage of rows: without those columns the rows suffice, so
        # the rows are counted per feature that relates to the label
        n_noise = len(collected_noise(artifact)[0])
        if n_train and n_features - n_noise > 0:
            per_feature = n_train / (n_features - n_noise)
            score = min(interp(per_feature, ROWS_PER_FEATURE_SCORE), FEW_ROWS_CAP)
            if self._no_gap(artifact):
                score = min(score, PROPORTIONAL_CAP)
            if score > 0:
                yield self.signal(
                    "dataset",
                    score=score,
                    confidence=0.8,
                    detail=(
                        f"the training split has {n_train} rows for {n_features} features "
                        f"({per_feature:.1f} rows per feature)"
                    ),
                    value=per_feature,
                    kind="few_rows",
                    n_features=n_features,
                    **facts,
                )

    @staticmethod
    def _no_gap(artifact) -> bool:
        """The model scores on test within one standard error of its training score: too
        few rows per feature did not make it memorise (measured harm: none)."""
        performance = artifact.performance
        train, test = performance.train_score, performance.test_score
        if train is None or test is None:
            return False
        return _clip(train) - _clip(test) <= noise_margin(artifact.dataset.test.n_rows)

    def detect_deepchecks(self, artifact):
        """Datasets Size Comparison: ``value`` is test/train rows (lower is worse),
        ``values`` holds ``train_size`` and ``test_size``."""
        check = artifact.check("Datasets Size Comparison")
        if check is None or check.outcome != "not_passed":
            return
        n_test, n_train = check.values.get("test_size"), check.values.get("train_size")
        score = self.check_score
        if n_test:
            ratio = n_test / n_train if n_train else None
            score = max(score, small_test_score(n_test, ratio))
            if ratio is not None and ratio > 1.0:
                score = max(
                    score, interp(ratio, LARGE_TEST_SCORE) * interp(n_train, TRAIN_SIZE_FACTOR)
                )
        yield self.check_signal(check, score=score, confidence=0.6)

    def title(self, signals, artifact):
        strongest = self.strongest(signals)
        kind = strongest.facts.get("kind")
        n_test, n_train = self.fact(signals, "n_test"), self.fact(signals, "n_train")
        if kind == "large_test":
            return (
                f"The model is trained on {n_train:,} rows but tested on {n_test:,} "
                f"({strongest.facts['ratio']:.1f}x more)"
            )
        if kind == "few_rows":
            return (
                f"Only {n_train:,} training rows for {strongest.facts['n_features']} features "
                f"({n_train / strongest.facts['n_features']:.1f} rows per feature)"
            )
        if kind == "small_test":
            tail = f" ({n_train:,} in training)" if n_train else ""
            return (
                f"The test split has only {n_test:,} rows{tail}: its scores are uncertain by "
                f"about +-{_metric_wobble(n_test):.2f}"
            )
        return self.name

    def explanation(self, signals, artifact):
        kind = self.strongest(signals).facts.get("kind")
        if kind in ("large_test", "few_rows"):
            return (
                "The model learns from far fewer rows than are available (or than it has features "
                "to fit), while most of the data sits in the test split. It cannot learn what the "
                "data could teach it, so its weaknesses say more about the split than about the "
                "model; train_size and test_size were probably swapped."
            )
        n_test = self.fact(signals, "n_test", 0)
        return (
            f"The test split holds only {n_test} rows. A score measured on so few rows changes "
            f"by about +-{_metric_wobble(n_test):.2f} with the luck of which rows were drawn, so "
            "it cannot confirm or rule out a problem, and drift or weak-segment results built on "
            "it are noise. Use a larger test split or cross-validation."
        )
