"""overconfident_slice: a slice of the data where the model is confidently wrong.

A new category rather than more ``poor_calibration`` evidence, because the cause and
the fix differ: a global calibration error is fixed by recalibrating every probability,
while a model that is well calibrated on average but sure and wrong on one group
(``age > 62 and smoker = yes``) needs that group fixed (data, features, an
interaction), and a global recalibration would hide it. Evidence is the testing step's
slice search (``artifact.confidence``); a slice counts when the Wilson interval of its
confident-error rate lies above the error rate the model *claims* there (one minus its
mean top probability on the slice) plus the overconfidence it shows outside the slice
on the same class and confidence band (global miscalibration stays
``poor_calibration``'s): the testing step lists a slice as ``overconfident`` only when
its interval clears the claimed rate (``testing.confidence``), so that check is not
repeated here. The slice search also lists needlessly unsure slices (``underconfident``:
the model right more often than it claims); those are the opposite mechanism, no
overconfident slice, and this rule names none of them: at worst they are
``poor_calibration``'s, where they show in the signed confidence gap.

A slice's excess over the claimed rate is small when the overconfidence is mild, and
clean models show small excesses on hard slices too. What sets the mechanism apart is
its direction, measured against the model's own other rows: a model is normally *less*
often sure where it is more often wrong; one that is sure more often on the slice than
elsewhere *and* more often wrong when sure there (:func:`confidence_inverted`) has
probabilities sharpened on that group, and the slice is reported at medium however
small its excess.

A slice that holds most confident errors because it holds most confident rows (a slice
of most of the rows, on a model sure nearly everywhere) is no seat of the miscalibration:
the slice explains ``poor_calibration`` only when the model overstates itself more per
row there than on the other rows (:func:`carries_calibration`).
"""

from __future__ import annotations

import math

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, interp, pct
from deepfix_agents.rules._ladder import CHANCE_NOISE_UNITS, at_chance
from deepfix_agents.rules._shares import share_difference_z
from deepfix_agents.rules.degenerate_predictions import one_class_collapse
from deepfix_agents.rules.poor_calibration import prior_shift, underconfident
from deepfix_agents.rules.underfitting import signal_is_learnable
from deepfix_agents.rules.weak_segment import segment_beyond_slice

#: lower bound of the slice's confident-error rate minus its expected rate -> score
#: (an excess of 0.1 is ten more wrong answers in every hundred trusted ones)
EXCESS_SCORE = ((0.03, 0.0), (0.1, 0.45), (0.2, 0.6), (0.35, 0.75), (0.5, 0.85))
#: the slice's share of the evaluation rows -> multiplier
SIZE_FACTOR = ((0.02, 0.2), (0.05, 0.6), (0.1, 0.9), (0.2, 1.0))
#: the slice holds this share of all confident errors -> it explains poor calibration
EXPLAINS_CALIBRATION = 0.5
#: standard deviations of the null count (a model erring at its stated rate, the
#: Poisson-binomial ``expected_wrong_var``) taken off the slice's excess of confident
#: errors before that excess counts as harm: the usual two-sided 95% margin
EXCESS_MARGIN = 2.0
#: standard errors (two-sided 95%) by which the slice must beat the rest of the rows on
#: both counts of :func:`confidence_inverted`
INVERSION_Z = 1.96
#: the least score of a slice whose confidence is inverted (medium): sure where it is
#: wrong is the mechanism itself, measured against the model's own other rows
INVERSION_SCORE = 0.4
#: the least score reported as a finding (the low band, ``scoring.SEVERITY_BANDS``)
REPORTED = 0.2


def excess_errors(item) -> float | None:
    """Confident errors on an overconfident slice beyond what the model's own confidence
    there (and its miscalibration elsewhere) accounts for, less ``EXCESS_MARGIN``
    standard deviations of that expectation's noise: a lower bound on the wrong answers
    the slice's overconfidence costs, in rows. None in artifacts without the count."""
    if item.kind != "overconfident" or item.n_wrong is None or item.expected_wrong is None:
        return None
    spread = math.sqrt(max(item.expected_wrong_var or 0.0, 0.0))
    return item.n_wrong - item.expected_wrong - EXCESS_MARGIN * spread


def excess_score(item) -> float:
    """The slice's score from its overconfidence alone: the lower end of its
    confident-error rate's interval beyond the rate expected there (``EXCESS_SCORE``),
    times its size (``SIZE_FACTOR``)."""
    excess = item.rate_low - item.overall_rate
    return interp(excess, EXCESS_SCORE) * interp(item.share, SIZE_FACTOR)


def confidence_inverted(summary, item) -> bool:
    """Whether the model is surer on the slice than on the rest of the rows (a larger
    share of its predictions at the confidence threshold, by ``INVERSION_Z`` standard
    errors) *and* more often wrong when it is sure there than when it is sure on the
    rest (by as many). A model's confidence should fall where its accuracy does: on a
    slice that is merely hard (noisy labels, few training rows) it is less often sure,
    and its overconfidence there is small and common to clean models. Confidence
    rising where accuracy falls is the overconfident-slice mechanism itself
    (probabilities sharpened on one group: a per-group temperature, a post-hoc boost,
    a pattern extrapolated with certainty), measured against the model's own other
    rows rather than against the claimed rate alone. False without the counts."""
    if item.kind != "overconfident" or item.n_wrong is None:
        return False
    if not item.n_rows or not item.n_confident:
        return False
    rest_rows = summary.n_rows - item.n_rows
    rest_confident = summary.n_confident - item.n_confident
    rest_wrong = round(summary.confident_error_rate * summary.n_confident) - item.n_wrong
    if rest_rows <= 0 or rest_confident <= 0 or rest_wrong < 0:
        return False
    surer = share_difference_z(item.n_confident / item.n_rows, item.n_rows,
                               rest_confident / rest_rows, rest_rows)
    wronger = share_difference_z(item.n_wrong / item.n_confident, item.n_confident,
                                 rest_wrong / rest_confident, rest_confident)
    return (
        surer is not None and wronger is not None
        and surer >= INVERSION_Z and wronger >= INVERSION_Z
    )


def excess_per_row(artifact, item) -> tuple[float, float] | None:
    """(on the slice, on the other rows): the model's stated confidence beyond its
    accuracy, in rows, per row. On the slice, its confident errors beyond the error rate
    it claims there (one minus its mean top probability on the slice's confident rows);
    on the other rows, what is left of the whole test split's signed confidence gap
    (mean stated confidence minus accuracy, times the rows). A slice is the seat of a
    global miscalibration only when the model overstates itself more per row there than
    elsewhere. None without the gap or the counts, or with no rows outside the slice."""
    summary, gap = artifact.confidence, artifact.performance.confidence_gap
    if summary is None or gap is None or item.n_wrong is None or not item.n_rows:
        return None
    rest_rows = summary.n_rows - item.n_rows
    if rest_rows <= 0:
        return None
    on_slice = item.n_wrong - item.n_confident * (1.0 - item.mean_confidence)
    return on_slice / item.n_rows, (gap * summary.n_rows - on_slice) / rest_rows


def carries_calibration(artifact, item) -> bool:
    """Whether the slice, not the whole model, carries the model's miscalibration: it
    holds at least ``EXPLAINS_CALIBRATION`` of the confident errors *and* the model
    overstates itself more per row on it than on the other rows (:func:`excess_per_row`;
    True when that is not measured). A slice on which the model is no more overconfident
    than on the rest holds many confident errors because it holds many confident rows
    (a slice of most of the rows, on a model sure nearly everywhere): the overconfidence
    is everywhere, poor_calibration's, and recalibrating every probability is the fix."""
    if (item.share_of_confident_errors or 0.0) < EXPLAINS_CALIBRATION:
        return False
    rates = excess_per_row(artifact, item)
    return rates is None or rates[0] > rates[1]


def slice_explains_chance(artifact) -> bool:
    """Whether an overconfident slice accounts for a no-better-than-chance test score:
    the model is within noise of chance (``underfitting.at_chance``), and with the
    slice's excess confident errors (:func:`excess_errors`, a lower bound) answered
    right it would clear the chance guard's bar. Its score is then the slice's cost,
    not a model that learned nothing: outside the slice it is measurably better than
    chance. Each corrected row lifts accuracy by 1/n, and a macro F1 by about as much
    (the guard's measure); the excess is already a 95% lower bound. Not when the
    measurement has no noise (every prediction the same: the model is at chance on
    every row, whatever one slice adds), nor when the decisions collapse onto one class
    (``degenerate_predictions``' measure): such a model is at chance on every row, and
    a slice merely gathers the rows of the classes it never answers. Nor where the
    labels look unrelated to the features (underfitting's ``signal_is_learnable`` is
    False: no rung of the ladder beats chance and the scores rank no classes): the
    slice is chosen as the place where the confident errors most exceed their claim, so
    answering its excess errors right lifts a model that learned nothing past the bar
    by construction (a memoriser of noise labels states its training certainty on every
    row and is confidently wrong everywhere), which says nothing about the rows outside
    it; the no-signal finding then stays the cause."""
    summary = artifact.confidence
    if summary is None or not summary.n_rows:
        return False
    collapse = one_class_collapse(artifact)
    if collapse is not None and collapse[3] > 0:
        return False
    measured = at_chance(artifact)
    if measured is None or measured.change is None or not measured.noise:
        return False
    if signal_is_learnable(artifact, measured) is False:
        return False
    excess = [
        e for e in (excess_errors(item) for item in summary.slices[:3]) if e is not None
    ]
    if not excess or max(excess) <= 0:
        return False
    lift = max(excess) / summary.n_rows
    return measured.change + lift > CHANCE_NOISE_UNITS * measured.noise


@register_rule
class OverconfidentSlice(Rule):
    id = "overconfident_slice"
    name = "The model is confidently wrong on a slice of the data"
    detects = (
        "A slice of the evaluation data, described by one or two feature conditions, where a "
        "large share of the predictions made with high confidence are wrong: more often than "
        "the model's own confidence there claims (a slice where it hedges although it is "
        "almost always right is the opposite, and not reported here)."
    )
    why = (
        "High-confidence predictions are the ones people and systems act on without review. "
        "A group on which the model is sure and wrong gets wrong decisions automatically; an "
        "overall calibration score averages it away, and recalibrating all probabilities "
        "does not fix it."
    )
    example = (
        "A readmission model is well calibrated overall, but for 'age > 62 and smoker = yes' "
        "40% of its predictions above 0.8 confidence are wrong: the training data held few "
        "such patients and the model extrapolates a pattern that reverses for them."
    )
    fixes = (
        "Look at the slice's rows: collect or label more of them, and check whether a feature "
        "or an interaction that describes the slice is missing (a linear or additive model "
        "cannot express 'the effect reverses when both hold': add the interaction or use a "
        "model that can).",
        "Until fixed, route the slice to review or abstain: lower the confidence of "
        "predictions in the slice, or calibrate per slice (`CalibratedClassifierCV` fitted on "
        "the slice's held-out rows).",
        "Add the slice to the evaluation: report the confident-error rate per slice next to "
        "the overall score and gate releases on it.",
    )
    severity_policy = (
        "Lower end of the Wilson interval of the slice's confident-error rate (top probability"
        " >= 0.8) minus the rate expected there: the error rate the model claims on the "
        "slice (one minus its mean top probability) plus the overconfidence it shows outside "
        "the slice on the same class and confidence band (on the other rows at any "
        "confidence when nearly all its confident predictions fall in the slice): 0.03 -> 0, "
        "0.1 -> 0.45, 0.2 -> 0.6, "
        "0.35 -> 0.75, 0.5 -> 0.85; times the slice's share of the evaluation rows: 2% -> "
        "x0.2, 5% -> x0.6, 10% -> x0.9, 20% -> x1. A slice needs >= 30 confident rows. "
        "Underconfident slices (the model right more often than it claims) are never "
        "reported: that is not this mechanism. A test "
        "score within noise of chance is the slice's cost (it takes the chance guard's "
        "evidence and severity) when the slice's confident errors beyond those expected, "
        "less 2 standard deviations of that expectation, answered right would lift the "
        "score past the guard's bar of 2 noise units, unless the labels look unrelated "
        "to the features (no baseline beats chance, the scores rank no classes): the "
        "slice was picked where the confident errors are most in excess, so removing "
        "them lifts a model without signal by construction. A slice on which the model is sure "
        "more often than on the other rows and, when sure, wrong more often than on them "
        "(each by 1.96 standard errors of a two-proportion test: confidence rising where "
        "accuracy falls) scores at least 0.4 (medium) times its size factor; found by "
        "that alone (its own score under 0.2) it does not explain poor calibration. A "
        "slice holding half or more of the confident errors explains poor calibration "
        "only when the model overstates its confidence more per row on it (its confident "
        "errors beyond the rate it claims there) than on the other rows (the rest of the "
        "split's signed confidence gap): otherwise the overconfidence is global."
    )
    explains = ("weak_segment", "poor_calibration")

    def detect_model(self, artifact):
        summary = artifact.confidence
        if summary is None:
            return
        for item in summary.slices[:3]:
            if item.kind != "overconfident":
                continue
            score = excess_score(item)
            inverted = confidence_inverted(summary, item)
            if inverted:
                score = max(score, INVERSION_SCORE * interp(item.share, SIZE_FACTOR))
            detail = (
                f"{item.description} ({pct(item.share)} of rows): {pct(item.rate)} of "
                f"{item.n_confident} confident predictions wrong (95% interval "
                f"{pct(item.rate_low)}-{pct(item.rate_high)}) vs {pct(item.overall_rate)} "
                f"expected (the model claims {item.mean_confidence:.2f} there)"
            )
            if inverted:
                detail += (
                    f"; it is sure on {pct(item.n_confident / item.n_rows)} of the slice's "
                    "rows, more than on the rest, and wrong more often when sure there "
                    "than on the rest: surer where it is wronger"
                )
            if score <= 0:
                continue
            yield self.signal(
                "model",
                score=score,
                confidence=0.75 if item.n_confident >= 60 else 0.6,
                detail=detail,
                value=item.rate,
                slice=item.description,
                slice_features=item.features,
                kind=item.kind,
                rate=item.rate,
                overall=item.overall_rate,
                share=item.share,
                share_of_errors=item.share_of_confident_errors,
                inverted=inverted,
            )

    def subjects(self, signals, artifact):
        """The features that define the most overconfident slice: a slice is local by
        construction, so only a cause naming one of its features explains it."""
        top = max(
            (s for s in signals if s.facts.get("kind") == "overconfident"),
            key=lambda s: (s.score, s.confidence),
            default=None,
        )
        return tuple(top.facts.get("slice_features") or ()) if top is not None else ()

    def explains_for(self, artifact):
        """Weak segments on the slice's features (not one that fails beyond the slice's
        excess confident errors, :func:`~deepfix_agents.rules.weak_segment.
        segment_beyond_slice`), poor calibration when the slice holds
        most of the confident errors, and a chance-level score the slice's excess
        confident errors account for (:func:`slice_explains_chance`): one cause, not
        several findings."""
        summary = artifact.confidence
        top = next(
            (s for s in (summary.slices if summary else []) if s.kind == "overconfident"), None
        )
        if top is None:
            return ()
        explained = []
        segments = [f"{s.feature} = {s.value}" for s in artifact.performance.segments]
        check = artifact.check("Weak Segments Performance")
        if check is not None:
            segments += [v for k, v in check.details.items() if "segment" in k]
        # ... unless that segment fails beyond the slice's excess confident errors:
        # then the segment is the cause and the slice part of it (weak_segment's
        # ``segment_beyond_slice``, which explains this slice in turn)
        if any(f in text for f in top.features for text in segments) and (
            segment_beyond_slice(artifact) is None
        ):
            explained.append("weak_segment")
        # a shifted prior (a class predicted far more often than it occurs, on train and
        # test: class weights, resampling) miscalibrates every row: global, so no slice
        # explains it, even one that holds most of the confident errors; nor does a
        # slice where the model is too sure explain probabilities that are, on the
        # whole, less sure than the model is right; nor one whose overconfidence beyond
        # its claimed rate would not be reported on its own (found by its inverted
        # confidence alone: a local mark, too few excess errors to carry a global one)
        if carries_calibration(artifact, top) and (
            prior_shift(artifact) is None
        ) and not underconfident(artifact) and not (
            confidence_inverted(summary, top) and excess_score(top) < REPORTED
        ):
            explained.append("poor_calibration")
        # a test score within noise of chance that the slice's excess confident errors
        # account for: the model is above chance outside the slice, so the slice, not
        # "labels unrelated to the features", is the cause the chance guard names
        if slice_explains_chance(artifact):
            explained.append("underfitting")
        return tuple(explained)

    def title(self, signals, artifact):
        where = self.fact(signals, "slice")
        if where is None:
            return self.name
        rate, share = self.fact(signals, "rate"), self.fact(signals, "share")
        return (
            f"On {where} ({pct(share)} of rows) {pct(rate)} of the model's confident "
            "predictions are wrong"
        )

    def explanation(self, signals, artifact):
        where = self.fact(signals, "slice") or "one slice"
        overall = self.fact(signals, "overall") or 0.0
        return (
            f"On {where} the model makes many mistakes while reporting high confidence, far "
            f"more than the {pct(overall)} its own confidence there (and its calibration "
            "elsewhere) would lead one to expect. "
            "Those are the predictions that are acted on without review. The model has likely "
            "learned a pattern that does not hold for this group (too few of its rows in "
            "training, or an interaction the model cannot express)."
        )
