"""poor_calibration: predicted probabilities do not match observed frequencies.

Primary evidence is our expected calibration error (ECE) on the test split, less what
binning noise produces on a test set of that size; Deepchecks' Calibration Score (Brier
score per class) corroborates, and stands alone only as a weak hint when the Brier score
is worse than always predicting the class shares.

The ECE's noise level (binned, so large on few rows or with uncertain probabilities)
can hide a miscalibration applied one way to every row; the signed confidence gap, with
no bins, has a far smaller chance level there, and the larger of the two excesses (each
a lower bound on the calibration error) sets the score.

Three measurements beyond the ECE:

* **What recalibration would remove** (log loss): the test log loss against the log loss
  of two recalibrated copies that need no fitting beyond the test rows' own counts: one
  that keeps the model's decisions and states its measured accuracy as its confidence,
  and one that always states the class shares. A calibrated model scores at most about
  the better of the two; the excess is log loss that recalibration alone removes. It is
  named as evidence only (a model that states probabilities of 0 or 1 has an unbounded
  log loss, so the size of the excess is no measure of harm).
* **The confident rows' error rate**: the test rows the model states at least 80% sure
  of (the confidence summary's) should be wrong at most 20% of the time. When they are
  wrong more often beyond the 95% Wilson interval of their rate, the evidence says so in
  words: the overconfidence measured without bins or a noise model, on the predictions
  that are acted on without review. Evidence only (the severity stays the ECE's): it
  fires on the models whose ECE is large anyway, so it adds no separate measure of harm.
* **A shifted prior** (calibration in the large): the model predicts a class far more
  often than it occurs, *on its own training rows* as well as on test. Neither a lack of
  signal nor overfitting does that (both reproduce the training shares); class weights,
  resampling or a prior mismatch do. Then the miscalibration, not a lack of signal,
  explains a near-chance score, and this finding names it.

**What a label shift of the test split accounts for**: when the test split's class
shares differ from training's beyond sampling noise (an unrepresentative test sample,
a later period), a model calibrated for the training shares is miscalibrated on the test
rows by the shift itself. Under a prior shift each row's true probability of a class moves
toward the class that became more common; on a binary task every row moves the same way,
so the mean absolute move is the calibration-in-the-large error of a train-calibrated
model, |Δp| (1 - (E[p | 1] - E[p | 0])), at most |Δp|, the shares' total variation, and a
binned ECE rises by at most that much. The miscalibration measured beyond noise *and*
beyond that bound is the model's own; within it, the label drift (which explains
calibration) is the upstream cause and this finding stays low, behind it.
"""

from __future__ import annotations

import math

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, entropy, interp, pct
from deepfix_agents.rules._shares import class_share_shift
from mlflow_deepfix.intervals import wilson

#: expected calibration error on test (beyond noise) -> score. The noise subtracted is
#: already the 90th percentile of a calibrated model's ECE: 4 points beyond it is a
#: measured (low) harm, not chance
ECE_SCORE = ((0.02, 0.0), (0.04, 0.2), (0.1, 0.4), (0.15, 0.55), (0.25, 0.7), (0.4, 0.85))
#: Brier skill score below 0 (worse than predicting the class shares) -> score
NEGATIVE_SKILL_SCORE = ((0.0, 0.0), (0.2, 0.25), (0.5, 0.4))


#: a class predicted at least this many times as often as it occurs ...
PRIOR_SHIFT_RATIO = 2.0
#: ... and by at least this share of the rows, on train and on test: a shifted prior
PRIOR_SHIFT_EXCESS = 0.1
#: ECE over its noise level at least this many times: the miscalibration is certain
SIGNIFICANT_RATIO = 3.0
#: log loss (nats) recalibration would remove that corroborates the ECE
LOG_LOSS_EXCESS = 0.1
#: fewest confident test rows (top probability at the summary's threshold or above) whose
#: error rate is named as a measurement of overconfidence
MIN_CONFIDENT_ROWS = 30
#: z of the two-sided 95% Wilson interval of that error rate
WILSON_Z = 1.96
#: standard errors of the confidence gap taken as chance (two-sided 95%)
GAP_Z = 1.96
#: the confidence gap (mean stated probability minus accuracy) must carry at least this
#: share of the ECE to name a direction: below it the model is off both ways (over in
#: some bins, under in others) and the words say so
DIRECTION_SHARE = 0.5

#: a class share moved by at least this many standard errors of sampling noise between
#: the splits counts as a label shift whose share of the miscalibration is taken out
#: (label_drift's own bar for a shift beyond noise)
LABEL_SHIFT_Z = 2.0
#: a miscalibration the label shift can account for is reported at most at this score (low)
LABEL_SHIFT_CAP = 0.39

#: fixes when the model states less confidence than it has: what flattens probabilities
UNDERCONFIDENT_FIXES = (
    "Look for what flattens the probabilities between the model and its output: a "
    "temperature applied the wrong way round (multiplied where it should divide), label "
    "smoothing or a prior mixed in at inference, averaging with a uniform or constant "
    "model; remove it, or calibrate the final output on held-out data "
    "(`CalibratedClassifierCV(FrozenEstimator(model), method='isotonic')`).",
    "If nothing is applied after the model, it is over-regularised for its probabilities "
    "(tiny `C`, very large `alpha`, few shallow trees): calibrate on held-out data, or "
    "loosen the regularisation and re-check the reliability diagram "
    "(`CalibrationDisplay.from_estimator`).",
)


def recalibration_gain(artifact) -> float | None:
    """Test log loss minus the better of two recalibrated copies' log loss: the model's
    decisions with its measured accuracy as confidence (the rest spread evenly over the
    other classes), and the test class shares stated for every row. None without a log
    loss or an accuracy."""
    scores = artifact.performance.scores.get("test", {})
    log_loss, accuracy = scores.get("log_loss"), scores.get("accuracy")
    shares = artifact.dataset.test.label_distribution
    if log_loss is None or accuracy is None or len(shares) < 2:
        return None
    k = len(shares)
    stated = -accuracy * math.log(max(accuracy, 1e-12))
    if accuracy < 1.0:
        stated -= (1.0 - accuracy) * math.log((1.0 - accuracy) / (k - 1))
    return log_loss - min(stated, entropy(shares.values()))


def prior_shift(artifact) -> dict | None:
    """The class the model predicts far more often than it occurs, on train and on test
    (``PRIOR_SHIFT_RATIO`` times and ``PRIOR_SHIFT_EXCESS`` more of the rows on both),
    with its shares; None when there is none or the train predictions are unknown."""
    performance, dataset = artifact.performance, artifact.dataset
    if dataset.train is None or not performance.train_prediction_distribution:
        return None
    found = None
    for label, share in dataset.train.label_distribution.items():
        on_train = performance.train_prediction_distribution.get(label, 0.0)
        test_share = dataset.test.label_distribution.get(label)
        on_test = performance.prediction_distribution.get(label, 0.0)
        if test_share is None or share <= 0 or test_share <= 0:
            continue
        if all(
            predicted >= PRIOR_SHIFT_RATIO * true and predicted - true >= PRIOR_SHIFT_EXCESS
            for predicted, true in ((on_train, share), (on_test, test_share))
        ):
            ratio = on_test / test_share
            if found is None or ratio > found["ratio"]:
                found = {"label": label, "share": test_share, "predicted": on_test,
                         "train_share": share, "train_predicted": on_train, "ratio": ratio}
    return found


def confident_overclaim(artifact) -> dict | None:
    """The test rows the model is confident on (top probability at the confidence
    summary's threshold or above, at least ``MIN_CONFIDENT_ROWS`` of them) when their
    error rate is, beyond its 95% Wilson interval, above the most the model claims there
    (one minus the threshold). No bins and no noise model: a direct measurement that the
    stated confidence overstates the observed accuracy. None otherwise."""
    summary = artifact.confidence
    if summary is None or summary.n_confident < MIN_CONFIDENT_ROWS:
        return None
    claimed = 1.0 - summary.threshold
    n = summary.n_confident
    low = wilson(summary.confident_error_rate * n, n, WILSON_Z)[0]
    if low <= claimed:
        return None
    return {"n": summary.n_confident, "rate": summary.confident_error_rate, "low": low,
            "claimed": claimed, "threshold": summary.threshold}


def label_shift(artifact) -> dict | None:
    """The test split's class shares against training's when they differ beyond sampling
    noise (the most moved class's share at least ``LABEL_SHIFT_Z`` standard errors off):
    {"tv": total variation of the shares, "label", "train_share", "test_share", "z"}.
    The total variation bounds how far a prior shift alone moves a train-calibrated
    model's calibration error (module docstring). None without both splits' shares or
    within noise."""
    shift = class_share_shift(artifact.dataset)
    if shift is None or shift["z"] < LABEL_SHIFT_Z:
        return None
    return shift


def direction(ece: float, gap: float | None) -> str | None:
    """``"over"`` or ``"under"`` when the signed confidence gap carries at least
    ``DIRECTION_SHARE`` of the ECE, ``"mixed"`` when it does not, None when unknown (an
    artifact from before the gap was measured)."""
    if gap is None or ece <= 0:
        return None
    if abs(gap) < DIRECTION_SHARE * ece:
        return "mixed"
    return "over" if gap > 0 else "under"


def gap_excess(artifact, ece: float, n_test: int) -> float | None:
    """How far the signed confidence gap (mean stated confidence minus accuracy) lies
    beyond what a calibrated model shows by chance: |gap| less ``GAP_Z`` standard errors.
    Under calibration each row is right with its stated probability c_i, so the gap's
    variance is sum c_i (1 - c_i) / n^2, at most cbar (1 - cbar) / n (cbar the mean
    stated confidence). Like the ECE less its noise level it is a lower bound on the
    calibration error, but with no bins it is the stronger test of a one-way error
    on few rows or with uncertain probabilities (whose ECE noise level swamps a
    flattening or sharpening applied to every row). None without a gap or accuracy."""
    gap = artifact.performance.confidence_gap
    accuracy = artifact.performance.scores.get("test", {}).get("accuracy")
    if gap is None or accuracy is None or n_test <= 0:
        return None
    stated = min(max(accuracy + gap, 0.0), 1.0)
    return min(abs(gap), ece) - GAP_Z * math.sqrt(stated * (1.0 - stated) / n_test)


def one_way_excess(artifact) -> float | None:
    """The model's one-way calibration error on its test rows beyond what a calibrated
    model shows by chance (:func:`gap_excess` with its ECE), or None when it is not
    measured or within chance. The reading both capacity rules size their calibration
    harm by: a memoriser's overconfidence (``overfitting``) and an underfitted model's
    underconfidence (``underfitting``); the direction is theirs to check."""
    ece = artifact.performance.calibration_error
    if ece is None:
        return None
    excess = gap_excess(artifact, ece, artifact.dataset.test.n_rows)
    return excess if excess is not None and excess > 0 else None


def underconfident(artifact) -> bool:
    """Whether the model's probabilities are off mostly one way, below its accuracy
    (:func:`direction` ``"under"``). Causes that make a model confidently wrong (a
    shortcut that breaks, a slice it is sure and wrong on) cannot explain that."""
    ece = artifact.performance.calibration_error
    return ece is not None and direction(ece, artifact.performance.confidence_gap) == "under"


def ece_noise(n_test: int) -> float:
    """ECE a perfectly calibrated model shows by chance on ``n_test`` rows with 10
    equal-frequency bins: about 0.65/sqrt(n) for confident and 1.15/sqrt(n) for
    uncertain models on average (simulated), so 1/sqrt(n): 0.1 at 100 rows, 0.03 at 1000."""
    return 1.0 / math.sqrt(max(n_test, 1))


def brier_skill(artifact, check) -> tuple[float, float] | None:
    """(Brier score, skill) of the worst class: skill = 1 - Brier / Brier of always
    predicting the class's test share, p (1 - p). Below 0 the probabilities are worse
    than knowing the class shares alone."""
    shares = artifact.dataset.test.label_distribution
    if not shares:
        return None
    per_class = {
        k.removeprefix("brier_"): v for k, v in (check.values or {}).items() if v is not None
    }
    if not per_class and check.value is not None:
        # only the largest Brier score: compare with the most uncertain class
        per_class = {max(shares, key=lambda k: (shares[k] * (1 - shares[k]), k)): check.value}
    worst = None
    for label, brier in sorted(per_class.items()):
        p = shares.get(label)
        if p is None or p <= 0 or p >= 1:
            continue
        skill = 1.0 - brier / (p * (1 - p))
        if worst is None or skill < worst[1]:
            worst = (brier, skill)
    return worst


@register_rule
class PoorCalibration(Rule):
    id = "poor_calibration"
    name = "Predicted probabilities are not calibrated"
    detects = (
        "Predicted probabilities that do not match how often the predicted outcome really "
        "happens (expected calibration error on the test split)."
    )
    why = (
        "Anything that uses the probabilities, such as risk scores, thresholds, expected "
        "costs or ranking by confidence, is wrong by the calibration error: '90% sure' events"
        " that happen 60% of the time mislead every decision built on them."
    )
    example = (
        "A boosted model's predictions cluster at 0.02 and 0.98, but among rows scored 0.98 "
        "only 75% are positive; or a model trained on oversampled data predicts 40% risk for "
        "a 5% event."
    )
    fixes = (
        "Calibrate on held-out data: `CalibratedClassifierCV(model, method='isotonic', cv=5)` "
        "(or `method='sigmoid'` for small data), or `FrozenEstimator` + a calibration split.",
        "If training used resampling or class weights, map the probabilities back to the "
        "true prevalence, or calibrate afterwards; re-tune the decision threshold after "
        "calibrating.",
        "Reduce overconfidence at the source: regularise (fewer/shallower trees, larger "
        "`min_samples_leaf`, early stopping) and check the reliability diagram "
        "(`CalibrationDisplay.from_estimator`).",
        "Judge probabilities with proper scores (Brier score, log loss) alongside accuracy.",
    )
    severity_policy = (
        "ECE on test less its noise level (the 90th percentile ECE of a perfectly calibrated model with the same confidences on as many rows, simulated; 1/sqrt(n_test) when not measured), or, when larger, the signed confidence gap (mean stated confidence - accuracy, at most the ECE) less 1.96 of its standard errors under calibration (sqrt(c(1-c)/n_test), c the mean stated confidence): 0.02 -> 0, 0.04 -> 0.2, 0.1 -> 0.4, 0.15 ->"
        " 0.55, 0.25 -> 0.7, 0.4 -> 0.85. Only with predicted probabilities. Deepchecks "
        "Calibration Score corroborates at our score when its worst class's Brier skill (1 - "
        "Brier / p(1-p)) is under 0.5; without our ECE, a skill below 0 (worse than "
        "predicting the class shares) gives 0.25 at -0.2 up to 0.4. Confidence 0.85 (0.65 under "
        "200 test rows). When the ECE is at least 3x its noise level and the test log loss "
        "exceeds, by 0.1 nats or more, that of the better of two recalibrated copies (the "
        "measured accuracy stated as confidence, or the class shares), the evidence names "
        "the log loss recalibration would remove; when the test rows it states at least 80% "
        "sure of (30 or more) are wrong more often than the 20% it claims at most, beyond "
        "the 95% Wilson interval of their error rate, the evidence names that rate (the "
        "severity stays the ECE's). A class predicted 2x as often as it occurs and by"
        " 10 points more, on train and on test (a shifted prior: class weights, "
        "resampling), makes this finding the cause of a near-chance score. When the test "
        "split's class shares differ from training's by 2 standard errors or more, the "
        "excess is scored less their total variation (what the label shift alone can add "
        "to a train-calibrated model's error), and at most low (0.39) when that leaves "
        "nothing beyond the bands."
    )
    #: not ``weak_segment``: a segment is weak in its wrong decisions (its error rate
    #: against the other rows'), and miscalibration is a misstatement of confidence.
    #: Recalibrating (one monotone map of the stated probabilities, the same for every
    #: row) moves a decision, if at all, for every row stated at that probability,
    #: whatever its segment: it cannot make one group fail while the rest do not.
    #: Folding the segment in hid a measured segment failure behind the confidence
    #: error (DEV: a naive Bayes model on penguins whose one island's labels are all
    #: shuffled). A shift of every row's decisions is ``decision_threshold``'s.
    explains = ("decision_threshold",)
    checks = ("Calibration Score",)

    def explains_for(self, artifact):
        """With a shifted prior the miscalibration also explains a near-chance score:
        the decisions follow probabilities pushed toward one class."""
        if prior_shift(artifact) is not None:
            return self.explains + ("underfitting",)
        return self.explains

    def _own(self, artifact) -> dict | None:
        ece = artifact.performance.calibration_error
        if ece is None or artifact.task == "regression":
            return None
        n_test = artifact.dataset.test.n_rows
        noise = artifact.performance.calibration_noise
        noise = ece_noise(n_test) if noise is None else noise
        beyond_gap = gap_excess(artifact, ece, n_test)
        excess = ece - noise
        if beyond_gap is not None:
            excess = max(excess, beyond_gap)
        score = interp(excess, ECE_SCORE)
        shift = label_shift(artifact)
        if shift is not None and score > 0:
            # the part a prior shift of the test split can produce is the split's, not the
            # model's: score what lies beyond it, and at most low when nothing does (the
            # label drift, which explains calibration, then ranks ahead as the cause)
            score = min(score, max(interp(excess - shift["tv"], ECE_SCORE), LABEL_SHIFT_CAP))
        return {"ece": ece, "score": score, "n_test": n_test,
                "noise": noise, "gap_excess": beyond_gap, "excess": excess,
                "label_shift": shift}

    def detect_model(self, artifact):
        own = self._own(artifact)
        if own is None or own["score"] <= 0:
            return
        confidence = 0.85 if own["n_test"] >= 200 else 0.65
        detail = (
            f"expected calibration error {own['ece']:.3f} on {own['n_test']} test rows "
            "(predicted probability vs observed frequency, 10 bins); a calibrated model "
            f"with the same confidences reaches {own['noise']:.3f} by chance"
        )
        beyond_gap = own["gap_excess"]
        if beyond_gap is not None and beyond_gap > own["ece"] - own["noise"]:
            # the unbinned measurement carries the finding: say so, with its chance level
            gap = artifact.performance.confidence_gap
            detail += (
                f"; its stated confidence is off by {abs(gap):.3f} one way on average, "
                f"where a calibrated model's stays within "
                f"{min(abs(gap), own['ece']) - beyond_gap:.3f} (95%)"
            )
        significant = own["noise"] > 0 and own["ece"] >= SIGNIFICANT_RATIO * own["noise"]
        gain = recalibration_gain(artifact)
        if significant and gain is not None and gain >= LOG_LOSS_EXCESS:
            # an independent measurement agrees (proper scoring, not binning): named as
            # evidence. It does not raise the confidence: on DEV that let inherently
            # miscalibrated models' low findings outrank planted bugs of other categories
            detail += (
                f"; recalibrating would cut the test log loss by at least {gain:.2f} nats "
                "(vs stating the measured accuracy, or the class shares, as confidence)"
            )
        overclaim = confident_overclaim(artifact)
        if overclaim is not None:
            # the harm in words: the predictions stated with high confidence, those acted
            # on without review, are wrong more often than the model says they can be
            detail += (
                f"; of the {overclaim['n']} test rows it is at least "
                f"{pct(overclaim['threshold'])} sure of, {pct(overclaim['rate'])} are wrong "
                f"(95% interval from {pct(overclaim['low'])}), more than the "
                f"{pct(overclaim['claimed'])} it claims at most"
            )
        shift = prior_shift(artifact)
        if shift is not None:
            detail += (
                f"; the model predicts class {shift['label']!r} for {pct(shift['predicted'])}"
                f" of test rows ({pct(shift['train_predicted'])} of its training rows) "
                f"though it is {pct(shift['share'])} of them: its probabilities are shifted "
                "toward it (class weights, resampling or a prior mismatch)"
            )
        moved = own["label_shift"]
        if moved is not None:
            within = own["excess"] - moved["tv"] <= 0
            detail += (
                f"; the test split's class shares moved (class {moved['label']!r} "
                f"{pct(moved['train_share'])} of train, {pct(moved['test_share'])} of test, "
                f"{moved['z']:.1f} standard errors): a model calibrated for the training "
                f"shares is off by up to their total variation, {moved['tv']:.2f}, on these "
                "rows by the shift alone"
                + (", which accounts for all of this miscalibration: at most low"
                   if within else "")
            )
        gap = artifact.performance.confidence_gap
        way = direction(own["ece"], gap)
        if way in ("over", "under"):
            accuracy = artifact.performance.scores.get("test", {}).get("accuracy")
            if accuracy is not None:
                detail += (
                    f"; it states {pct(min(max(accuracy + gap, 0.0), 1.0))} confidence in "
                    f"its predicted class on average and is right on {pct(accuracy)} of "
                    f"the rows: {way}confident"
                )
        yield self.signal(
            "model",
            score=own["score"],
            confidence=confidence,
            detail=detail,
            value=own["ece"],
            ece=own["ece"],
            confidence_gap=gap,
            direction=way,
            log_loss_excess=gain,
            confident_error_rate=None if overclaim is None else overclaim["rate"],
            shifted_class=None if shift is None else shift["label"],
        )

    def detect_deepchecks(self, artifact):
        check = artifact.check("Calibration Score")
        if (
            check is None
            or check.outcome in ("errored", "skipped")
            or artifact.task == "regression"
        ):
            return
        found = brier_skill(artifact, check)
        if found is None:
            return
        brier, skill = found
        own = self._own(artifact)
        if own is not None:
            # the Brier score mixes calibration with discrimination: it only corroborates
            if own["score"] > 0 and skill < 0.5:
                yield self.check_signal(
                    check, score=own["score"], confidence=0.45, brier=brier, skill=skill
                )
            return
        if skill < 0:
            yield self.check_signal(
                check,
                score=interp(-skill, NEGATIVE_SKILL_SCORE),
                confidence=0.4,
                brier=brier,
                skill=skill,
            )

    def title(self, signals, artifact):
        ece = self.fact(signals, "ece")
        way = {"over": "overconfident", "under": "underconfident"}.get(
            self.fact(signals, "direction"))
        if ece is not None and way is not None:
            return (
                f"Predicted probabilities are {way}: off by {ece:.0%} on average "
                f"(expected calibration error {ece:.2f})"
            )
        if ece is not None:
            return (
                f"Predicted probabilities are off by {ece:.0%} on average "
                f"(expected calibration error {ece:.2f})"
            )
        brier = self.fact(signals, "brier")
        if brier is not None:
            return f"Probabilities score worse than the class shares alone (Brier {brier:.2f})"
        return self.name

    def fix_list(self, signals, artifact):
        """Underconfidence has other causes than overconfidence: its fixes come first."""
        fixes = super().fix_list(signals, artifact)
        if self.fact(signals, "direction") == "under":
            return list(dict.fromkeys([*UNDERCONFIDENT_FIXES, *fixes]))
        return fixes

    def explanation(self, signals, artifact):
        way = self.fact(signals, "direction")
        if way == "under":
            return (
                "When the model says '60% likely', the event should happen about 60% of the "
                "time. Here it happens far more often: the model is right more often than it "
                "says, so its probabilities understate what it knows. A risk cut-off, an "
                "expected cost or a ranking by confidence built on them is off, and too "
                "many confident, correct predictions get sent for review. Typical causes "
                "are something that flattens the probabilities after the model (a "
                "temperature applied the wrong way, label smoothing or a prior mixed in at "
                "inference) and heavy regularisation."
            )
        return (
            "When the model says '80% likely', the event should happen about 80% of the time. "
            "Here the stated probabilities and the observed frequencies differ clearly, so any "
            "decision that uses the probabilities (a risk cut-off, an expected cost, a ranking "
            "by confidence) is systematically off. Typical causes are overconfident models "
            "(deep trees, many boosting rounds), training on resampled or re-weighted data, "
            "and a shift between training and test data."
        )
