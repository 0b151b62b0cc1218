"""weak_segment: a subgroup of the data on which the model does much worse.

Every dataset has a weakest segment, and a search for the worst segment on the same
rows always finds one that looks bad by chance. So the drop from the average score is
counted beyond the noise of the segment's size, and weighted by the segment's share of
the data: a small corner that is a bit worse is normal, a fifth of the data on which the
model fails is not. The evidence is Deepchecks' Weak Segments Performance.

A category that fails beyond the excess confident errors of an overconfident slice
that is the whole category (:func:`segment_beyond_slice`) explains that slice: its wrong
answers come at every confidence, and the slice's confident ones are part of them.
Otherwise the slice explains the segment (``overconfident_slice``). Likewise a
memorising model's lag behind the baseline ladder that one category's excess errors
account for (:func:`segment_beyond_lag`) is that segment's unreliable labels memorised:
the segment explains the overfitting finding, not the reverse.

A category short of the scan's bar on a small test split is corroborated by its training
rows (:mod:`deepfix_agents.rules._training_segments`): the baseline ladder's linear rung predicts
them out of fold, and unreliable labels fail it there too, on two to three times as
many rows. The training rows only add to a category the model serves worse on test.
"""

from __future__ import annotations

import math
import re
from statistics import NormalDist

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, interp, pct
from deepfix_agents.rules._memorisation import memorises
from deepfix_agents.rules._segment_tests import log_comb, rest_error, z_binomial, z_upper_tail
from deepfix_agents.rules._training_segments import (
    combined_z,
    training_evidence,
    training_segments,
    training_z,
)
from deepfix_agents.rules.feature_drift import effective_rows
from deepfix_agents.scoring import severity_for

#: relative drop of the weakest segment's score below the average (beyond noise) -> score
DROP_SCORE = ((0.15, 0.0), (0.25, 0.3), (0.35, 0.5), (0.5, 0.65), (0.7, 0.8))
#: the segment's share of the data -> multiplier
SIZE_FACTOR = ((0.03, 0.2), (0.1, 0.6), (0.2, 0.9), (0.3, 1.0))
#: whole categories scored directly (no search over ranges, so less selection bias than
#: the weakest-segment search): relative drop -> score, counted only when significant
CATEGORY_DROP_SCORE = ((0.1, 0.15), (0.2, 0.4), (0.3, 0.55), (0.5, 0.75))
#: z-statistic of the segment's error against the other rows' error needed to count
MIN_Z = 3.0
#: when the segment's size is unknown (never above low: only a large segment matters)
UNKNOWN_SIZE = 0.6
UNKNOWN_SIZE_CAP = 0.39
#: regression errors (RMSE) vary more across segments than accuracy does
REGRESSION_DAMPING = 0.6
#: a segment of fewer test rows (a category of a small test split) counts only when its
#: excess error is significant (``MIN_Z``): the damped drop of a regression segment is
#: noise at that size
SMALL_SEGMENT_ROWS = 30
#: a regression category whose excess error is within noise (tested against the
#: errors' spread, below the scan's bar) is at most low: its damped relative drop
#: ignores the spread, and on a target with a few wild errors a category of a
#: pure-noise column reads 40% worse by chance. Every dataset has a weakest category;
#: one the test cannot tell from noise is not a failing group worth more than a note
NOISE_CAP = UNKNOWN_SIZE_CAP
#: the per-category scan skips features with more values than this: the testing step's
#: ``mlflow_deepfix.testing.performance.MAX_SEGMENT_VALUES``, mirrored so the rules read
#: typed artifact data only (a test pins the two equal)
MAX_SCANNED_VALUES = 20
#: standard errors of noise taken off a segment's expected error from comparable rows
#: (:func:`comparable_error`) before it counts: the usual two-sided 95% margin
COMPARABLE_MARGIN = 2.0
#: coefficient of variation of absolute deviations from a normal sample (half-normal:
#: sqrt(pi/2 - 1))
HALF_NORMAL_CV = math.sqrt(math.pi / 2 - 1)

_MESSAGE = re.compile(
    r"segment with (?P<metric>.+?) of (?P<weak>-?[\d.]+(?:e-?\d+)?) in comparison to an average "
    r"score of (?P<avg>-?[\d.]+(?:e-?\d+)?)",
    re.IGNORECASE,
)


def _lookup(values: dict[str, float], exact: str, *needles: str) -> float | None:
    """``values[exact]`` (the catalog's key), else the first key containing a needle."""
    if values.get(exact) is not None:
        return float(values[exact])
    for key in sorted(values):
        low = key.lower()
        if any(n in low for n in needles) and values[key] is not None:
            return float(values[key])
    return None


def parse_segment(check) -> dict | None:
    """The weakest segment's score, the average score and the segment's share of the data,
    from the check's named values (``average_score``, ``weakest_score``,
    ``weakest_segment_fraction``) or, failing that, its condition message."""
    values = check.values or {}
    avg = _lookup(values, "average_score", "avg")
    weak = _lookup(values, "weakest_score", "segment_score")
    share = _lookup(values, "weakest_segment_fraction", "% of data", "share")
    metric = check.details.get("metric")
    if avg is None or weak is None:
        for condition in check.conditions:
            match = _MESSAGE.search(condition.details or "")
            if match:
                avg, weak = float(match["avg"]), float(match["weak"])
                metric = metric or match["metric"]
                break
    if avg is None or weak is None or avg == 0:
        return None
    if share is not None and share > 1.0:  # Deepchecks' own '% of Data' is in percent
        share /= 100.0
    return {
        "avg": avg,
        "weak": weak,
        "share": share,
        "metric": metric,
        "segment": check.details.get("weakest_segment"),
        "drop": (avg - weak) / abs(avg),
    }


def more_segments(check, weakest: dict) -> list[dict]:
    """Further segments the condensed check may list as ``segment_<i>_score`` and
    ``segment_<i>_fraction`` (same metric and average as the weakest)."""
    values, found = check.values or {}, []
    for key in sorted(values):
        match = re.fullmatch(r"segment_(\d+)_score", key)
        if not match or values[key] is None:
            continue
        share = values.get(f"segment_{match[1]}_fraction")
        if share is not None and share > 1.0:
            share /= 100.0
        avg = weakest["avg"]
        found.append(
            {
                "avg": avg,
                "weak": values[key],
                "share": share,
                "metric": weakest["metric"],
                "segment": check.details.get(f"segment_{match[1]}"),
                "drop": (avg - values[key]) / abs(avg),
            }
        )
    return found


def sibling_skill(seg, segments) -> tuple[float, int] | None:
    """(the model's error per unit of constant-guess error on the other categories of
    ``seg``'s feature, their rows), or None without a measurement.

    The testing step records it over *every* other category (``sibling_error`` /
    ``sibling_baseline_error`` on ``sibling_n_rows`` rows); the categories listed as
    segments are only the worst few, above the overall error. Rebuilt from those alone
    the skill is missing whenever the feature's other categories are not among the
    worst (a two-valued feature: men listed, women not, on a wage whose men spread
    twice as wide), and the segment that is merely harder is then compared with the
    other rows' plain error. Old artifacts without the record fall back to the listed
    siblings."""
    recorded = seg.sibling_error is not None and (seg.sibling_baseline_error or 0) > 0
    if recorded and seg.sibling_n_rows:
        return seg.sibling_error / seg.sibling_baseline_error, seg.sibling_n_rows
    siblings = [
        s
        for s in segments
        if s.feature == seg.feature and s.value != seg.value and (s.baseline_error or 0) > 0
    ]
    if not siblings:
        return None
    n_siblings = sum(s.n_rows for s in siblings)
    skill = sum(s.n_rows * s.error for s in siblings) / sum(
        s.n_rows * s.baseline_error for s in siblings
    )
    return skill, n_siblings


def comparable_error(seg, segments) -> float | None:
    """What the model's mean absolute error on a regression segment would be if it served
    the segment as well as the other categories of the same feature, given how hard each
    is to predict; a lower bound, less its noise. None without both measurements.

    A segment's errors are large either because the model fails it or because its
    targets spread wider (the high-MPG cars of a cylinder count, whose MPG spreads far
    more than the 8-cylinder cars'). The sibling categories' skill, sum(n*error) /
    sum(n*baseline) with ``baseline_error`` the best constant guess within each (all of
    them, as the testing step records it: :func:`sibling_skill`), times the segment's
    own baseline is the error comparable rows would have. Compared with
    the other rows' plain mean error, it does not count a harder segment as a failing
    one. The other rows' own baseline cannot stand in: pooled across categories it holds
    the between-category spread that the model explains easily. Both ratios are
    estimated from few rows: the absolute deviations of a normal sample spread at
    0.755 of their mean (half-normal), so the relative noise of a mean of n of them is
    0.755/sqrt(n); the expectation counts only beyond ``COMPARABLE_MARGIN`` of those
    standard errors (the segment's baseline, and the siblings' error and baseline), so
    a planted segment, whose baseline the shuffled labels widen, is not explained away
    by its own noise.
    """
    if not seg.baseline_error or seg.baseline_error <= 0:
        return None
    measured = sibling_skill(seg, segments)
    if measured is None:
        return None
    skill, n_siblings = measured
    relative_noise = HALF_NORMAL_CV * math.sqrt(
        1.0 / max(seg.n_rows, 1) + 2.0 / max(n_siblings, 1)
    )
    return seg.baseline_error * skill * max(1.0 - COMPARABLE_MARGIN * relative_noise, 0.0)


def _z_error_exact(seg, n_test: int) -> float:
    """The z of the exact one-sided test (Fisher's, the hypergeometric upper tail) that
    the segment holds at least its count of the test split's errors, were the errors
    spread over the rows at random: p converted to the normal scale. The
    two-proportion z this replaces leaned on a normal approximation that a small
    segment of a small test split (6 errors in 16 rows against 1 in 88) breaks: its
    variance estimate from the other rows' near-zero error rate is itself noise (z 3.0
    there, exact 4.0)."""
    return _z_exact_counts(
        round(seg.error * seg.n_rows), seg.n_rows, round(seg.overall_error * n_test), n_test
    )


def _z_exact_counts(hits: int, n_seg: int, errors: int, n_test: int) -> float:
    """:func:`_z_error_exact` from counts: ``hits`` of the test split's ``errors``
    wrong answers fall in a segment of ``n_seg`` of its ``n_test`` rows."""
    if n_test <= n_seg or n_seg <= 0:
        return 0.0
    hits = min(hits, errors, n_seg)
    if errors <= 0 or hits <= errors * n_seg / n_test:
        return 0.0
    log_total = log_comb(n_test, n_seg)
    return z_upper_tail(
        log_comb(errors, k) + log_comb(n_test - errors, n_seg - k) - log_total
        for k in range(hits, min(errors, n_seg) + 1)
    )


def _z_abs_error(seg, n_test: int, spread: float, expected: float | None = None) -> float:
    """Two-sample z-statistic of a regression segment's mean absolute error against the
    other rows', with ``spread`` the standard deviation of the absolute errors over all
    test rows (the pooled spread under 'no difference'). With ``expected`` (the error
    comparable rows would have, :func:`comparable_error`), the excess is counted over
    whichever of the two is larger.

    With the segment's own spread measured (``error_std``), the standard error is the
    larger of the pooled one and the one that puts the segment's own spread on its side
    (the other rows keep the pooled spread): a mean of few absolute errors, a handful of
    them wild, is noisier than the pooled spread says, and the excess must be
    significant under both. Never narrower than the pooled one: the other rows' own
    spread, estimated from a small sibling (the 18 lunch bills of a 74-row split), is no
    firmer ground for calling a difference significant than the pooled one."""
    n_rest = max(n_test - seg.n_rows, 1)
    rest = max(rest_error(seg, n_test), expected or 0.0)
    n_seg = max(seg.n_rows, 1)
    se = spread * math.sqrt(1.0 / n_seg + 1.0 / n_rest)
    if seg.error_std is not None and seg.n_rows >= 2:
        se = max(se, math.sqrt(seg.error_std**2 / n_seg + spread**2 / n_rest))
    return (seg.error - rest) / se if se > 0 else 0.0


def scanned_categories(artifact) -> int:
    """How many category-vs-rest comparisons the per-category scan
    (``performance.segments``) made: every categorical feature of ``m`` values compares
    ``m - 1`` independent contrasts (one for a binary feature: its two values are the
    same contrast seen from either side). Values counted from the test split's column
    statistics, else from the segments listed."""
    columns = {c.name: c for c in artifact.dataset.test.columns} if artifact.dataset.test else {}
    listed: dict[str, set[str]] = {}
    for seg in artifact.performance.segments:
        listed.setdefault(seg.feature, set()).add(seg.value)
    total = 0
    for feature in sorted(set(artifact.dataset.cat_features or []) | set(listed)):
        col = columns.get(feature)
        if col is not None and col.n_unique:
            # the scan counts missing values as one more value
            m = col.n_unique + (1 if (col.missing_fraction or 0) > 0 else 0)
        else:
            m = len(listed.get(feature, ()))
        if feature not in listed and (m < 2 or m > MAX_SCANNED_VALUES):
            continue  # not scanned: a single value, or too many
        total += max(m - 1, 1)
    return max(total, 1)


def scan_z(n_scanned: int) -> float:
    """The z a segment's excess error needs when ``n_scanned`` contrasts were scanned:
    the one-sided tail of ``MIN_Z`` shared among them (Bonferroni), so the worst of many
    categories is held to the same false-alarm rate as one category tested alone."""
    tail = (1.0 - NormalDist().cdf(MIN_Z)) / max(n_scanned, 1)
    return NormalDist().inv_cdf(1.0 - tail)


def abs_error_spread(artifact) -> float | None:
    """Standard deviation of the absolute test errors, from the test RMSE and MAE
    (var |e| = mean e^2 - (mean |e|)^2); None without both."""
    scores = artifact.performance.scores.get("test", {})
    rmse, mae = scores.get("rmse"), scores.get("mae")
    if rmse is None or mae is None or rmse < mae:
        return None
    return math.sqrt(rmse**2 - mae**2)


def tested_segments(artifact) -> tuple[float, list]:
    """The scan's Bonferroni bar (:func:`scan_z`) and, for every category scored on test
    (``performance.segments``) with an error above the overall one, (segment, z,
    comparable error): the exact test of a classification segment's share of the
    errors, or a regression segment's mean absolute error against the other rows (or
    comparable rows, if higher; z 0 without the errors' spread). One place for the
    tests :meth:`WeakSegment.detect_model` and :func:`significant_segments` apply."""
    n_test = artifact.dataset.test.n_rows
    min_z = scan_z(scanned_categories(artifact))
    regression = artifact.task == "regression"
    training, n_train = training_segments(artifact)
    spread = abs_error_spread(artifact) if regression else None
    tested = []
    for seg in artifact.performance.segments:
        if seg.error <= seg.overall_error:
            continue
        if regression:
            expected = comparable_error(seg, artifact.performance.segments)
            z = _z_abs_error(seg, n_test, spread, expected) if spread else 0.0
        elif only_errable(seg, artifact.performance.segments):
            expected = seg.baseline_error
            z = z_binomial(round(seg.error * seg.n_rows), seg.n_rows, seg.baseline_error)
        else:
            expected, z = None, _z_error_exact(seg, n_test)
        train_seg = training.get((seg.feature, seg.value))
        if train_seg is not None:
            z_train = training_z(train_seg, n_train, regression=regression)
            if z_train >= min_z:
                # the training rows fail the category beyond the bar on their own: the
                # test split's shortfall there is the same fault seen on fewer rows
                z = max(z, combined_z(z, z_train))
        tested.append((seg, z, expected))
    return min_z, tested


def only_errable(seg, segments) -> bool:
    """Whether a classification segment is the only category of its feature with
    anything to get wrong: every other category is pure (one class, so a constant guess
    is exact there), which the testing step records as no sibling rows at all, in an
    artifact that records siblings (some segment has them; older artifacts have none).

    Rows whose label a constant guess gets right leave a model nothing to err on (no
    401(k) participation without eligibility): the test split's errors can then only
    fall in the segment, and the exact test's null (errors spread over the rows at
    random) takes that for a failing group on every dataset with such a feature."""
    if seg.sibling_n_rows is not None or seg.baseline_error is None or seg.share >= 1.0:
        return False
    return any(s.sibling_n_rows is not None for s in segments)


def segment_beyond_slice(artifact):
    """The category the model serves worse beyond what its overconfident slice accounts
    for, or None: the top overconfident slice (the one ``overconfident_slice`` reports)
    is a category scored on test (its one condition names it), and that category is
    still significantly weak (the exact test at the scan's bar, :func:`tested_segments`)
    with every confident error on the slice beyond those the model's confidence there
    predicts (``n_wrong - expected_wrong``, the most its overconfidence can cost)
    answered right.

    An overconfident slice's measured harm is the confident errors its stated
    confidence does not account for; a weak segment's is every error beyond the other
    rows' rate, made at any confidence. When the segment fails beyond the slice's
    excess, most of its wrong answers are not the overconfidence (a model that
    memorised one site's unreliable labels: sure on half the site's rows and wrong on
    them, unsure and as often wrong on the other half): the segment is the cause and
    the slice's confident errors one part of it, not the reverse. Classification only
    (slices are); None in artifacts without the slice's error count.

    Only a slice that is the whole category (its one condition names it, and it holds
    the category's rows): then both findings count the same rows, and the re-test asks
    only whether their wrong answers are the confident ones. A slice the search
    narrowed with a second condition (``channel = partner and tenure_years > 6.7``)
    localised the confident failure to part of the category, and the artifact does not
    measure the category's other rows at any confidence: a model that cannot express
    the slice's reversal bends its fit for the rest of the category too (boosted stumps
    on partner veterans), so the category's remaining errors there are the slice's
    spill-over, not a second cause."""
    summary = artifact.confidence
    test = artifact.dataset.test
    if (
        summary is None
        or test is None
        or artifact.task == "regression"
        or not artifact.performance.segments
    ):
        return None
    top = next((s for s in summary.slices if s.kind == "overconfident"), None)
    if top is None or top.n_wrong is None or top.expected_wrong is None:
        return None
    excess = max(top.n_wrong - top.expected_wrong, 0.0)
    conditions = top.description.split(" and ")
    if len(conditions) != 1:
        return None
    min_z, tested = tested_segments(artifact)
    n_test = test.n_rows
    for seg, z, _ in sorted(tested, key=lambda item: -item[1]):
        if z < min_z or f"{seg.feature} = {seg.value}" != conditions[0]:
            continue
        if seg.n_rows != top.n_rows:
            continue  # not the same rows (e.g. the slice's rows on another sample)
        hits = round(seg.error * seg.n_rows - excess)
        errors = round(seg.overall_error * n_test - excess)
        if _z_exact_counts(hits, seg.n_rows, errors, n_test) >= min_z:
            return seg
    return None


def segment_beyond_lag(artifact):
    """The category whose excess wrong answers account for the model's whole lag behind
    the baseline ladder, or None: the most significant category scored on test (the
    exact test at the scan's bar, :func:`tested_segments`) whose wrong answers beyond
    the other rows' rate, as a share of the test rows, are at least what the model
    gives away to the best simple model of the ladder on test (``lag``, in the model's
    metric), for a model that reproduces its training rows
    (:func:`~deepfix_agents.rules._memorisation.memorises`). Classification only (the
    excess is an error rate; a regression segment's absolute error is not in R2's
    units); None without a ladder rung scored in the model's metric.

    A flexible model that memorises its training rows lags the ladder either because
    it fits noise everywhere (the overfitting rule's finding) or because one group's
    labels are unreliable and it memorised those: then its wrong answers beyond the
    ladder's sit in that group, and with them answered at the other rows' rate it would
    not trail the ladder at all. The lag is the segment's failure seen from the model's
    side (overfitting its symptom), not a second cause. A memoriser of uniform label
    noise spreads its extra errors over every category: none holds its whole lag beyond
    the scan's bar (no planted overfitting case of DEV has a significant category).
    A model at or ahead of the best rung (``lag <= 0``) gives nothing away: there is no
    lag for a segment to account for, so None (else any significant category would
    "account for" a lag of zero or less)."""
    performance, test = artifact.performance, artifact.dataset.test
    if (
        artifact.task == "regression"
        or test is None
        or performance.test_score is None
        or performance.train_score is None
        or not memorises(performance.train_score)
        or not performance.segments
    ):
        return None
    rungs = [
        b.test_score
        for b in artifact.baselines
        if b.test_score is not None
        and not b.name.startswith("dummy")
        and b.metric == performance.metric
    ]
    if not rungs:
        return None
    lag = max(rungs) - performance.test_score
    if lag <= 0:
        # at or ahead of the ladder the model gives nothing away for a segment to account
        # for: any excess would "cover" a lag of zero or less, and a benign memoriser's
        # overfitting finding would be absorbed by whatever category it serves worse
        return None
    min_z, tested = tested_segments(artifact)
    significant = [(seg, z) for seg, z, _ in tested if z >= min_z]
    if not significant:
        return None
    seg = max(significant, key=lambda item: (item[1], item[0].feature, item[0].value))[0]
    n_test = test.n_rows
    excess = (seg.error - rest_error(seg, n_test)) * seg.n_rows / max(n_test, 1)
    return seg if excess >= lag else None


def significant_segments(artifact) -> list:
    """The categories scored on test that the model serves worse beyond noise, by the
    weak-segment rule's own tests (:func:`tested_segments`) at the scan's bar."""
    if artifact.dataset.test is None or not artifact.performance.segments:
        return []
    min_z, tested = tested_segments(artifact)
    return [seg for seg, z, _ in tested if z >= min_z]


@register_rule
class WeakSegment(Rule):
    id = "weak_segment"
    name = "The model fails on a large subgroup"
    detects = (
        "A sizeable segment of the data (a range of one or two features) on which the model's"
        " score is much lower than on average."
    )
    why = (
        "An average score hides who pays for the errors. If a large group (a region, an age "
        "band, a product line) gets much worse predictions, the model may be unfit for that "
        "group even though it looks good overall."
    )
    example = (
        "A loan model has 88% accuracy overall but 52% for applicants under 25, who make up "
        "18% of the data and are barely present in the training split."
    )
    fixes = (
        "Check that the segment is represented in training: stratify the split on the "
        "segmenting feature (`StratifiedShuffleSplit` on a combined key) and collect more "
        "data for it if it is rare.",
        "Give the model what it needs for the segment: features or interactions that "
        "describe it, or a model flexible enough for its pattern; weight its rows "
        "(`sample_weight`) if it matters more.",
        "Report the score per segment next to the average (e.g. `groupby(segment)` of the "
        "errors) and set an acceptance threshold for the weakest group.",
    )
    severity_policy = (
        "Relative drop = (average - weakest segment) / |average| from Deepchecks Weak "
        "Segments Performance, less a noise margin of 0.5/sqrt(rows in the segment): 0.25 -> "
        "0.3, 0.35 -> 0.5, 0.5 -> 0.65, 0.7 -> 0.8; x0.6 for regression errors. Multiplied by"
        " the segment's share of the data: 3% -> x0.2, 10% -> x0.6, 20% -> x0.9, 30% -> x1 "
        "(x0.6 and at most 0.39 when unknown). When the check lists several segments, the one"
        " with the highest score (drop x size) counts. The same policy applies to every "
        "category of each categorical feature scored on test, with its own anchors (less "
        "selection bias than a range search): relative accuracy drop 0.1 -> 0.15, 0.2 -> 0.4, "
        "0.3 -> 0.55, 0.5 -> 0.75, counted only when the segment's share of the test "
        "errors is beyond chance at 3 standard errors (exact one-sided test of the "
        "errors' hypergeometric spread over the rows, Fisher's), or, when every other "
        "category of the feature is one class (nothing there to get wrong), beyond the "
        "segment's own constant-guess error at the same bar (exact binomial test); "
        "regression uses mean absolute error with "
        "drop = (segment - overall) / segment, x0.6, or, when the segment's error is >= 3 "
        "standard errors above the other rows' (the absolute errors' spread from the test "
        "RMSE and MAE, or the segment's own measured spread on its side when that gives "
        "the wider standard error), (segment - other rows) / segment undamped. A regression category "
        "is compared with what comparable rows would get, when that is higher than the "
        "other rows' error: its own constant-guess error times the model's error per unit"
        " of constant-guess error on the feature's other categories (all of them, as "
        "recorded, not only those listed), less 2 standard "
        "errors of noise (a segment whose targets spread wider is harder, not failed). "
        "A regression category whose excess is tested against the errors' spread and "
        "stays below the scan's bar is at most low (0.39): within noise, its relative "
        "drop alone does not make it a failing group. A category of fewer than 30 "
        "test rows counts only when significant (>= 3 standard errors); a searched box of "
        "fewer than 30 test rows is at most low (0.39). The per-category scan compares every "
        "category of every categorical feature with the rest (m - 1 contrasts for a feature "
        "of m values), so its bar of 3 standard errors is raised to the Bonferroni bar of "
        "that many contrasts (the one-sided tail of z = 3 shared among them: 3 contrasts -> "
        "3.3, 6 -> 3.5). A category the model serves worse on test is also tested on the "
        "training rows, when the baseline ladder's linear rung predicted them out of fold: its "
        "error there against the larger of the other rows' and comparable rows' (exact "
        "binomial test; Welch for regression); when that alone clears the scan's bar, "
        "the two independent z combine "
        "(Stouffer, (z_test + z_train) / sqrt(2)) before the same bar; the severity stays "
        "the test drop's. Confidence: the "
        "best signal per source, combined; a source whose own segment scores below low (a "
        "different, milder group) does not add to it."
    )
    checks = ("Weak Segments Performance",)
    explains = ("overconfident_slice", "overfitting")

    def explains_for(self, artifact):
        """An overconfident slice inside a category the model fails beyond the slice's
        excess confident errors (:func:`segment_beyond_slice`): its confident errors are
        part of the segment's failure, one cause. A memorising model's lag behind the
        ladder that the category's excess errors account for
        (:func:`segment_beyond_lag`): the labels it memorised there cost the lag."""
        explained = ()
        if segment_beyond_slice(artifact) is not None:
            explained += ("overconfident_slice",)
        if segment_beyond_lag(artifact) is not None:
            explained += ("overfitting",)
        return explained

    def names(self, signals, artifact):
        """The feature of the category that explains an overconfident slice, so the
        slice (localised to its own features) folds into this finding only when both
        name it."""
        seg = segment_beyond_slice(artifact)
        return (seg.feature,) if seg is not None else ()

    def _impact(self, artifact, segment: dict) -> tuple[float, float]:
        """(score, rows in the segment) of one segment: its relative drop beyond the
        noise of its size, times its share of the data."""
        n = effective_rows(artifact, "test")
        share = segment["share"]
        rows = share * n if share is not None else 0.1 * n
        drop = segment["drop"] - 0.5 / math.sqrt(max(rows, 1.0))
        if artifact.task == "regression":
            drop *= REGRESSION_DAMPING
        score = interp(drop, DROP_SCORE)
        if share is None:
            return min(score * UNKNOWN_SIZE, UNKNOWN_SIZE_CAP), rows
        return score * interp(share, SIZE_FACTOR), rows

    def detect_deepchecks(self, artifact):
        check = artifact.check("Weak Segments Performance")
        if check is None or check.outcome != "not_passed":
            return
        weakest = parse_segment(check)
        if weakest is None:
            return
        # the weakest segment is usually a small corner; when the check lists more
        # segments (``segment_<i>_score`` / ``segment_<i>_fraction``), the one that costs
        # the most (drop x size) is the finding
        candidates = [weakest] + more_segments(check, weakest)
        scored = [(self._impact(artifact, seg), seg) for seg in candidates]
        (score, rows), segment = max(scored, key=lambda item: (item[0][0], -item[1]["drop"]))
        if score <= 0:
            return
        if rows < SMALL_SEGMENT_ROWS:
            # a box found by searching feature ranges on a small test split: a handful of
            # errors boxed together looks like a failing group (the noise margin covers
            # one segment's size, not the search), so it is at most low, as a category of
            # that size is unless significant
            score = min(score, UNKNOWN_SIZE_CAP)
        yield self.check_signal(
            check,
            score=score,
            confidence=0.7 if rows >= 50 else 0.5,
            **{k: v for k, v in segment.items() if v is not None},
        )

    def detect_model(self, artifact):
        """Whole categories scored directly on test (``performance.segments``): a country or
        channel on which the model fails is often larger than Deepchecks' weakest corner."""
        scored = []
        n_test = artifact.dataset.test.n_rows
        # the worst of many categories beats MIN_Z by chance more often than one does
        min_z, tested = tested_segments(artifact)
        # a regression category's excess is tested against the errors' spread when the
        # test RMSE and MAE give it; without them no test ran and the damped reading stands
        measured_noise = artifact.task == "regression" and abs_error_spread(artifact) is not None
        for seg, z, expected in tested:
            if artifact.task != "regression" and z < min_z:
                continue
            significant = None
            if artifact.task == "regression":
                segment = {
                    "avg": seg.overall_error,
                    "weak": seg.error,
                    "metric": "mean absolute error",
                    "drop": (seg.error - seg.overall_error) / seg.error,
                }
                if seg.n_rows < SMALL_SEGMENT_ROWS and z < min_z:
                    continue
                if z >= min_z:
                    # clearly beyond noise: the segment's excess error over the other
                    # rows counts in full (no damping for the spread of regression
                    # errors across segments: it is measured)
                    rest = max(rest_error(seg, n_test), expected or 0.0)
                    significant = (seg.error - rest) / seg.error
                    segment.update(z=round(z, 2), rest=rest)
            else:
                avg, weak = 1.0 - seg.overall_error, 1.0 - seg.error
                if avg <= 0:
                    continue
                segment = {"avg": avg, "weak": weak, "metric": "accuracy", "drop": (avg - weak) / avg}
            segment.update(share=seg.share, segment=f"{seg.feature} = {seg.value!r}")
            segment.update(training_evidence(artifact, seg))
            drop = segment["drop"] * (REGRESSION_DAMPING if artifact.task == "regression" else 1)
            if significant is not None:
                drop = max(drop, significant)
            score = interp(drop, CATEGORY_DROP_SCORE) * interp(seg.share, SIZE_FACTOR)
            if measured_noise and significant is None:
                score = min(score, NOISE_CAP)
            scored.append(((score, seg.n_rows), segment))
        if not scored:
            return
        (score, rows), segment = max(
            scored, key=lambda item: (item[0][0], item[1]["segment"])
        )
        if score <= 0:
            return
        yield self.signal(
            "model",
            score=score,
            confidence=0.75 if rows >= 50 else 0.5,
            detail=(
                f"test rows with {segment['segment']} ({pct(segment['share'])} of test): "
                f"{segment['metric']} {segment['weak']:.3f} vs {segment['avg']:.3f} overall"
                + (
                    f"; on {segment['train_rows']} training rows predicted out of fold by "
                    f"the linear baseline, error {segment['train_error']:.3f} vs "
                    f"{segment['train_expected']:.3f} on comparable rows "
                    f"(z {segment['train_z']:.1f})"
                    if "train_z" in segment
                    else ""
                )
            ),
            value=segment["weak"],
            **segment,
        )

    def confidence(self, signals):
        """Two sources corroborate a weak segment only when each found one worth
        reporting: a second segment too mild to report on its own (info) is another
        group, not more evidence for the one the finding names."""
        top = self.strongest(signals)
        kept = [s for s in signals if s is top or severity_for(s.score) != "info"]
        return super().confidence(kept)

    def title(self, signals, artifact):
        weak, avg = self.fact(signals, "weak"), self.fact(signals, "avg")
        if weak is None:
            return self.name
        share = self.fact(signals, "share")
        metric = self.fact(signals, "metric") or "score"
        segment = self.fact(signals, "segment")
        where = (
            f"{segment} ({pct(share)} of the data)"
            if segment and share is not None
            else (
                f"a segment holding {pct(share)} of the data"
                if share is not None
                else segment or "one segment"
            )
        )
        return f"On {where} the model's {metric} is {weak:.2f} vs {avg:.2f} on average"

    def explanation(self, signals, artifact):
        segment = self.fact(signals, "segment")
        where = f" ({segment})" if segment else ""
        return (
            f"The model works much worse for one group of rows{where}, defined by the "
            "values of one or "
            "two features, than for the data as a whole. The overall score hides it. The group "
            "may be under-represented in training, follow a different pattern, or have noisier "
            "labels; either way, predictions for that group deserve less trust."
        )
