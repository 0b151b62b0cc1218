"""outliers: samples far outside the bulk of the data."""

from __future__ import annotations

import math
import re

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, first_fact, interp, pct
from deepfix_agents.rules._ladder import (
    LADDER_SIGNAL,
    at_chance,
    baseline,
    cross_validated_ladder,
    refit_leaves_shortfall,
)
from deepfix_agents.rules._noise import NOISE_UNITS, beyond_noise
from deepfix_agents.rules._runtime import crash_detail, crash_score, crashes_for
from deepfix_agents.rules.prediction_drift import large_feature_shifts

#: share of a column's rows beyond 5 IQRs -> base score (heavy tails give up to ~1%)
FRACTION_SCORE = ((0.005, 0.0), (0.01, 0.2), (0.02, 0.35), (0.05, 0.55), (0.1, 0.7), (0.2, 0.8))
#: how far the extreme values sit from the bulk (see :func:`extremeness`) -> factor.
#: Natural heavy tails reach ~30; unit errors and sentinel codes (9999) reach hundreds.
EXTREMENESS_FACTOR = ((5.0, 0.3), (20.0, 0.6), (100.0, 1.0))
UNKNOWN_EXTREMENESS_FACTOR = 0.6
#: an image property (brightness, contrast, sharpness, ...) is bounded, so its outliers
#: are never far in magnitude; an image 5 IQRs from the bulk is still another kind of
#: image (blank, saturated, corrupt frame), so its extremeness counts at least this much
IMAGE_PROPERTY_EXTREMENESS = 0.8
#: added to the base when the model is scale-sensitive (linear, distance-based)
SCALE_SENSITIVE_BONUS = 0.1
#: added per further affected column (>= 1% outliers), up to MAX_COLUMN_BONUS
COLUMN_BONUS, MAX_COLUMN_BONUS = 0.05, 0.1
#: infinite values in a feature; a crash on them
INF_SCORE, INF_CRASH_SCORE = 0.6, 0.85
#: measured harm: refitting with the extreme values replaced by the median gains this share of the model's
#: skill over chance -> score (only when the gain exceeds 2 noise units)
CLIP_GAIN_SCORE = ((0.0, 0.2), (0.05, 0.45), (0.15, 0.65), (0.3, 0.85))
#: when neither the impute-and-refit nor the affected rows show harm beyond noise, the
#: outliers are reported at most at this score (low): heavy but natural tails
HARMLESS_CAP = 0.35
#: a harm measured without a size (worse affected rows; a refit gain for a model that
#: stays at chance) counts as this share of the skill (-> 0.45, medium)
UNSIZED_SHARE = 0.05
#: a group of flagged values set apart from the rest of its column by an empty interval of
#: at least this many decades on the log scale (``ColumnStats.outlier_gap``: a factor 10
#: with nothing in between) is a cluster of its own, the mark of a unit error or a
#: sentinel code; below it the flagged values continue the bulk: a natural heavy tail
SEPARATED_GAP = 1.0
#: ... and such a continuous tail that both harm measurements show harmless is reported
#: with this confidence: how extreme its values look (which a point mass at 0 inflates)
#: is no evidence of an error when the values form one continuous distribution and the
#: model is not hurt by them (the score stays capped at low; nothing is raised)
NATURAL_TAIL_CONFIDENCE = 0.4
#: confidence of a column whose flagged values form a cluster of their own, set apart from
#: the rest by an empty interval of :data:`SEPARATED_GAP` decades or more: no natural
#: distribution leaves a factor 10 with nothing in it and then a group of rows beyond it,
#: a unit slip (x1000) or a code does; that the values are errors is then as certain as
#: the statistics can make it, whether or not they harm this model (the score, which is
#: the harm, is not raised)
SEPARATED_CONFIDENCE = 0.95
#: Deepchecks' share of samples flagged by Outlier Sample Detection -> score (alone, at most low)
CHECK_SCORE = ((0.01, 0.0), (0.03, 0.15), (0.1, 0.3))
#: a numerically coded categorical column (a 1-5 rating) whose 99th percentile lies this
#: many times further from the median than its lower half's spread holds codes typed in
#: another unit (x1000) on at least 1% of the rows: counted as that share (the statistics
#: give no outlier share for categorical columns)
CODED_EXTREMENESS = 100.0
CODED_CATEGORY_SHARE = 0.01
#: training targets (regression) whose upper tail reaches this many times further from the
#: median than the test targets' does, at the 99th percentile *and* at the maximum: values
#: typed x10 or in another unit in the training labels only (a random split of one
#: population gives ratios near 1, up to ~2.2 with a small or noisy test split)
TARGET_TAIL_RATIO = 2.5
#: ... which cost this model its skill (it is no better than predicting the mean, within
#: noise): the corrupted training targets are the measured cause -> score (high)
TARGET_TAIL_SCORE = 0.7
#: one condition of Deepchecks' weakest segment: "<feature> in (<low>, <high>)"
_INTERVAL = re.compile(r"(?P<feature>.+) in \((?P<low>[^,()]+), (?P<high>[^,()]+)\)")


def extremeness(column) -> float | None:
    """How many times the distance from median to the lower (upper) 1% quantile the
    maximum (minimum) lies from the median. Measured against the *opposite* half so
    that a few percent of gross errors on one side cannot hide themselves by shifting
    the 99th percentile. A normal column gives ~1.5, skewed real data up to ~30."""
    values = (column.min, column.q01, column.q50, column.q99, column.max)
    if any(v is None for v in values):
        return None
    low, q01, q50, q99, high = values
    ratios = []
    if q50 > q01:
        ratios.append((high - q50) / (q50 - q01))
    if q99 > q50:
        ratios.append((q50 - low) / (q99 - q50))
    return max(ratios) if ratios else None


def coded_unit_error(column) -> bool:
    """Whether a categorical column coded with numbers (a 1-5 rating, a code list) holds
    codes typed in another unit: its 99th percentile lies :data:`CODED_EXTREMENESS` times
    further from the median than the lower half's spread (so at least 1% of the rows are
    affected). The statistics give no outlier share for categorical columns."""
    values = (column.q01, column.q50, column.q99)
    if any(v is None for v in values):
        return False
    q01, q50, q99 = values
    return q50 > q01 and (q99 - q50) / (q50 - q01) >= CODED_EXTREMENESS


def separated_cluster(column) -> bool:
    """Whether the flagged values of ``column`` include a group set apart from the rest
    by :data:`SEPARATED_GAP` decades or more on the log scale (``outlier_gap``): the
    mark a unit error or a code leaves, which a natural heavy tail (however long) does
    not, since it continues the bulk."""
    return column.outlier_gap is not None and column.outlier_gap >= SEPARATED_GAP


def _presence_confidence(column, ratio: float | None) -> float:
    """How sure the statistics are that ``column``'s extreme values are errors, not how
    much they harm: a separated cluster (:func:`separated_cluster`) is all but certain,
    values hundreds of times further out than the bulk's spread (unit errors, sentinel
    codes) are likely, anything else may still be a genuine heavy tail."""
    if separated_cluster(column):
        return SEPARATED_CONFIDENCE
    return 0.9 if ratio is not None and ratio >= 100 else 0.7


def target_tail(artifact) -> dict | None:
    """The training targets' upper tail against the test targets' (regression): how many
    times further from the median the 99th percentile and the maximum lie in train than
    in test, when both ratios reach :data:`TARGET_TAIL_RATIO`; else None."""
    if artifact.task != "regression":
        return None
    dataset = artifact.dataset
    if dataset.train is None or dataset.test is None:
        return None
    train, test = dataset.train.label_stats or {}, dataset.test.label_stats or {}
    keys = ("q50", "q99", "max")
    if any(train.get(k) is None or test.get(k) is None for k in keys):
        return None
    spread_q, spread_max = test["q99"] - test["q50"], test["max"] - test["q50"]
    if spread_q <= 0 or spread_max <= 0:
        return None
    ratio_q = (train["q99"] - train["q50"]) / spread_q
    ratio_max = (train["max"] - train["q50"]) / spread_max
    if min(ratio_q, ratio_max) < TARGET_TAIL_RATIO:
        return None
    return {"ratio": min(ratio_q, ratio_max), "train": train, "test": test}


def tail_follows_features(artifact) -> bool:
    """Whether the training targets, their tail included, are predictable from the
    features: a rung of the baseline ladder (fitted on those same training targets)
    beats the dummy's cross-validated score, and 0, by ``LADDER_SIGNAL``.

    Targets typed x10 (or in another unit) on a few percent of the training rows are
    errors picked at random with respect to the features, and being 10x the bulk they
    carry most of the training targets' variance: no model can predict them, so every
    rung of the ladder scores at or below the dummy in cross-validation on those rows.
    A natural heavy tail (counts: the patients with a high baseline count have many
    seizures) is part of the signal, and a simple rung learns it. A model at chance on
    such data was not put there by the tail, however far it reaches beyond the test
    targets' (a small test split of a heavy-tailed or clustered target often misses its
    few extreme cases): the co-occurrence is no measured harm of the tail."""
    dummy = baseline(artifact, "dummy")
    reference = max(dummy.cv_score if dummy is not None and dummy.cv_score is not None
                    else 0.0, 0.0)
    return any(b.cv_score - reference >= LADDER_SIGNAL for b in cross_validated_ladder(artifact))


def continuous_tail(columns, n_rows: int | None = None) -> bool:
    """Whether every column with extreme values (in one split of ``n_rows`` rows) is
    numeric and its flagged values continue the bulk on the log scale: no group of them
    lies :data:`SEPARATED_GAP` decades or more beyond the rest (``ColumnStats.outlier_gap``).
    Unknown gaps (older artifacts, Spark statistics, coded categoricals) are not
    continuous: the confidence then stays as the values' extremeness sets it, except the
    gap of a lone flagged value (:func:`lone_flagged_value`), which is no group at all."""
    return bool(columns) and all(
        c.kind == "numeric"
        and (
            c.outlier_gap < SEPARATED_GAP
            if c.outlier_gap is not None
            else lone_flagged_value(c, n_rows)
        )
        for c in columns
    )


#: the statistics measure a gap only under a group of at least this many flagged rows
#: (``testing.stats.columns._GAP_MIN_ROWS``): a lone value is never a separated group
GAP_MIN_ROWS = 2
#: ... and a lone flagged value counts as the tail's end only while the column's extremes
#: stay within what natural heavy tails reach (:data:`EXTREMENESS_FACTOR`: unit errors and
#: sentinel codes reach hundreds)
LONE_VALUE_EXTREMENESS = 100.0


def lone_flagged_value(column, n_rows: int | None) -> bool:
    """Whether the split holds a single value beyond the fences of ``column`` (fewer than
    :data:`GAP_MIN_ROWS`), within natural extremeness (:func:`extremeness` under
    :data:`LONE_VALUE_EXTREMENESS`). The statistics leave its gap unknown because a
    separated group needs at least two rows: one value past the fences is the end of the
    column's tail (a long career, a large county), not a cluster that a unit error or a
    code leaves on every row it hits; unknown here means no group, not an unknown one."""
    if not n_rows or column.outlier_fraction is None:
        return False
    if round(column.outlier_fraction * n_rows) >= GAP_MIN_ROWS:
        return False
    ratio = extremeness(column)
    return ratio is not None and ratio < LONE_VALUE_EXTREMENESS


def measured_harm(artifact):
    """(clip intervention, affected-rows intervention, harmful?, clip gain as a share of
    the model's skill over chance, sized?), or None when nothing was measured.

    The gain is *sized* (:func:`sized_gain`) when the impute-and-refit gains beyond
    :data:`NOISE_UNITS` noise units and the refitted model has skill over chance to take
    a share of; a refit that stays within noise of chance (or below it) shows a real
    gain without a skill to measure it against (a share of ~0 blows up), so the gain
    counts like worse affected rows: harmful, at the floor share. Worse affected rows
    count only when the rows were picked by a corruption, not by a natural tail's
    genuine values (:func:`selected_by_value`)."""
    clip = artifact.intervention("impute_outliers")
    rows = artifact.intervention("affected_rows")
    if clip is not None and clip.change is None:
        clip = None
    if rows is not None and rows.change is None:
        rows = None
    if clip is None and rows is None:
        return None
    gain_share, harmful = 0.0, False
    chance = artifact.intervention("chance_level")
    sized = sized_gain(clip, chance)
    if natural_tail_gain(artifact, clip, rows):
        # a gain on a natural tail whose rows are predicted as well as the rest (or too
        # few to compare): no harm of the values (see natural_tail_gain)
        sized = False
    elif sized:
        gain_share, harmful = clip.change / (clip.score_after - _chance_floor(chance)), True
    elif clip is not None and beyond_noise(clip):
        gain_share, harmful = UNSIZED_SHARE, True
    if rows is not None and beyond_noise(rows) and not selected_by_value(artifact, rows):
        harmful = True
        gain_share = max(gain_share, UNSIZED_SHARE)
    return clip, rows, harmful, gain_share, sized


def imputing_leaves_shortfall(artifact) -> bool:
    """Whether the model, refitted with the extreme values imputed (``impute_outliers``),
    gains score but still trails the best rung of the baseline ladder on test by more
    than it gained (:func:`_ladder.refit_leaves_shortfall`).

    Extreme values explain a model's shortfall against the ladder only as far as
    removing them closes it (the reading ``unused_features`` applies to noise columns).
    A model too simple for the data (a k-NN averaging 150 neighbours) gains a little
    when the values that squash its scaled distances are imputed, and that gain, against
    a skill near zero, is a large share of its skill; but it stays far behind a tree
    fitted on the same extreme values: the shortfall is the model's own, and
    underfitting keeps its own finding instead of being folded in as a symptom."""
    return refit_leaves_shortfall(artifact, artifact.intervention("impute_outliers"))


def imputing_leaves_chance(artifact) -> bool:
    """Whether the model is no better than chance and its refit with the extreme values
    imputed (``impute_outliers``) still is: its score stays within :data:`NOISE_UNITS`
    noise units of chance (or below it), whatever it gained (:func:`sized_gain` false).

    What left a model at chance lifts it off chance once removed. A refit that gains a
    little below chance (a surrogate on permuted labels going from 0.08 to 0.13 against
    a chance level of 0.16) measures noise around chance, not the cause of it: the chance
    finding keeps its own name (labels unrelated to the rows, a model that learned
    nothing) instead of being folded into the outliers as their symptom."""
    chance = at_chance(artifact)
    clip = artifact.intervention("impute_outliers")
    if chance is None or clip is None or clip.change is None:
        return False
    return not sized_gain(clip, chance)


#: the refit without a training-target tail counts as still at chance when it leads its
#: own chance level by no more than this many noise units: a veto of the tail needs the
#: refit *at* chance, and a lead of one to two units is ambiguous (the tail keeps the
#: blame it had before that refit was measured)
TAIL_REFIT_NOISE_UNITS = 1.0


def tail_refit_stays_at_chance(artifact) -> bool:
    """Whether the model, refitted without the training rows whose target lies above
    every test target (``drop_target_tail``), stays within noise of chance: its score
    leads predicting the mean of the kept training targets (``chance_after``) by no more
    than :data:`TAIL_REFIT_NOISE_UNITS` times the noise of that lead (``noise_after``).
    False when that refit was not measured. The refit is read against its own chance level, not the
    model's: the mean of training targets typed x10 is itself pulled off, and a model
    that far off scores so badly that the noise of its score would hide any refit.

    Targets typed x10 on a few training rows pull every fit towards them, and a model
    refitted without them leaves chance. A training tail that only this test split
    misses (a small test split of counts) is no such error: when the labels themselves
    carry no signal (replaced by noise, misaligned with their rows) the refit without
    the tail is at chance as well, and the chance-level finding keeps its own name
    instead of blaming the tail."""
    trimmed = artifact.intervention("drop_target_tail")
    chance_after = trimmed.values.get("chance_after") if trimmed is not None else None
    if trimmed is None or trimmed.score_after is None or chance_after is None:
        return False
    margin = TAIL_REFIT_NOISE_UNITS * trimmed.values.get("noise_after", 0.0)
    return trimmed.score_after - chance_after <= margin


def _tail_refit_words(trimmed) -> str:
    """The refit without the training-target tail, in words ("" when not measured)."""
    if trimmed is None or trimmed.change is None:
        return ""
    dropped = int(trimmed.values.get("n_dropped", 0))
    return (
        f"; refitted without the {dropped} training rows above every test value, the "
        f"{'clone' if trimmed.model_used == 'clone' else 'surrogate'} scores "
        f"{trimmed.score_after:.3f} against {trimmed.score_before:.3f} on every row"
    )


def extreme_columns(artifact) -> set[str]:
    """The columns the outlier statistics flag in either split: at least 0.5 % of values
    beyond the fences, or any infinity (what this rule's finding is about, and so all a
    cause that explains it may account for)."""
    return {
        c.name
        for split in (artifact.dataset.train, artifact.dataset.test)
        if split is not None
        for c in split.columns
        if (c.outlier_fraction or 0) >= 0.005 or c.n_inf > 0
    }


def _named_tails_continuous(artifact, target: str) -> bool:
    """Whether every column an intervention names (``target``: comma-separated) that has
    values beyond the fences, in either split, continues the bulk on the log scale
    (:func:`continuous_tail`)."""
    names = set(target.split(","))
    flagged = [
        (split, [c for c in split.columns if c.name in names and (c.outlier_fraction or 0) > 0])
        for split in (artifact.dataset.train, artifact.dataset.test)
        if split is not None
    ]
    flagged = [(split, columns) for split, columns in flagged if columns]
    return bool(flagged) and all(
        continuous_tail(columns, split.n_rows) for split, columns in flagged
    )


def selected_by_value(artifact, rows) -> bool:
    """Whether the affected-rows comparison picks its rows by a genuine value rather than
    by a corruption: every column it flags (``rows.target``, in either split) continues
    the bulk on the log scale (:func:`continuous_tail`: no separate cluster as a unit
    error or a code leaves). The comparison uses the model's own predictions, no
    counterfactual. Rows hit by a unit error or a code are ordinary rows with a corrupted
    value, picked at random with respect to the label, so their excess error is the
    values' doing. Rows in a natural heavy tail are other cases (the days of heavy rain),
    picked by a value that relates to the label; a model failure that is no fault of the
    values (a collapsed model, a shifted threshold, a missing scaler) errs on them more
    simply because their labels differ from the rest's. Their excess error then compares
    cases, not the values' effect, and only the impute-and-refit (which removes the
    values and keeps the rows) can show harm."""
    return _named_tails_continuous(artifact, rows.target)


def natural_tail_gain(artifact, clip, rows) -> bool:
    """Whether a sized impute-and-refit gain was measured on a natural tail, where it is
    no evidence of erroneous values: every column the refit imputed continues the bulk on
    the log scale (:func:`continuous_tail`: no separate cluster as a unit error or a code
    leaves) *and* the test rows holding the values are not predicted worse than the rest
    (within :data:`NOISE_UNITS` noise units), or are too few to compare (under the 10 the
    testing step needs: nothing then shows the model failing where the values are, and
    the gain alone, on genuine values, is the model's handling of a long tail).

    Replacing genuine values by the median throws their information away; when the
    refit still gains a few noise units, the gain comes from how this model copes with
    a long tail (a variance-sensitive fit, a model already damaged by another fault that
    any change of its inputs nudges), not from values that are wrong: the rows that hold
    them are not where the model fails. Values typed in another unit or a code stand
    apart from the bulk (a gap of a power of 10), so they are never judged here and keep
    their sized gain."""
    if clip is None or not beyond_noise(clip):
        return False
    if rows is None and not too_few_to_compare(artifact, clip.target):
        return False
    if rows is not None and beyond_noise(rows):
        return False
    return _named_tails_continuous(artifact, clip.target)


#: the testing step compares the test rows holding extreme values with the rest only
#: when at least this many hold them (``testing.interventions.MIN_AFFECTED_ROWS``)
MIN_AFFECTED_ROWS = 10


def compared_by_count(artifact, target: str, n_test: int) -> bool:
    """Whether the testing step refitted with the values of ``target`` imputed but left
    out the comparison of the test rows holding them, and the statistics estimate fewer
    than all but :data:`MIN_AFFECTED_ROWS` test rows hold such values: the comparison
    was skipped because too few rows (by the training fences) hold them."""
    clip = artifact.intervention("impute_outliers", target)
    if clip is None or artifact.intervention("affected_rows") is not None:
        return False
    stats = [artifact.dataset.test.column(name) for name in target.split(",")]
    if any(c is None for c in stats):
        return False
    flagged = sum((c.outlier_fraction or 0.0) for c in stats) * n_test
    return flagged <= n_test - MIN_AFFECTED_ROWS


def too_few_to_compare(artifact, target: str) -> bool:
    """Whether the test split holds fewer than :data:`MIN_AFFECTED_ROWS` rows with
    extreme values in the columns ``target`` names (comma-separated; their flagged
    shares summed, an upper bound of the rows), so no comparison of those rows could be
    made: the reason an impute-and-refit comes without one. False without test
    statistics for them.

    The testing step counts the rows by the *training* fences (the refit's), the
    statistics by each split's own: the summed shares only estimate that count. When the
    refit was measured and the comparison was not, the testing step found fewer than
    :data:`MIN_AFFECTED_ROWS` such rows (or all but that many, which the estimate rules
    out): its own count, which the estimate cannot overrule."""
    test = artifact.dataset.test
    if test is None or not test.n_rows:
        return False
    if compared_by_count(artifact, target, test.n_rows):
        return True
    stats = [test.column(name) for name in target.split(",")]
    if any(c is None for c in stats):
        return False
    flagged = sum((c.outlier_fraction or 0.0) for c in stats) * test.n_rows
    return flagged < MIN_AFFECTED_ROWS


def harmless_by_both(artifact) -> bool:
    """Whether both harm measurements were taken and neither shows harm beyond noise:
    the test rows holding the extreme values are predicted as well as the rest *and*
    refitting with them imputed gains nothing. The rows are only measured when at least
    10 test rows hold such values; with fewer, "no harm" rests on one measurement (the
    refit), weaker evidence than two that agree, so the values' presence keeps its
    estimate on the signals (the finding is capped at low either way, see
    :meth:`Outliers.score`)."""
    harm = measured_harm(artifact)
    if harm is None:
        return False
    clip, rows, harmful, _, _ = harm
    return clip is not None and rows is not None and not harmful


def sized_gain(clip, chance=None) -> bool:
    """Whether the impute-and-refit measured a gain beyond :data:`NOISE_UNITS` noise
    units *and* the refitted model scores above chance by more than the chance
    measurement's noise units: the harm then has a size (its share of the model's skill,
    see :func:`measured_harm`), and that size is the finding's score."""
    if clip is None or clip.change is None or not beyond_noise(clip):
        return False
    margin = NOISE_UNITS * (chance.noise or 0.0) if chance is not None else 0.0
    return clip.score_after - _chance_floor(chance) > margin


def _chance_floor(chance) -> float:
    """The chance-level score the skill is measured from (0 without that measurement)."""
    return chance.score_before if chance is not None and chance.score_before is not None else 0.0


@register_rule
class Outliers(Rule):
    id = "outliers"
    name = "Extreme values far outside the bulk of the data"
    detects = (
        "Numeric features in which a noticeable share of rows lies more than 5 "
        "inter-quartile ranges outside the middle half, orders of magnitude away from the "
        "rest (unit errors, sentinel codes like 9999), or infinite values."
    )
    why = (
        "A few gross values dominate means, variances and squared losses: a scaler fitted on "
        "them squeezes every normal value into a tiny range, linear and distance-based models "
        "bend towards them, and predictions for normal rows suffer. They are usually errors, "
        "not rare truths."
    )
    example = (
        "For 5% of patients the size measurements were recorded in micrometres instead of "
        "millimetres (x1000); the standardised features of every other patient collapse to "
        "nearly the same value."
    )
    fixes = (
        (
            "Find the cause of the extreme values (unit changes, device error codes such as 9999 "
            "or -1, parsing errors) and correct or null them at load time: "
            "`df.loc[df['bmi'] > 100, 'bmi'] = np.nan`, then impute inside the pipeline."
        ),
        (
            "Make the pipeline robust: `RobustScaler` or `QuantileTransformer` instead of "
            "`StandardScaler`, clip to training quantiles (`np.clip(x, q01, q99)` learned on "
            "train), or use tree-based models that are insensitive to scale."
        ),
        (
            "Add a range validation step before training and inference that rejects physically "
            "impossible values, and replace `inf` with NaN: `df.replace([np.inf, -np.inf], np.nan)`."
        ),
        (
            "Only remove rows after checking that they are errors: genuine rare cases are often "
            "the ones that matter."
        ),
    )
    severity_policy = (
        "Per numeric feature: share of rows beyond 5 IQRs, 1% -> 0.2, 2% -> 0.35, 5% -> 0.55, "
        "10% -> 0.7, 20% -> 0.8; +0.1 for a scale-sensitive model, +0.05 per further affected "
        "column (up to +0.1); the sum is multiplied by how extreme the values are (max - median "
        "over median - 1st percentile): <= 5 -> x0.3, 20 -> x0.6, >= 100 -> x1.0, so heavy but "
        "natural tails stay low and unit errors or sentinel codes count fully; image properties "
        "(bounded: brightness, contrast, ...) count at least x0.8. Text and image properties "
        "are judged like features. Infinite values: "
        "0.6; a crash on them: 0.85. Deepchecks' Outlier Sample Detection (share of rows with "
        "LoOP probability >= 0.7) only corroborates what the statistics found (at most 0.3). "
        "Measured harm decides in the end (tabular): when test rows with extreme values are "
        "predicted no worse than the rest and refitting with the values beyond the training "
        "fences replaced by the median gains nothing beyond 2 noise units, the finding is capped at 0.35 "
        "(low); a gain beyond 2 noise units is scored by its share of the model's skill over "
        "chance (0 -> 0.2, 5% -> 0.45, 15% -> 0.65, 30% -> 0.85) and that measured score "
        "replaces the share-and-extremeness estimate (up or down). A gain for a model that "
        "stays within 2 noise units of chance after the refit has no skill to take a share "
        "of: like test rows with extreme values predicted worse, it counts as 5% (0.45) and "
        "the estimate from the values still applies. Worse test rows count as harm only "
        "when the flagged values stand apart from the rest (a unit error or a code hits "
        "rows regardless of their label); rows of a continuous natural tail are other "
        "cases whose labels differ too, so there only the refit can show harm. Conversely "
        "a refit gain on such a continuous tail whose test rows are predicted as well as the "
        "rest (or are too few, under 10, to compare: a refit the testing step made without "
        "that comparison found fewer) is no harm of the values either "
        "(imputing genuine values throws their "
        "information away; the rows that hold them are not where the model fails): both "
        "measurements then count as harmless. When both "
        "measurements were taken (at "
        "least 10 test rows hold extreme values) and neither shows harm, the statistics' "
        "signals themselves carry the 0.35 cap, and when moreover the flagged values "
        "continue the bulk on the log scale (a lone value past the fences, within natural "
        "extremeness, is no group; no empty gap of a factor 10 or more between "
        "them and the rest: a natural heavy tail, not a unit error or a code) their "
        "confidence drops from 0.7-0.9 to 0.4; the gap never raises a score, but a group of "
        "flagged values an empty factor 10 or more beyond the rest (a value no real row "
        "holds: a unit slip or a code) raises the confidence to 0.95, harmful or not."
    )
    explains = (
        "underfitting",
        "weak_segment",
        "poor_calibration",
        "feature_drift",
        "degenerate_predictions",
    )
    checks = ("Outlier Sample Detection",)
    modality_fixes = {
        "text": (
            "Look at the outlying texts (empty strings, texts hundreds of times longer than "
            "the rest, boilerplate, other languages) and drop or fix them at the source.",
            "Bound the input at training and inference the same way: strip markup, truncate "
            "to the model's length, and refuse empty texts with a clear error.",
            "If such texts are genuine, add enough of them to training so the model learns "
            "them, and monitor their share in production.",
        ),
        "image": (
            "Look at the outlying images (blank, saturated, corrupted, wrong orientation, "
            "another object altogether) and remove or re-acquire them.",
            "Add a quality gate at acquisition and inference: reject images whose brightness, "
            "contrast or sharpness fall outside the training range.",
            "If such images are genuine (night shots, glare), add labelled examples of them "
            "and train with matching augmentation (brightness/contrast jitter, blur).",
        ),
    }

    def detect_dataset(self, artifact):
        dataset = artifact.dataset
        features = set(dataset.input_columns)
        sensitive = artifact.model.scale_sensitive
        # measured harmless by both measurements: the presence estimate is capped on the
        # signals too (severity is measured harm), so whatever reads the signals' scores
        # (the learned calibration reads the strongest and the mean) sees the harm
        # measured on this model, not how extreme the values look
        cap = HARMLESS_CAP if harmless_by_both(artifact) else 1.0
        for split in (dataset.train, dataset.test):
            if split is None:
                continue
            fractions = {
                c.name: c.outlier_fraction
                for c in split.columns
                if c.name in features and c.kind == "numeric" and (c.outlier_fraction or 0) > 0
            }
            fractions.update(
                {
                    c.name: CODED_CATEGORY_SHARE
                    for c in split.columns
                    if c.name in features and c.kind != "numeric" and coded_unit_error(c)
                }
            )
            columns = [c for c in split.columns if c.name in fractions]
            affected = [c for c in columns if fractions[c.name] >= 0.01]
            scored = []
            for column in columns:
                base = interp(fractions[column.name], FRACTION_SCORE)
                if base <= 0:
                    continue
                ratio = extremeness(column)
                factor = (
                    UNKNOWN_EXTREMENESS_FACTOR
                    if ratio is None
                    else interp(ratio, EXTREMENESS_FACTOR)
                )
                if artifact.modality == "image" and column.name in dataset.property_names:
                    factor = max(factor, IMAGE_PROPERTY_EXTREMENESS)
                bonus = (SCALE_SENSITIVE_BONUS if sensitive else 0.0) + min(
                    COLUMN_BONUS * max(len(affected) - 1, 0), MAX_COLUMN_BONUS
                )
                scored.append(((base + bonus) * factor, column, ratio))
            if scored:
                score, column, ratio = max(scored, key=lambda t: (t[0], t[1].name))
                natural = cap < 1.0 and continuous_tail(columns, split.n_rows)
                share = fractions[column.name]
                detail = (
                    f"{pct(share)} of {split.name} {self.samples(artifact)} "
                    f"have {column.name!r} values that lie "
                    f"beyond 5 IQRs (median {column.q50:.4g}, max {column.max:.4g})"
                    if column.kind == "numeric"
                    else f"at least {pct(share)} of {split.name} {self.samples(artifact)} have "
                    f"{column.name!r} codes orders of magnitude beyond the rest (median "
                    f"{column.q50:.4g}, 99th percentile {column.q99:.4g}, max {column.max:.4g})"
                )
                if len(affected) > 1:
                    detail += f"; {len(affected)} features have >= 1% such rows"
                if sensitive:
                    detail += "; the model is scale-sensitive"
                if separated_cluster(column):
                    detail += (
                        f"; a group of them lies a factor {10 ** column.outlier_gap:.0f} beyond "
                        "the other values with nothing in between: values no real row holds "
                        "(a unit slip or a code)"
                    )
                if natural:
                    gap = (
                        f"widest gap a factor {10 ** column.outlier_gap:.1f}"
                        if column.outlier_gap is not None
                        else "a single value past the fences"
                    )
                    detail += (
                        f"; on the log scale they continue the bulk ({gap}, no separate "
                        "cluster) and neither harm measurement shows harm: a natural heavy tail"
                    )
                confidence = _presence_confidence(column, ratio)
                yield self.signal(
                    "dataset",
                    score=min(score, cap),
                    confidence=NATURAL_TAIL_CONFIDENCE if natural else confidence,
                    detail=detail,
                    value=share,
                    column=column.name,
                    share=share,
                    n_columns=max(len(affected), 1),
                    split=split.name,
                    extreme=ratio,
                    coded=column.kind != "numeric",
                    estimate=score,
                    gap=column.outlier_gap,
                    natural_tail=natural,
                )
            infinite = [c for c in split.columns if c.name in features and c.n_inf > 0]
            if infinite:
                worst = max(infinite, key=lambda c: (c.n_inf, c.name))
                yield self.signal(
                    "dataset",
                    score=INF_SCORE,
                    confidence=0.95,
                    detail=f"{worst.name!r} holds {worst.n_inf} infinite value(s) in {split.name}"
                    + (f" ({len(infinite)} features affected)" if len(infinite) > 1 else ""),
                    value=worst.n_inf,
                    inf_column=worst.name,
                    n_inf=worst.n_inf,
                )

    def detect_intervention(self, artifact):
        """What the outliers cost this model: the error on test rows holding them vs the
        rest, and a refit of the model with the columns clipped to their fences; and
        training targets far beyond any test target when the model is no better than
        chance (:meth:`_target_tail`)."""
        yield from self._target_tail(artifact)
        harm = measured_harm(artifact)
        if harm is None:
            return
        clip, rows, harmful, gain_share, sized = harm
        if not harmful and not any(s.score > 0 for s in self.detect_dataset(artifact)):
            return  # nothing to report and nothing to cap
        parts = []
        if rows is not None:
            parts.append(
                f"test rows with extreme values have {rows.metric.replace('_', ' ')} "
                f"{rows.score_after:.3f} vs {rows.score_before:.3f} on the rest "
                f"({rows.n_rows} rows; noise {rows.noise or 0:.3f})"
                + (": they are predicted as well as the rest" if not beyond_noise(rows)
                   else ": they are predicted worse, but their values continue the bulk (a "
                   "natural tail: rows picked by a genuine value differ from the rest in "
                   "their labels too, so this compares cases, not the values' effect)"
                   if selected_by_value(artifact, rows)
                   else ": they are predicted worse")
            )
        natural = natural_tail_gain(artifact, clip, rows)
        if clip is not None:
            parts.append(
                f"replacing the values of {clip.target.replace(',', ', ')} beyond the training "
                f"fences by the median and "
                f"refitting a {clip.model_used} of the model moved test {clip.metric} from "
                f"{clip.score_before:.3f} to {clip.score_after:.3f} (noise {clip.noise or 0:.3f})"
                + (", still within noise of chance: a gain with no skill to weigh it against"
                   if beyond_noise(clip) and not sized and not natural else "")
            )
        if natural:
            parts.append(
                "the values continue the bulk on the log scale (a natural tail) and the rows "
                + ("holding them are predicted as well as the rest" if rows is not None
                   else "holding them are too few on test (under 10) to show the model "
                   "failing there")
                + ", so the refit's gain shows no error in the values"
            )
        score = interp(gain_share, CLIP_GAIN_SCORE) if harmful else 0.0
        verdict = (
            "the extreme values harm the model" if harmful
            else "no measurable harm to this model: low"
        )
        yield self.signal(
            "intervention",
            score=score,
            confidence=0.7,
            detail="; ".join(parts) + f"; {verdict}",
            value=clip.change if clip is not None else rows.change,
            check="impute_outliers" if clip is not None else "affected_rows",
            harmful=harmful,
            sized=sized,
        )

    def _target_tail(self, artifact):
        """Regression labels typed in the wrong unit in the training split only: the
        training targets' tail reaches far beyond the test targets' (both at the 99th
        percentile and at the maximum, see :func:`target_tail`), and the model trained on
        them is no better than predicting the mean (the chance-level measurement). The
        harm is measured on this model, so the finding is high and takes the chance
        evidence (outliers explain underfitting); a tail without that harm is not
        reported (a genuine rare extreme in train is not a bug), nor is a tail that the
        features predict (:func:`tail_follows_features`): a natural heavy tail, which
        cannot be what left a model at chance."""
        tail = target_tail(artifact)
        if tail is None or tail_follows_features(artifact):
            return
        chance = at_chance(artifact)
        if chance is None or tail_refit_stays_at_chance(artifact):
            return
        train, test = tail["train"], tail["test"]
        target = artifact.dataset.target or "the target"
        yield self.signal(
            "intervention",
            score=TARGET_TAIL_SCORE,
            confidence=0.8,
            detail=(
                f"training values of {target!r} reach {train['max']:.4g} (99th percentile "
                f"{train['q99']:.4g}) while test values stop at {test['max']:.4g} (99th "
                f"percentile {test['q99']:.4g}): the training tail lies {tail['ratio']:.1f}x "
                f"further from the median; the model trained on them scores "
                f"{chance.score_after:.3f} on test, no better than chance "
                f"({chance.score_before:.3f} +/- {chance.noise or 0:.3f})"
                f"{_tail_refit_words(artifact.intervention('drop_target_tail'))}: the "
                "extreme training targets harm the model"
            ),
            value=tail["ratio"],
            check="chance_level",
            harmful=True,
            target_column=target,
            target_tail=tail["ratio"],
        )

    def explains_for(self, artifact):
        """Extreme values move a column's mean, so they explain drift *of their own
        columns*; a large shift of a column without outliers is an independent bug.
        Likewise they explain a weak segment only when the segment holds them: one tail
        of a column that has outliers (see :func:`segment_in_tail`); a weak segment in
        the bulk of the values, or on other columns, is another bug. And they explain
        underfitting only as far as imputing them closes the model's shortfall against the
        ladder (:func:`imputing_leaves_shortfall`), and a model at chance only when imputing
        them lifts it off chance (:func:`imputing_leaves_chance`)."""
        extreme = extreme_columns(artifact)
        dropped = set()
        if any(name not in extreme for name in large_feature_shifts(artifact)):
            dropped.add("feature_drift")
        if segment_in_tail(artifact, extreme) is False:
            dropped.add("weak_segment")
        if imputing_leaves_shortfall(artifact) or imputing_leaves_chance(artifact):
            # the model stays weak with the values imputed: its shortfall is its own
            dropped.add("underfitting")
        return tuple(c for c in self.explains if c not in dropped)

    def measured_harmless(self, signals):
        measured = [s for s in signals if s.source == "intervention"]
        infinite = any("inf_column" in s.facts for s in signals)
        return bool(measured) and not infinite and not any(
            s.facts.get("harmful") for s in measured
        )

    def score(self, signals):
        """The pattern's score, capped at low when the measurement shows no harm (the
        infinite-value signals are not capped: a model cannot read ``inf``)."""
        target = [s.score for s in signals if "target_tail" in s.facts]
        features = [s for s in signals if "target_tail" not in s.facts]
        if not features:
            return max(target)
        best = max(s.score for s in features)
        measured = [s for s in features if s.source == "intervention"]
        infinite = [s.score for s in features if "inf_column" in s.facts]
        sized = [s.score for s in measured if s.facts.get("sized")]
        if measured and not any(s.facts.get("harmful") for s in measured):
            best = max([min(best, HARMLESS_CAP), *infinite])
        elif sized:
            # the impute-and-refit sized the harm: that size, not the share and
            # extremeness of the values, is the score (presence only estimates the harm
            # until it is measured)
            best = max([*sized, *infinite])
        # the features' extreme values capped when measured harmless; harm measured from
        # extreme training targets stands on its own
        return max([best, *target])

    def detect_runtime(self, artifact):
        for failure in crashes_for(artifact, self.id):
            counts = failure.inf_counts
            column = max(counts, key=lambda c: (counts[c], c)) if counts else None
            yield self.signal(
                "runtime",
                score=max(crash_score(failure), INF_CRASH_SCORE),
                confidence=0.9,
                detail=crash_detail(failure, counts, "inf"),
                inf_column=column,
                n_inf=counts.get(column, 0) if column else 0,
                crashed=True,
                crash_fix=(
                    f"Replace infinite values before predict ({column!r} holds "
                    f"{counts.get(column, 0)}): find the division or log that produced them, "
                    "or map +-inf to NaN and impute inside the pipeline."
                ),
            )

    def detect_deepchecks(self, artifact):
        """Outlier Sample Detection has no condition in the default suite (it passes unless
        it errors); its ``value`` is the share of sampled rows with a LoOP outlier
        probability >= 0.7. LoOP flags some rows in any data, so it only corroborates
        extreme values that the column statistics found."""
        check = artifact.check("Outlier Sample Detection")
        if check is None or check.outcome in ("skipped", "errored") or check.value is None:
            return
        if not any(s.score > 0 for s in self.detect_dataset(artifact)):
            return
        score = interp(check.value, CHECK_SCORE)
        if score > 0:
            detail = f"Deepchecks' LoOP flags {pct(check.value)} of the sampled rows as outliers"
            yield self.signal(
                "deepchecks",
                score=score,
                confidence=0.4,
                detail=detail,
                value=check.value,
                check=check.name,
                sample_share=check.value,
            )

    def title(self, signals, artifact):
        if self.fact(signals, "crashed"):
            return f"The model crashes on infinite values (e.g. in {self.fact(signals, 'inf_column')!r})"
        if self.fact(signals, "target_tail") is not None:
            tail = self.fact(signals, "target_tail")
            target = self.fact(signals, "target_column")
            also = self.fact(signals, "column")
            more = f" (and {also!r} holds extreme values)" if also is not None else ""
            return (
                f"Training values of {target!r} reach {tail:.1f}x further from the median than "
                f"the test values do, and the model trained on them is no better than "
                f"chance{more}"
            )
        # the values' presence as estimated before any cap (:func:`harmless_by_both`):
        # the title names the most extreme column whether or not it was measured harmless
        ordered = sorted(signals, key=lambda s: (-s.facts.get("estimate", s.score), -s.confidence))
        column = first_fact(ordered, "column")
        strongest = ordered[0]
        if column is not None and "inf_column" not in strongest.facts:
            share, n = first_fact(ordered, "share", 0.0), first_fact(ordered, "n_columns", 1)
            more = f" (and {n - 1} more feature(s))" if n > 1 else ""
            if column in artifact.dataset.property_names:
                what = self.samples(artifact)
                more = f" (and {n - 1} more properties)" if n > 1 else ""
                return f"{pct(share)} of {what} are extreme outliers in {column!r}{more}"
            least = "At least " if first_fact(ordered, "coded") else ""
            return f"{least}{pct(share)} of {column!r} values are extreme outliers{more}"
        inf_column = self.fact(signals, "inf_column")
        if inf_column is not None:
            return f"Feature {inf_column!r} holds {self.fact(signals, 'n_inf')} infinite value(s)"
        share = self.fact(signals, "sample_share", 0.0)
        return f"Deepchecks flags {pct(share)} of the samples as outliers"

    def explanation(self, signals, artifact):
        if self.fact(signals, "inf_column") is not None and self.fact(signals, "column") is None:
            return (
                "Some feature values are infinite (typically a division by zero or a log of 0 "
                "upstream). Most models reject them or produce meaningless predictions."
            )
        return (
            "Some rows hold values far outside the range of the rest, often by orders of "
            "magnitude, which points at recording errors such as wrong units or device error "
            "codes rather than rare real cases. They distort scaling and pull linear or "
            "distance-based models towards themselves, so predictions for ordinary rows get worse."
        )


def segment_in_tail(artifact, extreme: set[str]) -> bool | None:
    """Whether Deepchecks' weakest segment is one tail of a column with outliers (an
    interval open towards that tail, beyond the column's training median): the rows
    outliers can make weak. None when the segment is not known as numeric intervals (or
    the check did not flag it: the weak segment then comes from elsewhere)."""
    check = artifact.check("Weak Segments Performance")
    if check is None or check.outcome != "not_passed":
        return None
    text = (check.details or {}).get("weakest_segment")
    if not isinstance(text, str) or not text.strip():
        return None
    train = artifact.dataset.train
    intervals = []
    for part in text.split(" and "):
        found = _INTERVAL.fullmatch(part.strip())
        if found is None:
            return None
        try:
            low, high = float(found["low"]), float(found["high"])
        except ValueError:
            return None
        intervals.append((found["feature"].strip(), low, high))
    for feature, low, high in intervals:
        column = train.column(feature) if train is not None else None
        if feature not in extreme or column is None or column.q50 is None:
            continue
        if (math.isinf(high) and high > 0 and low > column.q50) or (
            math.isinf(low) and low < 0 and high < column.q50
        ):
            return True
    return False
