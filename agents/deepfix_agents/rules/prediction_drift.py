"""prediction_drift: the model's outputs shift between train and test more than the
outcomes do.

Predictions that follow a real change of the outcomes (more positives in test, higher
targets) are the model doing its job; that shift belongs to label or feature drift.
What this rule measures is the part of the prediction shift the labels do not
justify: the model's outputs moved while the outcomes stayed put, so on the new data
its predictions are systematically off. Our evidence compares the model's predictions
on train and test (``train_prediction_distribution`` / ``prediction_stats``) with the
labels of both splits; Deepchecks' Prediction Drift, less the label shift, corroborates
or stands in when those statistics are missing.

When the outputs move unjustified, the drifting features are the mechanism and this
finding the harm, so ``explains`` lists ``feature_drift`` (and feature drift lists this
rule): the reasoner keeps whichever of the two ranks higher and folds the other into it,
except where a feature moved far enough to be the visible cause (1.5 training stds, or a
large effect beyond doubt in a feature the model measurably reads: see ``explains_for``),
which feature drift then names and this finding joins as its symptom.
Many small nudges are recognised on the inputs too (:func:`joint_nudge`): several
features each moved a little, none far, the labels unmoved (or the predictions moved
beyond them, beyond noise). No single feature explains
them, so this rule names their joint shift (measured by its importance-weighted length
and Deepchecks' domain classifier) even when the predicted shares barely moved.
Shifted outputs also make test-only symptoms: a share of one class far from its true
share, probabilities that no longer match frequencies, a threshold tuned for the
training population, and a train/test gap; those are folded in too, and so, when the
inputs moved together, is a model no better than chance on the moved test rows (when the
training rows showed a signal to lose: ``underfitting.training_rows_show_signal``).
"""

from __future__ import annotations

import math

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, interp, pct
from deepfix_agents.rules._ladder import training_rows_show_signal
from deepfix_agents.rules.feature_drift import (
    DRIFTED,
    MULTIVARIATE_CHECKS,
    NOISE_Z,
    NUDGE_SD,
    PERIOD_CAP,
    SHIFT_SCORE,
    PeriodDriftHarm,
    _column_drift,
    _skipped_columns,
    drift_measured_columns,
    effective_rows,
    importance_weight,
    multivariate_drift,
    numeric_shift,
    performance_factor,
    period_drift_without_harm,
    two_sample_noise,
)
from deepfix_agents.rules._memorisation import memorises
from deepfix_agents.rules._shares import total_variation
from deepfix_agents.rules._target_shift import MEAN_SHIFT_Z, target_mean_shift
from deepfix_agents.rules.degenerate_predictions import collapsed_on_training_rows
from deepfix_agents.scoring import severity_for

#: a numeric feature whose location moved this many training standard deviations (or
#: within noise of it, see :func:`large_feature_shifts`) is a covariate shift in its own
#: right (the cause of the moved predictions)
LARGE_SHIFT_SD = 1.5
#: NUDGE_SD (in feature_drift, which also reads it): below Cohen's "large" effect a
#: feature's shift is a nudge. Between the two, either reading holds and the more urgent
#: finding keeps the other.


def large_feature_shifts(artifact) -> list[str]:
    """Numeric features (by weighted drift) whose location moved LARGE_SHIFT_SD or more,
    as far as these split sizes can tell: a measured shift counts as large unless it
    falls short of LARGE_SHIFT_SD by more than ``NOISE_Z - 1`` standard errors of a
    location shift (``sqrt(1/n + 1/m)`` training stds, :func:`numeric_shift`'s), the
    point below which feature drift no longer counts an effect. A feature shifted by
    1.5 training stds measures 1.49 or 1.51 by the draw of the rows: which of the two
    readings (the visible feature drift, or prediction drift) claims the moved outputs
    should not hang on that draw."""
    n_train, n_test = effective_rows(artifact, "train"), effective_rows(artifact, "test")
    se = math.sqrt(1.0 / n_train + 1.0 / n_test)
    floor = LARGE_SHIFT_SD - (NOISE_Z - 1.0) * se
    return [
        facts["feature"]
        for _, facts in _column_drift(artifact)
        if facts.get("kind") == "numeric" and facts.get("shift", 0.0) >= floor
    ]


def moved_features(artifact) -> list[str]:
    """Numeric features whose location moved by at least a large effect (NUDGE_SD)."""
    return [
        facts["feature"]
        for _, facts in _column_drift(artifact)
        if facts.get("kind") == "numeric" and facts.get("shift", 0.0) >= NUDGE_SD
    ]


def large_feature_shift(artifact) -> str | None:
    """The first feature (by weighted drift) whose location moved >= LARGE_SHIFT_SD."""
    shifts = large_feature_shifts(artifact)
    return shifts[0] if shifts else None


def read_feature_shifts(artifact) -> list[str]:
    """Numeric features that moved by a large effect beyond doubt and that the model
    measurably reads, when no other feature's reading hangs on the draw of the rows.

    A feature counts when its location shift less ``NOISE_Z - 1`` of its standard errors
    (``sqrt(1/n + 1/m)`` training stds, :func:`numeric_shift`'s) is still at least
    ``NUDGE_SD`` (Cohen's "large" effect) and shuffling it alone moves the model's
    output on some test rows (the testing step's ``shuffle_reads``, share > 0): it
    moved further than any nudge, and the measurement shows the model computes its
    answers from it, so the outputs it moved are its harm to this model, visible
    feature by feature, not a separate finding. Nudges below ``NUDGE_SD`` add up to
    moved outputs only together, which leaves prediction drift the cause, and a moved
    feature the model never reads cannot have moved its outputs.

    Empty when any feature measured at ``NUDGE_SD`` or more (:func:`moved_features`)
    falls short of it beyond doubt: that feature may be a nudge as well as a large
    shift, so the moved outputs may be the sum of nudges and both readings hold (the
    more urgent finding keeps the other, as between ``NUDGE_SD`` and
    ``LARGE_SHIFT_SD``). Empty without a ``shuffle_reads`` measurement: then only
    :func:`large_feature_shifts` decides."""
    measured = artifact.intervention("shuffle_reads")
    reads = measured.per_feature if measured is not None else None
    if not reads:
        return []
    n_train, n_test = effective_rows(artifact, "train"), effective_rows(artifact, "test")
    bound = (NOISE_Z - 1.0) * math.sqrt(1.0 / n_train + 1.0 / n_test)
    moved = [
        facts for _, facts in _column_drift(artifact)
        if facts.get("kind") == "numeric" and facts.get("shift", 0.0) >= NUDGE_SD
    ]
    if any(facts["shift"] - bound < NUDGE_SD for facts in moved):
        return []
    return [facts["feature"] for facts in moved if (reads.get(facts["feature"]) or 0.0) > 0.0]


#: a few far-moved features are fewer than this share of the inputs a drift is measured
#: on, a minority (a joint nudge moves the inputs together: half of them or more)
FEW_MOVERS_SHARE = 0.5


def only_large_movers(artifact) -> list[str]:
    """The drifting features when they are a few features moved far and nothing else:
    every feature that drifts beyond noise is numeric and moved by a large effect (at
    least ``NUDGE_SD`` training stds, as measured), together they are fewer than
    ``FEW_MOVERS_SHARE`` of the inputs whose drift is measured, and the model reads at
    least one of them (``shuffle_reads``; taken as read when not measured, or when no
    input moves any output, which tells read from unread inputs apart no better). Empty
    otherwise.

    Between ``NUDGE_SD`` and ``LARGE_SHIFT_SD`` one shift alone may be read either way
    (:func:`read_feature_shifts` asks for a large effect beyond doubt); what settles it
    is the company it keeps. A joint nudge moves the inputs together, most of them a
    little, so some land below ``NUDGE_SD``; two features of fifteen shifted by about
    one training std each, with every other feature where it was, leave no nudges to add
    up: those few shifts are the visible cause of the moved outputs (DEV: nba_positions'
    rebounds and assists, 1.21 and 0.97 stds, folded into a critical prediction drift)."""
    drifting = [facts for _, facts in _column_drift(artifact)]
    if not drifting or any(
        facts.get("kind") != "numeric" or facts.get("shift", 0.0) < NUDGE_SD
        for facts in drifting
    ):
        return []
    if len(drifting) >= FEW_MOVERS_SHARE * sum(1 for _ in drift_measured_columns(artifact)):
        return []
    names = [facts["feature"] for facts in drifting]
    measured = artifact.intervention("shuffle_reads")
    reads = measured.per_feature if measured is not None else None
    moving = {name for name, share in (reads or {}).items() if (share or 0.0) > 0.0}
    if moving and not moving.intersection(names):
        # other inputs move the outputs, these never do: they cannot have moved them
        return []
    return names


#: a joint shift needs at least this many numeric features moved beyond noise (one
#: nudged feature is a small feature drift; from two on, no single one explains the
#: moved inputs, the same reading as feature drift's ``explains_for``)
JOINT_MIN_FEATURES = 2
#: |log| of a spread ratio that is a change in its own right (2x): feature drift's reading
SPREAD_CHANGE = math.log(2.0)
#: one-sided normal quantile of the joint test below (1 %): the numeric features' squared
#: shift z-scores, summed, exceed what chance gives ``k`` features this rarely
JOINT_Z = 2.326


def chi2_quantile(k: int, z: float = JOINT_Z) -> float:
    """Upper quantile of a chi-square with ``k`` degrees of freedom at the normal
    quantile ``z`` (Wilson-Hilferty: accurate to a few percent from k = 2 on)."""
    h = 2.0 / (9.0 * k)
    return k * (1.0 - h + z * math.sqrt(h)) ** 3


def _chi_square_moved(shifts, se: float) -> bool:
    """Whether ``shifts`` (raw location shifts in training stds, first of each tuple),
    each with standard error ``se``, moved together beyond chance: at least
    ``JOINT_MIN_FEATURES`` of them and their squared z-scores summing beyond
    :func:`chi2_quantile` for that many degrees of freedom."""
    if len(shifts) < JOINT_MIN_FEATURES or se <= 0:
        return False
    return sum((raw / se) ** 2 for raw, *_ in shifts) > chi2_quantile(len(shifts))


def joint_nudge(artifact) -> dict | None:
    """Several numeric features each moved a little, none far: the inputs shifted
    together (another population, a recalibrated sensor suite) while no single feature
    stands out. None unless at least ``JOINT_MIN_FEATURES`` features moved beyond noise
    (``numeric_shift``'s significant location) and none moved by a large effect
    (``NUDGE_SD``), changed its spread 2x or more, or changed its category shares, and
    unless the outcomes stayed put (inputs that follow moved labels are label drift) or
    the model's predictions moved beyond them by more than noise (:func:`outran_outcomes`:
    a later period of a series whose inputs moved further than its outcomes).

    ``joint`` is the length of the moved features' shift vector in training standard
    deviations, each shift counted as far as it is beyond noise and weighted by how much
    the model relies on the feature: four features moved 0.4 std each add up to a 0.8
    std move of the inputs. Shrinking each shift by its own noise test undercounts many
    shifts of 2-3 standard errors each (small test splits): when the squared z-scores
    together exceed a chi-square's 1 % quantile the features moved jointly, and the
    squared length less its noise expectation (sum of w² se²) estimates the move without
    that shrinkage; the larger of the two counts. The same chi-square test on the
    features that did not move beyond noise one by one admits a joint shift none shows
    alone. ``shifts`` and ``largest`` are the measured shifts."""
    dataset = artifact.dataset
    if dataset.train is None or dataset.property_names:
        return None
    n_train, n_test = effective_rows(artifact, "train"), effective_rows(artifact, "test")
    label_shift = _label_shift(artifact)
    label_noise = math.sqrt(1.0 / n_train + 1.0 / n_test)
    if artifact.task != "regression":
        label_noise *= 0.5
    if label_shift is None:
        return None
    if label_shift > 2.0 * label_noise and not outran_outcomes(artifact):
        # inputs that follow moved outcomes (a later period of a series) are the
        # outcomes' shift; only predictions that moved beyond it, by more than their
        # noise, say the inputs moved on their own as well
        return None
    skipped = _skipped_columns(artifact)
    se = math.sqrt(1.0 / max(n_train, 1) + 1.0 / max(n_test, 1))
    moved, nudged = [], []
    for name in dataset.input_columns:
        if name in skipped:
            continue
        train, test = dataset.train.column(name), dataset.test.column(name)
        if train is None or test is None or train.kind != "numeric" or test.kind != "numeric":
            continue
        shift = numeric_shift(train, test, n_train, n_test)
        if shift is None:
            continue
        if shift["location"] >= NUDGE_SD or shift["spread"] >= SPREAD_CHANGE:
            return None  # a feature moved far on its own: feature drift's reading
        weight = importance_weight(artifact, name)
        if shift["location"] > 0:
            moved.append((shift["location"], name, weight, shift["shift"]))
        nudged.append((shift["shift"], name, weight, shift["shift"]))
    if any(
        facts.get("kind") == "categorical" and facts["raw"] >= DRIFTED
        for _, facts in _column_drift(artifact)
    ):
        return None
    # under chance the features' squared shift z-scores sum to a chi-square with one
    # degree of freedom per feature: a sum beyond its 1 % quantile is a joint move of
    # the inputs ...
    jointly = _chi_square_moved(nudged, se)
    if len(moved) < JOINT_MIN_FEATURES:
        # ... and counts even when no two features moved beyond noise one by one, as long
        # as the features that did not (each within noise) moved together on their own:
        # one feature moved far with the rest at chance is that feature's drift
        alone = {name for _, name, _, _ in moved}
        if not _chi_square_moved([m for m in nudged if m[1] not in alone], se):
            return None
        jointly = True
    # the length counts each shift only as far as it is beyond noise (``location``) ...
    joint = math.sqrt(sum((weight * location) ** 2 for location, _, weight, _ in moved))
    if jointly:
        # ... or, for a joint move, as far as the squared lengths exceed what noise alone
        # gives these features (its expectation)
        excess = sum((weight * raw) ** 2 - (weight * se) ** 2 for raw, _, weight, _ in nudged)
        joint = max(joint, math.sqrt(max(excess, 0.0)))
        moved = [m for m in nudged if m[0] > 0] if len(moved) < JOINT_MIN_FEATURES else moved
    moved.sort(key=lambda m: (-m[3], m[1]))
    return {
        "joint": joint,
        "n_moved": len(moved),
        "largest": moved[0][3],
        "moved_features": [name for _, name, _, _ in moved],
        "shifts": {name: round(raw, 2) for _, name, _, raw in moved},
    }


#: classification: shift of predicted class shares beyond the label shift (TVD) -> score
SHARE_SCORE = ((0.03, 0.0), (0.07, 0.3), (0.12, 0.5), (0.2, 0.8), (0.3, 0.9))
#: regression: shift of the mean prediction beyond the target's, in target stds -> score
MEAN_SCORE = ((0.1, 0.0), (0.2, 0.3), (0.35, 0.5), (0.6, 0.75), (1.0, 0.9))
#: Deepchecks' Prediction Drift (KS-like) beyond noise and the label shift -> score
DRIFT_SCORE = ((0.05, 0.0), (0.1, 0.2), (0.15, 0.3), (0.25, 0.5), (0.4, 0.7), (0.6, 0.85))


def _label_shift(artifact) -> float | None:
    """How far the outcomes moved: total variation of class shares, or for regression
    the target mean's shift in training target stds."""
    dataset = artifact.dataset
    if dataset.train is None:
        return None
    if artifact.task == "regression":
        train, test = dataset.train.label_stats, dataset.test.label_stats
        if not train.get("std") or "mean" not in train or "mean" not in test:
            return None
        return abs(test["mean"] - train["mean"]) / train["std"]
    train, test = dataset.train.label_distribution, dataset.test.label_distribution
    if not train or not test:
        return None
    return total_variation(train, test)


def unjustified_move(predicted: float, true: float) -> float:
    """How much of a move of the predictions (``predicted``: a class's predicted share,
    or the mean prediction) the move of the outcomes (``true``) does not justify: the
    outcomes justify a move the same way and no further (label drift's reading of the
    part the predictions follow). Outcomes that moved while the predictions stayed, or
    moved the other way, are a shift of the outcomes (label drift's), not of the
    predictions: only the predictions' own move counts here."""
    if predicted == 0.0:
        return 0.0
    justified = min(max(true / predicted, 0.0), 1.0) * predicted
    return abs(predicted - justified)


def _as_ks(shift_in_stds: float, artifact) -> float:
    """The KS distance between train and test predictions that a target shift of
    ``shift_in_stds`` justifies for a model explaining R2 of the variance: predictions
    spread sqrt(R2) as wide as the target, so the same mean shift is larger in their units."""
    r2 = artifact.performance.train_score
    spread = math.sqrt(min(max(r2 if r2 is not None else 0.5, 0.1), 1.0))
    return math.erf(shift_in_stds / spread / (2.0 * math.sqrt(2.0)))


def _residual_shift_se(artifact, n_train: float, n_test: float, train_std: float) -> float:
    """Standard error of (prediction shift - target shift), in training target stds.

    That difference is the shift of the mean residual (prediction - target) from train
    to test, so its noise is the residuals' spread, not the target's: sqrt(RMSE_train²/n
    + RMSE_test²/m). A model that explains most of the target has far less noise here
    than 1/sqrt(n) target stds (the fallback without RMSEs)."""
    scores = artifact.performance.scores
    rmse_train = scores.get("train", {}).get("rmse")
    rmse_test = scores.get("test", {}).get("rmse")
    if rmse_train is None or rmse_test is None or train_std <= 0:
        return math.sqrt(1.0 / n_train + 1.0 / n_test)
    return math.sqrt(rmse_train**2 / n_train + rmse_test**2 / n_test) / train_std


def reproduces_training_labels(artifact, predicted: dict, labels: dict, n_train: float) -> bool:
    """Whether a classifier's outputs on its training rows are its training labels
    restated: a training score of at least ``MEMORISED`` (overfitting's) and predicted
    class shares on the training rows within share noise (1.5 sqrt(0.25 / n), one
    split's half of the two-split margin :func:`_own` uses) of the label shares.

    The train -> test comparison of predicted shares is meant to read how the model's
    outputs respond to a new population. For a model that reproduces its training rows,
    the "before" side is the labels themselves, so the comparison reduces to the test
    predictions against the test labels: a test-only gap (a memoriser answering one
    class on every unseen row: overfitting, a degenerate output), not a shift of the
    outputs. Deepchecks' Prediction Drift, capped at this reading + 0.1, compares the
    same two prediction samples."""
    train_score = artifact.performance.train_score
    if train_score is None or not memorises(train_score) or not predicted or not labels:
        return False
    return total_variation(predicted, labels) <= 1.5 * math.sqrt(0.25 / max(n_train, 1))


def against_unmeasured_outcomes(artifact, moved: float, truth: float, train_std: float) -> bool:
    """Whether the mean prediction moved (``moved``, in training target stds) against
    outcomes whose own move (``truth``) is within its sampling noise: less than
    ``MEAN_SHIFT_Z`` standard errors of the target mean's difference
    (:func:`~deepfix_agents.rules._target_shift.target_mean_shift`, the bar at which label
    drift reads a shift), so no label shift is measured to claim it.

    Rows drawn at random carry the inputs of their outcomes, so a chance dip of the
    test outcomes pulls the predictions along (the residuals stay put); predictions
    that rose while the outcomes fell were not moved by the outcomes at all. The
    residuals' whole shift from train to test (``moved - truth``) is then the
    predictions' own move, a bias of the test error the inputs caused, and no other
    rule reads it: label drift only reads an outcome shift beyond its noise.
    (:func:`unjustified_move` counts only the predictions' own move, leaving the
    outcomes' move to label drift, which is right once that move is measured.)"""
    if moved * truth >= 0:
        return False
    train, test = artifact.dataset.train, artifact.dataset.test
    found = target_mean_shift(train.label_stats, train.n_rows, test.label_stats, test.n_rows)
    if found is None:
        return False
    return abs(truth) < MEAN_SHIFT_Z * found[1] / train_std


def outran_outcomes(artifact) -> bool:
    """Whether the model's predictions moved beyond what the move of the outcomes
    justifies by more than that difference's noise (:func:`_own`'s margin): on a
    time-ordered split the outcomes of the test period move on their own, and inputs
    (lags of the target, seasons) that merely follow them move the predictions no
    further; predictions that outran them were moved by the inputs themselves."""
    own = _own(artifact)
    return own is not None and own["unjustified"] > own["margin"]


def _own(artifact) -> dict | None:
    """Unjustified shift of the predictions from our own statistics, with its score."""
    performance = artifact.performance
    label_shift = _label_shift(artifact)
    if label_shift is None:
        return None
    n_train, n_test = effective_rows(artifact, "train"), effective_rows(artifact, "test")
    if artifact.task == "regression":
        stats = performance.prediction_stats
        train_std = artifact.dataset.train.label_stats.get("std")
        if "train" not in stats or "test" not in stats or not train_std:
            return None
        moved = (stats["test"]["mean"] - stats["train"]["mean"]) / train_std
        truth = (
            artifact.dataset.test.label_stats["mean"] - artifact.dataset.train.label_stats["mean"]
        ) / train_std
        unjustified = unjustified_move(moved, truth)
        if against_unmeasured_outcomes(artifact, moved, truth, train_std):
            # the residuals' whole shift is the predictions' own
            unjustified = abs(moved - truth)
        margin = 3.0 * _residual_shift_se(artifact, n_train, n_test, train_std)
        return {
            "score": interp(unjustified - margin, MEAN_SCORE),
            "kind": "mean",
            "moved": moved,
            "truth": truth,
            "unjustified": unjustified,
            "margin": margin,
        }
    before, after = performance.train_prediction_distribution, performance.prediction_distribution
    if not before or not after:
        return None
    labels_before = artifact.dataset.train.label_distribution
    labels_after = artifact.dataset.test.label_distribution
    reproduced = reproduces_training_labels(artifact, before, labels_before, n_train)
    classes = sorted(set(before) | set(after) | set(labels_before) | set(labels_after))
    unjustified = {
        k: unjustified_move(
            after.get(k, 0.0) - before.get(k, 0.0),
            labels_after.get(k, 0.0) - labels_before.get(k, 0.0),
        )
        for k in classes
    }
    key = max(set(before) | set(after), key=lambda k: (unjustified[k], k))
    # per class: the move of its predicted share the move of its true share does not
    # justify (summed in a fixed order: a set of strings iterates in the hash seed's
    # order, which changed the float sum's last digit from one process to the next)
    excess = 0.5 * sum(unjustified[k] for k in classes)
    noise = 1.5 * math.sqrt(0.25 * (1.0 / n_train + 1.0 / n_test))
    return {
        # a model that reproduces its training labels has no reading of its own outputs
        # on the training population to shift from (see reproduces_training_labels)
        "score": 0.0 if reproduced else interp(excess - noise, SHARE_SCORE),
        "kind": "share",
        "unjustified": excess,
        "margin": noise,
        "label": key,
        "predicted_before": before.get(key, 0.0),
        "predicted_after": after.get(key, 0.0),
        "true_before": labels_before.get(key, 0.0),
        "true_after": labels_after.get(key, 0.0),
        "excess": excess,
    }


#: the cap on a move of the outputs that no measurement of the inputs shows (see
#: :func:`inputs_unmoved`): low, as the period cap
UNMOVED_INPUTS_CAP = PERIOD_CAP


def inputs_unmoved(artifact) -> bool:
    """True when the measurements of the inputs say the two splits come from one
    population: Deepchecks' domain classifier ran on them and could not tell test rows
    from training rows (its check passed; a failed one that feature drift sets aside,
    e.g. for an id column, still told them apart), no joint shift of small nudges
    (:func:`joint_nudge`) and no feature moved by a large effect (:func:`moved_features`).

    Outputs move between the splits only because the inputs did, or because the model
    answers the rows it was fitted on differently from new ones. With the inputs
    measured unmoved, a move of the predicted shares or of the mean prediction is the
    second: a test-only gap of the model (an overfit or noise-laden model answering
    one class on unseen rows), which overfitting and the other model-level findings
    measure, not a drift of the outputs. False without the domain classifier's result
    (text, images, a check that did not run): then nothing says the inputs stayed put."""
    if artifact.dataset.property_names:
        return False
    check = next(filter(None, map(artifact.check, MULTIVARIATE_CHECKS)), None)
    if check is None or check.outcome != "passed":
        return False
    return joint_nudge(artifact) is None and not moved_features(artifact)


@register_rule
class PredictionDrift(PeriodDriftHarm, Rule):
    id = "prediction_drift"
    name = "Model outputs shift between train and test"
    detects = (
        "The model's predictions (classes, probabilities or values) are distributed "
        "differently on the evaluation data than on the training data, by more than the true "
        "outcomes changed."
    )
    why = (
        "When the model's answers move but reality does not, its predictions on the new data "
        "are systematically off: more alarms, higher estimates, different decisions, none of "
        "them justified by the outcomes."
    )
    example = (
        "A churn model predicts churn for 18% of training customers but 41% of customers in a"
        " new region, whose actual churn rate is the same 18%: shorter tenures there do not "
        "mean what they meant in training."
    )
    fixes = (
        "Find what moved the predictions: compare the inputs of the two splits feature by "
        "feature (drift scores, ranges, units, measurement devices) and check that both go "
        "through the same preprocessing.",
        "If the new population differs (another region, device, period), collect labelled "
        "data from it and retrain or fine-tune; until then, recalibrate the outputs on "
        "recent labelled data (`CalibratedClassifierCV(FrozenEstimator(model))`) or "
        "re-tune the threshold.",
        "Monitor the prediction distribution in production (share of positive predictions, "
        "PSI of the scores, mean prediction) against the training distribution and alert "
        "before labels arrive.",
    )
    severity_policy = (
        "Classification: per class, the change of its predicted share (train -> test "
        "predictions) that the change of its true share does not justify (a true share "
        "moving the same way justifies the move up to its own size; one that moved while "
        "the predictions stayed or moved the other way is label drift's and adds nothing),"
        " as a total variation, less 1.5 "
        "sqrt(0.25 (1/n+1/m)): 0.07 -> 0.3, 0.12 -> 0.5, 0.2 -> 0.8, 0.3 -> 0.9; 0 for a "
        "classifier that reproduces its training labels (training score >= 0.97, predicted "
        "shares on its training rows within 1.5 sqrt(0.25/n) of the label shares: its "
        "training outputs are the labels, no reading of its own to shift from). Regression: "
        "the mean prediction's shift the target mean's does not justify (the same reading; "
        "the mean residual's whole shift when the predictions moved against a target mean "
        "whose own move is within 3 standard errors, no measured label drift), "
        "in training target stds, less "
        "3 standard errors of the mean residual's shift (RMSEs of both splits): 0.2 -> 0.3, "
        "0.35 -> 0.5, 0.6 -> 0.75, 1 -> 0.9. Deepchecks "
        "Prediction Drift less its noise floor 1.95 sqrt(1/n+1/m) and less the drift the "
        "label shift justifies: 0.1 -> 0.2, 0.25 -> 0.5, 0.4 -> 0.7, 0.6 -> 0.85; capped at "
        "our own score + 0.1 when we have one. A joint shift (2 or more numeric features "
        "moved beyond noise, none by 0.8 training stds or more, no spread doubled, no "
        "category shares moved, the outcomes unmoved, or moved less than the predictions by more than the noise margin above): the length of the importance-weighted"
        " shift vector on feature drift's location scale (0.5 -> 0.35, 1 -> 0.55, 2 -> "
        "0.75), each shift counted as far as it is beyond noise or, when the features' "
        "squared shift z-scores sum beyond a chi-square's 1 % quantile, the squared length "
        "less its noise expectation (the same chi-square test, on the features each within "
        "noise, admits a joint shift no two features show alone), or feature drift's Multivariate Drift score when the domain classifier "
        "told the splits apart, whichever is higher, x0.8 when the test score is within "
        "0.02 of the training score. Capped at low on a chronological split whose test "
        "period costs neither the baseline ladder nor the model anything measurable (as "
        "feature drift), up to our own reading's score (the predictions' unjustified move "
        "beyond three standard errors is a cost measured directly). Capped at low, too, "
        "when the inputs measure unmoved: Deepchecks' domain classifier ran and could not "
        "tell the splits apart, no joint shift and no feature moved by 0.8 training stds "
        "(outputs that move without their inputs are the model answering fitted rows "
        "differently from new ones, a test-only gap, not a drift)."
    )
    explains = (
        "feature_drift",
        "degenerate_predictions",
        "poor_calibration",
        "decision_threshold",
        "overfitting",
    )
    checks = ("Prediction Drift",)

    def severity(self, signals, artifact):
        """The period cap (:class:`PeriodDriftHarm`) up to our own reading of the
        outputs' move (:func:`_own`): the cap rests on scores (the ladder's and the
        model's on the later period) that stayed within their noise, while our own
        reading measures the cost directly, as the part of the predictions' move the
        outcomes' move does not justify, less three standard errors of that difference:
        predictions biased by that much on the later period are a cost to this model
        the scores were too noisy to show. The other readings (Deepchecks' distance, a
        joint shift of the inputs) stay capped: they measure a shift, not its cost.
        Every reading is capped at ``UNMOVED_INPUTS_CAP`` when the inputs measure
        unmoved (:func:`inputs_unmoved`): then the outputs' move is no drift."""
        score = self.score(signals)
        if inputs_unmoved(artifact):
            score = min(score, UNMOVED_INPUTS_CAP)
        if period_drift_without_harm(artifact) is not None:
            own = _own(artifact)
            score = min(score, max(PERIOD_CAP, own["score"] if own is not None else 0.0))
        return severity_for(score)

    def detect_model(self, artifact):
        own = _own(artifact)
        if own is None or own["score"] <= 0:
            return
        facts = {k: v for k, v in own.items() if k not in ("score", "unjustified", "margin")}
        if own["kind"] == "share":
            detail = (
                f"the model predicts {own['label']!r} for {pct(own['predicted_before'])} of train "
                f"rows but {pct(own['predicted_after'])} of test rows, while {own['label']!r} is "
                f"{pct(own['true_before'])} of train and {pct(own['true_after'])} of test labels"
            )
            value = own["excess"]
        else:
            detail = (
                f"the mean prediction moved by {own['moved']:+.2f} training target stds from "
                f"train to test, the true target mean by {own['truth']:+.2f}"
            )
            value = own["moved"] - own["truth"]
        yield self.signal(
            "model", score=own["score"], confidence=0.85, detail=detail, value=value, **facts
        )

    def detect_dataset(self, artifact):
        """The joint shift of many small nudges (:func:`joint_nudge`), measured by the
        length of the weighted shift vector and, when Deepchecks' domain classifier
        told the splits apart, by that (the same scale feature drift uses for one
        feature's shift and for the multivariate check), so the moved inputs are named
        as one cause instead of a feature drift no single feature shows."""
        nudge = joint_nudge(artifact)
        if nudge is None:
            return
        score = interp(nudge["joint"], SHIFT_SCORE) * performance_factor(artifact)
        facts = {k: v for k, v in nudge.items() if k != "shifts"}
        multi = multivariate_drift(artifact)
        detail = (
            f"{nudge['n_moved']} features moved together, each by less than {NUDGE_SD} "
            f"training stds ("
            + ", ".join(f"{k!r} {v:.2f}" for k, v in list(nudge["shifts"].items())[:5])
            + f"): a joint shift of {nudge['joint']:.2f} stds beyond noise, weighted by "
            "importance"
        )
        if multi is not None:
            _, multi_score, multi_facts = multi
            detail += (
                f"; a classifier tells test from train rows apart (multivariate drift "
                f"{multi_facts['multivariate']:.2f})"
            )
            score = max(score, multi_score)
            facts["multivariate"] = multi_facts["multivariate"]
        if score < 0.05:
            return
        yield self.signal(
            "dataset", score=score, confidence=0.75, detail=detail, value=nudge["joint"],
            kind="joint", **facts,
        )

    def detect_deepchecks(self, artifact):
        check = artifact.check("Prediction Drift")
        if check is None or check.outcome != "not_passed" or check.value is None:
            return
        drift = float(check.value)
        noise = two_sample_noise(
            effective_rows(artifact, "train"), effective_rows(artifact, "test")
        )
        label_shift = _label_shift(artifact) or 0.0
        if artifact.task == "regression":
            label_shift = _as_ks(label_shift, artifact)
        score = interp(drift - noise - label_shift, DRIFT_SCORE)
        own = _own(artifact)
        if own is not None:
            score = min(score, own["score"] + 0.1)
        if score > 0:
            yield self.check_signal(
                check, score=score, confidence=0.7, drift=drift, label_shift=label_shift
            )

    def explains_for(self, artifact):
        """On text and images, drifting properties are measured on the content itself: they
        are the acquisition-level cause and the shifted outputs their consequence, so
        here prediction drift does not claim feature drift (feature drift folds it in).
        The same holds on tables when a feature moved a long way on its own (at least
        LARGE_SHIFT_SD training standard deviations, within noise:
        :func:`large_feature_shifts`): that shift is the cause, visible
        feature by feature, and the moved outputs its symptom. So it is for a feature
        moved by a large effect (``NUDGE_SD``) beyond doubt that the model measurably
        reads (:func:`read_feature_shifts`, the ``shuffle_reads`` measurement): the
        moved outputs are that drift's harm to this model, so naming the prediction
        drift would name the symptom instead of the cause. Only nudges too small to
        stand out one by one, adding up in the output, leave prediction drift the cause;
        then it also explains a model at chance on the moved test rows (``underfitting``,
        which feature drift explains for one moved feature), provided the training rows
        showed a signal the shift could take away (:func:`training_rows_show_signal`).
        Outputs collapsed on the
        training rows as well (:func:`collapsed_on_training_rows`) are no symptom of a
        shift between the splits: degenerate predictions then keep their own finding."""
        explains = self.explains
        if collapsed_on_training_rows(artifact):
            # the outputs are as degenerate on the training rows, where nothing moved:
            # a shift between the splits cannot have caused that collapse
            explains = tuple(c for c in explains if c != "degenerate_predictions")
        if (
            artifact.dataset.property_names
            or large_feature_shift(artifact) is not None
            or read_feature_shifts(artifact)
            or only_large_movers(artifact)
        ):
            return tuple(c for c in explains if c != "feature_drift")
        if joint_nudge(artifact) is not None and training_rows_show_signal(artifact):
            # the inputs moved together while the outcomes stayed: a model scoring at
            # chance on the moved test rows is that shift's harm, as with feature drift
            # (as long as there was a signal to lose: see training_rows_show_signal)
            return explains + ("underfitting",)
        return explains

    def title(self, signals, artifact):
        kind = self.fact(signals, "kind")
        if kind == "share":
            label = self.fact(signals, "label")
            return (
                f"The model predicts {label!r} for {pct(self.fact(signals, 'predicted_after'))} of "
                f"test rows vs {pct(self.fact(signals, 'predicted_before'))} of train rows, "
                f"though its true share is {pct(self.fact(signals, 'true_after'))} vs "
                f"{pct(self.fact(signals, 'true_before'))}"
            )
        if kind == "mean":
            return (
                f"Predictions shift by {self.fact(signals, 'moved'):+.2f} target stds from train "
                f"to test while the target shifts by {self.fact(signals, 'truth'):+.2f}"
            )
        if kind == "joint":
            return (
                f"{self.fact(signals, 'n_moved')} features shifted together between train and "
                f"test, none by more than {self.fact(signals, 'largest'):.2f} training stds: "
                f"a joint shift of the model's inputs"
            )
        drift = self.fact(signals, "drift")
        if drift is not None:
            return f"The model's predictions drift between train and test (drift score {drift:.2f})"
        return self.name

    def explanation(self, signals, artifact):
        if self.fact(signals, "kind") == "joint":
            moved = self.fact(signals, "moved_features") or []
            named = ", ".join(repr(m) for m in moved[:5]) + (" ..." if len(moved) > 5 else "")
            return (
                f"Several inputs ({named}) moved a little each between train and test, none "
                "far enough to stand out on its own, while the outcomes stayed put. Together "
                "they shift what the model sees (another population, a recalibrated set of "
                "instruments, a preprocessing change applied to many columns), and the "
                "model's predictions move with their sum. Compare the moved features together, "
                "not one by one, and retrain or recalibrate with labelled data from the new "
                "population."
            )
        return (
            "The model answers differently on the evaluation data than on the training data, "
            "and the real outcomes do not account for the difference. The inputs changed in a "
            "way the model is sensitive to (another population, source, device or "
            "preprocessing) while what they mean for the outcome did not, so the model's "
            "predictions on the new data are biased. Look at which inputs moved, and retrain "
            "or recalibrate with labelled data from the new population."
        )
