"""missing_values: nulls, NaN and mixed null markers in features or labels."""

from __future__ import annotations

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, interp, pct
from deepfix_agents.rules._noise import NOISE_UNITS, beyond_noise
from deepfix_agents.rules._runtime import crash_detail, crash_score, crashes_for
from deepfix_agents.rules.outliers import extreme_columns

#: share of missing cells in the worst informative column -> score
COLUMN_SCORE = ((0.01, 0.1), (0.05, 0.25), (0.2, 0.45), (0.5, 0.6), (0.9, 0.7), (1.0, 0.75))
LABEL_SCORE = ((0.0, 0.3), (0.05, 0.5), (0.2, 0.7))
#: a disguised missing value (0 / -999 spike) whose imputation and refit gains this
#: share of the model's skill over chance -> score (only beyond 2 noise units)
SENTINEL_GAIN_SCORE = ((0.0, 0.3), (0.05, 0.45), (0.15, 0.65), (0.3, 0.85))
SENTINEL_SHARE_BONUS = 0.1
#: a spike this many IQRs of the other values outside their range is a code, not a
#: value (0 for a blood pressure): reported from its share even without measured harm
ISOLATED_GAP = 0.5
#: a spike detached from the other values by at least this many of their IQRs (but
#: less than ISOLATED_GAP) is probably a code too (a real point mass such as zero
#: income sits next to the small values, < 0.1 IQR away); unmeasured, so reported at
#: most low (0 stored for a missing petal width sits 0.1 cm below the smallest one)
#: A spike next to the other values (less than DETACHED_GAP outside their range: a zero
#: experience beside one year's, as a real point mass sits) is confirmed as a code only by
#: what it does to the model. A code misleads the model where it stands: the rows holding
#: it are predicted from a wrong value, so that is where its harm shows. When those test
#: rows, compared (``sentinel_rows``), are predicted no worse than the rest beyond noise,
#: a refit that gains from rewriting the spike to the median shows something else (the
#: rewrite moves every cell holding it and changes the fit on every row), not a code
#: the model takes at face value: reported at most low (LOW_CAP), as an impute-and-refit
#: gain on a continuous natural tail whose rows are predicted as well as the rest is no
#: outlier harm (``outliers.natural_tail_gain``). A detached spike (a 0 beside values
#: that start at 40) keeps its measured gain: nothing natural sits there
DETACHED_GAP = 0.25
#: a spike held by more than this share of a column is its baseline value (a structural
#: zero: no charter schools, no rainfall), not the exception a missing-value code is:
#: its rows predicted worse than the minority of other rows measures that minority, so
#: only a gain from imputing it counts as harm, and at most low: replacing most of a
#: column by the minority's median is no imputation of a few lost cells but a rewrite of
#: the column's main distinction (rain / no rain), and a refit gaining from that says
#: something tied to the column hurts the model (a planted slice defined on it), not
#: that the majority is a code for a missing value
MAJORITY = 0.5
#: a spike found only by the relaxed tests (1.5x at the column's edge, a value just
#: outside an integer scale) is as often a natural point mass (no deductible, a zero
#: count), and the harm measured on one (worse rows, an imputation gain beyond noise)
#: is as often a segment the model handles badly: reported at most low
#: a column whose refit without it (held at its median: what imputing every cell does)
#: was measured bounds what its missing cells can cost: at most their share of that
#: loss (+ 2 noise units). Below this share of the model's skill over chance the cells
#: are measured harmless: no importance bonus, reported at low confidence (they are
#: there, the model does not suffer from them)
NEGLIGIBLE_SKILL = 0.01
NEGLIGIBLE_CONFIDENCE = 0.6
#: the model's own predictions on test rows with a gap vs the rest (``missing_rows``, no
#: refit) bound what the gaps cost the test score: the gap rows' share times their excess
#: error (+ 2 noise units), in error units (accuracy points, or MAE in target SDs). Under
#: one point of test error (half the 0.02 score drop the corpus counts as real harm) the
#: gaps are measured harmless: no importance bonus, capped at low, confidence 0.6. A
#: noisy comparison (few gap rows) or many affected rows never passes: absence of
#: evidence is not evidence of no harm
NEGLIGIBLE_ERROR = 0.01
#: gaps confined to the training split (the column is complete on test: a series that
#: starts later, a stock listed after the first training month) meet no test row, so no
#: test prediction is made from an imputed value and the test score carries no cost of a
#: gapped row; their only path to harm is the fit, which the testing step does not
#: measure (``missing_rows`` needs gapped test rows) unless a refit with the column held
#: at its median bounds it (``drop_feature``, :func:`missing_harm_bound`). Unmeasured,
#: their share alone is presence, not harm: reported at most low (LOW_CAP), at the
#: confidence of an unmeasured finding, and without the importance bonus. Gaps on both
#: splits (what a lost or coded measurement makes) keep the test split's signal and its
#: measurement.
#:
#: The same confidence goes to any gaps nothing measured (no refit bounding them, no
#: comparison of gapped test rows: fewer than the 10 the testing step needs): their share
#: still sets the score (lost cells are a defect in proportion to their share), but the
#: finding is presence, not measured harm, and would otherwise rank as sure as one where
#: harm was measured (3% natural gaps in a few yearly rates on a 61-row test split, 2
#: gapped test rows, ranked first at conf 0.95 over planted bugs of the same severity).
#: So does a column whose own gapped test rows were too few to compare, where only the
#: pooled comparison (test rows with a gap in any column, ``missing_rows`` ``*``) was made
#: and shows them predicted no worse beyond noise, with no refit bounding the column:
#: that comparison reads the gaps of every column at once, and, inconclusive, says nothing
#: about this one (natural survey gaps of 3-6% scattered over 14 columns of a 123-row test
#: split: no column reaches the 10 gapped rows a comparison of its own needs). Gapped rows
#: of the pool predicted worse beyond noise still count as measured harm.
UNMEASURED_CONFIDENCE = 0.6
#: a column missing in more than half of a split's rows is a measurement most rows do not
#: have (a figure recorded less often than the rows, a series that begins mid-sample), not a few
#: lost cells: its missing share says how many rows the measurement does not cover, not how
#: much the model loses (the same reasoning as a spike held by most of its column,
#: :data:`MAJORITY`). What the gaps cost is then only what is measured: the test rows with
#: a gap predicted worse than the rest beyond 2 noise units (``missing_rows``), or a refit
#: bounding them (``drop_feature``). When the gapped test rows compared are themselves most
#: of the test rows, their comparison with the rest says how the minority that has the
#: measurement is predicted (married women, with a husband's schooling recorded), a
#: different kind of row, not what lost cells cost: as for a spike held by most of its
#: column, it is not counted as harm (:func:`majority_rows`). Compared and not worse beyond
#: noise (or compared on a majority of the rows), with no refit,
#: it is reported at most low (LOW_CAP), confidence 0.6, no importance bonus, and the
#: finding names the next column whose gaps score higher, if any (lost cells in a minority
#: of rows keep their share's score). Too few gapped test rows to compare is no measured
#: harm either (as for gaps confined to training). An entirely empty column (EMPTY) is not
#: a sparse measurement but one the split lacks, and keeps its share's score
#: Whether a column is such a measurement is a property of the column, not of one split,
#: so the share read is the larger of the two splits' (:func:`sparse_share`): a column
#: most training rows lack was learnt as a sparse measurement, and a split that reorders
#: or copies rows (a random split of a series, shuffled order, test rows copied from
#: training) can put the same measurement at a minority share in the other split without
#: turning its absence into lost cells (a stock listed mid-sample: 52% of training rows
#: and 28% of test rows without it). A split where the column is entirely empty (EMPTY)
#: does not count: it lacks the column rather than measuring it sparsely
MAJORITY_GAP = 0.5
#: a column at least this empty in a split holds no value at all there
EMPTY = 0.999
#: "reported at most low" (detached and relaxed spikes, gaps measured harmless): the
#: highest score still in the low band (medium starts at 0.4)
LOW_CAP = 0.35
#: A spike whose rows are ordinary rows is a code, whatever its place in the column. The
#: testing step measures, on the training sample (:mod:`spike_typicality`), how well the
#: other features predict the column among the rows without the spike (cross-validated
#: R^2) and how well they tell the spike's rows from the rest (cross-validated AUC). A
#: real value is a fact about its row: where the other features carry the column
#: (R^2 >= PREDICTABLE_R2), a natural point mass's rows stand apart (zero children:
#: young, unmarried; AUC 0.8-1.0). A code written wherever a value was lost sits on
#: ordinary rows: AUC within TYPICAL_MARGIN (or NOISE_UNITS of its noise, if more) of
#: 0.5. Such a spike is a confirmed code: without measured harm it is still reported,
#: at low (the lost values are there, and the model reads them as a real 0), where a
#: spike inside the range that imputing does not help was not reported at all. The caps
#: on a measured gain (a spike next to the other values, one found by the relaxed
#: tests) stay: lifted for confirmed codes they gave nothing on DEV and one clean
#: alarm (22% zero experience in Griliches' wages, rows at AUC 0.60, whose imputing
#: refit gained 2.5 noise units: a natural point mass the typicality test cannot tell
#: from a code). A spike held by most of its column (MAJORITY) is not read this way:
#: its rows are most rows
PREDICTABLE_R2 = 0.25
TYPICAL_MARGIN = 0.15
CODE_CONFIDENCE = 0.8
#: the testing step compares at most this many (sampled) test rows
#: (``mlflow_deepfix.testing.interventions.MAX_TEST_ROWS``)
MAX_TEST_ROWS = 4000


def missing_harm_bound(artifact, column, share):
    """Upper bound of what ``share`` missing cells of ``column`` cost the model, as a
    share of its skill over chance, from the refit with the column held at its median
    (``drop_feature``); None when that was not measured or the model has no skill."""
    dropped = artifact.intervention("drop_feature", column)
    chance = artifact.intervention("chance_level")
    if dropped is None or chance is None or dropped.score_before is None or dropped.score_after is None:
        return None
    if chance.score_before is None or chance.score_after is None:
        return None
    skill = chance.score_after - chance.score_before
    if skill <= 0:
        return None
    loss = max(dropped.score_before - dropped.score_after, 0.0) + NOISE_UNITS * (dropped.noise or 0.0)
    return share * loss / skill


def missing_rows_bound(artifact, column):
    """(intervention, bound): the ``missing_rows`` comparison for ``column`` (else over
    rows with any gap) and the most its gaps cost the test score, in error units: the
    share of test rows with a gap times their excess error over the rest + 2 noise units;
    None when not measured."""
    measured = artifact.intervention("missing_rows", column) or artifact.intervention("missing_rows", "*")
    if measured is None or measured.score_before is None or measured.score_after is None:
        return None
    rows = compared_test_rows(artifact)
    if not rows or not measured.n_rows:
        return None
    share = min(measured.n_rows / rows, 1.0)
    excess = max(measured.score_after - measured.score_before, 0.0)
    return measured, share * (excess + NOISE_UNITS * (measured.noise or 0.0))


def compared_test_rows(artifact) -> int:
    """How many test rows the testing step's row comparisons read: the test split, at most
    :data:`MAX_TEST_ROWS` (0 without a test split)."""
    test = artifact.dataset.test
    return min(test.n_rows, MAX_TEST_ROWS) if test is not None else 0


def majority_rows(artifact, rows) -> bool:
    """Whether a ``missing_rows`` comparison's gapped test rows are more than half of the
    test rows it read: the comparison then sets the majority against the minority that has
    the measurement, and its difference measures that minority (see :data:`MAJORITY_GAP`)."""
    compared = compared_test_rows(artifact)
    return bool(compared) and rows.n_rows > MAJORITY_GAP * compared


def sparse_share(artifact, stats):
    """The larger of ``stats``' missing share and the same column's share in the other
    split: whether a column is a measurement most rows lack is a property of the column,
    not of one split (see :data:`MAJORITY_GAP`)."""
    shares = [stats.missing_fraction]
    for split in (artifact.dataset.train, artifact.dataset.test):
        other = split.column(stats.name) if split is not None else None
        if other is not None and other.missing_fraction < EMPTY:
            shares.append(other.missing_fraction)
    return max(shares)


def structural_marker(artifact, column):
    """The ``sentinel_rows`` comparison of another column whose rows are exactly the test
    rows with a gap in ``column`` (same count, same error on both sides), else None.

    Such gaps are structural: the value does not exist for those rows (no age at first
    birth for a woman with no child, where ``children_born`` is 0), and another input the
    model reads already says which rows they are. Nothing was lost that an imputation
    could give back, and the gapped rows' own error measures a different kind of row
    (childless women), not a value the model misses: without a refit bounding the gaps,
    reported at most low (:data:`LOW_CAP`), confidence 0.6, no importance bonus. Lost
    cells (at random, above the median) fall on rows no other column singles out."""
    gaps = artifact.intervention("missing_rows", column)
    if gaps is None or gaps.score_before is None or gaps.score_after is None or not gaps.n_rows:
        return None
    for spike in artifact.interventions:
        if spike.kind == "sentinel_rows" and spike.target != column and same_rows(spike, gaps):
            return spike
    return None


def same_rows(a, b) -> bool:
    """Whether two affected-rows comparisons read the same test rows, as far as their
    records tell: the same count and the same error on both sides (the rows themselves
    are never recorded). ``b`` must hold both scores."""
    return (
        a.n_rows == b.n_rows
        and a.score_before is not None
        and a.score_after is not None
        and abs(a.score_before - b.score_before) < 1e-9
        and abs(a.score_after - b.score_after) < 1e-9
    )


def shared_spike(artifact, rows):
    """The ``sentinel_rows`` comparison of another column's natural point mass (a spike
    found only by the relaxed tests: a zero count beside the column's other common
    values) whose test rows are exactly those of ``rows`` (a spike's own comparison):
    same count, same error on both sides; else None.

    A spike that falls row for row on another column's natural zero is a value that
    does not exist for those rows, not a lost one: no cumulative GPA before a student's
    first term, where the hours before it are 0. The zero is structural (the same
    reasoning as gaps on the rows another column's spike marks, :func:`structural_marker`):
    another input already says which rows they are, by a value that is real there, so
    the model is not misled into reading a code as a measurement, and neither the rows'
    error (it measures that kind of row) nor a refit's gain from rewriting the column to
    the median (it moves those rows among the others, a change of representation, while
    the other column still marks them) is a missing value's harm: reported at most low
    (:data:`LOW_CAP`). A lost record that codes several columns on the same rows writes
    a value none of them otherwise holds that often (each a strong spike, not a natural
    point mass), so it keeps its measured harm."""
    if rows is None or rows.score_before is None or rows.score_after is None or not rows.n_rows:
        return None
    for other in artifact.interventions:
        if (
            other.kind == "sentinel_rows"
            and other.target != rows.target
            and other.values.get("relaxed", 0.0)
            and same_rows(other, rows)
        ):
            return other
    return None


def complete_on_test(artifact, column):
    """True when the test split exists, holds ``column`` and has no gap in it (and no
    ``missing_rows`` comparison was made for it, which needs gapped test rows): the
    column's gaps are confined to training (see :data:`UNMEASURED_CONFIDENCE`)."""
    test = artifact.dataset.test
    if test is None or not test.n_rows or artifact.intervention("missing_rows", column) is not None:
        return False
    stats = test.column(column)
    return stats is not None and stats.missing_fraction == 0


def coded_spike(imputed) -> bool:
    """Whether the spike refitted by ``imputed`` sits on ordinary rows of a column the
    other features predict: a code for lost values, not a natural point mass (see
    :data:`PREDICTABLE_R2`)."""
    values = imputed.values
    auc, r2 = values.get("rows_auc"), values.get("column_r2")
    if auc is None or r2 is None or values.get("share", 0.0) > MAJORITY:
        return False
    margin = max(TYPICAL_MARGIN, NOISE_UNITS * values.get("rows_auc_noise", 0.0))
    return r2 >= PREDICTABLE_R2 and auc <= 0.5 + margin


def _ordinary_rows_words(imputed) -> str:
    """The typicality measurement in words, for a finding's evidence."""
    values = imputed.values
    return (
        f"the other features predict {imputed.target!r} elsewhere (cross-validated R² "
        f"{values['column_r2']:.2f}) but cannot tell the rows holding "
        f"{values.get('value', 0.0):g} from the rest (AUC {values['rows_auc']:.2f}): "
        "they are ordinary rows whose value was lost, not rows where the value is real"
    )


def harmful_sentinels(artifact):
    """[(column, value, share, impute intervention, rows intervention, gain share)] for
    spikes whose imputation helps or whose rows are predicted worse, beyond noise."""
    chance = artifact.intervention("chance_level")
    floor = chance.score_before if chance is not None and chance.score_before is not None else 0.0
    found = []
    for imputed in artifact.interventions:
        if imputed.kind != "impute_sentinel" or imputed.change is None:
            continue
        rows = artifact.intervention("sentinel_rows", imputed.target)
        gain = imputed.change if beyond_noise(imputed) else 0.0
        worse = (
            rows is not None
            and rows.change is not None
            and imputed.values.get("share", 0.0) <= MAJORITY
            and beyond_noise(rows)
        )
        if gain <= 0 and not worse:
            continue
        share_of_skill = gain / max(imputed.score_after - floor, 1e-6) if gain > 0 else 0.0
        found.append(
            (
                imputed.target,
                imputed.values.get("value", 0.0),
                imputed.values.get("share", 0.0),
                imputed,
                rows,
                share_of_skill,
            )
        )
    return found


def absent_from_test(artifact, column, value) -> bool:
    """Whether no test row can hold the spike ``value`` of ``column``: the test split
    holds the column with values, and ``value`` lies outside their range.

    A code misleads the model where it stands, on the rows holding it (see
    :data:`DETACHED_GAP`); a value no test row holds misleads no test prediction. A refit
    that gains from rewriting it in training then measures what moving those training rows
    does to the fit against a test split without them (a test split shifted off the
    value: 1996 earnings of 0 in training, none below 2.2 on test), not a code the model
    takes at face value: reported at most low (:data:`LOW_CAP`). A planted or real code
    is written into every split, and its test rows are compared (``sentinel_rows``)."""
    test = artifact.dataset.test
    stats = test.column(column) if test is not None and test.n_rows else None
    if stats is None or stats.min is None or stats.max is None or stats.missing_fraction >= EMPTY:
        return False
    return value < stats.min or value > stats.max


def adjacent_gain(imputed, rows) -> bool:
    """Whether a spike's imputing refit gains while the spike sits next to the column's
    other values (less than DETACHED_GAP of their IQRs outside their range) and its own
    test rows, compared, are predicted no worse than the rest beyond noise: reported at
    most low (see :data:`DETACHED_GAP`)."""
    return (
        imputed.values.get("gap", 0.0) < DETACHED_GAP
        and rows is not None
        and rows.change is not None
        and not beyond_noise(rows)
    )


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
        "importance above average); when a refit with that feature held at its median was measured, "
        "its missing cells cost at most their share of that loss (+ 2 noise units): under 1% of "
        "the model's skill over chance they are harmless to it (no importance bonus, "
        "confidence 0.6); likewise when the model's own test predictions bound them: the share of "
        "test rows with a gap times their excess error over the other rows (+ 2 noise units) under "
        "one point of test error (accuracy, or MAE in target SDs) caps the finding at low "
        "(no importance bonus, confidence 0.6); gaps confined to the training split (the column "
        "complete on test) meet no test row: without a refit bounding them, at most low (0.35, no "
        "importance bonus, confidence 0.6); gaps nothing measured (no refit bound, too few gapped "
        "test rows to compare) keep their share's score (no importance bonus: a column's weight "
        "is presence, not harm) at confidence 0.6, as do gaps only the pooled comparison (test rows "
        "with a gap in any column: the column's own were too few to compare) read and did not find "
        "worse beyond 2 noise units; gaps on exactly the test rows that hold a spike value of another column (the value does "
        "not exist for them: no age at first birth without a child, where the number of children "
        "is 0) are structural, nothing an imputation could give back: without a refit bound, at "
        "most low (0.35, no importance bonus, confidence 0.6); a column missing in more than half (not all) of "
        "either split's rows is a measurement most rows lack, not lost cells (in both splits, "
        "whatever share a reordered or copied split leaves in the other): unless its gapped test rows "
        "(a minority of the test rows: a majority compared with the rest measures the minority "
        "that has the value) "
        "are predicted worse beyond 2 noise units or a refit bounds it, at most low (0.35, no "
        "importance bonus, confidence 0.6), and the finding reports the column whose gaps score "
        "highest; missing labels: 0.3 at any share up to 0.7 at 20%. "
        "Disguised missing values (tabular, measured): a value holding >= 2% of a numeric "
        "column and 5x the share of the next value (1.5x at the column's minimum or maximum; "
        "or the commonest value just outside a 1-7 style integer scale), whose replacement by "
        "the median and refit "
        "gains beyond 2 noise units (or whose rows are predicted worse, while the value holds "
        "at most half the column: a majority value is the column's baseline): the larger of the "
        "share's score + 0.1 and the gain as a share of the model's skill over chance (0 -> "
        "0.3, 5% -> 0.45, 15% -> 0.65, 30% -> 0.85); it then explains the outliers such a "
        "code (-999) makes in its own column (extreme values in a column without a code are "
        "another bug and keep their own finding). A spike without measured harm is reported from its share alone "
        "only when it lies >= 0.5 IQRs outside the range of the other values (a 0 blood "
        "pressure), capped at low (0.35) when it lies 0.25-0.5 IQRs outside; a spike inside "
        "the range that imputing does not help (a real zero) is not. A spike found only by the "
        "relaxed tests (1.5x at the column's edge, outside an integer scale), or held by more "
        "than half of its column (its baseline, a structural zero), is capped at low, as is a "
        "spike less than 0.25 IQRs outside the other values whose own test rows are predicted "
        "no worse than the rest beyond 2 noise units (a gain from rewriting a value that sits "
        "where real values do, on rows the model does not get wrong, is not a code's harm), "
        "and a spike whose test rows are exactly those of another column's natural point mass "
        "(a relaxed spike: 0 cumulative GPA where the hours before the term are 0, a value that "
        "does not exist for those rows and that another input marks, not a lost value), "
        "and a spike that lies outside the test split's range of the column (no test row holds "
        "it: a test split shifted off the value), whose refit gain measures the fit against "
        "that test split, not a code the model reads at face value. A spike whose training "
        "rows are ordinary rows (the other features predict the column with cross-validated "
        "R² >= 0.25 elsewhere, yet tell its rows from the rest with AUC no further than 0.15, "
        "or 2 noise units, from 0.5) is a confirmed code: without measured harm it is "
        "reported at low from its share (confidence 0.8)."
    )
    checks = ("Percent Of Nulls", "Mixed Nulls")

    def fix_list(self, signals, artifact):
        """A code for missing values is fixed where it is read: its own fix comes first."""
        fixes = super().fix_list(signals, artifact)
        column, sentinel = self.fact(signals, "column"), self.fact(signals, "sentinel")
        if column is None or sentinel is None or self.strongest(signals).source != "intervention":
            return fixes
        code_fix = (
            f"Read {sentinel:g} in {column!r} as missing where the data is loaded "
            f"(`df[{column!r}] = df[{column!r}].replace({sentinel:g}, np.nan)`), then impute it "
            "inside the model: from the other columns where they carry it "
            "(`IterativeImputer`), or with a missing indicator "
            "(`SimpleImputer(add_indicator=True)`); better still, recover the lost values at "
            "the source."
        )
        return [code_fix, *fixes]

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
                # the column whose gaps score highest once measured harm is read: a column
                # mostly missing without measured harm (see MAJORITY_GAP) does not hide a
                # column whose lost cells are unmeasured
                order = sorted(columns, key=lambda c: (c.missing_fraction, c.name), reverse=True)
                best = max(
                    (self._column_signal(artifact, split, c, importances, average) for c in order),
                    key=lambda t: (t[0], t[1].missing_fraction, t[1].name),
                )
                score, worst, confidence, detail = best
                empty = [c.name for c in columns if c.missing_fraction >= EMPTY]
                head = f"{len(columns)} feature(s) have missing values in {split.name}; "
                head += (
                    f"worst {worst.name!r} is {pct(worst.missing_fraction)} missing"
                    if worst is order[0]
                    else f"{worst.name!r} is {pct(worst.missing_fraction)} missing (the worst, "
                    f"{order[0].name!r} at {pct(order[0].missing_fraction)}, scores lower once "
                    "what its gaps cost was measured)"
                )
                if empty:
                    head += f"; entirely empty: {empty[:5]}"
                yield self.signal(
                    "dataset",
                    score=score,
                    confidence=confidence,
                    detail=head + detail,
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

    def _column_signal(self, artifact, split, worst, importances, average):
        """(score, column, confidence, detail tail) of one gapped column of ``split``."""
        dataset = artifact.dataset
        score = interp(worst.missing_fraction, COLUMN_SCORE)
        bound = missing_harm_bound(artifact, worst.name, worst.missing_fraction)
        negligible = bound is not None and bound < NEGLIGIBLE_SKILL
        by_rows = missing_rows_bound(artifact, worst.name)
        rows_harmless = by_rows is not None and by_rows[1] < NEGLIGIBLE_ERROR
        # gaps confined to training, and no refit measured what they cost the fit
        train_only = split is dataset.train and bound is None and complete_on_test(artifact, worst.name)
        # a column missing in most (not all) rows whose gaps no measurement shows costly:
        # no refit, and the gapped test rows not predicted worse beyond noise (or too few
        # to compare, or most of the test rows: then the comparison measures the minority)
        worse = by_rows is not None and beyond_noise(by_rows[0])
        sparse = sparse_share(artifact, worst)
        minority_measured = worse and majority_rows(artifact, by_rows[0])
        baseline_gap = (
            MAJORITY_GAP < sparse and worst.missing_fraction < EMPTY
            and bound is None
            and not rows_harmless
            and (not worse or minority_measured)
        )
        # nothing measured what these gaps cost: no refit bound, no gapped test rows compared
        unmeasured = bound is None and by_rows is None
        # only the pooled comparison (rows with a gap in any column) read, not worse beyond
        # noise: nothing measured this column's gaps (see UNMEASURED_CONFIDENCE)
        pooled = (
            bound is None and by_rows is not None and by_rows[0].target == "*"
            and not worse and not rows_harmless
        )
        # gaps on exactly the rows a spike of another column marks: the value does not exist
        marker = structural_marker(artifact, worst.name) if bound is None else None
        # the importance bonus weighs a harm that was measured; with nothing measured the
        # share alone is presence (see UNMEASURED_CONFIDENCE) and keeps its own score
        if importances.get(worst.name, 0.0) > average and not (
            negligible or rows_harmless or train_only or baseline_gap or marker is not None
            or unmeasured or pooled
        ):
            score += 0.1
        if rows_harmless or train_only or baseline_gap or marker is not None:
            score = min(score, LOW_CAP)
        detail = ""
        if negligible:
            detail += (
                f"; refitting without {worst.name!r} shows its missing cells cost at most "
                f"{pct(bound)} of the model's skill: present, but harmless to this model"
            )
        if train_only:
            detail += (
                f"; {worst.name!r} is complete on test: no test row is predicted from an "
                "imputed value, so these gaps can cost the model only through the fit, "
                "which was not measured (reported as unmeasured, at most low)"
            )
        if by_rows is not None and not train_only:
            rows, row_bound = by_rows
            where = "a gap" if rows.target == "*" else f"a gap in {rows.target!r}"
            detail += (
                f"; the {rows.n_rows} test rows with {where} have "
                f"{rows.metric.replace('_', ' ')} {rows.score_after:.3f} vs "
                f"{rows.score_before:.3f} on the rest (noise {rows.noise or 0:.3f})"
            )
            if rows_harmless:
                detail += (
                    ": rows with gaps are predicted as well as the rest (or better); the gaps cost "
                    f"at most {row_bound:.3f} of test error, nothing measurable to this model"
                )
            elif minority_measured and baseline_gap:
                detail += (
                    f": worse, but these {rows.n_rows} rows are most of the test rows, so the "
                    "difference says how the minority that has the measurement is predicted, "
                    "not what lost cells cost"
                )
            elif baseline_gap:
                detail += ": not worse beyond 2 noise units"
            elif pooled:
                detail += (
                    f": not worse beyond 2 noise units, and {worst.name!r}'s own gapped test rows "
                    "were too few to compare: this pooled comparison of every column's gaps "
                    "measured nothing about these (reported as unmeasured)"
                )
        if marker is not None:
            detail += (
                f"; these are exactly the test rows where {marker.target!r} holds "
                f"{marker.values.get('value', 0.0):g}: the value does not exist for them "
                "(structural, not lost), another input already says which rows they are, and "
                "their error measures that kind of row, not a value an imputation could give "
                "back (reported at most low)"
            )
        if baseline_gap:
            detail += (
                f"; {worst.name!r} is missing in most rows"
                + (f" of the other split ({pct(sparse)})" if sparse > worst.missing_fraction else "")
                + ", a measurement most rows do not have "
                "(a figure recorded less often than the rows, a series that begins mid-sample), "
                "not a few lost cells, and no measurement shows its gaps cost this model "
                "anything (reported at most low)"
            )
        confidence = (
            NEGLIGIBLE_CONFIDENCE
            if (negligible or rows_harmless or baseline_gap or marker is not None)
            else UNMEASURED_CONFIDENCE
            if train_only or unmeasured or pooled
            else 0.95
        )
        return score, worst, confidence, detail

    def detect_intervention(self, artifact):
        """Disguised missing values: a spike value (0, -999) that the model reads as a
        real measurement, confirmed by what imputing it and refitting gains."""
        for column, value, share, imputed, rows, gain_share in harmful_sentinels(artifact):
            score = max(
                interp(share, COLUMN_SCORE) + SENTINEL_SHARE_BONUS,
                interp(gain_share, SENTINEL_GAIN_SCORE),
            )
            adjacent = adjacent_gain(imputed, rows)
            shared = shared_spike(artifact, rows)
            absent = absent_from_test(artifact, column, value)
            if (
                imputed.values.get("relaxed", 0.0) or share > MAJORITY or adjacent
                or shared is not None or absent
            ):
                score = min(score, LOW_CAP)
            fill = imputed.values.get("fill")
            by = f"{fill:g} (the median of the other values)" if fill is not None else "the median of the other values"
            detail = (
                f"{pct(share)} of training rows hold exactly {value:g} in {column!r}, a spike "
                f"among its other values; replacing it by {by} and refitting a "
                f"{imputed.model_used} of the model moved test "
                f"{imputed.metric} from {imputed.score_before:.3f} to {imputed.score_after:.3f} "
                f"(noise {imputed.noise or 0:.3f})"
            )
            if rows is not None and rows.change is not None:
                detail += (
                    f"; those test rows have {rows.metric.replace('_', ' ')} "
                    f"{rows.score_after:.3f} vs {rows.score_before:.3f} on the rest"
                )
            if adjacent:
                detail += (
                    f", but {value:g} sits next to the other values ({imputed.values.get('gap', 0.0):.2f} "
                    "IQRs outside their range, where a real point mass sits) and its rows are "
                    f"predicted no worse than the rest beyond {NOISE_UNITS:g} noise units: the gain "
                    "does not show a code the model is misled by (reported at most low)"
                )
            elif shared is not None:
                detail += (
                    f", but these are exactly the test rows where {shared.target!r} holds "
                    f"{shared.values.get('value', 0.0):g}, a natural value there: the value does not "
                    "exist for those rows (structural, such as no GPA before any hours), another "
                    "input already marks them, and it is not a lost value stored as a code "
                    "(reported at most low)"
                )
            elif absent:
                detail += (
                    f", but no test row holds {value:g} (the test split's {column!r} lies outside "
                    "it): no test prediction is made from it, so the gain measures what moving "
                    "those training rows does to the fit against this test split, not a code "
                    "the model is misled by (reported at most low)"
                )
            else:
                if coded_spike(imputed):
                    detail += f"; {_ordinary_rows_words(imputed)}"
                detail += ": it is a missing-value code the model takes at face value"
            yield self._spike_signal(imputed, share, score=score, confidence=0.8, detail=detail)

        harmful = {t[0] for t in harmful_sentinels(artifact)}
        for imputed in artifact.interventions:
            if imputed.kind != "impute_sentinel" or imputed.target in harmful:
                continue
            gap, share = imputed.values.get("gap", 0.0), imputed.values.get("share", 0.0)
            if gap < DETACHED_GAP:
                if coded_spike(imputed):
                    yield self._unharmful_code(imputed, share)
                continue
            score = interp(share, COLUMN_SCORE)
            if gap < ISOLATED_GAP or imputed.values.get("relaxed", 0.0):
                score = min(score, LOW_CAP)
            value = imputed.values.get("value", 0.0)
            yield self._spike_signal(
                imputed, share, score=score, confidence=0.6,
                detail=(
                    f"{pct(share)} of training rows hold exactly {value:g} in {imputed.target!r}, "
                    f"{gap:.1f} IQRs outside the range of its other values: a code for a missing "
                    f"measurement; imputing it and refitting moved test {imputed.metric} from "
                    f"{imputed.score_before:.3f} to {imputed.score_after:.3f} (noise "
                    f"{imputed.noise or 0:.3f}), no measurable harm to this model yet"
                ),
            )

    def _unharmful_code(self, imputed, share):
        """A spike inside its column's range, confirmed as a code by its ordinary rows
        (:func:`coded_spike`), whose harm to this model was not measured beyond noise:
        low, from its share."""
        value = imputed.values.get("value", 0.0)
        return self._spike_signal(
            imputed, share, score=min(interp(share, COLUMN_SCORE), LOW_CAP),
            confidence=CODE_CONFIDENCE,
            detail=(
                f"{pct(share)} of training rows hold exactly {value:g} in {imputed.target!r}; "
                f"{_ordinary_rows_words(imputed)}. Imputing it and refitting moved test "
                f"{imputed.metric} from {imputed.score_before:.3f} to "
                f"{imputed.score_after:.3f} (noise {imputed.noise or 0:.3f}): no measurable "
                "harm to this model yet"
            ),
        )

    def _spike_signal(self, imputed, share, *, score, confidence, detail):
        """The signal of a refitted spike (``imputed``), whichever reading scored it: each
        records the same facts (its column, share and value), which the title and the
        code's fix read."""
        return self.signal(
            "intervention",
            score=score,
            confidence=confidence,
            detail=detail,
            value=share,
            check="impute_sentinel",
            column=imputed.target,
            share=share,
            sentinel=imputed.values.get("value", 0.0),
        )

    def explains_for(self, artifact):
        """A measured sentinel code (-999) is also what the outlier statistics see, but
        only in its own column: a code in one column cannot put extreme values in
        another. Outliers in columns that hold no harmful code (unit errors in
        ``body_mass_g`` next to a 0 code in ``flipper_length_mm``) are a second,
        independent bug and keep their own finding. A code inside the range of its
        column's other values (a 30% spike of 0 stretches the quartiles to include it)
        is not flagged by the outlier statistics at all; with no column flagged the
        outlier finding rests on other evidence the code may make (a model-based check),
        and is folded as before."""
        coded = {t[0] for t in harmful_sentinels(artifact)}
        if not coded:
            return self.explains
        if extreme_columns(artifact) <= coded:
            return (*self.explains, "outliers")
        return self.explains

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
        sentinel = self.fact(signals, "sentinel")
        if column is not None and sentinel is not None and self.strongest(signals).source == "intervention":
            return f"{pct(share)} of {column!r} hold {sentinel:g}, a code for a missing value"
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
