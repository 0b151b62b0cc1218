"""underfitting: the model is no better than a simple or trivial baseline."""

from __future__ import annotations

import math

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, entropy, interp
from deepfix_agents.rules._ladder import (
    CHANCE_NOISE_UNITS,
    at_chance,
    baseline,
    best_baseline,
    chance_noise,
    gap_in_error,
    ladder_rungs,
    supported_score,
    training_rows_show_signal,
)
from deepfix_agents.rules._noise import sampling_noise
from deepfix_agents.rules.class_imbalance import threshold_is_the_cause
from deepfix_agents.rules.decision_threshold import positive_share, selection_noise
from deepfix_agents.rules.poor_calibration import ECE_SCORE, one_way_excess, prior_shift

#: model's margin over the dummy baseline, relative to the best baseline's margin -> score
SHORTFALL_SCORE = ((0.35, 0.0), (0.5, 0.3), (0.7, 0.5), (0.9, 0.7), (1.0, 0.85))
#: test score given away to the best simple baseline (beyond the noise) -> score: the
#: measured harm of a model too weak for the signal, and (rules.overfitting) of one that
#: memorises its training rows
LAG_HARM_SCORE = ((0.05, 0.2), (0.1, 0.4), (0.2, 0.6), (0.35, 0.8))


#: a training score this much above the test score is overfitting, not a model too weak
#: for the signal (the baseline comparison stands down; rules.overfitting then explains
#: a chance-level test score)
OVERFIT_GAP = 0.15
#: impact of a model no better than chance: always at least high (issue 12, B)
CHANCE_SCORE = 0.7
#: what a model without signal also shows, folded into this finding when the labels
#: look unrelated to the features
NO_SIGNAL_SYMPTOMS = (
    "degenerate_predictions",
    "overfitting",
    "poor_calibration",
    "weak_segment",
    "decision_threshold",
)


#: binary: the model's F1 at its best threshold above the all-positive F1 2p/(1+p) by
#: this much (plus the selection noise of picking a threshold on the test rows) means
#: its scores rank the classes: the labels do relate to the features
RANKING_SKILL = 0.1


def ranks_the_classes(artifact) -> bool:
    """Whether the model's scores separate a binary task's classes, whatever its default
    decisions: a rare class that every model of the ladder (and the model at 0.5) never
    predicts still has signal that a threshold recovers."""
    best = artifact.performance.f1_at_best
    p = positive_share(artifact)
    if artifact.task != "binary_classification" or best is None or p is None:
        return False
    margin = RANKING_SKILL + selection_noise(artifact.dataset.test.n_rows)
    return best - 2 * p / (1 + p) > margin


def signal_is_learnable(artifact, measured) -> bool | None:
    """True when a baseline of the ladder clearly beats chance on test, or the model
    when it lands below chance (the signal is in the data), or the model's scores rank a
    binary task's classes (:func:`ranks_the_classes`); False when neither (the labels look
    unrelated to the features), None when there is no ladder. A ladder that does not
    itself score above chance shows no signal however far below it the model lands (a
    flexible model fitted to noise labels scores far below chance on test, the simple
    baselines just under it)."""
    if ranks_the_classes(artifact):
        return True
    best = best_baseline(artifact)
    if best is None or measured.score_after is None:
        return None
    chance = measured.score_before
    if chance is not None and best.test_score <= chance:
        # a ladder no better than chance shows no signal, however far the model is
        # below it (a model far below chance on noise labels)
        return False
    # the labels are learnable when a baseline clearly beats chance on these test rows:
    # the reference is the lower of chance and the model (a model within noise of chance
    # but a hair above it does not make a baseline clearly above chance any less so)
    reference = measured.score_after if chance is None else min(measured.score_after, chance)
    margin = CHANCE_NOISE_UNITS * (measured.noise or 0.0) + 0.05
    if best.test_score - reference <= margin:
        return False
    if chance is not None and best.test_score - chance <= margin:
        # the baseline clears the bar only because the model fell below chance: a model
        # that memorised labels replaced by noise lands far below it, and a baseline a
        # noise unit above chance by luck then looks like signal. The labels are
        # learnable only where the training rows show it too: a rung of the ladder
        # cross-validated on them beats the dummy (:func:`training_rows_show_signal`)
        return training_rows_show_signal(artifact)
    return True


#: one class taking at least this share of predictions, or a prediction spread at most
#: this fraction of the target's, is a constant output
CONSTANT_SHARE = 0.99
CONSTANT_SPREAD = 0.02


def constant_output(artifact) -> bool | None:
    """Whether the model gives one answer for every test row (one class for >= 99% of
    them, or a spread of predictions <= 2% of the target's); None when not measured."""
    performance = artifact.performance
    if artifact.task == "regression":
        ratio = performance.prediction_spread_ratio
        return None if ratio is None else ratio <= CONSTANT_SPREAD
    predicted = performance.prediction_distribution
    if not predicted:
        return None
    return max(predicted.values()) >= CONSTANT_SHARE


def shrunk_probabilities(artifact) -> bool:
    """Whether a classifier's one-class decisions are what its own probabilities
    say, while those probabilities still carry information about the rows: a model too
    smooth or too regularised for the signal, whose probabilities are shrunk towards the
    class shares and so all fall on the majority's side of 0.5 (or, multiclass, all
    pick the majority in their arg-max), not one broken into a constant output.

    Three measurements, all on the test rows (out of sample for the model) unless said:

    - the probabilities explain the labels beyond noise: their log loss is below the
      entropy of the test class shares (what stating the best constant for every row
      scores) by a likelihood-ratio statistic ``2 n (entropy - log loss)`` beyond
      ``CHANCE_NOISE_UNITS`` squared (a chi-square with one degree of freedom read as
      ``CHANCE_NOISE_UNITS`` standard normal units). A setting in the wrong units that
      squashes every posterior to the prior (C=1e-6, var_smoothing=1e6, a leaf as
      large as the data) leaves a log loss at the entropy: nothing learnt;
    - binary: the decisions are the probabilities' own cut at 0.5
      (:func:`decisions_cut_probabilities`). Decisions that ignore what the
      probabilities say (an SVM whose collapsed margin predicts one class while its
      Platt-scaled probabilities still pick the minority on many rows) are a broken
      decision, not a weak model;
    - on its own training rows the model scores no better than on test beyond noise
      (the test score's chance noise, at least a score's sampling noise 0.5/sqrt(n)):
      it cannot fit the rows it was trained on either (no memorisation, no serving
      step that differs between the splits).

    A multiclass task has no cut at 0.5 to read (no F1 at the default threshold): its
    decisions are taken as the probabilities' arg-max, which is what ``predict`` does
    for a probabilistic classifier, and the other two measurements decide. A
    multiclass model that answers the majority class everywhere while its
    probabilities rank the rows (a forest of five stumps, a heavily penalised
    multinomial model: their shares are pulled towards the prior, so the majority
    wins every arg-max) is the same fault as a binary one's; a setting that squashed
    every posterior to the prior leaves its log loss at the entropy on any number of
    classes.

    False when any of them is not measured (a binary task without an F1 at 0.5, a task
    without a test log loss)."""
    performance, dataset = artifact.performance, artifact.dataset
    binary = artifact.task == "binary_classification"
    if not binary and artifact.task != "multiclass_classification":
        return False
    if dataset.test is None:
        return False
    shares = dataset.test.label_distribution or {}
    test = (performance.scores or {}).get("test") or {}
    log_loss, n = test.get("log_loss"), test.get("n_rows") or dataset.test.n_rows
    if len(shares) < 2 or log_loss is None or not n or not math.isfinite(log_loss):
        return False
    ratio = 2.0 * n * (entropy(shares.values()) - log_loss)
    if ratio <= CHANCE_NOISE_UNITS ** 2:
        return False
    if binary and not decisions_cut_probabilities(performance, shares, n):
        return False
    train_score, test_score = performance.train_score, performance.test_score
    if train_score is None or test_score is None:
        return False
    noise = max(chance_noise(artifact), sampling_noise(n))
    return train_score - test_score <= CHANCE_NOISE_UNITS * noise


def decisions_cut_probabilities(performance, shares: dict, n: int) -> bool:
    """Binary: whether the one-class decisions are the probabilities' own cut at 0.5:
    the minority class's F1 at 0.5 read from the probabilities (``f1_at_default``) is
    no higher than the decisions' minority share allows (``2 min(q, p) / (q + p)`` for
    a predicted share ``q`` and a true share ``p``; 0 when the minority is never
    predicted), within one row. False without that F1."""
    f1_default = performance.f1_at_default
    if f1_default is None:
        return False
    minority, p = min(shares.items(), key=lambda kv: (kv[1], kv[0]))
    q = (performance.prediction_distribution or {}).get(minority, 0.0)
    allowed = 2.0 * min(q, p) / (q + p) if q + p > 0 else 0.0
    return f1_default <= allowed + 1.0 / n


def weak_model(artifact, shortfall: list | None = None) -> bool:
    """A model whose answers still vary (not one constant output, see
    :func:`constant_output`), or whose one answer is its own shrunk probabilities' cut
    (:func:`shrunk_probabilities`), while a baseline of the ladder clearly learns the
    labels: at chance with a learnable signal, or above chance with a measured shortfall
    against the ladder. The model is too weak for the signal in the data; its near
    one-class or narrow predictions are the symptom of that, not a model broken into a
    constant. ``shortfall``: the rule's baseline signals when the caller already has
    them (``Underfitting.detect_baseline``), else they are measured here."""
    constant = constant_output(artifact)
    if constant is None or (constant and not shrunk_probabilities(artifact)):
        return False
    measured = at_chance(artifact)
    if measured is not None:
        return signal_is_learnable(artifact, measured) is True
    # above chance: a simple baseline clearly better (the shortfall finding) says the same
    if shortfall is None:
        shortfall = list(Underfitting().detect_baseline(artifact))
    return bool(shortfall)


#: a lag behind the ladder beyond this many noise units is certain (overfitting's
#: ``SURE_LAG_UNITS``): one that small relative to the ladder's headroom counts only
#: beside probabilities shrunk towards the class shares (:func:`underconfident_lag`)
SURE_LAG_UNITS = 3.0


def underconfident_lag(artifact, lag: float, noise: float) -> bool:
    """Whether a classifier gives away test score to the ladder beyond
    ``SURE_LAG_UNITS`` noise units (``lag``, ``noise``: the best supported rung's test
    score less the model's, and the test score's noise, at least 0.5/sqrt(test rows))
    while its stated confidence is
    below its accuracy beyond ``CHANCE_NOISE_UNITS`` standard errors of that gap.

    One fault explains both: a model fitted too little (a few boosting rounds, a
    penalty too strong) has probabilities still near the class shares, so it states
    less confidence than it earns, and decisions behind what a simple model learns. A
    temperature applied at serving that softens a fitted model's probabilities leaves
    its decisions (the arg-max) as they were, so it gives nothing away to the ladder
    beyond what the fitted model does; a naive Bayes or a memorising model that lags the
    ladder states more confidence than it earns, not less."""
    performance = artifact.performance
    gap, gap_noise = performance.confidence_gap, performance.confidence_gap_noise
    if artifact.task == "regression" or gap is None or not gap_noise or gap_noise <= 0:
        return False
    # the noise floored at a score's sampling noise on these rows, as
    # :func:`supported_score` floors it: a near-constant model's measurement has none
    noise = max(noise, sampling_noise(artifact.dataset.test.n_rows))
    if lag <= SURE_LAG_UNITS * noise:
        return False
    return gap < -CHANCE_NOISE_UNITS * gap_noise


def shrunk_harm(artifact) -> float:
    """The calibration a model fitted too little pays, on ``poor_calibration``'s scale
    (``ECE_SCORE``): its stated confidence below its accuracy beyond what a calibrated
    model shows by chance (:func:`~deepfix_agents.rules.poor_calibration.one_way_excess`).

    Where :func:`underconfident_lag` holds, the probabilities still near the class
    shares and the decisions behind the ladder are one fault (too few boosting rounds,
    a penalty too strong); the underconfidence is that fault's measured harm in the
    probabilities as the lag is in the decisions, so the finding that explains the
    miscalibration carries its size (the mirror of a memoriser's overconfidence, which
    the overfitting rule scores the same way). 0 without a measured one-way gap."""
    excess = one_way_excess(artifact)
    return interp(excess, ECE_SCORE) if excess is not None else 0.0


def fits_what_the_ladder_generalises(train_score: float | None, best) -> bool:
    """Whether the model fits its own training rows at least as well as the ladder's
    ``best`` rung predicts rows it never saw (the rung's cross-validated score).

    Such a model has the capacity for the signal the ladder shows: it reaches on the
    rows it was fitted to what the simple model reaches out of sample. A test score
    below the rung's is then lost between its training rows and new ones (variance: a
    k-NN's few neighbours, a flexible model on noisy rows), not capacity it lacks, and
    the baseline comparison does not call it too weak (the overfitting rule weighs
    that gap and its cost). False without either score."""
    if train_score is None or best.cv_score is None:
        return False
    return train_score >= best.cv_score


def lacks_capacity(artifact, train_score: float | None, noise: float) -> bool:
    """Whether a model falls short of every rung of the ladder, where nothing can have
    moved as well as on test: it fits its own training rows below each rung's
    cross-validated score (rows the rung never saw) and scores below each rung on test,
    both by more than ``CHANCE_NOISE_UNITS`` noise units of the test score. The model
    then cannot represent what even the simplest model learns from the same rows (too
    simple, too regularised): the test score it gives away is that missing capacity,
    whatever its share of the headroom. A model that matches one rung and trails
    another misses some specific structure (an interaction, one slice), which the rules
    that name it measure. ``noise``: the chance measurement's (its caller has read it),
    floored at the sampling noise 0.5/sqrt(test rows). False without a training score, a
    test score or a cross-validated rung."""
    rungs = [b for b in ladder_rungs(artifact)
             if b.cv_score is not None and b.test_score is not None]
    test = artifact.performance.test_score
    if train_score is None or test is None or not rungs:
        return False
    bar = CHANCE_NOISE_UNITS * max(noise, sampling_noise(artifact.dataset.test.n_rows))
    return (min(b.cv_score for b in rungs) - train_score > bar
            and min(b.test_score for b in rungs) - test > bar)


@register_rule
class Underfitting(Rule):
    id = "underfitting"
    name = "The model does no better than simple baselines"
    detects = (
        "A model whose test score is close to a trivial (dummy) baseline and well below what "
        "a small linear or tree model reaches on the same data, on train as well as on test."
    )
    why = (
        "The model has not captured the signal that is demonstrably in the data: too simple, "
        "too regularised, trained too briefly, or fed features it cannot use."
    )
    example = (
        "`LogisticRegression(C=1e-5)` on breast cancer scores like a majority-class guess while "
        "a depth-4 decision tree reaches 0.93 F1."
    )
    fixes = (
        "Reduce regularisation (larger `C`, smaller `alpha`), allow more capacity (deeper trees, "
        "more estimators) or train longer (`max_iter`, epochs) until train score rises.",
        "Scale numeric features and encode categoricals inside a `Pipeline` so the model can "
        "use them (`StandardScaler`, `OneHotEncoder`).",
        "Climb the baseline ladder: make sure the model beats `DummyClassifier`/`DummyRegressor`, "
        "then a linear model, then a small tree, before tuning anything else.",
    )
    severity_policy = (
        "Shortfall = 1 - (model - dummy) / (best baseline - dummy) on test, using the task's main "
        "metric (a rung's test score credited at most 2 noise units above its cross-validated "
        "score): 0.5 -> 0.3, 0.7 -> 0.5, 0.9 -> 0.7, 1.0 (no better than dummy) -> 0.85; once "
        "that shortfall counts, at least the test score given away to the best baseline "
        "(beyond 2 noise units: 0.05 -> 0.2, 0.1 -> 0.4, 0.2 -> 0.6, 0.35 -> 0.8); a "
        "shortfall too small to count still scores that lag when it is beyond 3 noise "
        "units and the model states less confidence than its accuracy beyond 2 standard "
        "errors (probabilities still near the class shares: the finding then explains "
        "the miscalibration, and scores at least that underconfidence beyond chance, the "
        "confidence gap less 1.96 of its standard errors under calibration, on "
        "poor_calibration's scale: 0.04 -> 0.2, 0.1 -> 0.4, 0.15 -> 0.55, 0.25 -> 0.7). Only "
        "when the model's train score is below the best rung's cross-validated score (a "
        "model that fits its own rows as well as the rung predicts unseen ones has the "
        "capacity; its lag is variance) and "
        "not far above its test score (that would be overfitting; "
        "for R2, a gap counts only as far as the squared error itself grows from train to test "
        "beyond 2 standard errors, since R2 is relative to each split's own spread). "
        "A model whose test score is within 2 noise units of chance (its predictions scored "
        "against shuffled labels; regression: predicting the training mean), or below it, "
        "scores 0.7 (high) whatever the baselines say, unless the test rows are too noisy to "
        "tell (the "
        "model above chance on its point score and level with the ladder on test, a rung of "
        "which holds its cross-validated score on test within 2 noise units and shows a signal "
        "there: 0.05 over chance, or any positive one within 2 noise units, which these rows "
        "could not resolve but the training rows did (classification: beyond 2 x "
        "0.5/sqrt(training rows), a score's worst-case standard error there), or one its "
        "test score shows itself (2 noise units + 0.05 over chance); a model "
        "within 1 noise unit below chance is level with a rung showing 0.05); when no "
        "baseline beats chance (or the model, when it lands below chance) by 2 noise units + 0.05, the labels look unrelated to the features "
        "and the finding absorbs the symptoms "
        "(degenerate predictions, overfitting, calibration, segments, threshold), except "
        "the overfitting of a model that fitted training labels measurably noisier than "
        "the test labels (regression: a wider spread beyond 3 standard errors), which is "
        "the cause and takes the chance evidence; when a "
        "baseline does clearly better (at chance or through the shortfall) and the model's "
        "answers still vary (not one constant output, or one class whose probabilities "
        "explain the test labels beyond the class shares' entropy by a likelihood ratio "
        "of 4, from a model that fits its training rows no better than test: binary, "
        "when the decisions are those probabilities cut at 0.5; multiclass, their "
        "arg-max), the model is too weak and the finding absorbs its near one-class or "
        "narrow predictions and weak segments."
    )
    checks = ("Simple Model Comparison",)
    explains = ()

    def detect_baseline(self, artifact):
        performance = artifact.performance
        dummy, rungs = baseline(artifact, "dummy"), ladder_rungs(artifact)
        model_score = performance.test_score
        if None in (model_score, dummy) or not rungs or dummy.test_score is None:
            return
        # the ladder must clear the dummy by more than the test score's noise for a
        # shortfall against it to mean anything
        noise = chance_noise(artifact)
        n_test = artifact.dataset.test.n_rows
        best = max(rungs, key=lambda b: (supported_score(b, noise, n_test), b.name))
        best_score = supported_score(best, noise, n_test)
        headroom = best_score - dummy.test_score
        if headroom < max(0.1, CHANCE_NOISE_UNITS * noise):
            return
        train_score = performance.train_score
        # a model far better on its training rows is overfitted, not too weak; the gap
        # counts as far as it is one in squared error beyond noise (an R2 gap can be
        # just a test split whose targets spread less)
        if train_score is not None and gap_in_error(
                artifact, train_score - model_score) > OVERFIT_GAP:
            return
        if fits_what_the_ladder_generalises(train_score, best):
            return
        shortfall = 1.0 - (model_score - dummy.test_score) / headroom
        score = interp(shortfall, SHORTFALL_SCORE)
        lag = best_score - model_score
        shrunk = False
        if score > 0 and lag > CHANCE_NOISE_UNITS * noise:
            score = max(score, interp(lag, LAG_HARM_SCORE))
        elif score <= 0 and lacks_capacity(artifact, train_score, noise):
            # a small relative shortfall, but one the model shows against every rung and
            # on its own training rows too: the test score it gives away is capacity it
            # lacks (see lacks_capacity)
            score = interp(lag, LAG_HARM_SCORE)
        elif score <= 0 and underconfident_lag(artifact, lag, noise):
            shrunk = True
            # a small relative shortfall, but a certain one on a model whose
            # probabilities are shrunk towards the class shares: one fault (too little
            # fitting) shows in both, and the score given away is its measured harm,
            # as is the calibration it costs (:func:`shrunk_harm`)
            score = max(interp(lag, LAG_HARM_SCORE), shrunk_harm(artifact))
        if score <= 0:
            return
        metric = performance.metric
        yield self.signal(
            "baseline",
            score=score,
            confidence=0.8,
            detail=(
                f"model {metric} {model_score:.3f} on test vs dummy {dummy.test_score:.3f} and "
                f"{best.name} baseline {best.test_score:.3f}"
                + (
                    f" (credited {best_score:.3f}: its cross-validated {best.cv_score:.3f} "
                    "on the training rows plus 2 noise units)"
                    if best_score < best.test_score
                    else ""
                )
                + (
                    f"; it states {-performance.confidence_gap:.2f} less confidence than "
                    "its accuracy: probabilities still near the class shares"
                    if shrunk
                    else ""
                )
            ),
            value=model_score,
            model_score=model_score,
            best=best.name,
            best_score=best_score,
            metric=metric,
            underconfident=shrunk,
        )

    def detect_intervention(self, artifact):
        """The no-better-than-chance guard: a model whose test score is within noise of
        chance (or below it) is at least a high finding, whatever else was found."""
        measured = at_chance(artifact)
        if measured is None:
            return
        learnable = signal_is_learnable(artifact, measured)
        what = (
            "its predictions scored against shuffled labels"
            if measured.metric != "r2"
            else "predicting the training mean"
        )
        yield self.signal(
            "intervention",
            score=CHANCE_SCORE,
            confidence=0.85,
            detail=(
                f"the model's test {measured.metric} {measured.score_after:.3f} is within noise "
                f"of chance ({what}: {measured.score_before:.3f} +/- {measured.noise or 0:.3f}, "
                f"{measured.n_rows} rows)"
            ),
            value=measured.score_after,
            check="chance_level",
            chance=True,
            learnable=learnable,
            model_score=measured.score_after,
            chance_score=measured.score_before,
            metric=measured.metric,
        )

    def explains_for(self, artifact):
        """A model whose labels look unrelated to its features explains the symptoms of
        having no signal (one-class or overconfident outputs, train/test gap)."""
        measured = at_chance(artifact)
        if measured is not None and signal_is_learnable(artifact, measured) is not True:
            causes = set()
            if prior_shift(artifact) is not None:
                # a model without signal reproduces the class shares; one that predicts
                # a class far more often than it occurs, on its own training rows too,
                # has shifted probabilities: that is the cause (poor_calibration), the
                # near-chance score its symptom
                causes.add("poor_calibration")
            if threshold_is_the_cause(artifact):
                # the probabilities rank a rare class well (F1 at the best threshold far
                # above flagging every row): there is signal, and the 0.5 cut-off is
                # what brings the score (and the baselines', all cut at 0.5) to chance
                causes.add("decision_threshold")
            from deepfix_agents.rules import RULES

            if "underfitting" in RULES.get("overfitting")().explains_for(artifact):
                # a model that fitted training labels carrying noise the test labels do
                # not (overfitting's ``label_noise_at_chance``): overfitting is the cause
                # and explains the chance-level score. Asked through the registry, since
                # the overfitting module imports this one (no import circle)
                causes.add("overfitting")
            return tuple(s for s in NO_SIGNAL_SYMPTOMS if s not in causes)
        explained = self.explains
        # the baseline comparison, read once for both questions below
        shortfall = list(self.detect_baseline(artifact))
        if weak_model(artifact, shortfall):
            explained = ("degenerate_predictions", "weak_segment")
        if any(s.facts.get("underconfident") for s in shortfall):
            # the shrunk probabilities are the symptom of the same too-little fitting
            # (:func:`underconfident_lag`)
            explained += ("poor_calibration",)
        return explained

    def detect_deepchecks(self, artifact):
        if not any(s for s in self.detect_baseline(artifact)):
            return
        yield from super().detect_deepchecks(artifact)

    def title(self, signals, artifact):
        if self.fact(signals, "chance"):
            if self.fact(signals, "learnable") is False:
                return (
                    "The model is no better than chance, and neither is any simple baseline: "
                    "the labels look unrelated to the features"
                )
            return (
                f"The model is no better than chance ({self.fact(signals, 'metric')} "
                f"{self.fact(signals, 'model_score'):.2f} vs {self.fact(signals, 'chance_score'):.2f})"
            )
        score, best = self.fact(signals, "model_score"), self.fact(signals, "best")
        if score is None or best is None:
            return self.name
        return (
            f"The model ({self.fact(signals, 'metric')} {score:.2f}) is beaten by a simple "
            f"{best} baseline ({self.fact(signals, 'best_score'):.2f})"
        )

    def explanation(self, signals, artifact):
        if self.fact(signals, "chance"):
            if self.fact(signals, "learnable") is False:
                return (
                    "Measured on the test rows, the model scores no better than chance, and "
                    "simple reference models trained on the same rows do no better. When no "
                    "model finds any relation between features and labels, the most likely "
                    "cause is upstream of the model: the labels no longer belong to their rows "
                    "(a merge or join on the wrong key, a sort applied to features but not "
                    "labels, a shifted index) or were replaced by noise. Check a handful of rows "
                    "by hand against the source before tuning anything."
                )
            return (
                "Measured on the test rows, the model scores no better than chance, while "
                "simple reference models trained on the same rows do clearly better: the "
                "signal is in the data but this model does not capture it (too constrained, "
                "not trained, or fed features in a form it cannot use)."
            )
        return (
            "Simple reference models trained on a sample of the same training data do clearly "
            "better than your model, and your model is weak on the training data too. So the "
            "signal is there, but the model does not capture it: it is too constrained, not "
            "trained long enough, or receives features in a form it cannot use."
        )
