"""The baseline ladder and the chance-level measurement, read the same way by every rule.

Several rules judge a model against what the data shows: the baseline ladder's simple
models (scored in cross-validation on the training rows and on test) and the
``chance_level`` measurement (the model's score against shuffled labels, with the test
score's noise). These readings live here, not in ``underfitting``, so that a rule can
use them without importing another rule (and without the lazy imports that such
cross-rule reads used to need).
"""

from __future__ import annotations

import math

from deepfix_agents.rules._noise import sampling_noise

#: a model within this many noise units (standard deviations of the chance score) of
#: chance, or below it, is no better than chance
CHANCE_NOISE_UNITS = 2.0
#: at least this many test rows for the chance comparison to count
MIN_CHANCE_ROWS = 30


def split_squared_errors(artifact) -> tuple[float, float, float, float, float] | None:
    """(RMSE on train, RMSE on test, MSE on train, MSE on test, the standard error of
    their difference) from the recorded scores of both splits; None without both
    splits' RMSE and row counts (at least 2 each) or with a non-finite or negative RMSE.
    The standard error is the normal-error one, ``MSE * sqrt(2 / n)`` per split. One
    reading for :func:`error_gap` and the drift rules' ``own_error_unchanged``."""
    scores = artifact.performance.scores or {}
    try:
        train, test = scores["train"], scores["test"]
        rmse_train, rmse_test = float(train["rmse"]), float(test["rmse"])
        n_train, n_test = float(train["n_rows"]), float(test["n_rows"])
    except (KeyError, TypeError, ValueError):
        return None
    if not (0 <= rmse_train < math.inf and 0 <= rmse_test < math.inf
            and n_train >= 2 and n_test >= 2):
        return None
    mse_train, mse_test = rmse_train ** 2, rmse_test ** 2
    se = (2.0 * (mse_train ** 2 / n_train + mse_test ** 2 / n_test)) ** 0.5
    return rmse_train, rmse_test, mse_train, mse_test, se


def error_gap(artifact) -> tuple[float, float] | None:
    """Regression scored in R2: (the train/test gap in squared error, its standard
    error), both in R2 units of the test split; None for other metrics or without both
    splits' RMSE.

    R2 is one minus the mean squared error over the split's own target variance, so a
    test split whose targets spread less (a season of a yearly series) gives the same
    errors a lower R2: a "gap" that is no gap in error. Here both splits' mean squared
    errors (:func:`split_squared_errors`) are put over the test split's variance
    (``MSE_test / (1 - R2_test)``)."""
    performance = artifact.performance
    if performance.metric != "r2" or performance.test_score is None:
        return None
    measured = split_squared_errors(artifact)
    unexplained = 1.0 - performance.test_score
    if measured is None or not (unexplained > 1e-9 and measured[1] > 0):
        return None
    _, rmse_test, mse_train, mse_test, se = measured
    variance = rmse_test ** 2 / unexplained
    return (mse_test - mse_train) / variance, se / variance


def gap_in_error(artifact, gap: float) -> float:
    """A train/test ``gap`` in R2, as far as it is a gap in squared error beyond noise
    (:func:`error_gap`): unchanged when the error gap is larger or not measured; the
    error gap when smaller; 0 when the error gap is within ``CHANCE_NOISE_UNITS`` of its
    standard errors (the model errs as much on its training rows as on test)."""
    measured = error_gap(artifact)
    if measured is None:
        return gap
    size, se = measured
    if size <= CHANCE_NOISE_UNITS * se:
        return 0.0
    return min(gap, size)


#: the baseline ladder's cross-validated score must beat the dummy's by this much for
#: the training data to show a signal (see :func:`too_noisy_to_tell`)
LADDER_SIGNAL = 0.05


def at_chance(artifact):
    """The ``chance_level`` intervention when the model is within noise of chance (or
    below it), else None (also when :func:`too_noisy_to_tell`)."""
    measured = artifact.intervention("chance_level")
    if measured is None or measured.change is None or measured.n_rows < MIN_CHANCE_ROWS:
        return None
    noise = measured.noise or 0.0
    if measured.change > CHANCE_NOISE_UNITS * noise or too_noisy_to_tell(artifact, measured):
        return None
    return measured


def too_noisy_to_tell(artifact, measured) -> bool:
    """Whether a model above chance on its point score is within noise of it only
    because the test rows are too few or too noisy to tell (a heavy-tailed target, a
    weak but real signal), not because it learned nothing.

    The baseline ladder tells the two apart: its cross-validated score on the (larger)
    training split beats both the dummy's and chance (the measurement's score against
    shuffled labels) by :data:`LADDER_SIGNAL`, so there is signal (or by less, but still
    by no more than :data:`CHANCE_NOISE_UNITS` noise units of the test score: a weak
    signal that these test rows could not resolve, so that a model capturing all of it
    would read as within noise of chance too, and being there measures no harm; or, for
    a model above chance on its point score, its test score beats chance by
    :data:`CHANCE_NOISE_UNITS` noise units + :data:`LADDER_SIGNAL`: the test rows show
    the signal that too few training rows hid from cross-validation); its
    test score is not below that cross-validated score by more than
    :data:`CHANCE_NOISE_UNITS` noise units, so the test rows behave like the training
    rows (labels scrambled in one split would drop it); and the model scores above
    chance and level with the ladder on test, within the guard's noise: it captures what simple models capture, which is all the data
    shows. Measured harm to this model is then none; a model clearly below the ladder
    is still ``underfitting`` through the baseline comparison.

    Each rung's test score is compared with its own cross-validated score (a tree that
    falls on test says nothing about a linear rung that holds up). A point score at or
    below chance, within one noise unit, counts as level with the ladder too, but only
    against a rung with a clear signal (:data:`LADDER_SIGNAL`): labels scrambled in both
    splits show a weak one by luck.
    """
    noise = measured.noise or 0.0
    if measured.score_after is None or noise <= 0 or measured.change <= -noise:
        return False
    dummy = baseline(artifact, "dummy")
    ladder = cross_validated_ladder(artifact)
    if dummy is None or dummy.cv_score is None or not ladder:
        return False
    best_test = max(b.test_score for b in ladder)
    # the reference is chance, not only the dummy: a constant dummy scores below chance
    # on a macro-averaged metric (one class's F1 is 0), so a ladder that merely varies
    # its answers beats it without any signal
    reference = dummy.cv_score
    if measured.score_before is not None:
        reference = max(reference, measured.score_before)

    def shows(b) -> bool:
        signal = b.cv_score - reference
        # the rung's own test score must hold up to its own cross-validated score (the
        # test rows behave like its training rows), within the same CHANCE_NOISE_UNITS
        # as every other noise test here: the difference carries the test score's noise
        # and the cross-validated estimate's, so a one-unit bar reads about one healthy
        # split in six as "test rows unlike training" (a weak real signal, R2 near 0.08
        # in cross-validation and 0.01 on test, then read as labels unrelated to the
        # features: every simple model of a weak noisy regression alarmed high)
        holds = b.test_score >= b.cv_score - CHANCE_NOISE_UNITS * noise
        if measured.change <= 0:
            # a point score at or below chance (within one noise unit) is level with
            # the ladder only when its rung shows a clear signal in cross-validation:
            # a weak one is what scrambled labels show by luck
            return holds and signal >= LADDER_SIGNAL
        # a clear signal (LADDER_SIGNAL), or a weak but positive one that this test
        # split could not resolve anyway: a model that captured all of it would read as
        # within noise of chance here too, so being there measures no harm. The weak
        # signal must be one the training rows did resolve (:func:`cv_resolves`): a
        # cross-validated score within the noise of its own rows shows no signal at all.
        # Or a signal the test rows show themselves: the rung beats chance on test by
        # the bar :func:`signal_is_learnable` asks (2 noise units + LADDER_SIGNAL) and
        # holds its cross-validated score. Few training rows (a short series, folds of
        # a few dozen) can hide a real signal from cross-validation; the test rows then
        # resolve it, and a model level with that rung within the noise is as close to
        # it as to chance: these rows measure no harm to it
        chance = measured.score_before
        on_test = chance is not None and (
            b.test_score - chance > CHANCE_NOISE_UNITS * noise + LADDER_SIGNAL)
        return holds and (
            signal >= LADDER_SIGNAL
            or (cv_resolves(artifact, signal) and signal <= CHANCE_NOISE_UNITS * noise)
            or on_test
        )

    return (
        any(shows(b) for b in ladder)
        and measured.score_after >= best_test - CHANCE_NOISE_UNITS * noise
    )


def cv_resolves(artifact, signal: float) -> bool:
    """Whether a rung's cross-validated signal over chance (``signal``) is beyond the
    sampling noise of a score on the training rows it was cross-validated on.

    The weak-signal reading of :func:`too_noisy_to_tell` (a signal the test split
    cannot resolve) stands on the training rows having shown that signal; a
    cross-validated score within ``CHANCE_NOISE_UNITS`` standard errors of chance on
    those rows shows none, and a model within noise of chance on test is then simply at
    chance. A classification score (accuracy, F1) on ``n`` rows has a standard error of
    at most 0.5/sqrt(n) (a proportion's worst case, the bound the test split's margins
    use too). A regression R2 has no such bound (heavy-tailed targets make it far
    noisier, and the artifact keeps no fold spread), so there any positive signal
    keeps counting as resolved."""
    if signal <= 0:
        return False
    if artifact.task == "regression":
        return True
    n_train = artifact.dataset.train.n_rows if artifact.dataset.train is not None else 0
    if not n_train:
        return True
    return signal > CHANCE_NOISE_UNITS * 0.5 / n_train**0.5


def training_rows_show_signal(artifact) -> bool:
    """Whether the training rows, where nothing moved, show a signal a shift could take
    away: a rung of the baseline ladder cross-validated on them beats the dummy's
    cross-validated score (for classification beyond a score's sampling noise on those
    rows, :func:`cv_resolves`). True when the ladder
    was not cross-validated (nothing measured against the shift's claim). Read by
    feature and prediction drift, which fold a chance-level model in as their harm.

    A shift of the test inputs can cost a model only what it could learn: when simple
    models fitted and scored on the training rows alone do no better than predicting the
    mean or the majority class, the labels look unrelated to the features before any
    row moved (labels misaligned with their rows, or noise), and a model at chance on
    the moved test rows says nothing about the shift. The chance-level finding then
    keeps its own place (``underfitting``: the labels look unrelated to the features)
    instead of folding into the drift as its harm."""
    dummy, ladder = baseline(artifact, "dummy"), cross_validated_ladder(artifact)
    if dummy is None or dummy.cv_score is None or not ladder:
        return True
    return cv_resolves(artifact, max(b.cv_score for b in ladder) - dummy.cv_score)


def baseline(artifact, prefix: str):
    """The ladder's first model whose name starts with ``prefix`` (``"dummy"``,
    ``"linear"``, ...), else None."""
    return next((b for b in artifact.baselines if b.name.startswith(prefix)), None)


def ladder_rungs(artifact) -> list:
    """The baseline ladder's simple models (no dummy) that were scored on test."""
    return [b for b in artifact.baselines if b.test_score is not None and not b.name.startswith("dummy")]


def best_baseline(artifact):
    """The ladder's simple model with the best test score (ties by name), else None."""
    return max(ladder_rungs(artifact), key=lambda b: (b.test_score, b.name), default=None)


def refit_trail(artifact, refit) -> float | None:
    """How far a counterfactual refit (an intervention that removed a suspected cause:
    noise columns dropped, extreme values imputed) still trails the best rung of the
    baseline ladder on test (negative when it beats it); None when the refit has no
    score, or without a ladder.

    A refit explains a model's shortfall against the ladder only as far as it closes
    it: the rules that fold underfitting or overfitting into such a cause read this
    trail against what the refit won back."""
    best = best_baseline(artifact)
    if refit is None or refit.score_after is None or best is None or best.test_score is None:
        return None
    return best.test_score - refit.score_after


def refit_leaves_shortfall(artifact, refit) -> bool:
    """Whether a refit that gained score (``refit.change`` > 0) still trails the best
    rung of the ladder by more than it gained (:func:`refit_trail`): the suspected cause
    it removed explains only part of the model's shortfall, and the rest is the model's
    own (underfitting keeps its finding). False when it gained nothing, has no score, or
    without a ladder."""
    if refit is None or refit.change is None or refit.change <= 0:
        return False
    trail = refit_trail(artifact, refit)
    return trail is not None and trail > refit.change


def supported_score(b, noise: float, n_test: int) -> float:
    """A rung's test score, credited only as far as its cross-validated score on the
    training rows supports it: at most ``CHANCE_NOISE_UNITS`` noise units of the test
    score above it. A rung that learns nothing in cross-validation but scores well on
    these test rows got lucky on them; the headroom it shows is no evidence that the
    training data holds a signal the model missed. The noise is the chance-level
    measurement's, at least the sampling noise of a score on ``n_test`` rows
    (0.5/sqrt(n_test)): a constant model's measurement has none, the rung's score does."""
    if b.cv_score is None:
        return b.test_score
    noise = max(noise, sampling_noise(n_test))
    return min(b.test_score, b.cv_score + CHANCE_NOISE_UNITS * noise)


def cross_validated_ladder(artifact) -> list:
    """The ladder's simple models (no dummy) scored both in cross-validation on the
    training rows and on test: what tells a harder test period or noisy test rows from
    a weak model."""
    return [
        b for b in artifact.baselines
        if not b.name.startswith("dummy") and b.cv_score is not None and b.test_score is not None
    ]


def chance_noise(artifact) -> float:
    """The test score's noise from the ``chance_level`` measurement (the spread of the
    model's score against shuffled labels), 0 when it was not measured. Callers that
    need a floor add the sampling noise of a score on the test rows themselves."""
    measured = artifact.intervention("chance_level")
    return (measured.noise or 0.0) if measured is not None else 0.0
