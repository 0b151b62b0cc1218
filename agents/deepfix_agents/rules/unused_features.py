"""unused_features: features that the model ignores.

Cost and complexity more than accuracy: ignored features still have to be collected,
cleaned and served, widen the attack surface for drift and leaks, and slow training.
So the severity stays low unless most features are truly ignored. Redundant but
informative features (correlated measurements) are legitimately left unused by
boosting or L1 models, which is why the share alone never goes above low.

Evidence: which inputs a dense learner reads at all (every input shuffled alone, the
testing step's ``shuffle_reads``), the model's native importances (a feature counts as
unused below a fifth of the mean importance, Deepchecks' own cut-off, and as ignored
below 2% of it) and Deepchecks' Unused Features check. Accuracy is at stake when the model *fits* collected
noise: the testing step refits it without the features that show no label association
beyond noise (``drop_noise_features``), and a score won back beyond noise makes this the
cause of the overfitting or shortfall it produced.
"""

from __future__ import annotations

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, interp, pct
from deepfix_agents.rules._ladder import (
    baseline,
    best_baseline,
    refit_leaves_shortfall,
    refit_trail,
)
from deepfix_agents.rules.overfitting import LAG_NOISE_UNITS, lag_noise

#: share of features below 0.2 x mean importance -> score (low by design)
SHARE_SCORE = ((0.25, 0.0), (0.4, 0.2), (0.6, 0.28), (0.8, 0.35), (1.0, 0.38))
#: share of features with essentially no importance (< 0.02 x mean) -> score, once most are ignored
IGNORED_SCORE = ((0.75, 0.4), (0.9, 0.5))
UNUSED_RATIO = 0.2
IGNORED_RATIO = 0.02
#: label association (train) under which an unused feature is called noise
NOISE_ASSOCIATION = 0.1
#: Deepchecks: number of high-variance unused features -> score
CHECK_COUNT_SCORE = ((5, 0.2), (15, 0.28), (30, 0.35))

#: a feature's label association (train) within this many standard errors of zero
#: (about 1/sqrt(n_train) for Somers' D or Spearman) is indistinguishable from noise
NOISE_UNITS = 2.5
#: features without any label association: at least this many before they count as
#: collected noise (real tables have a few weak columns). A count, not a share of all
#: features: ten columns within noise of zero are no less noise next to forty strongly
#: related features than next to five, and a share floor (0.4 until round 36) hid
#: collected noise exactly in wide tables with much real signal (on DEV it excluded no
#: clean case, only planted noise columns beside forty-odd real features and four cases
#: of other categories, where this low finding does not outrank their own)
MIN_NOISE_FEATURES = 8
#: ... while at least this many features relate to the label beyond the noise bound, one
#: of them clearly (twice the bound): when none does, the labels are unrelated to every
#: feature (a label problem). A barely predictable target has weak real features (between
#: one and two bounds) that are still signal; one clear feature next to nothing else is
#: what a rare class or label noise leaves (every association shrinks), so it is not
#: enough alone. On a regression, several features that each pass the bound, more than
#: chance pushes past it (see :func:`_more_than_chance`), relate to the label as well.
#: The same "beyond the bound" as the testing step's refit without the noise columns
#: (``drop_noise_features``), so the finding and the refit name the same columns
MIN_SIGNAL_FEATURES = 2
#: share of noise features -> score (low: a cost, not a measured loss of accuracy)
NOISE_SHARE_SCORE = ((0.4, 0.3), (0.8, 0.38))
#: a feature whose label association is at least this (and clearly beyond noise) and
#: that the model does not read at all carries signal the model never sees
SIGNAL_ASSOCIATION = 0.3
#: a sparse learner's ignored feature counts only when it is (within this of) the best
#: single predictor of the label
BEST_PREDICTOR_SLACK = 0.01
#: a feature that carries signal but is never read: the model's inputs are not what
#: the user meant to give it (a column list that drops features, a wrong selector)
IGNORED_SIGNAL_SCORE = 0.45
#: ... and a simple baseline of the ladder that sees every feature beats the model
IGNORED_SIGNAL_HARM_SCORE = 0.55
#: seen only as predictions that do not move when the column is shuffled, and no
#: baseline does better: a redundant feature a dense model can do without (a k-NN on a
#: few dozen test rows), or a regression tree's best predictor that never reaches it
#: (see :func:`ignored_signal`); no measured harm either way, so low
SHUFFLE_ONLY_SCORE = 0.35
#: how a feature whose shuffle moves no test prediction is described
SHUFFLE_UNREAD = "shuffling it changes no prediction"
#: how a feature is described whose shuffle moves no output of a dense learner
#: (``shuffle_reads``: probabilities or regression outputs, every input shuffled alone)
OUTPUT_UNREAD = "shuffling it moves no output of the model"
#: sampled test rows under which ``shuffle_reads`` is not read
MIN_READ_ROWS = 20
#: an input moving no output counts as unread only when the model's least-read other
#: input, at its own rate, would have moved at least one of the changed rows with this
#: probability: a k-NN's vote shares are piecewise constant (a column moves them only
#: when it changes the neighbour set), so on a wide k-NN a read but minor pixel can move
#: 0 of 80 rows when its weakest read sibling moves 0.8% (chance of no move 0.54)
UNREAD_CONFIDENCE = 0.99
#: the fewest changed rows behind any recorded share (the testing step records an input
#: only when its shuffle changed at least this many sampled rows)
MIN_CHANGED_ROWS = 30
#: the testing step's refit without the noise columns (``drop_noise_features``): the
#: score it wins back counts when beyond this many standard errors of the paired
#: difference (a claim that a measured symptom has this cause, so as sure as the
#: overfitting rule's "sure" lag) and at least MIN_RECOVERY in absolute terms
RECOVERY_NOISE_UNITS = 3.0
MIN_RECOVERY = 0.05
#: recovered score -> signal score: medium (the model loses accuracy to the noise it
#: was given), high when the refit wins back a large share of the score
RECOVERY_SCORE = ((0.05, 0.45), (0.2, 0.6))
#: confidence of that measurement (lower on a surrogate: its harm is the surrogate's)
RECOVERY_CONFIDENCE = 0.9
SURROGATE_CONFIDENCE = 0.8


def noise_recovery(artifact):
    """The refit without the noise columns when it wins back score beyond noise:
    (intervention, recovered score); None when it was not run or recovered nothing."""
    for measured in artifact.interventions:
        if measured.kind != "drop_noise_features" or measured.change is None:
            continue
        noise = measured.noise or 0.0
        if measured.change >= MIN_RECOVERY and measured.change > RECOVERY_NOISE_UNITS * noise:
            return measured, measured.change
    return None


def noise_leaves_shortfall(artifact, found) -> bool:
    """Whether the model, refitted without the noise columns, still trails the best rung
    of the baseline ladder on test by more than the refit won back. ``found``: the
    refit's reading, :func:`noise_recovery`'s (its caller has it).

    The noise columns explain a model's shortfall against the ladder only as far as
    removing them closes it. A model too simple for the data (a forest of stumps, a
    k-NN averaging half the rows, a kernel too smooth) also suffers from noise columns,
    so the refit wins something back, but it stays far behind a simple model that sees
    every feature: most of the shortfall is then the model's own, and underfitting keeps
    its finding instead of being folded into this one as a symptom (DEV term_gpa: a
    refit without 10 noise columns goes 0.19 -> 0.26, the linear rung reaches 0.49).
    False when the refit was not run, won nothing back or has no score, or without a
    ladder."""
    return found is not None and refit_leaves_shortfall(artifact, found[0])


def noise_leaves_lag(artifact, found) -> bool:
    """Whether the model, refitted without the noise columns, still trails the best rung
    of the baseline ladder on test beyond ``LAG_NOISE_UNITS`` standard errors of its
    test score. ``found``: :func:`noise_recovery`'s reading.

    The ladder's rungs are fitted on the same columns, noise included: a rung that beats
    the refit shows that the noise columns are not all that stands between this model
    and a sound fit. A model that memorises its training rows (no regularisation, a
    kernel width fitted to single rows) memorises the noise columns too, and dropping
    them wins score back, but it still overfits without them: the overfitting is then a
    second cause with its own finding, not a symptom of the noise. False when the refit
    was not run or has no score, or without a ladder."""
    trail = refit_trail(artifact, found[0]) if found is not None else None
    return trail is not None and trail > LAG_NOISE_UNITS * lag_noise(artifact)


#: the same refit contradicts the reading when the score FALLS without the columns
#: beyond this many standard errors of the paired difference (the 2 standard errors at
#: which the ladder's lead over the model counts as real): together they carry label
#: signal that each one's association alone did not show
SIGNAL_LOSS_NOISE_UNITS = 2.0
#: confidence of the collected-noise reading (dataset) as measured, and when the refit
#: contradicts it
NOISE_CONFIDENCE = 0.9
CONTRADICTED_CONFIDENCE = 0.3


def noise_refit_loses(artifact) -> bool:
    """Whether the refit without the noise columns (``drop_noise_features``) scores
    lower on test beyond ``SIGNAL_LOSS_NOISE_UNITS`` of its noise: the columns the
    collected-noise reading calls unrelated to the label do carry signal a model uses.
    Weak real features (several measurements each just under the association bound, a
    one-hot block whose single levels relate little) read as noise one by one; a refit
    that loses score without them measured the opposite, so the reading is no confident
    finding (on DEV the same 8-20 natural columns of clean twins outranked the planted
    cause of other categories at confidence 0.9-0.99)."""
    for measured in artifact.interventions:
        if measured.kind != "drop_noise_features" or measured.change is None:
            continue
        if -measured.change > SIGNAL_LOSS_NOISE_UNITS * (measured.noise or 0.0):
            return True
    return False


def unused(artifact) -> dict | None:
    importances = artifact.model.feature_importances
    n = len(importances)
    if n < 3:
        return None
    mean = 1.0 / n
    weak = sorted(f for f, v in importances.items() if v < UNUSED_RATIO * mean)
    ignored = [f for f in weak if importances[f] < IGNORED_RATIO * mean]
    train = artifact.dataset.train
    noise = []
    if train is not None:
        for name in weak:
            column = train.column(name)
            association = None if column is None else column.target_association
            if association is not None and association < NOISE_ASSOCIATION:
                noise.append(name)
    return {
        "n_features": n,
        "n_unused": len(weak),
        "n_ignored": len(ignored),
        "n_noise": len(noise),
        "share": len(weak) / n,
        "ignored_share": len(ignored) / n,
        "examples": (noise or weak)[:5],
    }


def noise_bound(n_rows: int) -> float:
    """Largest label association that sampling noise alone gives a feature unrelated to
    the label on ``n_rows`` training rows."""
    return NOISE_UNITS / max(n_rows, 1) ** 0.5


#: a one-hot block: at least this many adjacent 0/1 columns (two complementary flags are
#: one binary variable already counted once)
MIN_BLOCK_COLUMNS = 3


def _indicator(column) -> bool:
    """A 0/1 column without gaps (one level of a one-hot encoded categorical)."""
    return (column is not None and column.n_unique == 2 and column.min == 0.0
            and column.max == 1.0 and not column.missing_fraction and column.mean is not None)


def one_hot_blocks(artifact, names: list[str]) -> list[list[str]]:
    """Runs of adjacent 0/1 columns whose means add up to one (to within one row): the
    levels of one categorical, one-hot encoded, that together mark every row exactly
    once. Such a block is one collected variable, not as many as it has levels: each
    level alone relates weakly to the label by construction (it is a small share of the
    rows), so counting the levels one by one makes one categorical look like a pile of
    collected noise. Greedy from left to right, longest run first."""
    train = artifact.dataset.train
    tolerance = 1.0 / max(train.n_rows, 1) + 1e-9
    blocks, i = [], 0
    while i < len(names):
        found = None
        if _indicator(train.column(names[i])):
            total, j = 0.0, i
            while j < len(names) and _indicator(train.column(names[j])):
                total += train.column(names[j]).mean
                j += 1
                if j - i >= MIN_BLOCK_COLUMNS and abs(total - 1.0) <= tolerance:
                    found = j
        if found is None:
            i += 1
            continue
        blocks.append(names[i:found])
        i = found
    return blocks


def noise_features(artifact) -> tuple[list[str], int] | None:
    """Non-constant features whose label association on train is within noise of zero,
    and the number of features with an association; None without train statistics."""
    train = artifact.dataset.train
    if train is None:
        return None
    names = artifact.dataset.feature_names or [
        c.name for c in train.columns if c.name != artifact.dataset.target
    ]
    bound = noise_bound(train.n_rows)
    measured, noise, signal, clear = 0, [], 0, 0
    for name in names:
        column = train.column(name)
        if column is None or column.target_association is None or column.n_unique <= 1:
            continue
        measured += 1
        if column.target_association < bound:
            noise.append(name)
        else:
            signal += 1
            clear += column.target_association >= 2 * bound
    if signal < MIN_SIGNAL_FEATURES or not (
        clear or _more_than_chance(artifact, signal, measured)
    ):
        # nothing relates to the label: the labels are the problem, not the features
        return [], measured
    return noise, measured


def noise_count(artifact, noise: list[str]) -> int:
    """How many collected variables ``noise`` holds: the levels of a one-hot block (see
    :func:`one_hot_blocks`) count once, as the one categorical they encode."""
    names = artifact.dataset.feature_names or [
        c.name for c in artifact.dataset.train.columns if c.name != artifact.dataset.target
    ]
    members = set(noise)
    count = len(noise)
    for block in one_hot_blocks(artifact, names):
        inside = sum(1 for name in block if name in members)
        count -= max(inside - 1, 0)
    return count


#: a regression's features beyond the noise bound are signal, not the few that chance
#: pushes past it, when that many passes among the measured features would happen by
#: chance with less than this probability
CHANCE_PASSES_ALPHA = 0.01


def _more_than_chance(artifact, signal: int, measured: int) -> bool:
    """Whether ``signal`` of ``measured`` features beyond the noise bound are more than
    chance gives: on a regression the association is |Spearman|, whose standard error
    under no relation is 1/sqrt(n), so each unrelated feature passes the bound
    (NOISE_UNITS standard errors) with probability erfc(NOISE_UNITS / sqrt 2), about
    1.2%, and the number of passes is binomial. Several features that each pass (a
    weak but real regression: monthly indicators that each explain a little) then
    relate to the label even when none reaches twice the bound. Classification
    associations (Somers' D of an imbalanced class, mutual information) have larger,
    class-dependent standard errors, so there only the clear feature counts (a
    regression's categorical inputs, measured by mutual information, are counted
    alike: few, and the test only decides whether anything relates at all)."""
    if artifact.task != "regression" or measured <= 0:
        return False
    from math import comb, erfc, sqrt

    p = erfc(NOISE_UNITS / sqrt(2.0))
    tail = sum(comb(measured, k) * p**k * (1 - p) ** (measured - k)
               for k in range(signal, measured + 1))
    return tail < CHANCE_PASSES_ALPHA


def collected_noise(artifact) -> tuple[list[str], int]:
    """The features the collected-noise finding names, and how many were measured: those
    with no label association beyond noise, when there are enough of them
    (MIN_NOISE_FEATURES) to be collected noise rather than a few weak columns; no
    features otherwise."""
    found = noise_features(artifact)
    if found is None:
        return [], 0
    noise, measured = found
    if noise_count(artifact, noise) < MIN_NOISE_FEATURES or not measured:
        return [], measured
    return noise, measured


#: a model whose predictions barely vary reads no feature in any measurable way
CONSTANT_SHARE = 0.9
CONSTANT_SPREAD = 0.25


def _constant_predictions(artifact) -> bool:
    """Whether the model predicts (almost) one output for every row: shuffling any one
    column then changes nothing, which says nothing about that column."""
    performance = artifact.performance
    if artifact.task == "regression":
        spread = performance.prediction_spread_ratio
        return spread is not None and spread < CONSTANT_SPREAD
    shares = performance.prediction_distribution
    return bool(shares) and max(shares.values()) >= CONSTANT_SHARE


def _responds_to_inputs(artifact) -> bool:
    """Whether the model's predictions were seen to move with some input (a shuffled or
    perturbed feature changed predictions): only then does an input that moves nothing
    single itself out; a model too weak to respond to anything moves nothing either."""
    for measured in artifact.interventions:
        if measured.kind == "permute_feature" and measured.change:
            return True
    robustness = artifact.robustness
    return robustness is not None and any(f.flip_rate > 0 for f in robustness.features)


#: a model that reaches less than this share of the best baseline's margin over the
#: dummy is weak everywhere (too simple, untrained): it ignores everything a little
WEAK_MODEL_SHARE = 0.5


def _weak_overall(artifact) -> bool:
    """Whether the model captures less than half of what a simple baseline gets over the
    dummy: then an input it does not respond to says more about the model than the
    input (that is underfitting's finding)."""
    dummy, best = baseline(artifact, "dummy"), best_baseline(artifact)
    test = artifact.performance.test_score
    if None in (dummy, best, test) or dummy.test_score is None or best.test_score is None:
        return True
    headroom = best.test_score - dummy.test_score
    if headroom <= 0:
        return True
    return (test - dummy.test_score) / headroom < WEAK_MODEL_SHARE


def sparse_learner(artifact) -> bool:
    """Whether the model may legitimately never read a feature that carries signal: tree
    models split only on the features they pick (a redundant one may never be chosen)
    and L1 penalties zero out redundant coefficients. Unknown models count as sparse."""
    model = artifact.model
    cls = (model.model_class or "").lower()
    if not cls:
        return True
    if any(word in cls for word in ("tree", "forest", "boost", "lgbm", "xgb", "catboost",
                                     "lasso", "elasticnet", "lars")):
        return True
    penalty = str(model.hyperparameters.get("penalty", "")).lower()
    return penalty in ("l1", "elasticnet")


def unread_inputs(artifact) -> list[str]:
    """Model inputs that a dense learner never reads: shuffled alone (the testing step's
    ``shuffle_reads``), they move not one of its continuous outputs (class probabilities,
    regression predictions) on any sampled row whose value changed, while some other
    input does move them. A network, kernel, k-NN, naive Bayes or linear model without an
    L1 penalty computes its output from every input it is given, so an exact zero over
    dozens of rows is no sampling accident: the column does not reach the model (on DEV,
    every clean dense model moved at least 11% of rows for every input; the dropped
    columns moved none). A k-NN moves its vote shares only when the neighbour set
    changes, so a zero counts only when even the model's least-read other input, at its
    own rate, would have moved one of the changed rows with 99% probability
    (:data:`UNREAD_CONFIDENCE`; a smooth learner moves nearly every row, so this holds
    at once). Empty for sparse learners (a tree never reads a column it did not split
    on, by design), label-only outputs and older artifacts."""
    if sparse_learner(artifact):
        return []
    for measured in artifact.interventions:
        if measured.kind != "shuffle_reads" or not measured.per_feature:
            continue
        if not measured.values.get("continuous") or measured.n_rows < MIN_READ_ROWS:
            return []
        shares = measured.per_feature
        if max(shares.values()) <= 0:
            return []  # moves with nothing: says nothing about any one input
        weakest_read = min(share for share in shares.values() if share > 0)
        changed = max(measured.values.get("min_changed") or 0, MIN_CHANGED_ROWS)
        if (1.0 - weakest_read) ** changed > 1.0 - UNREAD_CONFIDENCE:
            return []  # a column read as weakly as its weakest sibling could move none
        return sorted(name for name, share in shares.items() if share == 0.0)
    return []


def ignored_signal(artifact) -> list[tuple[str, float, str]]:
    """Features that carry signal (label association clearly beyond noise) but that the
    model does not read at all: exactly zero native importance (a pipeline that never
    passes the column on), or test predictions unchanged, to the last row, when the
    column is shuffled. (feature, association, how it was seen). A sparse learner (see
    :func:`sparse_learner`) may skip a redundant feature by design: for it, a feature
    counts only when it is the best single predictor of the label (what a greedy split
    takes first), and either a simple baseline that sees every feature beats the model or
    the task is a regression whose predictions did not move at all when it was shuffled
    (continuous outputs: a column split on even once moves some prediction, so that is a
    direct measurement that the column never reaches the model; a classifier's unchanged
    score on a few dozen rows is not)."""
    train = artifact.dataset.train
    if train is None or _constant_predictions(artifact):
        return []
    floor = max(SIGNAL_ASSOCIATION, 2 * noise_bound(train.n_rows))
    found: dict[str, tuple[str, float, str]] = {}
    for name, value in artifact.model.feature_importances.items():
        column = train.column(name)
        association = None if column is None else column.target_association
        if value == 0.0 and association is not None and association >= floor:
            found[name] = (name, association, "zero importance")
    responds = _responds_to_inputs(artifact) and not _weak_overall(artifact)
    for measured in artifact.interventions:
        if measured.kind != "permute_feature" or measured.change is None or not responds:
            continue
        association = measured.values.get("association")
        if (
            measured.change == 0.0
            and not measured.noise
            and association is not None
            and association >= floor
            and measured.target not in found
        ):
            found[measured.target] = (
                measured.target, association, SHUFFLE_UNREAD
            )
    for name in unread_inputs(artifact):
        # exact evidence (see unread_inputs): clearly beyond noise is signal enough
        column = train.column(name)
        association = None if column is None else column.target_association
        if (association is not None and association >= 2 * noise_bound(train.n_rows)
                and name not in found):
            found[name] = (name, association, OUTPUT_UNREAD)
    found = {k: v for k, v in found.items() if not _redundant(artifact, k, v[1], v[2])}
    if found and sparse_learner(artifact):
        # a tree picks its splits greedily: the best single predictor is the one it
        # cannot pass over by chance; and skipping it must cost (the ladder beats it)
        best = max(
            (c.target_association for c in train.columns
             if c.name != artifact.dataset.target and c.target_association is not None),
            default=0.0,
        )
        found = {k: v for k, v in found.items() if v[1] >= best - BEST_PREDICTOR_SLACK}
        if _ladder_beats_model(artifact) is None:
            # no measured cost: only the shuffle's direct measurement stands, when no
            # prediction at all moves (a continuous output: every split the model ever
            # made on the column would move one), and it stays low (SHUFFLE_ONLY_SCORE)
            found = {k: v for k, v in found.items()
                     if v[2] == SHUFFLE_UNREAD and artifact.task == "regression"}
        if not found:
            return []
    return sorted(found.values(), key=lambda t: (-t[1], t[0]))


def _read_association(artifact) -> float | None:
    """The strongest label association among the shuffled features that the model was
    seen to read (shuffling it moved some prediction); None when it read none of them."""
    read = [
        measured.values.get("association")
        for measured in artifact.interventions
        if measured.kind == "permute_feature"
        and measured.values.get("association") is not None
        and (measured.change or measured.noise)
    ]
    return max(read, default=None)


def _redundant(artifact, name: str, association: float, how: str) -> bool:
    """Whether a feature seen unread only by shuffling is redundant: the model reads
    another feature that predicts the label at least as well, so the signal reaches it
    anyway. Correlated measurements are the rule in real tables, and any learner (dense
    ones too) lets the stronger of two collinear inputs carry the signal; the weaker one
    then moves no prediction on a small test set, at no cost to the model. A pipeline
    that drops columns leaves the model without the strongest of them as often as not,
    and zero native importance (a column never passed on) is not this evidence."""
    if how != SHUFFLE_UNREAD:
        return False
    read = _read_association(artifact)
    return read is not None and read >= association


def _ladder_beats_model(artifact) -> tuple[str, float] | None:
    """The best simple baseline, when it beats the model on test beyond noise."""
    best, test = best_baseline(artifact), artifact.performance.test_score
    if best is None or test is None or best.test_score is None:
        return None
    if best.test_score - test > LAG_NOISE_UNITS * lag_noise(artifact):
        return best.name, best.test_score
    return None


def _coef_based(artifact) -> bool:
    """|coef| importances of a linear/SVM model on unscaled inputs depend on units."""
    model = artifact.model
    cls = model.model_class or ""
    return (".linear_model." in cls or ".svm." in cls) and not model.has_preprocessing


@register_rule
class UnusedFeatures(Rule):
    id = "unused_features"
    name = "The model ignores many of its features"
    detects = (
        "Input features that receive (almost) no importance in the fitted model: it makes its"
        " predictions without them."
    )
    why = (
        "Unused features cost without helping: they must be collected, cleaned and served, "
        "they slow training, can carry drift or leakage into the system later, and noise "
        "features give flexible models more chances to overfit. They also hint that useful "
        "signal may be encoded in a form the model cannot use."
    )
    example = (
        "A churn model gets 60 columns, 45 of them random ids, free-text codes and constant "
        "flags; the fitted model puts 98% of its importance on 12 features."
    )
    fixes = (
        "Drop features without importance and without a relation to the label, then retrain "
        "and confirm the validation score is unchanged: `SelectFromModel(model, "
        "threshold='0.2*mean')` or `RFECV(model, cv=5)` inside a `Pipeline`.",
        "Confirm with permutation importance on validation data "
        "(`sklearn.inspection.permutation_importance`), which is not biased towards "
        "high-cardinality features like impurity importance.",
        "For features you expected to matter, check their encoding (a categorical stored as "
        "text, a date not turned into useful parts, a numeric column parsed as string).",
    )
    severity_policy = (
        "A refit without the (at least 8) features with no label association beyond noise "
        "wins back test score beyond 3 standard errors of the paired difference and at "
        "least 0.05: medium 0.45 at +0.05 -> 0.6 at +0.2, and it then explains the "
        "overfitting it caused unless the refit still trails the ladder's best rung (fitted "
        "on the same columns) beyond 2 standard errors of the test score (the model overfits "
        "without them too: two causes, two findings), and the underfitting unless the refit "
        "still trails that rung by more than it won back (the model is too weak on its own). "
        "Features that carry signal (train label association >= 0.3 and beyond twice the "
        "noise bound) that the model never reads (exactly zero native importance, or "
        "predictions unchanged to the last row when the column is shuffled): medium 0.45, "
        "0.55 when a simple baseline of the ladder, which sees every feature, beats the "
        "model beyond 2 standard errors of its test score; a tree or L1 model counts only "
        "for the best single predictor, and without that baseline only for a regression "
        "whose shuffle moves no "
        "prediction at all: low 0.35. A dense learner (not a tree or L1 model) whose "
        "probabilities or regression outputs move on no sampled row when an input is "
        "shuffled (while another input moves them) never receives that input: medium 0.45 "
        "when it relates to the label beyond twice the noise bound (no 0.3 floor: exact "
        "evidence); below that (or unmeasured), holding more than one value, it is still "
        "an input the model never receives: low 0.35, confidence 0.85. At least 8 features "
        "with no label association beyond noise (2.5/sqrt(n_train); the levels of a one-hot block, at least 3 adjacent 0/1 columns whose means add up to one, count once), while two features "
        "relate beyond it, one by twice (or, on a regression, more features pass it than "
        "chance would push past it, binomial P < 1%): low, 0.3 up to 40% of the features -> 0.38 at 80%, confidence 0.9, 0.3 when the refit without them loses test score beyond 2 standard errors of the paired difference (together they carry signal: weak features, not noise). Otherwise low by design. Share of features below 0.2x the mean native importance: 40% -> 0.2, "
        "60% -> 0.28, 80% -> 0.35, 100% -> 0.38. Medium only when most features are truly "
        "ignored (below 0.02x the mean) and at least 10 of them: 75% -> 0.4, 90% -> 0.5. "
        "Deepchecks Unused Features (high-variance unused features) 5 -> 0.2, 15 -> 0.28, 30 "
        "-> 0.35, capped by the share of unused features it reports and by our own score "
        "(+0.05 each). Confidence is higher when the unused features also have no association"
        " with the label (noise) and lower for coefficient importances of unscaled linear "
        "models."
    )
    checks = ("Unused Features",)
    #: when the model never reads features that carry signal, its train/test gap and its
    #: shortfall against the ladder (which sees every feature) are consequences of that
    IGNORED_SIGNAL_EXPLAINS = ("underfitting", "overfitting", "weak_segment")

    def subjects(self, signals, artifact):
        """The noise features, or the signal-carrying features the model never reads: a
        cause that names none of them (a leak in another column, say) does not explain
        them, so such a finding is not folded into it."""
        named = list(self.fact(signals, "ignored_signal") or [])
        for s in signals:
            named.extend(s.facts.get("noise_features") or [])
        return tuple(dict.fromkeys(named))

    def explains_for(self, artifact):
        if ignored_signal(artifact):
            return self.IGNORED_SIGNAL_EXPLAINS
        found = noise_recovery(artifact)
        if found is not None:
            own = set()
            if noise_leaves_shortfall(artifact, found):
                # the model stays weak without the noise: its shortfall is its own
                own.add("underfitting")
            if noise_leaves_lag(artifact, found):
                # it still overfits without the noise: a second cause, its own finding
                own.add("overfitting")
            return tuple(c for c in self.IGNORED_SIGNAL_EXPLAINS if c not in own)
        return self.explains

    def detect_model(self, artifact):
        found = unused(artifact)
        if found is None:
            return
        score = interp(found["share"], SHARE_SCORE)
        if found["n_ignored"] >= 10:
            score = max(
                score,
                interp(found["ignored_share"], IGNORED_SCORE)
                if found["ignored_share"] >= 0.75
                else 0.0,
            )
        if score <= 0:
            return
        confidence = 0.75 if found["n_noise"] >= 0.5 * found["n_unused"] else 0.6
        if _coef_based(artifact):
            confidence = 0.4
        detail = (
            f"{found['n_unused']} of {found['n_features']} features get under "
            f"{UNUSED_RATIO:.0%} of the mean importance ({found['n_ignored']} get essentially none)"
        )
        if found["n_noise"]:
            detail += f"; {found['n_noise']} of them have no association with the label"
        yield self.signal(
            "model",
            score=score,
            confidence=confidence,
            detail=detail,
            value=found["share"],
            **found,
        )

    def detect_dataset(self, artifact):
        """Many collected features carry no relation to the label at all (noise); at
        ``CONTRADICTED_CONFIDENCE`` when a refit without them loses score beyond noise
        (:func:`noise_refit_loses`): then they are weak signal, not noise."""
        noise, measured = collected_noise(artifact)
        if not noise:
            return
        share = len(noise) / measured
        bound = noise_bound(artifact.dataset.train.n_rows)
        yield self.signal(
            "dataset",
            score=interp(share, NOISE_SHARE_SCORE),
            confidence=(CONTRADICTED_CONFIDENCE if noise_refit_loses(artifact)
                        else NOISE_CONFIDENCE),
            detail=(
                f"{len(noise)} of {measured} features ({pct(share)}) have no association with "
                f"the label beyond noise on train (below {bound:.3f} on "
                f"{artifact.dataset.train.n_rows} rows)"
            ),
            value=share,
            n_noise_features=len(noise),
            noise_examples=noise[:5],
            noise_features=noise,
            n_measured=measured,
        )

    def detect_intervention(self, artifact):
        """Features that carry signal but that the model never reads, and noise columns
        that cost the model score (a refit without them wins it back)."""
        ignored = ignored_signal(artifact)
        yield from self._noise_harm(artifact)
        yield from self._ignored(artifact, ignored)
        yield from self._unread(artifact, ignored)

    def _noise_harm(self, artifact):
        found = noise_recovery(artifact)
        if found is None:
            return
        measured, recovered = found
        columns = [c for c in (measured.target or "").split(",") if c]
        detail = (
            f"a refit without the {len(columns)} features that show no label association "
            f"beyond noise scores {measured.score_after:.3f} on test vs {measured.score_before:.3f} "
            f"with them (+{recovered:.3f}, noise {measured.noise or 0.0:.3f}"
            + (", on a surrogate model" if measured.model_used == "surrogate" else "")
            + ")"
        )
        train_before, train_after = (measured.values.get(k) for k in ("train_before", "train_after"))
        if train_before is not None and train_after is not None:
            detail += f"; its fit on train goes {train_before:.3f} -> {train_after:.3f}"
        yield self.signal(
            "intervention",
            score=interp(recovered, RECOVERY_SCORE),
            confidence=(SURROGATE_CONFIDENCE if measured.model_used == "surrogate"
                        else RECOVERY_CONFIDENCE),
            detail=detail,
            value=recovered,
            noise_recovery=round(recovered, 4),
            noise_features=columns,
            noise_examples=columns[:5],
            n_noise_features=len(columns),
        )

    def _ignored(self, artifact, ignored):
        """``ignored``: :func:`ignored_signal`'s features, measured once for both this
        signal and :meth:`_unread`, which must not name them again."""
        if not ignored:
            return
        beaten = _ladder_beats_model(artifact)
        names = ", ".join(f"{n!r} (association {a:.2f}: {how})" for n, a, how in ignored[:4])
        detail = f"the model does not read {len(ignored)} feature(s) that carry signal: {names}"
        if beaten is not None:
            detail += (
                f"; the {beaten[0]} baseline, which sees every feature, reaches "
                f"{beaten[1]:.3f} on test vs the model's {artifact.performance.test_score:.3f}"
            )
        yield self.signal(
            "intervention",
            score=(IGNORED_SIGNAL_HARM_SCORE if beaten is not None
                   else IGNORED_SIGNAL_SCORE
                   if any(how in ("zero importance", OUTPUT_UNREAD) for _, _, how in ignored)
                   else SHUFFLE_ONLY_SCORE),
            confidence=0.85,
            detail=detail,
            value=float(len(ignored)),
            ignored_signal=[n for n, _, _ in ignored],
        )

    def _unread(self, artifact, ignored):
        """Inputs a dense learner never receives (:func:`unread_inputs`, exact: shuffled
        alone they move no output on any changed row while the others move them) that
        carry no signal beyond twice the noise bound, so :meth:`_ignored` does not name
        them: the model still makes its predictions without them, which is this rule's
        very finding, measured directly rather than read from importances (a network or
        k-NN has none). No accuracy is shown lost (nothing they carry reaches the label
        beyond noise), so low (``SHUFFLE_ONLY_SCORE``). Columns with a single value are
        left out: shuffling them changes no row (constant_feature's finding)."""
        train = artifact.dataset.train
        if train is None:
            return
        named = {name for name, _, _ in ignored}
        unread = [
            name for name in unread_inputs(artifact)
            if name not in named
            and (column := train.column(name)) is not None and column.n_unique > 1
        ]
        if not unread:
            return
        total = len(artifact.dataset.feature_names or []) or len(unread)
        yield self.signal(
            "intervention",
            score=SHUFFLE_ONLY_SCORE,
            confidence=0.85,
            detail=(
                f"{len(unread)} of {total} inputs never reach the model ({OUTPUT_UNREAD}): "
                f"{', '.join(repr(n) for n in unread[:5])}"
            ),
            value=float(len(unread)),
            n_unused=len(unread),
            n_features=total,
            examples=unread[:5],
        )

    def detect_deepchecks(self, artifact):
        check = artifact.check("Unused Features")
        if check is None or check.outcome != "not_passed" or check.value is None:
            return
        count = float(check.value)
        score = interp(count, CHECK_COUNT_SCORE)
        values = check.values or {}
        total = sum(
            values.get(k, 0.0)
            for k in ("n_used", "n_unused_high_variance", "n_unused_low_variance")
        )
        if total >= 3:
            unused_share = 1.0 - values.get("n_used", 0.0) / total
            score = min(score, interp(unused_share, SHARE_SCORE) + 0.05)
        own = unused(artifact)
        if own is not None:
            score = min(score, interp(own["share"], SHARE_SCORE) + 0.05)
        if score >= 0.05:
            yield self.check_signal(check, score=score, confidence=0.55, check_count=int(count))

    def title(self, signals, artifact):
        ignored = self.fact(signals, "ignored_signal")
        if ignored:
            shown = ", ".join(repr(n) for n in ignored[:3])
            return (
                f"The model never reads {len(ignored)} feature(s) that carry signal ({shown}): "
                "its inputs are not the ones it was given"
            )
        recovered = self.fact(signals, "noise_recovery")
        if recovered is not None:
            n = self.fact(signals, "n_noise_features")
            return (
                f"{n} features with no relation to the label cost the model accuracy: "
                f"refitted without them it scores {recovered:+.3f} better on test"
            )
        noise = self.fact(signals, "n_noise_features")
        total = self.fact(signals, "n_measured")
        if noise is not None and total:
            return (
                f"{noise} of {total} features ({pct(noise / total)}) have no relation to the "
                "label: collected noise the model does not need"
            )
        n, total = self.fact(signals, "n_unused"), self.fact(signals, "n_features")
        if n is not None:
            return f"{n} of {total} features ({pct(n / total)}) are practically unused by the model"
        count = self.fact(signals, "check_count")
        if count is not None:
            return f"{count} high-variance features are practically unused by the model"
        return self.name

    def explanation(self, signals, artifact):
        ignored = self.fact(signals, "ignored_signal")
        if ignored:
            return (
                f"Features that predict the label on their own ({', '.join(repr(n) for n in ignored[:3])}) "
                "do not reach the model at all: its predictions do not change when they do. "
                "That is almost always a pipeline bug, a column list or selector in the "
                "preprocessing (`ColumnTransformer(..., remainder='drop')`) that silently "
                "leaves them out. Check which columns the fitted pipeline really passes on "
                "(`pipeline[:-1].get_feature_names_out()`)."
            )
        examples = self.fact(signals, "noise_examples") or self.fact(signals, "examples") or []
        shown = f" (e.g. {', '.join(repr(e) for e in examples[:3])})" if examples else ""
        if self.fact(signals, "noise_recovery") is not None:
            return (
                f"Many of the features the model is given carry no relation to the label{shown}, "
                "and the model fits them: refitted without them, it does measurably better on "
                "test. Its train/test gap or its shortfall is the price of that noise (a "
                "flexible model memorises it, a distance-based one drowns its real features "
                "in it). Drop the columns, or select features inside the pipeline "
                "(`SelectFromModel`, `RFECV`), and confirm on validation data."
            )
        return (
            f"The model barely uses many of the features it is given{shown}. That rarely hurts "
            "accuracy directly, but every extra feature has to be collected and maintained, "
            "can bring drift or leakage later, and gives the model more noise to overfit. "
            "Remove features that neither the model nor the label care about; if you expected "
            "one of them to matter, check how it is encoded."
        )
