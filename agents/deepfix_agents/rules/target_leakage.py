"""target_leakage: a feature that encodes the label."""

from __future__ import annotations

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, interp
from deepfix_agents.rules.outliers import SEPARATED_GAP

#: association of one feature with the label -> impact score
#: (|2*AUC-1| for classes, |Spearman| for regression, NMI for categoricals). Strong real
#: features reach ~0.95 (e.g. tumour size on breast cancer), so only near-perfect
#: associations count.
ASSOCIATION_SCORE = ((0.97, 0.05), (0.98, 0.3), (0.99, 0.55), (0.997, 0.8), (1.0, 0.9))
PPS_SCORE = ((0.8, 0.1), (0.9, 0.4), (0.97, 0.7), (1.0, 0.85))


#: below this many training rows a single feature separating the classes is plausible by
#: chance, so the score is scaled down linearly (to half at 0 rows)
RELIABLE_ROWS = 1000
#: one-vs-rest associations overstate multiclass leakage: a real feature often isolates
#: one class perfectly (petal length and setosa), a leak predicts every class
MULTICLASS_FACTOR = 0.6


#: association of a feature whose information is the label's alone (see
#: ``label_only``) -> impact score: a post-outcome value need not be near-perfect to be
#: a leak, it only has to carry nothing but the answer
LABEL_ONLY_SCORE = ((0.8, 0.45), (0.9, 0.6), (0.97, 0.75), (0.99, 0.85))
#: how many null standard errors above chance the other features must explain for the
#: feature to count as sharing causes with them (real) rather than label-only
SHARED_NOISE_UNITS = 3.0
#: ... and at most this many null standard errors above chance for it to count as
#: label-only: the verdict accepts the null (the others explain no more than random
#: predictors would), which a statistic 2-3 standard errors above the null mean does not
#: support (as likely a real feature shared with one column among many noise columns as a
#: post-outcome value): in between, no verdict. The "within noise" bar of the other
#: measured tests (2 noise units)
LABEL_ONLY_NOISE_UNITS = 2.0
#: the test needs other features to share with
MIN_OTHER_FEATURES = 3
#: ... and enough rows for them: random predictors explain p/(n-1) of anything on their
#: own, so with many features for few rows (a table padded with collected noise columns)
#: the bar a shared feature must clear (that mean plus SHARED_NOISE_UNITS standard
#: errors) rises until a real feature the others explain less than half of passes as
#: label-only. Above this bar the test has no power to tell the two apart: no verdict
MAX_LABEL_ONLY_BAR = 0.5
#: a label-only feature that the model does not use (shuffling it on test costs no more
#: than the noise of that measurement) does this model no measured harm: its score is
#: scaled by this factor
UNUSED_LEAK_FACTOR = 0.5
#: score change below which a shuffle costs nothing, whatever its noise estimate
UNUSED_LEAK_FLOOR = 0.01
#: a shared feature (the label-only test fails) whose drop-and-refit keeps at least this
#: share of the model's skill above chance is a real signal the other features carry
#: too: whatever it adds beyond them is the most a leak in it could inflate the score
SHARED_SKILL_KEPT = 0.8
#: confidence factor of an association pattern (dataset, Deepchecks and importance
#: signals) on a feature measured to be a real, shared signal (:func:`shared_real_signal`):
#: the measurement contradicts the leak reading, so the pattern is weaker support
SHARED_CONFIDENCE_FACTOR = 0.5
#: ... and its score is scaled by ``UNUSED_LEAK_FACTOR`` as well: the same measurement
#: bounds the harm. A leak inflates the evaluation score by what the model could not
#: score without it; a shared feature's drop-and-refit keeps the score (within noise, or
#: most of the skill above chance), so even read as a leak it inflates nothing the model
#: does not earn from the other features -- the measured harm of an unused feature. A
#: strong real predictor (today's temperature for tomorrow's, a series from its own
#: lags, petal size for the species) is exactly this: strong, shared with its
#: neighbours, and replaceable by them.
#:
#: The same factors apply to a pattern on a feature measured NOT to be sufficient
#: (:func:`needed_beside`): another feature whose drop-and-refit costs the model beyond
#: that measurement's noise and more than ``1 - SHARED_SKILL_KEPT`` of its skill above
#: chance. A column derived from the label carries everything the label does: given it,
#: the other features add nothing, and dropping any of them costs nothing. A legitimate
#: strong predictor that isolates one class or one stretch of the target (longitude
#: separates the western census region, flipper length the Gentoo penguins, feed intake
#: a pig's weight over time) is near-perfect by its association but leaves the rest to
#: the other features (latitude for the other regions, bill length for Adelie and
#: Chinstrap, time on test): the model needs them too. That is the measured
#: counterpart of ``MULTICLASS_FACTOR``'s one-vs-rest argument, and holds for regression.


def unused_by_model(permuted, dropped=None) -> bool:
    """True when shuffling the feature across test rows costs the model nothing beyond
    the noise of that measurement: the model does not rely on it. A refit of the model
    itself (``dropped``, a clone, not a surrogate) whose score falls without the feature
    beyond that measurement's noise says the opposite: a shuffle whose noise is as
    large as its effect (a regression whose shuffled predictions swing wildly) cannot
    outvote it."""
    if permuted is None or permuted.change is None or not _costs_nothing(permuted):
        return False
    if dropped is not None and dropped.change is not None and dropped.model_used == "clone":
        return _costs_nothing(dropped)
    return True


def _costs_nothing(measured) -> bool:
    """Removing the feature (shuffled across test rows, or dropped and refitted) costs
    the model no more than twice that measurement's noise, or ``UNUSED_LEAK_FLOOR``."""
    return -measured.change <= max(2.0 * (measured.noise or 0.0), UNUSED_LEAK_FLOOR)


def label_only_verdict(intervention) -> bool | None:
    """True when the other features explain no more of the feature (beyond the label)
    than as many random predictors would: R² of p random predictors on n rows is
    Beta(p/2, (n-p-1)/2), mean ``score_before``, standard error ~ sqrt(2p)/n; "no
    more" is within ``LABEL_ONLY_NOISE_UNITS`` of them. False when they explain more
    than ``SHARED_NOISE_UNITS`` (the feature shares causes with them), None when the
    statistic falls in between (neither reading is supported: a real feature shared
    with one column among many noise columns lands there) or the test cannot be read
    (scores missing, fewer than ``MIN_OTHER_FEATURES`` other features, too few rows for
    them, or so many features per row that the bar rises above ``MAX_LABEL_ONLY_BAR``)."""
    if intervention.score_after is None or intervention.score_before is None:
        return None
    p = intervention.values.get("n_other", 0.0)
    if p < MIN_OTHER_FEATURES or intervention.n_rows <= p + 10:
        return None
    se = (2.0 * p) ** 0.5 / intervention.n_rows
    bar = intervention.score_before + SHARED_NOISE_UNITS * se
    if bar > MAX_LABEL_ONLY_BAR:
        return None
    if intervention.score_after > bar:
        return False
    if intervention.score_after <= intervention.score_before + LABEL_ONLY_NOISE_UNITS * se:
        return True
    return None


#: a group of a column's values beyond the 5-IQR fences set apart from the rest by the
#: outliers rule's empty gap (:data:`~deepfix_agents.rules.outliers.SEPARATED_GAP`
#: decades on the log scale, ``ColumnStats.outlier_gap``) on at least this share of the
#: training rows: values typed in another unit or a code
SEPARATED_SHARE = 0.01


def separated_cluster(artifact, feature: str) -> bool:
    """Whether the training values of ``feature`` hold a separate cluster of extreme
    values (:data:`SEPARATED_GAP`, :data:`SEPARATED_SHARE`). The label-only test
    measures how much of the feature's variation beyond the label the other features
    explain (an R²); values typed x1000 on a few percent of the rows carry nearly all of
    that variation, at random with respect to every other column, so nothing explains
    them and a real feature reads as label-only: the verdict then says nothing about a
    leak (the unit error is the outliers rule's finding)."""
    train = artifact.dataset.train
    column = train.column(feature) if train is not None else None
    return (
        column is not None
        and column.outlier_gap is not None
        and column.outlier_gap >= SEPARATED_GAP
        and (column.outlier_fraction or 0.0) >= SEPARATED_SHARE
    )


def label_only(intervention) -> bool:
    """The label-only test passed (see :func:`label_only_verdict`)."""
    return label_only_verdict(intervention) is True


def shared_real_signal(artifact, feature: str) -> bool:
    """True when the measurements say a strong feature is a real, shared signal rather
    than a leak: the other features explain it well beyond the label (the label-only
    test fails: it shares causes with them), and dropping it and refitting costs the
    model no more than that measurement's noise, or keeps at least
    :data:`SHARED_SKILL_KEPT` of its skill above chance (the other features carry what
    it knows). A post-outcome value is neither: nothing else in the row explains it,
    and without it the score falls back to what the real features can do."""
    measured = artifact.intervention("label_only_feature", feature)
    if measured is None or label_only_verdict(measured) is not False:
        return False
    dropped = artifact.intervention("drop_feature", feature)
    if dropped is None or dropped.change is None:
        return False
    if _costs_nothing(dropped):
        return True
    chance = dropped.values.get("chance")
    if chance is None or dropped.score_before is None or dropped.score_after is None:
        return False
    skill = dropped.score_before - chance
    return skill > 0 and (dropped.score_after - chance) >= SHARED_SKILL_KEPT * skill


def needed_beside(artifact, feature: str):
    """The drop-and-refit measurement (``drop_feature``) of another feature that the model
    needs beside ``feature``, or None: holding that feature at its typical value and
    refitting costs more than twice that measurement's noise (and ``UNUSED_LEAK_FLOOR``)
    AND more than ``1 - SHARED_SKILL_KEPT`` of the model's skill above chance (measured
    by the same refit). Then ``feature`` alone does not carry what the model knows, so it
    is no copy of the label: a label copy makes every other feature redundant. The costliest
    such measurement is returned. None when no other feature was measured (the refits run
    for the strongest associations only), or the model has no skill above chance to
    share."""
    found = None
    for dropped in artifact.interventions:
        if dropped.kind != "drop_feature" or dropped.target == feature:
            continue
        if dropped.change is None or _costs_nothing(dropped):
            continue
        chance = dropped.values.get("chance")
        if chance is None or dropped.score_before is None or dropped.score_after is None:
            continue
        skill = dropped.score_before - chance
        if skill <= 0 or (dropped.score_after - chance) >= SHARED_SKILL_KEPT * skill:
            continue
        if found is None or dropped.change < found.change:
            found = dropped
    return found


def _pattern_factors(artifact, feature: str) -> tuple[float, float, str]:
    """(score factor, confidence factor, evidence note) of an association pattern on
    ``feature``: ``UNUSED_LEAK_FACTOR`` and ``SHARED_CONFIDENCE_FACTOR`` when the
    measurements say it is a real signal -- shared with the other features and
    replaceable by them (:func:`shared_real_signal`), or not sufficient without another
    feature (:func:`needed_beside`) -- else 1, 1 and no note. Applied once when both hold."""
    if shared_real_signal(artifact, feature):
        return UNUSED_LEAK_FACTOR, SHARED_CONFIDENCE_FACTOR, (
            ", but the other features explain it beyond the label and dropping "
            "it and refitting keeps the score: a real signal they share"
        )
    other = needed_beside(artifact, feature)
    if other is not None:
        return UNUSED_LEAK_FACTOR, SHARED_CONFIDENCE_FACTOR, (
            f", but the model still needs {other.target!r} beside it: dropping that and "
            f"refitting moved test {other.metric} from {other.score_before:.3f} to "
            f"{other.score_after:.3f} (noise {other.noise or 0:.3f}), so {feature!r} alone "
            "does not carry the answer, as a copy of the label would"
        )
    return 1.0, 1.0, ""


#: share of its training association with the label that a feature must keep on the
#: evaluation split to be read as a leak there: a value derived from the label (or
#: recorded after the outcome) encodes it in every split alike, so it keeps all of it up
#: to sampling noise
LEAK_KEPT_SHARE = 0.5


def tie_broke_in_evaluation(artifact, feature: str) -> bool:
    """True when the testing step's train-versus-evaluation comparison of ``feature``'s
    link to the label (``artifact.spurious``) shows the link broke: the 95 % interval of
    its change lies on the weakening side of zero and the evaluation split keeps less
    than :data:`LEAK_KEPT_SHARE` of the training association.

    A leak is the label written into a feature, so it holds wherever the label is
    recorded: on the evaluation rows as on the training rows, which is how it inflates
    the evaluation score. A near-perfect association that holds on the training rows
    only is a shortcut of the training sample (a batch, a site, a collection artefact
    that coincided with the outcome): the evaluation score is not inflated by it but
    lowered, and the spurious_correlation rule measures that harm (the reliance the
    model loses). Not read for a categorical feature of a regression, whose association
    (mutual information with the label's raw values) moves with the label's distinct
    values per row, not with the relation."""
    summary = artifact.spurious
    if summary is None:
        return False
    if artifact.task == "regression":
        train = artifact.dataset.train
        column = train.column(feature) if train is not None else None
        if column is None or column.kind != "numeric":
            return False
    for item in summary.features:
        if item.feature != feature or not item.association_train:
            continue
        positive = item.association_train > 0
        weakened = item.change_high < 0 if positive else item.change_low > 0
        kept = item.association_test / item.association_train
        return weakened and kept < LEAK_KEPT_SHARE
    return False


def _damping(artifact) -> float:
    train = artifact.dataset.train
    rows = train.n_rows if train is not None else 0
    factor = 0.5 + 0.5 * min(rows / RELIABLE_ROWS, 1.0)
    if artifact.task == "multiclass_classification":
        factor *= MULTICLASS_FACTOR
    return factor


def _leaky_columns(artifact, threshold: float = 0.97):
    train = artifact.dataset.train
    if train is None:
        return []
    features = set(artifact.dataset.feature_names)
    found = []
    for column in train.columns:
        if column.name not in features or column.monotonic:
            continue
        if column.target_association is not None and column.target_association >= threshold:
            found.append(column)
    return sorted(found, key=lambda c: (-(c.target_association or 0), c.name))


@register_rule
class TargetLeakage(Rule):
    id = "target_leakage"
    name = "A feature leaks the label"
    detects = (
        "A feature whose relation with the label is too strong to be real: it is derived "
        "from the label or recorded after the outcome."
    )
    why = (
        "At prediction time that information does not exist yet, so the model learns a "
        "shortcut: it scores near-perfectly in evaluation and fails in production."
    )
    example = (
        "A churn model uses `days_since_cancellation`, which is only filled in for customers "
        "who already churned."
    )
    fixes = (
        "Remove the leaking feature(s) and retrain; for each feature ask 'would I know this "
        "value at the moment the prediction is made?'.",
        "Build features only from data timestamped before the prediction time (point-in-time "
        "joins), and keep target-derived encodings inside the cross-validation folds "
        "(e.g. `TargetEncoder` in a `Pipeline`).",
        "Compare the score with and without the suspicious feature: a collapse from ~1.0 to a "
        "realistic score confirms the leak.",
    )
    severity_policy = (
        "Score from the strongest feature-label association on train (Somers' D = |2 AUC - 1| "
        "for classes, |Spearman| for regression, normalised mutual information for "
        "categoricals): 0.98 -> 0.3, 0.99 -> 0.55, 0.997 -> 0.8, 1.0 -> 0.9; Deepchecks' "
        "predictive power score (PPS) >= 0.9 corroborates; native importance concentrated on "
        "the same feature adds confidence. Measured: a feature with association >= 0.8 that no "
        "other feature explains beyond the label (least-squares R² within 2 null standard "
        "errors of chance, at least 3 other features; shared beyond 3, no verdict in between "
        "or when the 3-error bar exceeds 0.5, too many features for the rows to tell, or when "
        "at least 1% of its training values form a cluster a factor 10 past the rest on the "
        "log scale: a unit error's variation, which nothing explains) is label-only, a "
        "post-outcome value: "
        "0.8 -> 0.45, 0.9 -> 0.6, 0.97 -> 0.75, 0.99 -> 0.85; drop-and-refit and shuffling "
        "it on test are reported as evidence of what it is worth (x0.6 for multiclass tasks, "
        "as below). Both the association pattern and the label-only score are x0.5 when "
        "shuffling the feature on test costs the model no more than twice that "
        "measurement's noise, or 0.01, and a refitted clone of the model does not lose "
        "beyond its noise without it either: the model does not use it, so it does no "
        "measured harm. Pattern scores are scaled by 0.5-1.0 "
        "with the training size (full at 1000 rows: small samples separate by chance) and by 0.6 for multiclass "
        "tasks (one-vs-rest associations overstate a feature that isolates one class). A "
        "pattern on a feature that is measured to be a real, shared signal (the label-only "
        "test fails and dropping it and refitting costs no more than twice that "
        "measurement's noise, or keeps 80 % of the model's skill above chance) counts at "
        "half its confidence and half its score: the model scores about as well without "
        "it, so even read as a leak it inflates the evaluation by no more than an unused "
        "feature does. So does a pattern on a feature beside which the model still needs "
        "another one (that one's drop-and-refit costs beyond twice its noise and more than "
        "20 % of the skill above chance): a copy of the label makes every other feature "
        "redundant, a real predictor that isolates one class or one range of the target "
        "leaves the rest to the others (halved once when both hold). A feature whose link to "
        "the label broke on the evaluation split (the 95 % interval of its change on the "
        "weakening side of zero, less than half of the training association kept) is not "
        "read as a leak: a leak holds wherever the label is recorded, a tie of the "
        "training rows only is a shortcut (spurious correlation's finding)."
    )
    explains = ("unused_features",)
    checks = ("Feature Label Correlation", "Feature Label Correlation Change")

    def detect_dataset(self, artifact):
        damping = _damping(artifact)
        for column in _leaky_columns(artifact)[:3]:
            if tie_broke_in_evaluation(artifact, column.name):
                continue  # a shortcut of the training rows, not a leak (see the helper)
            unused = unused_by_model(artifact.intervention("permute_feature", column.name),
                                     artifact.intervention("drop_feature", column.name))
            real_factor, confidence_factor, note = _pattern_factors(artifact, column.name)
            yield self.signal(
                "dataset",
                score=damping * interp(column.target_association, ASSOCIATION_SCORE)
                * (UNUSED_LEAK_FACTOR if unused or real_factor < 1.0 else 1.0),
                confidence=0.8 * confidence_factor,
                detail=(
                    f"feature {column.name!r} has association {column.target_association:.3f} "
                    "with the label on train" + note
                ),
                value=column.target_association,
                feature=column.name,
            )

    def detect_deepchecks(self, artifact):
        leaky = {c.name for c in _leaky_columns(artifact)}
        features = set(artifact.dataset.feature_names)
        ids = {
            c.name
            for c in (artifact.dataset.train.columns if artifact.dataset.train else [])
            if c.monotonic
        }
        for name in self.checks:
            check = artifact.check(name)
            if check is None or check.outcome != "not_passed":
                continue
            top = sorted(
                (
                    (f, v)
                    for f, v in check.values.items()
                    if f in features and f not in ids and v is not None
                    and not tie_broke_in_evaluation(artifact, f)
                ),
                key=lambda kv: (-kv[1], kv[0]),
            )
            if not top:
                continue
            feature, pps = top[0]
            if pps < 0.9 and feature not in leaky:
                continue
            score_factor, confidence_factor, _ = _pattern_factors(artifact, feature)
            yield self.check_signal(
                check,
                score=_damping(artifact) * interp(pps, PPS_SCORE) * score_factor,
                confidence=0.7 * confidence_factor,
                feature=feature,
            )

    def detect_model(self, artifact):
        importances = artifact.model.feature_importances
        leaky = [c.name for c in _leaky_columns(artifact)]
        for name in [n for n in leaky if not tie_broke_in_evaluation(artifact, n)][:1]:
            share = importances.get(name, 0.0)
            if share >= 0.5:
                score_factor, confidence_factor, _ = _pattern_factors(artifact, name)
                yield self.signal(
                    "model",
                    score=0.3 * score_factor,
                    confidence=0.6 * confidence_factor,
                    detail=f"the model puts {share:.0%} of its importance on {name!r}",
                    value=share,
                    feature=name,
                )

    def detect_intervention(self, artifact):
        """A strong feature whose information nothing else in the row shares is the label
        recorded again (post-outcome); drop-and-refit and shuffling say what it is worth."""
        for measured in artifact.interventions:
            if measured.kind != "label_only_feature" or not label_only(measured):
                continue
            if separated_cluster(artifact, measured.target):
                continue  # the test read the unit error's variation, not the feature's
            if tie_broke_in_evaluation(artifact, measured.target):
                continue  # its tie to the label holds on the training rows only
            column = measured.target
            association = measured.values.get("association", 0.0)
            score = interp(association, LABEL_ONLY_SCORE)
            if artifact.task == "multiclass_classification":
                # the association is one-vs-rest: a real feature that isolates one class
                # reads as strong, and the label-only test inherits that overstatement
                score *= MULTICLASS_FACTOR
            permuted = artifact.intervention("permute_feature", column)
            dropped = artifact.intervention("drop_feature", column)
            if unused_by_model(permuted, dropped):
                score *= UNUSED_LEAK_FACTOR
            yield self.signal(
                "intervention",
                score=score,
                confidence=0.75,
                detail=(
                    f"{column!r} predicts the label (association {association:.3f}) but nothing "
                    f"else in the row explains it: once the label is known, the other features "
                    f"account for {measured.score_after:.1%} of its remaining variation, no more "
                    f"than {int(measured.values.get('n_other', 0))} random columns would "
                    f"({measured.score_before:.1%}); a value recorded after the outcome looks "
                    "like this"
                ),
                value=association,
                check="label_only_feature",
                feature=column,
            )
            if dropped is not None and dropped.change is not None:
                yield self.signal(
                    "intervention",
                    score=score,
                    confidence=0.5,
                    detail=(
                        f"dropping {column!r} and refitting a {dropped.model_used} of the model "
                        f"moved test {dropped.metric} from {dropped.score_before:.3f} to "
                        f"{dropped.score_after:.3f} (noise {dropped.noise or 0:.3f}): "
                        + (
                            "the score rests on it"
                            if -dropped.change > 2 * (dropped.noise or 0)
                            else "the other features carry the real signal, the evaluation "
                            "score is inflated by the leak"
                        )
                    ),
                    value=dropped.score_after,
                    check="drop_feature",
                    feature=column,
                )
            if permuted is not None and permuted.change is not None:
                yield self.signal(
                    "intervention",
                    score=score,
                    confidence=0.4,
                    detail=(
                        f"shuffling {column!r} across test rows takes the model's {permuted.metric} "
                        f"from {permuted.score_before:.3f} to {permuted.score_after:.3f}: that is "
                        "what it scores when the value is not there yet at prediction time"
                    ),
                    value=permuted.score_after,
                    check="permute_feature",
                    feature=column,
                )

    def title(self, signals, artifact):
        feature = self.fact(signals, "feature")
        if feature:
            return f"Feature {feature!r} is too predictive of the label to be real (likely leakage)"
        return self.name

    def explanation(self, signals, artifact):
        feature = self.fact(signals, "feature", "one feature")
        return (
            f"{feature!r} predicts the label almost perfectly on its own. Real-world signals are "
            "rarely that clean, so it most likely contains the answer: it was computed from the "
            "label or recorded after the outcome. The model leans on it, scores very well in "
            "evaluation, and will fail when that value is not available at prediction time."
        )
