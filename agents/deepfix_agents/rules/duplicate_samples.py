"""duplicate_samples: identical rows repeated within a split."""

from __future__ import annotations

import math

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, interp, pct

#: share of duplicated rows beyond what chance explains -> score (1-2% is common)
DUPLICATE_SCORE = ((0.02, 0.0), (0.05, 0.2), (0.1, 0.4), (0.2, 0.6), (0.4, 0.8), (0.7, 0.9))
#: duplicates inside the test split only weigh the evaluation, not what is learned
TEST_FACTOR = 0.7
#: when chance alone explains at least half of the duplicates, they are expected
NATURAL_FACTOR = 0.5


#: duplicate rows the other split must hold before its duplicate share calibrates the
#: chance rate (fewer are too few to estimate the number of distinct rows from)
MIN_REFERENCE_DUPLICATES = 5


def expected_chance_duplicates(artifact, split) -> float:
    """Chance duplicates of ``split``: none for text and images, whose duplicates are
    measured on the content itself (two different reviews never hash alike), else
    :func:`expected_collision_rate` of the feature columns, or, when lower, the share the
    *other* split's own duplicates predict at this split's size
    (:func:`calibrated_duplicate_rate`): real columns are correlated and skewed, so
    their product of cardinalities can overstate chance collisions many times over,
    which would excuse planted copies on coarse data."""
    if artifact.dataset.content_column:
        return 0.0
    expected = expected_collision_rate(split, artifact.dataset.feature_names)
    dataset = artifact.dataset
    other = dataset.test if split is dataset.train else dataset.train
    calibrated = calibrated_duplicate_rate(other, split.n_rows)
    return expected if calibrated is None else min(expected, calibrated)


def chance_copies(artifact, split) -> float:
    """Chance share of exact copies (features and label) in ``split``: the chance
    estimate of :func:`expected_chance_duplicates`, no higher than the bound the other
    split's own few copies put on it (:func:`bounded_duplicate_rate`). The bound is on
    whole rows repeated, which is what this rule counts; it says nothing of features
    alone coinciding (a continuous label makes whole-row copies rare however coarse the
    features), so :func:`expected_chance_duplicates`, which the conflicting-labels rule
    reads for that, does not take it."""
    expected = expected_chance_duplicates(artifact, split)
    dataset = artifact.dataset
    other = dataset.test if split is dataset.train else dataset.train
    bound = None if dataset.content_column else bounded_duplicate_rate(other, split.n_rows)
    return expected if bound is None else min(expected, bound)


def _duplicate_share(n: float, cells: float) -> float:
    """Share of ``n`` rows drawn from ``cells`` equally likely cells that repeat one."""
    return 1.0 - cells * -math.expm1(-n / cells) / n


def calibrated_duplicate_rate(reference, n_rows: int) -> float | None:
    """The duplicate share at ``n_rows`` rows of data like ``reference`` (a split): the
    number of cells ``C`` that gives ``reference``'s observed share at its size (balls in
    bins, as in :func:`expected_collision_rate`), then the share at ``n_rows``. None when
    ``reference`` holds too few duplicates to calibrate on."""
    if reference is None or reference.n_rows <= 1 or n_rows <= 1:
        return None
    share, n = reference.duplicate_fraction, reference.n_rows
    if share * n < MIN_REFERENCE_DUPLICATES or share >= 0.99:
        return None
    return _share_at(share, n, n_rows)


def _share_at(share: float, n: int, n_rows: int) -> float:
    """The duplicate share at ``n_rows`` rows of data whose share at ``n`` rows is
    ``share``: the number of equally likely cells ``C`` that gives it (balls in bins),
    then the share ``C`` gives at ``n_rows``."""
    low, high = 0.0, 60.0  # log C: the share falls as C grows
    for _ in range(60):
        mid = 0.5 * (low + high)
        if _duplicate_share(n, math.exp(mid)) > share:
            low = mid
        else:
            high = mid
    return max(0.0, min(1.0, _duplicate_share(n_rows, math.exp(0.5 * (low + high)))))


def _fewest_repeats(split) -> int:
    """The fewest rows of ``split`` that must repeat an earlier row: its rows less the
    distinct rows its columns can form at all (the product of their numbers of distinct
    values, a missing value counted as one more)."""
    cells = 1.0
    for column in split.columns:
        cells *= max(float(column.n_unique) + (column.missing_fraction > 0), 1.0)
        if cells >= split.n_rows:
            return 0
    return max(0, split.n_rows - int(cells))


#: one-sided confidence of the bound that a split with few duplicates puts on the
#: chance duplicate share (:func:`bounded_duplicate_rate`)
BOUND_CONFIDENCE = 0.95


def poisson_upper(k: int, confidence: float = BOUND_CONFIDENCE) -> float:
    """The largest Poisson mean under which ``k`` or fewer events still occur with
    probability ``1 - confidence``: the exact one-sided upper bound, half the chi-square
    quantile with ``2 (k + 1)`` degrees of freedom (3.00 for 0 events, 4.74 for 1, 6.30
    for 2)."""
    from scipy.stats import chi2  # on first use only: rules load with the evaluator

    return float(chi2.ppf(confidence, 2 * (k + 1))) / 2.0


def bounded_duplicate_rate(reference, n_rows: int) -> float | None:
    """An upper bound on the chance duplicate share at ``n_rows`` rows of data like
    ``reference`` (a split) when ``reference`` holds too few duplicates to calibrate on
    (:func:`calibrated_duplicate_rate`): the share its duplicate count allows at
    ``BOUND_CONFIDENCE`` (chance collisions between rows are rare events, so their count
    is Poisson), carried to ``n_rows`` as the calibrated share is. None without a
    reference of two rows or more, or when it holds enough duplicates to calibrate.

    The columns' own estimate (:func:`expected_collision_rate`) multiplies the columns'
    cardinalities as if they were independent; on coarse survey data (a handful of
    binary and banded columns) it can claim a third of the rows repeat by chance, while
    360 test rows of the same data hold not one repeat, which chance at any rate above
    about 0.8% would not leave. Planted copies on such data were excused as chance (DEV:
    looks_wages 20% of training rows copied, 32% "expected")."""
    if reference is None or reference.n_rows <= 1 or n_rows <= 1:
        return None
    count = round(reference.duplicate_fraction * reference.n_rows)
    if count >= MIN_REFERENCE_DUPLICATES or count < _fewest_repeats(reference):
        # enough to calibrate on; or fewer repeats than its columns' values allow at all
        # (statistics that do not describe one table): no bound either way
        return None
    upper = min(poisson_upper(count) / reference.n_rows, 0.99)
    return _share_at(upper, reference.n_rows, n_rows)


def expected_collision_rate(split, feature_names) -> float:
    """Share of rows expected to repeat an earlier row's features by chance alone.

    Each feature column contributes its effective number of values, ``min(n_unique,
    1 / top_fraction)`` (a skewed column behaves like one with fewer values); their
    product ``C`` is the number of distinct feature rows the data can take. Drawing
    ``n`` rows from ``C`` equally likely cells leaves ``C (1 - exp(-n / C))`` distinct
    rows (balls in bins), so the expected duplicate share is ``1 - that / n``. Data
    with only a few low-cardinality columns repeats rows legitimately; continuous
    features make chance collisions vanish.
    """
    n = split.n_rows
    if n <= 1:
        return 0.0
    log_cells = feature_cells(split, feature_names)
    if log_cells is None:
        return 0.0
    return max(0.0, min(1.0, _duplicate_share(n, math.exp(log_cells))))


def feature_cells(split, feature_names) -> float | None:
    """Log of ``C``, the number of distinct feature rows ``split``'s columns can take
    (see :func:`expected_collision_rate`); None when it is astronomically large."""
    features = set(feature_names)
    log_cells = 0.0
    for column in split.columns:
        if column.name not in features:
            continue
        effective = float(column.n_unique) + (1.0 if column.missing_fraction > 0 else 0.0)
        if column.top_fraction > 0:
            effective = min(effective, 1.0 / column.top_fraction)
        log_cells += math.log(max(effective, 1.0))
        if log_cells > 60:  # astronomically many cells: no chance collisions
            return None
    return log_cells


def expected_chance_overlap(artifact) -> float:
    """Share of test rows expected to find a training row with the same features by
    chance alone: ``1 - exp(-n_train / C)`` with ``C`` the training split's feature
    cells (:func:`feature_cells`). Zero for text and images (content is compared, and
    two different documents never coincide) and when there is no training split."""
    dataset = artifact.dataset
    train = dataset.train
    if dataset.content_column or train is None or train.n_rows < 1:
        return 0.0
    log_cells = feature_cells(train, dataset.feature_names)
    if log_cells is None:
        return 0.0
    return -math.expm1(-train.n_rows / math.exp(log_cells))


@register_rule
class DuplicateSamples(Rule):
    id = "duplicate_samples"
    name = "Rows are duplicated within a split"
    detects = (
        "Rows that are exact copies (features and label) of another row of the same split, "
        "beyond what a few low-cardinality columns explain by chance."
    )
    why = (
        "Copies give some examples several times the weight of others, so the model fits "
        "them at the expense of the rest; in cross-validation copies land in both folds and "
        "inflate the score. Copy-based oversampling also distorts the class balance."
    )
    example = (
        "A retried ETL job appended the same batch twice, so 20% of the training rows are "
        "exact duplicates."
    )
    fixes = (
        (
            "Drop exact duplicates before splitting: `df = df.drop_duplicates()` (or "
            "`drop_duplicates(subset=feature_cols + [target])`), then split."
        ),
        (
            "Find where the copies come from (a join that fans out, a re-run load, oversampling "
            "done before the split) and fix it at the source; make loads idempotent."
        ),
        (
            "If you oversample a rare class on purpose, do it inside the training folds only "
            "(e.g. imbalanced-learn's `RandomOverSampler` in an `imblearn.pipeline.Pipeline`) or "
            "use `class_weight='balanced'` instead of copying rows."
        ),
        (
            "If repeated rows are genuine repeated measurements, keep them but split by entity "
            "with `GroupKFold` / `GroupShuffleSplit`."
        ),
    )
    severity_policy = (
        "Score from the share of rows that repeat an earlier row (features and label) minus "
        "the share expected by chance from the columns' cardinalities: 2% -> 0, 5% -> 0.2, "
        "10% -> 0.4, 20% -> 0.6, 40% -> 0.8, 70% -> 0.9. x0.7 for the test split (only the "
        "evaluation is affected); x0.5 when chance explains at least half of the duplicates. "
        "Deepchecks' Data Duplicates share corroborates through the same table, less the same "
        "chance share. The chance share is the lower of the columns' estimate and the share "
        "the other split's own duplicates predict at this split's size (from 5 duplicate "
        "rows); with fewer, no more than the share their count allows at 95% (Poisson), "
        "carried to this split's size."
    )
    explains = ("overfitting", "label_drift")
    checks = ("Data Duplicates", "Text Duplicates")
    modality_fixes = {
        "text": (
            "De-duplicate texts after normalising them (lower-case, strip punctuation and "
            "whitespace, unicode NFKC) *before* splitting: "
            "`df = df.loc[~df.text.str.lower().str.replace(r'\\W+', ' ', regex=True)"
            ".duplicated()]`.",
            "Look for near-duplicates too (templated messages, quoted replies, boilerplate): "
            "MinHash / SimHash, or cosine similarity of sentence embeddings above ~0.95, and "
            "keep one text per cluster.",
            "Find where the copies come from (re-posted reviews, scraped pages crawled twice, "
            "a join that fans out) and de-duplicate at the source.",
            "If you oversample a rare class on purpose, do it inside the training folds only, "
            "or prefer class weights or text augmentation (back-translation, synonym "
            "replacement) over exact copies.",
        ),
        "image": (
            "De-duplicate images by content hash before splitting (exact copies), and by a "
            "perceptual hash (`imagehash.phash`, Hamming distance <= 4) for resized or "
            "re-encoded copies.",
            "Find where the copies come from (the same photo exported twice, burst shots, "
            "several crops of one frame) and keep one image per capture, or split by capture "
            "session with `GroupShuffleSplit`.",
            "If you oversample a rare class, use augmentation (flips, crops, colour jitter) "
            "inside the training loop instead of copying files.",
        ),
    }

    def detect_dataset(self, artifact):
        dataset = artifact.dataset
        for split, factor in ((dataset.train, 1.0), (dataset.test, TEST_FACTOR)):
            if split is None or split.duplicate_fraction <= 0:
                continue
            share = split.duplicate_fraction
            expected = chance_copies(artifact, split)
            excess = max(share - expected, 0.0)
            natural = expected >= 0.5 * share
            score = interp(excess, DUPLICATE_SCORE) * factor * (NATURAL_FACTOR if natural else 1.0)
            if score <= 0:
                continue
            what = self.samples(artifact)
            copies = "normalised content" if dataset.content_column else "another row"
            detail = f"{pct(share)} of {split.name} {what} are exact copies of {copies}"
            if expected >= 0.005:
                detail += f" ({pct(expected)} expected by chance from the few distinct values)"
            yield self.signal(
                "dataset",
                score=score,
                confidence=0.6 if natural else 0.95,
                detail=detail,
                value=share,
                share=share,
                split=split.name,
                n_rows=split.n_rows,
                natural=natural,
            )

    def detect_deepchecks(self, artifact):
        """Deepchecks' duplicate share, less the share chance explains in the split it
        was measured on (the split whose own duplicate share it matches: the check runs
        on each split and reports the worse), as our own statistics do: coarse features
        repeat rows naturally."""
        dataset = artifact.dataset
        splits = [s for s in (dataset.train, dataset.test) if s is not None]
        for name in self.checks:
            check = artifact.check(name)
            if check is None or check.outcome != "not_passed" or not check.value:
                continue
            share = float(check.value)
            measured_on = min(splits, key=lambda s: abs(s.duplicate_fraction - share))
            expected = chance_copies(artifact, measured_on)
            excess = max(share - expected, 0.0)
            natural = expected >= 0.5 * share
            score = interp(excess, DUPLICATE_SCORE) * (NATURAL_FACTOR if natural else 1.0)
            if score > 0:
                yield self.check_signal(
                    check, score=score, confidence=0.7, share=share, expected=expected
                )

    def title(self, signals, artifact):
        share = self.fact(signals, "share", 0.0)
        split = self.fact(signals, "split", "training")
        word = {"train": "training", "test": "test"}.get(split, split)
        n = self.fact(signals, "n_rows")
        count = f" ({round(share * n):,} of {n:,})" if n else ""
        return f"{pct(share)} of {word} {self.samples(artifact)} are exact duplicates{count}"

    def explanation(self, signals, artifact):
        share = self.fact(signals, "share", 0.0)
        text = (
            f"About {pct(share)} of the rows are exact copies of other rows. Each copy counts "
            "again during training, so the model gives those examples extra weight and learns a "
            "distorted picture of the data; cross-validation scores are inflated when copies fall "
            "on both sides of a fold. Copies usually come from a load that ran twice, a join "
            "that multiplied rows, or oversampling done by copying."
        )
        if self.fact(signals, "natural"):
            text += (
                " Here the features take few distinct values, so part of the repetition is "
                "expected and the impact is limited."
            )
        return text
