"""spurious_correlation: a feature whose relation to the label holds in training but not
in the evaluation data.

A split-layer category: like label and feature drift it is found only by comparing the
splits, and it says the training sample is not representative of what the model will
meet, in a way drift statistics miss: the feature's own distribution can stay put while
its link to the label flips or vanishes (a shortcut of the training data). Evidence is
``artifact.spurious``: per important feature, the model-free association with the label
in each split with a bootstrap interval of its change, the marginal shift, and how much
the model's score depends on the feature in each split. The harm is the reliance the
model loses: shuffle importance on training minus on evaluation. A categorical feature
of a regression is not read this way: its association (mutual information with the
label's raw values as classes) moves with the label's distinct values per row, not with
the relation. When the feature's distribution shifted as well, drift is the likelier
reading and the score is halved.
The other form, a relation that holds only inside one slice of the data (one site's
watermark) and that the model applies to every row, is scored by the share of the
evaluation decisions outside the slice that follow the feature (``slice_only``).
"""

from __future__ import annotations

import math

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, interp
from deepfix_agents.rules.poor_calibration import prior_shift, underconfident
from deepfix_agents.rules.weak_segment import significant_segments

#: shuffle importance on train minus on test (score units) -> score
RELIANCE_SCORE = ((0.02, 0.0), (0.05, 0.3), (0.1, 0.5), (0.2, 0.7), (0.3, 0.85))
#: minimum |association| in training for a relation to be called one
MIN_ASSOCIATION = 0.1
#: slice-only relations: share of the evaluation decisions outside the slice that follow
#: the feature (classification), or their mean change in target SDs (regression) -> score
SLICE_RELIANCE_SCORE = ((0.03, 0.0), (0.08, 0.3), (0.15, 0.5), (0.25, 0.7), (0.4, 0.85))
SLICE_RELIANCE_SCORE_REGRESSION = ((0.05, 0.0), (0.1, 0.3), (0.2, 0.5), (0.35, 0.7),
                                   (0.5, 0.85))
#: a refit without a broken feature (``drop_feature``) that scores higher on test by
#: more than this many noise units of the change measures the shortcut's harm
REFIT_NOISE_UNITS = 2.0
#: marginal shift (KS / total variation) above which drift is the likelier reading
DRIFT_SHIFT = 0.2
DRIFT_FACTOR = 0.5
#: a classifier whose test outputs are mostly not class labels (a regressor fitted to
#: class codes) has no decisions to follow a feature: every output moves a little when
#: any input is shuffled, so a "share of decisions that change" means nothing
NON_LABEL_OUTPUTS = 0.5


def broken_relations(artifact) -> dict:
    """The features whose relation to the label broke between the splits and whose two
    association readings measure that relation (:func:`broken`,
    :func:`association_is_relation`), by name, in the summary's order."""
    summary = artifact.spurious
    if summary is None:
        return {}
    return {
        item.feature: item for item in summary.features
        if broken(item) and association_is_relation(item, artifact)
    }


def drift_discounted(score: float, item) -> tuple[float, bool]:
    """(``score``, whether the feature's own distribution moved): halved (``DRIFT_FACTOR``)
    when it moved by ``DRIFT_SHIFT`` or more, since drift is then the likelier reading of
    a relation that changed."""
    drifted = item.marginal_shift >= DRIFT_SHIFT
    return (score * DRIFT_FACTOR if drifted else score), drifted


def relation_facts(item, drifted: bool) -> dict:
    """The facts a broken relation's signal carries (title, explanation, tests)."""
    return {"feature": item.feature, "train": item.association_train,
            "test": item.association_test, "shift": item.marginal_shift,
            "drifted": drifted}


def outputs_are_decisions(artifact) -> bool:
    """Whether the model's test outputs are class labels (always true for regression)."""
    if artifact.task == "regression":
        return True
    if artifact.model.output_kind == "continuous":
        return False
    predicted = artifact.performance.prediction_distribution
    dataset = artifact.dataset
    labels = set(dataset.test.label_distribution) if dataset.test is not None else set()
    if dataset.train is not None:
        labels |= set(dataset.train.label_distribution)
    labels -= {"<other>"}
    if not predicted or not labels:
        return True
    outside = sum(v for k, v in predicted.items() if k not in labels)
    return outside < NON_LABEL_OUTPUTS


def broken(item) -> bool:
    """The association weakened (or flipped) beyond its bootstrap interval."""
    if abs(item.association_train) < MIN_ASSOCIATION:
        return False
    sign = math.copysign(1.0, item.association_train)
    # the change interval must lie on the weakening side of zero
    return item.change_high < 0 if sign > 0 else item.change_low > 0


def categorical_features(artifact) -> set:
    """The features the testing step measured as categories: declared or inferred
    categorical (``dataset.cat_features``), or not numeric in a split's summary."""
    names = set(artifact.dataset.cat_features or ())
    for split in (artifact.dataset.train, artifact.dataset.test):
        if split is not None:
            names |= {c.name for c in split.columns if c.kind != "numeric"}
    return names


def association_is_relation(item, artifact) -> bool:
    """Whether a feature's two association readings measure its relation to the label,
    so that their change can show a relation that broke.

    Not for a categorical feature of a regression: its association is the normalised
    mutual information between the feature's codes and the label's raw values, each
    distinct value one class. With a continuous label most rows are a class of their own,
    so the plug-in information reads how many distinct values the label takes per row in
    each split (its chance level is about ``sqrt(H(feature) / H(label))``, whatever the
    relation), not the relation: shuffling the feature leaves it where it was. Noise added
    to some training labels, a smaller training sample or a label rounded differently in
    one split moves that level between the splits, and the change reads as a relation that
    broke (20% label noise on a weak regression: a 0/1 flag at +0.27 in training and
    +0.14 in evaluation, its shuffled copies at +0.22 and +0.16)."""
    if artifact.task != "regression":
        return True
    return item.feature not in categorical_features(artifact)


def lost_share(item) -> float:
    """The share of the training association that the evaluation data no longer shows
    (1 when it vanished or reversed, 0 when it held): a relation that keeps most of its
    strength can cost the model at most a like share of what it relies on."""
    if not item.association_train:
        return 0.0
    kept = math.copysign(1.0, item.association_train) * item.association_test / abs(
        item.association_train
    )
    return min(1.0, max(0.0, 1.0 - kept))


def _slice_reliance_table(task) -> tuple:
    """The reliance-outside-the-slice -> score table for this task."""
    return SLICE_RELIANCE_SCORE_REGRESSION if task == "regression" else SLICE_RELIANCE_SCORE


def _scored_slice_only(summary, task) -> list:
    """The slice-only relations that score (:meth:`SpuriousCorrelation._slice_only`)."""
    table = _slice_reliance_table(task)
    return [item for item in summary.slice_only if interp(item.reliance_outside, table) > 0]


def segment_failure_reads_as_slice(artifact) -> bool:
    """Whether every relation this rule reports is a slice-only one that a failing
    segment of the same column accounts for, so that the weak segment is the finding
    and not its symptom.

    A slice-only relation is a contrast of associations: the feature goes with the
    label inside one level of a column and not in the pooled other levels. A level
    whose labels the model cannot predict (one site's unreliable labels) follows no
    feature, so it dilutes every association in that pool and the contrast appears
    without any shortcut. The two readings differ in where the harm lands: a shortcut
    applied to every row outside its slice costs all of them, a failing level only its
    own rows. So the slice-only relation counts as the weak segment's symptom when a
    level of the slice's column other than the slice is served worse beyond noise
    (:func:`weak_segment.significant_segments`, the weak-segment rule's own tests)
    while another level outside the slice is not (the harm is confined to one level:
    with two levels the readings cannot be told apart, and the shortcut keeps them).
    Only when no train-versus-evaluation break is reported (that form has its own
    harm, the reliance the model loses)."""
    summary = artifact.spurious
    if summary is None or not summary.slice_only or not outputs_are_decisions(artifact):
        return False
    if broken_relations(artifact):
        return False
    scored = _scored_slice_only(summary, artifact.task)
    if not scored:
        return False
    failing = significant_segments(artifact)
    columns = {c.name: c for c in artifact.dataset.test.columns} if artifact.dataset.test else {}
    for item in scored:
        inside = str(item.slice_value)
        weak = {str(s.value) for s in failing if s.feature == item.slice_feature} - {inside}
        column = columns.get(item.slice_feature)
        levels = column.n_unique if column is not None and column.n_unique else 0
        # levels outside the slice that are not failing: at least one must be left
        if not weak or levels - 1 - len(weak) < 1:
            return False
    return True


@register_rule
class SpuriousCorrelation(Rule):
    id = "spurious_correlation"
    name = "A feature's link to the label does not carry over from training"
    detects = (
        "A feature strongly tied to the label in the training data whose tie is much weaker, "
        "absent or reversed in the evaluation data, although its own distribution may not "
        "have changed, and that the model relies on."
    )
    why = (
        "The model learned a shortcut that happened to hold in the training sample (a "
        "collection artefact, a site or device that coincided with the outcome, a proxy that "
        "stopped working). It scores well in training and on data collected the same way, "
        "and fails as soon as the shortcut breaks. Drift checks do not see it because the "
        "feature itself looks the same."
    )
    example = (
        "In the training data, scans from hospital B were mostly positive, so the model "
        "learned 'device = B -> disease'; in the evaluation data device B is used as often as "
        "before but for everyone, and the model's accuracy drops from 0.91 to 0.72."
    )
    fixes = (
        "Find out why the feature predicted the label in training (how and where the rows "
        "were collected and labelled); drop it, or collect training data in which the "
        "shortcut does not hold.",
        "Make training look like deployment: sample (or reweight) training rows so that the "
        "feature and the label are independent where they should be, or group the split "
        "by the source (`GroupKFold`, `GroupShuffleSplit`) so validation sees the break.",
        "Prefer features with a causal or stable link to the label; add a per-source "
        "evaluation to CI so that a broken relation fails a check.",
    )
    severity_policy = (
        "Per feature (the 10 most important, at most 500 rows per split): counted when "
        "|association| in training >= 0.1 and the 95% bootstrap interval of its change lies "
        "on the weakening side of zero (bootstrap standard error, Bonferroni-widened for the "
        "features tested); not for a categorical feature of a regression (its mutual "
        "information with the label's raw values reads how many distinct values the label "
        "takes per row in each split, not the relation). Score from the shuffle importance "
        "on training minus on evaluation (accuracy or R^2), less the median of that gap over "
        "the features (what an overfit model loses on every feature), times the share of the training association that the "
        "evaluation data lost (1 when it vanished or reversed: a link that keeps most of its "
        "strength carries over): 0.02 -> 0, 0.05 -> 0.3, 0.1 -> 0.5, 0.2 -> 0.7, "
        "0.3 -> 0.85; x0.5 when the feature's own distribution moved (KS or total variation "
        ">= 0.2: drift is then the likelier reading). Slice-only relations (|association| "
        ">= 0.3 inside one level of a categorical column with >= 40 rows, <= 0.15 outside, "
        "the interval of the difference above 0.25): the share of evaluation decisions outside "
        "the slice that change when the feature is shuffled there: 0.03 -> 0, 0.08 -> 0.3, "
        "0.15 -> 0.5, 0.25 -> 0.7, 0.4 -> 0.85 (regression: mean change in target SDs, "
        "0.05 -> 0, 0.1 -> 0.3, 0.2 -> 0.5, 0.35 -> 0.7, 0.5 -> 0.85); not scored for a "
        "classifier whose test outputs are mostly not class labels (no decisions to count)."
    )
    explains = (
        "overfitting",
        "weak_segment",
        "underfitting",
        "prediction_drift",
        "poor_calibration",
    )

    def explains_for(self, artifact):
        """With the shortcut's harm measured by a refit without it
        (:meth:`refit_gains`), also the decision threshold: on the evaluation rows the
        feature says nothing, so the probabilities it drove fall where the 0.5 cut-off
        misses the class it marked, and a threshold tuned on those rows looks better. A
        refit without the feature that wins the score back shows the cut-off is the
        shortcut's symptom, not a misplaced threshold of its own.

        A shortcut that holds in training and breaks in evaluation makes the model
        confidently wrong there: the calibration error is its symptom. Not a shifted
        prior (a class predicted far more often than it occurs on the model's own
        training rows too, where the shortcut still holds): class weights or resampling
        do that, a global cause of its own. Nor probabilities that understate the
        model's accuracy: a broken shortcut makes it surer than it is right, not less.
        Nor a weak segment when every relation reported is a slice-only one that the
        segment's own failure accounts for (:func:`segment_failure_reads_as_slice`): the
        segment is then the cause, and both findings are reported."""
        explained = self.explains
        if any(self.refit_gains(artifact)):  # it yields (item, refit) pairs, never falsy
            explained = explained + ("decision_threshold",)
        if prior_shift(artifact) is not None or underconfident(artifact):
            explained = tuple(c for c in explained if c != "poor_calibration")
        if segment_failure_reads_as_slice(artifact):
            explained = tuple(c for c in explained if c != "weak_segment")
        return explained

    def detect_model(self, artifact):
        summary = artifact.spurious
        if summary is None:
            return
        for item in broken_relations(artifact).values():
            # beyond what every feature loses when the model merely fits training better
            loss = item.importance_train - item.importance_test - max(
                summary.typical_importance_gap, 0.0
            )
            # only the share of the relation that broke is the shortcut's harm: a feature
            # whose association keeps 90% of its strength in evaluation still carries
            # over, and a model that loses most of its reliance on it anyway lost it by
            # fitting the training rows (their noise), not by a shortcut that broke
            loss *= lost_share(item)
            score = interp(loss, RELIANCE_SCORE)
            score, drifted = drift_discounted(score, item)
            if score <= 0:
                continue
            yield self.signal(
                "model",
                score=score,
                confidence=0.55 if drifted else 0.8,
                detail=(
                    f"{item.feature!r}: association with the label {item.association_train:+.2f}"
                    f" in training vs {item.association_test:+.2f} in evaluation (change "
                    f"interval {item.change_low:+.2f} to {item.change_high:+.2f}); the feature's"
                    f" own shift {item.marginal_shift:.2f}; shuffling it costs the model "
                    f"{item.importance_train:.3f} {summary.metric} on training, "
                    f"{item.importance_test:.3f} on evaluation"
                ),
                value=loss,
                **relation_facts(item, drifted),
            )
        if outputs_are_decisions(artifact):
            yield from self._slice_only(summary, artifact.task)

    def refit_gains(self, artifact):
        """(item, refit) for each broken feature whose ``drop_feature`` refit scores
        higher on test than the model by more than ``REFIT_NOISE_UNITS`` noise units:
        a model fitted without the shortcut does better on the evaluation rows, so the
        reliance on it is measured harm (a leak's refit scores lower instead)."""
        for name, item in broken_relations(artifact).items():
            refit = artifact.intervention("drop_feature", name)
            if refit is None or refit.change is None or not refit.noise:
                continue
            if refit.change > REFIT_NOISE_UNITS * refit.noise:
                yield item, refit

    def detect_intervention(self, artifact):
        """The shortcut's harm measured: refitted without the broken feature, a clone of
        the model scores higher on test (:meth:`refit_gains`); the gain, on the same
        scale as the reliance lost (score units), is the score."""
        for item, refit in self.refit_gains(artifact):
            score = interp(refit.change, RELIANCE_SCORE)
            score, drifted = drift_discounted(score, item)
            if score <= 0:
                continue
            yield self.signal(
                "intervention",
                score=score,
                confidence=0.6 if drifted else 0.9,
                detail=(
                    f"refitted without {item.feature!r}, a {refit.model_used} of the model "
                    f"scores {refit.score_after:.3f} {refit.metric} on test instead of "
                    f"{refit.score_before:.3f} (noise {refit.noise:.3f}): its training-only "
                    "relation to the label costs the model that much"
                ),
                value=refit.change,
                check="drop_feature",
                **relation_facts(item, drifted),
            )

    def _slice_only(self, summary, task):
        """A relation that holds only inside one slice, applied by the model everywhere."""
        table = _slice_reliance_table(task)
        for item in summary.slice_only:
            score = interp(item.reliance_outside, table)
            score, drifted = drift_discounted(score, item)
            if score <= 0:
                continue
            where = f"{item.slice_feature} = {item.slice_value}"
            moved = (f"{item.reliance_outside:.2f} target SDs on average" if task == "regression"
                     else f"{item.reliance_outside:.0%} of them")
            yield self.signal(
                "model",
                score=score,
                confidence=0.55 if drifted else 0.75,
                detail=(
                    f"{item.feature!r}: association with the label {item.association_inside:+.2f}"
                    f" inside {where} (n={item.n_inside}) vs {item.association_outside:+.2f} "
                    f"outside it (n={item.n_outside}; interval of the difference from "
                    f"{item.difference_low:.2f}); shuffling it among the other evaluation rows "
                    f"changes {moved}; the feature's own shift {item.marginal_shift:.2f}"
                ),
                value=item.reliance_outside,
                feature=item.feature,
                train=item.association_inside,
                test=item.association_outside,
                slice=where,
                shift=item.marginal_shift,
                drifted=drifted,
            )

    def title(self, signals, artifact):
        feature = self.fact(signals, "feature")
        if feature is None:
            return self.name
        a, b = self.fact(signals, "train"), self.fact(signals, "test")
        where = self.fact(signals, "slice")
        if where is not None:
            return (
                f"{feature!r} predicts the label only where {where} ({a:+.2f}; elsewhere "
                f"{b:+.2f}), but the model applies it to every row"
            )
        return (
            f"{feature!r} predicts the label in training ({a:+.2f}) but not in the evaluation "
            f"data ({b:+.2f})"
        )

    def explanation(self, signals, artifact):
        feature = self.fact(signals, "feature")
        where = self.fact(signals, "slice")
        if where is not None:
            return (
                f"{feature!r} goes together with the label only on the rows where {where} (one "
                "site, source or device marked its cases that way) and says nothing about the "
                "others, yet the model's decisions on the other rows follow it too: it learned "
                "one source's shortcut as a general rule. Both splits hold the same pattern, so "
                "this is not drift, and the train/test scores do not reveal it. Drop or "
                "neutralise the feature, or let the model see the source it depends on."
            )
        shift = self.fact(signals, "shift") or 0.0
        drift = (
            f"Its own distribution barely moved (shift {shift:.2f}), so this is not ordinary "
            "drift: the relation itself broke."
            if not self.fact(signals, "drifted")
            else f"Its distribution moved too (shift {shift:.2f}); drift may be part of the story."
        )
        return (
            f"In the training data {feature!r} went together with the label, and the model "
            "learned to rely on it. In the evaluation data that relation is much weaker or "
            f"reversed, so the reliance costs accuracy. {drift} A shortcut of the training "
            "sample is the usual cause."
        )
