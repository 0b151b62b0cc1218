"""overfitting: a large gap between train and test performance that costs accuracy.

A flexible model (a random forest, boosting) routinely scores near 1.0 on its training
rows; that gap alone is memorisation, not harm. The impact of overfitting is the test
score it gives away, so the gap counts fully only when simple, regularised models of
the baseline ladder do better on the same test data.
"""

from __future__ import annotations

import math

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, interp
from deepfix_agents.rules._ladder import (
    at_chance,
    baseline,
    best_baseline,
    gap_in_error,
    supported_score,
)
from deepfix_agents.rules._memorisation import (
    MEMORISED,
    _clip,
    memorises,
    noise_carries_memorisation,
)
from deepfix_agents.rules._training import smoothed
from deepfix_agents.rules.degenerate_predictions import SPREAD_SCORE, collapsed_on_training_rows
from deepfix_agents.rules.feature_drift import chronological
from deepfix_agents.rules.outliers import target_tail
from deepfix_agents.rules.poor_calibration import ECE_SCORE, one_way_excess
from deepfix_agents.rules.underfitting import (
    CHANCE_SCORE,
    LAG_HARM_SCORE,
    OVERFIT_GAP,
    SHORTFALL_SCORE,
    signal_is_learnable,
)
from deepfix_agents.rules.weak_segment import segment_beyond_lag
from deepfix_agents.scoring import severity_for

#: train - test gap on the main metric (beyond noise) -> score
GAP_SCORE = ((0.05, 0.0), (0.1, 0.25), (0.15, 0.4), (0.25, 0.6), (0.4, 0.8), (0.6, 0.9))
#: how far the model's test score lags the best simple baseline -> multiplier of the gap
#: score; a lag within ``LAG_NOISE_UNITS`` standard errors (:func:`lag_noise`) counts as 0
LAG_FACTOR = ((0.0, 0.4), (0.05, 1.0))
#: a model that memorises its training rows (training score at least ``MEMORISED``) and
#: lags the best baseline within ``LAG_NOISE_UNITS`` standard errors: the lag in standard
#: errors -> how sure the lag is (1 standard error or less is noise: 0; the 2 standard
#: errors of a measured lag: 1). It moves the gap's multiplier from the benign 0.4 towards
#: the full 1.0 and scales the lag's harm floor (``LAG_HARM_SCORE``), instead of both
#: jumping at 2 standard errors
MEMORISED_LAG_SURE = ((1.0, 0.0), (2.0, 1.0))
#: a lag within this many standard errors of the test score is no measured harm: two
#: models scored on the same rows of a small test split differ by that much by chance
LAG_NOISE_UNITS = 2.0
#: a lag behind the best baseline beyond this many standard errors is certain even on a
#: small test split (no confidence discount for the split's size)
SURE_LAG_UNITS = 3.0
#: the test score given away to the best simple baseline, once beyond ``LAG_NOISE_UNITS``
#: standard errors, by a model that memorises its training rows (training score at least
#: ``MEMORISED``) is scored through underfitting's ``LAG_HARM_SCORE``: the measured harm of
#: the memorisation, a floor under the gap score, which a noise margin sized for the worst
#: case shrinks on small test splits
#: a training score this close to perfect is memorisation, not learning (F1 / R2):
#: ``MEMORISED`` (with ``memorises`` and ``_clip``) lives in ``rules/_memorisation.py``
#: without baselines we cannot tell harmful from benign memorisation
NO_BASELINE_FACTOR = 0.8
#: Deepchecks Train Test Performance: largest relative degradation -> score. Capped at
#: 0.6: a degradation alone cannot tell harmful from benign memorisation (no baselines)
DEGRADATION_SCORE = ((0.1, 0.1), (0.2, 0.3), (0.35, 0.45), (0.5, 0.55), (0.7, 0.6))
#: over epochs: validation accuracy given away between its best epoch and the last -> score,
#: once it is beyond the validation noise (:func:`epoch_noise`); under 0.02 the harm is
#: negligible however large the validation split
LOST_SCORE = ((0.02, 0.0), (0.03, 0.25), (0.06, 0.45), (0.1, 0.6), (0.2, 0.8))
#: fewest standard errors a loss of validation accuracy must exceed to count
MIN_NOISE_Z = 2.0
#: over epochs, without a validation accuracy: relative rise of the validation loss from
#: its best to its last value -> score (capped at medium: the loss alone is no harm measure)
VAL_LOSS_RISE_SCORE = ((0.2, 0.0), (0.5, 0.2), (1.0, 0.35), (2.0, 0.45))
#: Deepchecks Boosting Overfit: relative decline of the test score over iterations -> score
BOOSTING_SCORE = ((0.05, 0.2), (0.1, 0.4), (0.2, 0.6), (0.3, 0.75))
#: regression: the training targets' standard deviation over the test targets', in
#: standard errors of its log (normal theory, 1/(2(n-1)) per split), beyond which the
#: training labels carry a spread the test labels do not: noise added to them. Three
#: rather than two standard errors, since targets with heavy tails (counts, money) make
#: a standard deviation noisier than normal theory says
NOISY_LABELS_Z = 3.0
#: the symptoms of a harm measured in the stated probabilities alone
PROBABILITY_SYMPTOMS = ("poor_calibration", "overconfident_slice")


def noise_margin(n_test: int) -> float:
    """Sampling noise of a score on ``n_test`` rows (about one standard error of an F1 or
    accuracy near 0.5): gaps smaller than this say nothing."""
    return 0.5 / math.sqrt(max(n_test, 1))


def epoch_noise(best: float, last: float, n_rows: int, n_points: int) -> float:
    """How far the validation score of the last epoch may fall below the best epoch's
    by chance alone, on a validation split of ``n_rows`` rows.

    Two epochs' models scored on the same rows differ only on the rows where they
    disagree; at most the rows either gets wrong, ``(1 - best) + (1 - last)``. The
    standard error of the difference of their accuracies is therefore at most
    ``sqrt(min(1, err_best + err_last) / n_rows)`` (McNemar's paired test, worst case).
    The best epoch is not a chosen epoch but the maximum of ``n_points`` noisy values,
    which sits about ``sqrt(2 ln n_points)`` standard errors above their mean (the
    Gaussian extreme-value approximation), so the margin is that many standard errors,
    and at least ``MIN_NOISE_Z``. A 12-epoch run validated on 540 digits near 0.97
    accuracy wobbles by about 0.02 from epoch to epoch: a dip of that size after the
    best epoch is noise, not a model that got worse.
    """
    errors = min(1.0, (1.0 - _clip(best)) + (1.0 - _clip(last)))
    z = max(MIN_NOISE_Z, math.sqrt(2.0 * math.log(max(n_points, 2))))
    return z * math.sqrt(errors / max(n_rows, 1))


def lag_noise(artifact) -> float:
    """Standard error of the model's main test score at this test split's size: the
    ``chance_level`` measurement's noise (classification: the spread of the model's
    predictions scored against permuted labels; regression: the bootstrap standard error
    of its gain over predicting the training mean), else the worst-case margin of a
    proportion (:func:`noise_margin`)."""
    chance = artifact.intervention("chance_level")
    if chance is not None and chance.noise is not None and math.isfinite(chance.noise):
        return float(chance.noise)
    return noise_margin(artifact.dataset.test.n_rows)


def row_lag_bound(artifact) -> float | None:
    """The most standard errors by which any model scored on the same test rows can beat
    this classifier, counted in rows: a baseline gains only on the rows this model gets
    wrong, so McNemar's paired statistic ``(b - c) / sqrt(b + c)`` is at most
    ``sqrt(errors)`` (every error of this model a discordant row in the baseline's favour,
    none the other way). A lag on a macro score that a handful of errors carries (a rare
    class's two test rows move macro F1 by a fifth) is therefore no measured lag however
    large it reads: two rows cannot tell two models apart. None for regression or
    without the test accuracy."""
    if artifact.task == "regression":
        return None
    accuracy = artifact.performance.scores.get("test", {}).get("accuracy")
    n_test = artifact.dataset.test.n_rows
    if accuracy is None or not math.isfinite(accuracy) or not n_test:
        return None
    return math.sqrt(max(0.0, (1.0 - accuracy) * n_test))


def noisier_training_labels(artifact) -> dict | None:
    """Regression: whether the training targets spread measurably wider than the test
    targets (their standard deviations' ratio beyond ``NOISY_LABELS_Z`` standard errors
    of its log), by enough that a model reproducing the extra spread gives away at least
    the smallest harm scored (``LAG_HARM_SCORE``: predictions carrying variance
    ``ratio ** 2 - 1`` times the test targets' that is unrelated to them lose that much
    R2). Noise added to the training labels (noisy measurements, a sloppier labelling
    process than the test rows had) widens their spread this way; labels replaced by
    noise or shifted against their rows keep their spread in both splits. A few extreme
    training targets (unit errors, ``outliers.target_tail``) are the outliers rule's
    cause, not spread noise. On a chronological split (``feature_drift.chronological``)
    the two splits are two periods, whose targets spread differently by nature (a trend,
    a calmer or wilder period): the ratio then measures the periods, not noise in the
    labels. Returns the ratio and its standard errors, else None."""
    if artifact.task != "regression" or chronological(artifact):
        return None
    dataset = artifact.dataset
    if dataset.train is None or dataset.test is None:
        return None
    train_sd = (dataset.train.label_stats or {}).get("std")
    test_sd = (dataset.test.label_stats or {}).get("std")
    n_train, n_test = dataset.train.n_rows, dataset.test.n_rows
    if not train_sd or not test_sd or min(n_train, n_test) < 3 or target_tail(artifact):
        return None
    ratio = train_sd / test_sd
    se = math.sqrt(1.0 / (2 * (n_train - 1)) + 1.0 / (2 * (n_test - 1)))
    z = math.log(ratio) / se
    if z < NOISY_LABELS_Z or ratio**2 - 1.0 < LAG_HARM_SCORE[0][0]:
        return None
    return {"ratio": ratio, "z": z}


def label_noise_at_chance(artifact) -> dict | None:
    """A model that fits its training rows far better than the test rows (it reproduces
    them, ``memorises``, or scores beyond underfitting's ``OVERFIT_GAP`` above test) and
    is no better than chance on test (underfitting's ``at_chance``), while its training
    labels carry noise the test labels do not (:func:`noisier_training_labels`): what it
    fitted beyond the test rows is that noise, reproduced on new rows as a chance-level
    score. It is overfitting, not labels unrelated to the features: the ladder, fitted to
    the same noisy labels, finds no signal in them either, so its failing to beat chance
    says nothing about the features. None otherwise."""
    train, test = artifact.performance.train_score, artifact.performance.test_score
    if train is None or test is None:
        return None
    if not (memorises(train) or _clip(train) - _clip(test) > OVERFIT_GAP):
        return None
    if at_chance(artifact) is None:
        return None
    return noisier_training_labels(artifact)


def memorised_label_noise(artifact) -> dict | None:
    """A regressor that reproduces its training rows (training score at least
    ``MEMORISED``) whose training labels carry noise the test labels do not
    (:func:`noisier_training_labels`): what it memorised beyond the signal is that
    noise. Its train/test gap is then no benign memorisation (the shape of a flexible
    model on clean rows): the simple baselines were fitted to the same noisy labels, so
    a model level with them, or ahead, has not shown that the memorisation is free (the
    argument of :func:`label_noise_at_chance`, above chance), and the gap counts fully
    in :func:`_own` (factor 1 instead of the benign ``LAG_FACTOR`` 0.4). The gap itself
    stays the measure: a memoriser on noisy labels that still scores on test what it
    scores on its training rows (a forest that averages the noise away) has none.
    None otherwise."""
    train = artifact.performance.train_score
    if train is None or not memorises(train):
        return None
    return noisier_training_labels(artifact)


def ladder_splits_on_test(artifact, noise: float) -> bool:
    """Whether the ladder's simple models (no dummy) move in opposite directions from
    their cross-validated score on the training rows to their test score, and part by
    more than ``LAG_NOISE_UNITS`` standard errors of the test score (``noise``): one
    scores clearly higher on the test rows than in cross-validation, another lower. A
    property of the split shared by every model (noisy training labels, harder or easier
    test rows) moves them all the same way; opposite moves beyond the noise bar are the
    test rows re-ranking models by more than the chance-level noise says (on 81 test
    rows of 269 players, linear and a tree tie in cross-validation at 0.61 and part by
    0.18, 3.2 standard errors, on test). False with fewer than two such rungs."""
    moves = [
        b.test_score - b.cv_score for b in artifact.baselines
        if not b.name.startswith("dummy") and b.cv_score is not None and b.test_score is not None
    ]
    return (
        len(moves) >= 2
        and max(moves) > 0 > min(moves)
        and max(moves) - min(moves) > LAG_NOISE_UNITS * noise
    )


def memorised_overconfidence(artifact, shift: float, noise: float) -> float | None:
    """How far a classifier that is certain of its training rows is more sure of its
    test answers than it is right, beyond chance: the calibration that memorisation
    costs on new rows.

    A model that reproduces its training labels with certainty (a training log loss
    at most ``-ln(MEMORISED)``: the geometric mean probability it gives its training
    labels at least ``MEMORISED``) learned no uncertainty to state: every new row gets
    the certainty of a training row, so each test error is an error at full confidence
    (an unbootstrapped forest of identical trees, a 1-NN, boosting without leaves'
    minimum size). Its overconfidence on the test rows (the signed confidence gap,
    mean stated confidence minus accuracy, beyond ``poor_calibration``'s chance level
    for it, :func:`~deepfix_agents.rules.poor_calibration.one_way_excess`) is then the
    memorisation's measured harm even where the test decisions beat every simple
    baseline, and the miscalibration it shows is its symptom. A model whose training
    rows are stated less surely (a bootstrapped forest averages trees that never saw
    some rows) keeps an uncertainty of its own: its calibration is its own matter.
    Not where the test rows moved for every model: when the best simple baseline
    loses more than ``LAG_NOISE_UNITS`` standard errors of the test score (``noise``)
    from its cross-validation to the test rows (``shift``, as :func:`_own` measures
    it), the split changed (a shortcut that breaks, drifted inputs, an identifier
    ordered differently), and a certain model's errors on the moved rows are that
    shift's symptom, not its memorisation's. None for regression, without a training
    log loss, on such a shifted split, or when the test answers are not stated more
    surely than they are right."""
    if artifact.task == "regression":
        return None
    performance = artifact.performance
    train_loss = performance.scores.get("train", {}).get("log_loss")
    gap, ece = performance.confidence_gap, performance.calibration_error
    if train_loss is None or gap is None or ece is None or gap <= 0:
        return None
    if performance.train_score is None or not memorises(performance.train_score):
        return None
    if shift > LAG_NOISE_UNITS * noise:
        return None
    if not math.isfinite(train_loss) or train_loss > -math.log(MEMORISED):
        return None
    return one_way_excess(artifact)


def skill_lost_score(artifact, reach: float, lag: float) -> float | None:
    """The measured harm of a lag behind the best simple baseline, on underfitting's
    scale for a model too weak (``SHORTFALL_SCORE``): the share of the skill the ladder
    shows above the dummy baseline on these test rows (``reach`` - dummy) that this model
    gives away, a third or less of it 0, half 0.3, two thirds about 0.45, all 0.85. A
    flexible model that keeps two thirds of what linear regression reaches has overfitted
    by little that matters, however far its training score sits above its test score;
    one that gives away most of the available skill has lost much. The share, not the
    absolute lag: a lag of 0.25 R2 is half of what linear regression finds in a weak
    signal, a sixth of nothing else. None without a dummy baseline scored on test;
    without skill above the dummy to relate the lag to, the absolute lag's harm
    (``LAG_HARM_SCORE``)."""
    dummy = baseline(artifact, "dummy")
    if dummy is None or dummy.test_score is None:
        return None
    headroom = reach - dummy.test_score
    if headroom <= 0:
        return interp(lag, LAG_HARM_SCORE)
    return interp(lag / headroom, SHORTFALL_SCORE)


def collapsed_on_new_rows(artifact) -> float | None:
    """The harm of a regressor that reproduces its training rows and answers new rows
    with (almost) one value: the spread of its test predictions over what its training
    predictions' spread becomes at the test targets' spread (training prediction std x
    test label std / training label std), scored on ``degenerate_predictions``' scale
    for a collapsed output (``SPREAD_SCORE``: under 0.4 of it counts, 0.02 -> 0.9). A
    model that memorised (an RBF kernel too narrow, a 1-NN far from every new row)
    varies on the rows it saw and falls back to its intercept on every other one: its
    test answers carry nothing of the input, a measured cost of the memorisation that
    no lag behind baselines fitted to the same rows needs to confirm. None for
    classification, for a model that does not memorise, without prediction and label
    spreads on both splits, or where the outputs collapse on the training rows too
    (then the model is broken, not memorising: ``degenerate_predictions``' matter)."""
    performance, dataset = artifact.performance, artifact.dataset
    if artifact.task != "regression" or performance.train_score is None:
        return None
    if not memorises(performance.train_score) or dataset.train is None:
        return None
    stats = performance.prediction_stats or {}
    train_spread = (stats.get("train") or {}).get("std")
    test_spread = (stats.get("test") or {}).get("std")
    train_labels = (dataset.train.label_stats or {}).get("std")
    test_labels = (dataset.test.label_stats or {}).get("std")
    if None in (train_spread, test_spread, train_labels, test_labels):
        return None
    if train_spread <= 0 or train_labels <= 0 or test_labels <= 0:
        return None
    if collapsed_on_training_rows(artifact):
        return None
    ratio = test_spread / (train_spread * test_labels / train_labels)
    score = interp(ratio, SPREAD_SCORE)
    return score if score > 0 else None


def _own(artifact) -> dict | None:
    performance = artifact.performance
    train, test = performance.train_score, performance.test_score
    if train is None or test is None:
        return None
    # as far as the model errs more on test than on its training rows (R2 is relative
    # to each split's own spread)
    gap = gap_in_error(artifact, _clip(train) - _clip(test))
    best = best_baseline(artifact)
    shift = 0.0
    if best is not None and best.cv_score is not None:
        # what every model loses from training data to this test split (a shifted or
        # unrepresentative split), measured on the simple baseline: not overfitting
        shift = max(0.0, _clip(best.cv_score) - _clip(best.test_score))
    margin = noise_margin(artifact.dataset.test.n_rows)
    score = interp(gap - shift - margin, GAP_SCORE)
    noise = lag_noise(artifact)
    memorised = memorises(train)
    noisy = memorised_label_noise(artifact)
    if best is not None:
        # what the baseline reaches on these rows, as far as its cross-validation on the
        # training rows supports it (underfitting's rule for a rung's headroom): a
        # baseline that scores far above its own cross-validated score on test found the
        # test rows easier than its training folds (rows dated among the training rows,
        # say), which says nothing about this model. A model that reproduces its
        # training rows is the exception: it memorised the very noise in the training
        # labels that holds the baseline's cross-validated score down, so its lag
        # counts against the baseline's full test score
        reach = best.test_score
        if not memorised:
            reach = supported_score(best, noise, artifact.dataset.test.n_rows)
        lag = _clip(reach) - _clip(test)
        # a lag within the noise of the test score is no measured lag; the noise is in
        # the metric's own units, so the raw scores are compared with it (an R2 far below
        # zero lags clearly even though both clip to similar values)
        within_noise = reach - test <= LAG_NOISE_UNITS * noise
        lag_z = (reach - test) / noise if noise > 0 else 0.0
        rows = row_lag_bound(artifact)
        few_errors = False
        if rows is not None and lag_z > rows:
            # the lag rests on fewer test rows than its size on the metric suggests
            lag_z = rows
            few_errors = rows <= LAG_NOISE_UNITS
            within_noise = within_noise or few_errors
        if not within_noise:
            sure = 1.0
        elif memorised and not ladder_splits_on_test(artifact, noise):
            # a model that reproduces its training rows and still lags the baseline by
            # more than one standard error is more likely harmed than not: the lag counts
            # with its significance instead of jumping at 2 standard errors. Not where the
            # ladder's rungs move apart from their cross-validation to the test rows beyond
            # the noise bar: then the test rows themselves re-rank models by more than the
            # chance-level noise says, and a lag within 2 standard errors of the rung that
            # gained is that noise (sure 0, as for a model that does not memorise)
            sure = interp(lag_z, MEMORISED_LAG_SURE)
        else:
            sure = 0.0
        benign = LAG_FACTOR[0][1]
        # never above what the lag's size gives beyond the noise
        factor = min(benign + (1.0 - benign) * sure, interp(lag, LAG_FACTOR))
        if noisy is not None:
            # the model reproduces training labels measurably noisier than the test
            # labels: its gap is that noise memorised, and the ladder, fitted to the
            # same noisy labels, is no yardstick for what it costs (see
            # :func:`memorised_label_noise`)
            factor = 1.0
        lag_harm = sure * interp(lag, LAG_HARM_SCORE) if memorised else 0.0
        harm_bound = None if memorised else skill_lost_score(artifact, reach, lag)
    else:
        lag, lag_z, factor, within_noise, lag_harm = None, None, NO_BASELINE_FACTOR, False, 0.0
        reach = None
        few_errors = False
        harm_bound = None
    gap_part = score * factor
    if harm_bound is not None:
        # a model that does not reproduce its training rows: the gap says it fits its
        # training rows better than new ones (as every flexible model does), the lag
        # says what that cost on test. The severity is the cost, measured as the
        # ladder measures a model too weak (the share of the available skill given
        # away); the gap is the evidence of the mechanism and keeps its benign share
        gap_part = min(gap_part, max(score * LAG_FACTOR[0][1], harm_bound))
    label_noise = label_noise_at_chance(artifact)
    # the chance-level score is what fitting the measured label noise cost: the finding
    # carries the chance guard's score (a model no better than chance is at least high),
    # whatever the lag behind baselines fitted to the same noisy labels (they learn
    # nothing from them either, so they are no yardstick)
    noise_harm = CHANCE_SCORE if label_noise is not None else 0.0
    overconfidence = memorised_overconfidence(artifact, shift, noise)
    overconfidence_harm = 0.0 if overconfidence is None else interp(overconfidence, ECE_SCORE)
    collapse = collapsed_on_new_rows(artifact)
    decisions = max(gap_part, lag_harm, noise_harm, collapse or 0.0)
    return {
        "train_score": train,
        "test_score": test,
        "gap": gap,
        "shift": shift,
        "metric": performance.metric or "score",
        "score": max(decisions, overconfidence_harm),
        "overconfidence": overconfidence,
        "collapse": collapse,
        # the finding's harm lies in the stated probabilities only: the memorisation's
        # overconfidence lifts it to medium or above, while what it costs the decisions
        # stays below (too weak on its own to be the cause of anything, see the
        # reasoner's ``MIN_CAUSE_SEVERITY``)
        "probabilities_only": (
            overconfidence_harm > decisions and severity_for(decisions) in ("info", "low")
        ),
        # nothing measured beyond the benign share of the gap: no lag behind the ladder
        # beyond noise (nor a share of skill given away), no label noise reproduced, no
        # memorised certainty repeated on the test rows
        "harmless": best is not None and (
            max(decisions, overconfidence_harm) <= score * LAG_FACTOR[0][1] + 1e-9
        ),
        "harm_bound": harm_bound,
        "lag": lag,
        "lag_noise": noise,
        "lag_within_noise": within_noise,
        "lag_z": lag_z,
        "few_errors": few_errors,
        "memorises": memorised,
        # what it memorised is the collected noise columns (measured once here for both
        # the detail and the Deepchecks cap)
        "memorises_noise": memorised and noise_carries_memorisation(artifact),
        "factor": factor,
        "best": best.name if best is not None else None,
        "best_score": best.test_score if best is not None else None,
        "best_supported": reach,
        "label_noise": label_noise["ratio"] if label_noise is not None else None,
        "label_noise_z": label_noise["z"] if label_noise is not None else None,
        "memorised_noise": noisy["ratio"] if noisy is not None else None,
        "memorised_noise_z": noisy["z"] if noisy is not None else None,
    }


@register_rule
class Overfitting(Rule):
    id = "overfitting"
    name = "The model overfits its training data"
    detects = (
        "A model that scores much better on the rows it was trained on than on the test rows,"
        " while simpler, regularised models do better on the same test data."
    )
    why = (
        "The model has memorised details and noise of its training rows instead of the "
        "general pattern; on new data it does worse than it could, and its training score "
        "badly overstates its real quality."
    )
    example = (
        "An unpruned `DecisionTreeClassifier()` reaches F1 1.00 on train but 0.71 on test, "
        "while a depth-4 tree gets 0.85 on the same test set."
    )
    fixes = (
        "Regularise the model: limit depth / leaves (`max_depth`, `min_samples_leaf`), use "
        "fewer boosting rounds with `early_stopping` / `n_iter_no_change`, raise the penalty "
        "(smaller `C`, larger `alpha`), add dropout or weight decay for networks.",
        "Tune those settings with cross-validation on the training data "
        "(`GridSearchCV(model, params, cv=StratifiedKFold(5))`) rather than on the test set.",
        "Reduce the features the model can memorise: drop noisy or id-like columns and "
        "features that leak row identity.",
        "Get more training data, or augment it; the gap shrinks as data grows.",
    )
    severity_policy = (
        "Gap = train - test on the main metric (F1 macro / R2, both clipped to [0, 1]; for R2 "
        "no more than the growth of the squared error from train to test over the test "
        "targets' variance, and 0 when that growth is within 2 standard errors), less "
        "what the best simple baseline loses from its cross-validated score to test (a "
        "shifted split hurts every model: not overfitting), less a noise margin of "
        "0.5/sqrt(n_test): 0.1 -> 0.25, 0.15 -> 0.4, 0.25 -> 0.6, 0.4 -> 0.8, 0.6 -> 0.9. "
        "Multiplied by the impact factor: x0.4 when the model's test score is at least as "
        "good as the best simple baseline's or lags it by no more than 2 standard errors of "
        "the test score (benign memorisation; the standard error is the chance-level "
        "measurement's noise, else 0.5/sqrt(n_test), and the raw scores are compared with "
        "it: an R2 far below 0 lags clearly), rising to x1.0 at a lag of 0.05 or more; for a "
        "model that memorises its training rows (training score >= 0.97) the factor within "
        "those 2 standard errors rises with the lag's significance instead, x0.4 at 1 "
        "standard error to x1.0 at 2 (never above what the lag's size gives), and so does "
        "its lag harm floor below (0 at 1 standard error, full at 2), unless the ladder's "
        "simple models move in opposite directions from their cross-validated to their "
        "test score and part by more than 2 standard errors (the test rows re-rank models "
        "by more than the noise says: the lag within them is that noise, x0.4); x1.0 "
        "for a regressor that reproduces its training rows while their labels spread "
        "wider than the test labels beyond 3 standard errors of the log ratio, by enough "
        "to cost 0.05 of R2 (it memorised that label noise, and baselines fitted to the "
        "same labels are no yardstick for its cost); x0.8 "
        "without baselines. For a model that does not memorise its training rows and lags "
        "beyond those 2 standard errors, the gap's score above its benign x0.4 share is "
        "bounded by the harm of the lag: the share of the skill the best baseline shows "
        "above the dummy on test that the model gives away, on underfitting's shortfall "
        "scale (1/3 or less -> 0, 0.5 -> 0.3, 0.7 -> 0.5, 0.9 -> 0.7, all -> 0.85; the "
        "absolute lag's scale below when the baseline shows no skill above the dummy): the "
        "gap is the evidence, the test score given away is the severity. For a model that "
        "does not memorise its training rows the "
        "baseline's test score counts only as far as its cross-validated score supports it "
        "(+ 2 noise units, as underfitting credits a rung): test rows easier for the "
        "baseline than its training folds are no score this model gives away. A "
        "classifier's lag counts at most sqrt(its test errors) standard errors (McNemar's "
        "paired bound: a baseline gains only on the rows the model misses), within noise at 4 "
        "errors or fewer. A model that memorises its "
        "training rows (training score >= 0.97) and lags the best baseline beyond those 2 "
        "standard errors scores at least its lag: 0.05 -> 0.2, 0.1 -> 0.4, 0.2 -> 0.6, "
        "0.35 -> 0.8 (the gap's worst-case margin shrinks it on small test splits; the lag is "
        "the measured harm). A classifier that memorises its training rows and states "
        "certainty on them (training log loss at most -ln 0.97) and that is more sure of its "
        "test answers than it is right (the confidence gap less 1.96 of its standard errors "
        "under calibration, as poor_calibration measures it), on a split where the best "
        "baseline loses no more than 2 standard errors from its cross-validation to test "
        "(else the split moved for every model), scores at least that "
        "overconfidence on poor_calibration's scale (0.04 -> 0.2, 0.1 -> 0.4, 0.15 -> 0.55, "
        "0.25 -> 0.7): the calibration its memorisation costs, even where its decisions "
        "beat the baselines; when that alone lifts the finding to medium or above it "
        "explains the miscalibration (poor_calibration, an overconfident slice) but no "
        "symptom of wrong decisions. A regressor that reproduces its training rows and "
        "whose test predictions spread under 0.4 of its training predictions' spread "
        "(scaled to the test targets' spread), outputs that vary on its training rows, "
        "answers new rows with one value: scored on degenerate_predictions' scale "
        "(0.25 -> 0.3, 0.1 -> 0.6, 0.02 -> 0.9). Where nothing beyond the gap's benign share is "
        "measured, Deepchecks' Train Test Performance (the same gap re-measured) adds no "
        "confidence. Confidence "
        "0.85, 0.65 on a test split under 100 rows unless the lag exceeds 3 standard "
        "errors. Regression: a model that fits its training rows far better than test "
        "(training score >= 0.97, or a gap beyond 0.15) and is within noise of chance on "
        "test, whose training targets' standard deviation exceeds the test targets' by 3 "
        "standard errors of its log (normal theory) and by enough that reproducing the "
        "extra spread costs 0.05 of R2, has fitted label noise: it scores at least 0.7 "
        "(high, the chance guard's score) and explains the chance-level score, which would "
        "otherwise read as labels unrelated to the features (a few extreme training "
        "targets are outliers' cause instead, and on a chronological split the periods' "
        "spreads differ by nature). Deepchecks Train Test Performance "
        "(relative degradation 0.2 -> 0.3, 0.35 -> 0.45, 0.5 -> 0.55, >= 0.7 -> 0.6) and "
        "Boosting Overfit (test decline 0.1 -> 0.4, 0.2 -> 0.6) corroborate, capped at our "
        "own score + 0.05 when we have one, at our own score when that found the gap "
        "benign (no memorisation, no lag beyond noise: the check re-measures the same gap, "
        "no harm of its own), or where what the model memorised is collected noise (a lag "
        "within noise, and the refit with the columns without label association held "
        "constant fits its training rows below 0.97 while its test score holds within 2 "
        "standard errors). Training history (epochs): the validation "
        "accuracy lost "
        "between its best epoch and the last, once beyond its noise (max(2, sqrt(2 ln "
        "epochs)) paired standard errors on the `val_rows` validation rows, else on the "
        "test set's size) (0.03 -> 0.25, 0.06 -> 0.45, 0.1 -> 0.6, 0.2 -> "
        "0.8), or without one the validation loss's rise from its best (x1.5 -> 0.2, x2 -> "
        "0.35, x3 -> 0.45), only while the training loss kept falling after the best epoch."
    )
    explains = ("poor_calibration", "weak_segment", "fragile_predictions", "overconfident_slice")
    checks = ("Train Test Performance", "Boosting Overfit")

    def explains_for(self, artifact):
        """A model that reproduces its training rows (training score at least
        ``MEMORISED``), or scores far better on them than on test (a gap beyond
        underfitting's ``OVERFIT_GAP``, where its baseline comparison already calls the
        model overfitted rather than too weak), and scores no better than chance on
        test, while the labels are learnable (a simple baseline does clearly better), is
        not too weak: the chance-level score is the symptom of what it fitted to its
        training rows (``underfitting``'s no-better-than-chance finding is folded into
        this one, or into the cause that explains this gap). When no baseline learns
        the labels either, the labels look unrelated to the features and that finding
        stays the cause (it explains the train/test gap). A memorising model whose
        outputs collapse on the test rows only (they vary on its training rows:
        :func:`~deepfix_agents.rules.degenerate_predictions.collapsed_on_training_rows`)
        also explains that collapse: new rows fall to a default answer.

        A weak segment stays out of it where that category's excess errors account for
        the whole lag behind the ladder (:func:`~deepfix_agents.rules.weak_segment.
        segment_beyond_lag`): the memorised labels are that segment's, the segment is
        the cause and explains this finding instead."""
        explained = self._explains_for(artifact)
        if segment_beyond_lag(artifact) is not None:
            return tuple(c for c in explained if c != "weak_segment")
        return explained

    def _explains_for(self, artifact):
        """:meth:`explains_for` before the weak-segment exception."""
        train = artifact.performance.train_score
        if train is None:
            return self.explains
        own = _own(artifact)
        if own is not None and own["probabilities_only"]:
            # a harm measured in the stated probabilities alone (the memorised certainty
            # on test rows, :func:`memorised_overconfidence`) explains what misstates
            # them; wrong decisions (a weak segment, fragile or collapsed outputs, a
            # chance-level score) are no symptom of it, as recalibrating, which would
            # remove it, changes no decision
            return PROBABILITY_SYMPTOMS
        # ``_own`` already read the gap (in squared error, as far as beyond noise) and the
        # label noise reproduced; None only without a test score
        far_above = own is not None and own["gap"] > OVERFIT_GAP
        if not (memorises(train) or far_above):
            return self.explains
        explains = self.explains
        if memorises(train) and not collapsed_on_training_rows(artifact):
            # outputs that vary on the rows it reproduces and collapse on unseen rows
            # only (an RBF kernel too narrow: every new row is far from all training
            # rows and gets the intercept's class) are what the memorisation does to
            # new rows, not a model broken into a constant output
            explains = (*explains, "degenerate_predictions")
        if own is not None and own["label_noise"] is not None:
            # the chance-level score is the fitted label noise reproduced on test rows:
            # a ladder fitted to the same noisy labels finding no signal does not make
            # the labels unrelated to the features
            return (*explains, "underfitting")
        measured = at_chance(artifact)
        if measured is not None and signal_is_learnable(artifact, measured) is not True:
            return explains
        return (*explains, "underfitting")

    def confidence(self, signals):
        """Deepchecks' Train Test Performance re-measures the gap our own signal sized;
        where that measurement found the gap harmless (nothing beyond the benign share:
        no lag behind the baselines beyond noise, no label noise reproduced), the check
        is a second view of the same observation, not independent evidence that the gap
        is a problem, and is left out of the confidence (as the base rule leaves out a
        measurement that found no harm). Boosting Overfit, a decline of the test score
        over iterations, is a measurement of its own and stays."""
        if any(s.source == "model" and s.facts.get("harmless") for s in signals):
            signals = [s for s in signals if s.evidence.check != "Train Test Performance"]
        return super().confidence(signals)

    def detect_model(self, artifact):
        own = _own(artifact)
        if own is None or own["score"] <= 0:
            return
        detail = (
            f"{own['metric']} is {own['train_score']:.3f} on train but {own['test_score']:.3f} "
            f"on test (gap {own['gap']:.3f})"
        )
        if own["best"] is not None:
            detail += f"; the {own['best']} baseline reaches {own['best_score']:.3f} on test"
            if own["best_supported"] < own["best_score"]:
                detail += (
                    f", of which its cross-validation on the training rows supports "
                    f"{own['best_supported']:.3f} (the rest is test rows easier for it, not "
                    "score this model gives away)"
                )
            if own["few_errors"]:
                detail += (
                    f" (the model misses only {own['lag_z'] ** 2:.0f} test rows, so no model "
                    f"scored on the same rows can beat it by more than {own['lag_z']:.1f} paired "
                    "standard errors: a handful of rows (a small class's, on a macro score), "
                    "not a measured loss to memorisation)"
                )
            elif own["lag_within_noise"] and (
                own["label_noise"] is not None or own["memorised_noise"] is not None
            ):
                detail += (
                    " (a lag within the test score's noise, against baselines fitted to the "
                    "same noisy labels)"
                )
            elif own["lag_within_noise"] and own["memorises"] and own["factor"] > LAG_FACTOR[0][1]:
                detail += (
                    f" ({own['lag_z']:.1f} standard errors of the test score above it, short of "
                    f"{LAG_NOISE_UNITS:g}: a model that reproduces its training rows and lags "
                    "this much is more likely than not giving test score away)"
                )
            elif own["lag_within_noise"]:
                detail += (
                    f" (within noise: {LAG_NOISE_UNITS:g} standard errors of the test score are "
                    f"{LAG_NOISE_UNITS * own['lag_noise']:.3f}), so the memorisation costs no "
                    "measurable test score"
                )
        if own["memorises_noise"]:
            detail += (
                "; held constant, the columns without label association take its training "
                "score below memorisation while its test score holds: what it memorised "
                "is that collected noise"
            )
        if own["label_noise"] is not None:
            detail += (
                f"; the training labels spread {own['label_noise']:.2f}x as wide as the test "
                f"labels ({own['label_noise_z']:.1f} standard errors): noise in the training "
                "labels, which the model reproduces"
            )
        elif own["memorised_noise"] is not None:
            detail += (
                f"; the training labels spread {own['memorised_noise']:.2f}x as wide as the "
                f"test labels ({own['memorised_noise_z']:.1f} standard errors): noise in the "
                "training labels, which the model reproduces (baselines fitted to the same "
                "labels are no yardstick for what that costs)"
            )
        if own["shift"] > 0.05:
            detail += f" (it loses {own['shift']:.3f} from cross-validation to test itself)"
        if own["collapse"] is not None:
            detail += (
                "; its predictions vary on its training rows but collapse on the test rows "
                "(new rows get (almost) one answer: what it learned does not carry over)"
            )
        if own["overconfidence"] is not None:
            detail += (
                "; it states certainty on its training rows and the same on new ones: on "
                f"the test rows its stated confidence exceeds its accuracy by "
                f"{artifact.performance.confidence_gap:.3f}, {own['overconfidence']:.3f} "
                "beyond what a calibrated model shows by chance (every test error made at "
                "full confidence: the calibration its memorisation costs)"
            )
        # a small test split makes the gap uncertain, unless the model lags the best
        # baseline by many standard errors of its test score: then the noise is measured
        # and the harm stands beyond it
        small = artifact.dataset.test.n_rows < 100 and not (
            own["best_score"] is not None
            and own["best_score"] - own["test_score"] > SURE_LAG_UNITS * own["lag_noise"]
            and own["lag_z"] > SURE_LAG_UNITS
        )
        yield self.signal(
            "model",
            score=own["score"],
            confidence=0.65 if small else 0.85,
            detail=detail,
            value=own["gap"],
            **{k: v for k, v in own.items() if k != "score"},
        )

    def detect_training(self, artifact):
        """Overfitting over epochs: validation got worse while training kept improving,
        and training ran past the best epoch (early stopping never triggered).

        The accuracy given away counts only beyond the validation noise
        (:func:`epoch_noise`): a validation accuracy moves from epoch to epoch by
        sampling noise of its split alone, and the best of a dozen epochs is by
        construction a lucky one, so a healthy run routinely ends a point or two below
        its best. The split's size is the ``val_rows`` param when the training run
        logged one, else the evaluated test set's (a hold-out usually the same order of
        size). Without a validation accuracy the loss must rise by a fifth from its
        best (``VAL_LOSS_RISE_SCORE``), far beyond the noise of a mean cross-entropy."""
        history = artifact.training
        if history is None:
            return
        val_loss, train_loss = history.metric("val_loss"), history.metric("train_loss")
        if val_loss is None or train_loss is None or val_loss.n_nonfinite or train_loss.n_nonfinite:
            return
        val, train = smoothed(val_loss), smoothed(train_loss)
        if len(val) < 4 or len(train) < 4 or min(val) <= 0:
            return
        best = val.index(min(val))
        after = len(val) - 1 - best
        if after < 2:
            return
        train_at_best = train[min(round(best * (len(train) - 1) / (len(val) - 1)), len(train) - 1)]
        if train[-1] >= train_at_best:
            return  # both got worse: not a train/validation gap
        val_score = history.metric("val_score")
        lost = noise = None
        if val_score is not None and len(smoothed(val_score)) == len(val):
            scores = smoothed(val_score)
            lost = max(scores) - scores[-1]
            n_rows = history.val_rows or artifact.dataset.test.n_rows
            noise = epoch_noise(max(scores), scores[-1], n_rows, len(scores))
            if lost <= noise:
                return
            score = interp(lost, LOST_SCORE)
        else:
            score = interp(val[-1] / val[best] - 1.0, VAL_LOSS_RISE_SCORE)
        if score <= 0:
            return
        stopping = (
            "; no early stopping was configured"
            if not history.early_stopping
            else "; early stopping was configured but did not stop the run"
        )
        detail = (
            f"{val_loss.key} was best at point {best + 1} of {len(val)} ({val[best]:.3g}) and "
            f"ended at {val[-1]:.3g} while {train_loss.key} kept falling "
            f"({train_at_best:.3g} -> {train[-1]:.3g}){stopping}"
        )
        if lost is not None:
            detail += (
                f"; {val_score.key} lost {lost:.3f} from its best (noise on "
                f"{history.val_rows or artifact.dataset.test.n_rows} validation rows: "
                f"{noise:.3f})"
            )
        yield self.signal(
            "training",
            score=score,
            confidence=0.8,
            detail=detail,
            value=lost if lost is not None else val[-1] / val[best],
            epochs_past_best=after,
            val_key=val_loss.key,
            lost=lost,
            noise=noise,
        )

    def detect_deepchecks(self, artifact):
        own = _own(artifact)
        # the checks re-measure the gap our own signal sized; where that found it benign
        # (a model that does not reproduce its training rows, no lag beyond noise) they
        # add no evidence of harm and cannot lift the finding above it
        # (a memoriser's lag within noise may still be real, unless what it memorised is
        # collected noise: see ``noise_carries_memorisation``)
        benign = own is not None and own["lag_within_noise"] and (
            not own["memorises"] or own["memorises_noise"]
        )
        cap = None if own is None else own["score"] + (0.0 if benign else 0.05)
        for name, table in (
            ("Train Test Performance", DEGRADATION_SCORE),
            ("Boosting Overfit", BOOSTING_SCORE),
        ):
            check = artifact.check(name)
            if check is None or check.outcome != "not_passed" or check.value is None:
                continue
            score = interp(abs(check.value), table)
            if cap is not None:
                score = min(score, cap)
            if score >= 0.05:
                yield self.check_signal(
                    check, score=score, confidence=0.6, degradation=abs(check.value)
                )

    def title(self, signals, artifact):
        train, test = self.fact(signals, "train_score"), self.fact(signals, "test_score")
        if train is None:
            degradation = self.fact(signals, "degradation")
            past = self.fact(signals, "epochs_past_best")
            if past is not None:
                lost = self.fact(signals, "lost")
                lost_text = f", giving away {lost:.2f} accuracy" if lost else ""
                return (
                    f"Training ran {past} points past its best validation loss{lost_text} "
                    "(overfitting over epochs)"
                )
            if degradation is not None:
                return f"Performance drops by {degradation:.0%} from train to test"
            return self.name
        metric = self.fact(signals, "metric")
        title = f"{metric} is {train:.2f} on train but {test:.2f} on test"
        best, best_score = self.fact(signals, "best"), self.fact(signals, "best_score")
        if best is not None and best_score > test:
            title += f" (a simple {best} baseline reaches {best_score:.2f})"
        return title

    def explanation(self, signals, artifact):
        return (
            "The model does much better on the rows it was trained on than on new rows. It "
            "has memorised its training data, noise included, instead of learning the general "
            "pattern, so it gives away accuracy on new data and its training score overstates "
            "its quality. Simpler or more regularised models tend to generalise better here."
        )
