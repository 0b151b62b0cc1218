"""fragile_predictions: predictions that change under small, realistic input changes.

Evidence is the testing step's perturbation probe (``artifact.robustness``): on a
bounded sample of evaluation rows, each input is nudged within a small fraction of its
natural spread (or, for text and images, given a typo, a case change, a brighter
exposure...) and we count how many predictions change. Any model has rows near its
decision boundary, so a few percent of flips is normal; the severity grows with the
flip rate of the most fragile input and with the score lost when every input is nudged
together, which is the harm a user sees when production inputs are a little noisier
than the test set.
"""

from __future__ import annotations

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, interp, pct

#: flip rate of the most fragile single input -> score
FLIP_SCORE = ((0.08, 0.0), (0.15, 0.3), (0.25, 0.5), (0.4, 0.68), (0.6, 0.82))
#: score (accuracy / R^2) lost with every input nudged at once -> score
DROP_SCORE = ((0.03, 0.0), (0.06, 0.3), (0.1, 0.45), (0.2, 0.65), (0.35, 0.8))
#: inputs named in the title and evidence
SHOWN = 3
#: cap of the flip-rate score when nudging every input costs no more score than the
#: test score's own noise: predictions move, but not away from the truth (low)
UNHARMED_FLIP_CAP = 0.35
#: a numeric input whose training values recur, each held by this many rows or more on
#: average (unique fraction at most 1/RECURRING_ROWS), takes a fixed set of values: the
#: attribute of an entity that recurs in the data (a route's distance in every year of
#: a route panel), see :func:`recurring_values`
RECURRING_ROWS = 2.0


def recurring_values(artifact, item) -> bool:
    """Whether ``item`` (one perturbed input) is a non-integer numeric column whose
    training values recur (held by ``RECURRING_ROWS`` rows or more on average), given
    noise between them. Such a column holds the fixed attribute of an entity that
    appears in several rows (a route's distance, the same for each year of a route
    panel; a plan's rate for each year of its members): real rows only ever take those
    values, so a value between them is no wobble of a reading but a case that never
    occurs, and a tree that answers it with a neighbouring entity's prediction (it
    recognised the entity by its exact value) shows no fragility a user meets. The
    testing step applies the same reasoning to a discrete scale of at most 20 levels,
    which it never gives values between its levels; a continuous reading (a
    temperature, a share) rarely repeats exactly and keeps its noise."""
    train = artifact.dataset.train
    stats = train.column(item.feature) if train is not None else None
    if item.kind != "numeric" or stats is None or not stats.n_unique or stats.unique_fraction <= 0:
        return False
    if not stats.dtype.startswith("float") or "snapped" in (item.perturbation or ""):
        return False
    return stats.unique_fraction * RECURRING_ROWS <= 1.0


def drop_within_noise(artifact, summary) -> float | None:
    """The test score's noise (the ``chance_level`` measurement's standard error) when
    the score lost with every input nudged is within it, else None."""
    measured = artifact.intervention("chance_level")
    noise = measured.noise if measured is not None else None
    if summary.score_drop is None or not noise or noise <= 0:
        return None
    return noise if summary.score_drop <= noise else None


def recurring_fragility(artifact, summary) -> dict | None:
    """The probe read without the fragility of inputs with recurring values
    (:func:`recurring_values`) when one of them flips predictions beyond the normal
    rate: {"names", "worst" (the input that then sets the flip score), "flip_score"
    (theirs capped at ``UNHARMED_FLIP_CAP``), "drop" and "drop_score"}. The score lost
    with every input nudged at once includes theirs, so it is read from the other
    inputs' own drops (the largest, at most the combined drop). None
    when no such input is fragile."""
    names = [
        f.feature for f in summary.features
        if recurring_values(artifact, f) and interp(f.flip_rate, FLIP_SCORE) > 0
    ]
    if not names:
        return None

    def flip_score(item) -> float:
        score = interp(item.flip_rate, FLIP_SCORE)
        return min(score, UNHARMED_FLIP_CAP) if item.feature in names else score

    worst = max(summary.features, key=flip_score)
    drop = max((f.score_drop or 0.0 for f in summary.features if f.feature not in names),
               default=0.0)
    # never more than the combined measurement, which already includes them
    drop = min(drop, summary.score_drop or 0.0)
    return {"names": names, "worst": worst, "flip_score": flip_score(worst),
            "drop": drop, "drop_score": interp(drop, DROP_SCORE)}


@register_rule
class FragilePredictions(Rule):
    id = "fragile_predictions"
    name = "Predictions flip under small input changes"
    detects = (
        "Predictions that change when inputs are perturbed by amounts a real input could "
        "vary by: a few percent of a feature's spread, a neighbouring category level, a typo, "
        "a change of case or punctuation, a slightly brighter or shifted image."
    )
    why = (
        "The same case gets a different answer depending on measurement noise or how it was "
        "typed. Test accuracy does not show it because the test set was recorded like the "
        "training set; production inputs rarely are. It usually means the model keys on "
        "details finer than the signal (codes treated as numbers, case-sensitive tokens, "
        "sharp thresholds on noisy readings)."
    )
    example = (
        "A churn model treats a 3-digit region code as a number: moving the code from 412 to "
        "415 (a neighbouring, unrelated region) flips 35% of predictions; a sentiment model "
        "built without lower-casing flips 40% of reviews when they are written in capitals."
    )
    fixes = (
        "Encode codes and identifiers as categories (`OneHotEncoder`, `TargetEncoder`), not as "
        "numbers whose order means nothing.",
        "Normalise inputs the way production will send them: lower-case and strip text "
        "(`TfidfVectorizer(lowercase=True, strip_accents='unicode')`), trim/case-fold "
        "categories, round readings to their real precision.",
        "Train with the perturbations as augmentation (noise within the measurement error, "
        "typos, brightness/contrast/shift) and regularise the model (fewer/shallower trees, "
        "larger `min_samples_leaf`, stronger penalty) so that its decision is smooth.",
        "Add a robustness test to CI: perturb a fixed sample and fail when more than a few "
        "percent of predictions flip.",
    )
    modality_fixes = {
        "text": (
            "Normalise texts before the model: lower-case, strip punctuation and repeated "
            "whitespace (`TfidfVectorizer(lowercase=True)`, a tokenizer that ignores case).",
            "Augment training texts with typos and case variants, or use character n-grams "
            "(`analyzer='char_wb'`) that survive small spelling changes.",
            "Add a robustness test to CI: perturb a fixed sample of texts and fail when more "
            "than a few percent of predictions flip.",
        ),
        "image": (
            "Augment training images with brightness, contrast and small shifts "
            "(`RandomAffine`, `ColorJitter`) and normalise each image (per-image "
            "standardisation) before the model.",
            "Prefer models with built-in translation tolerance (convolutions, pooling) over "
            "raw-pixel linear models.",
            "Add a robustness test to CI: perturb a fixed sample of images and fail when more "
            "than a few percent of predictions flip.",
        ),
    }
    severity_policy = (
        "Flip rate of the most fragile input, each input perturbed on its own on at most 500 "
        "evaluation rows: 8% -> 0, 15% -> 0.3, 25% -> 0.5, 40% -> 0.68, 60% -> 0.82; or the "
        "score (accuracy, R^2) lost with every input perturbed at once: 0.03 -> 0, 0.06 -> "
        "0.3, 0.1 -> 0.45, 0.2 -> 0.65, 0.35 -> 0.8; the larger counts. Regression counts a "
        "prediction as flipped when it moves by more than 0.2 x std(target). When the score "
        "lost with every input nudged is within the test score's noise (the chance-level "
        "measurement's standard error), the flip rate counts at most 0.35 (low): the "
        "predictions move, but not away from the truth. A non-integer numeric input whose "
        "training values recur (each held by 2 or more rows on average: the fixed attribute "
        "of an entity that recurs, a route's distance in a route panel) only ever takes "
        "those values, so noise between them makes cases that never occur: its flips count "
        "at most 0.35 (low), and the score lost is read from the other inputs' own drops "
        "(the largest, at most the combined drop)."
    )
    explains = ()
    #: when the fragility sits in a few named inputs (see :meth:`subjects`), the model
    #: has fitted arbitrary detail of those inputs (the order of a code read as a
    #: number): the train/test gap is that memorisation, one cause with one fix
    LOCALISED_EXPLAINS = ("overfitting",)

    def explains_for(self, artifact):
        """A train/test gap when the fragility is localised to a minority of the inputs;
        nothing when the model is rough everywhere (then overfitting is the cause and
        names no input, see ``Rule.subjects``)."""
        if self.subjects((), artifact):
            return self.LOCALISED_EXPLAINS
        return self.explains

    def detect_model(self, artifact):
        summary = artifact.robustness
        if summary is None or not summary.features:
            return
        worst = summary.features[0]
        flip_score = interp(worst.flip_rate, FLIP_SCORE)
        drop_score = interp(summary.score_drop or 0.0, DROP_SCORE)
        recurring = recurring_fragility(artifact, summary)
        if recurring is not None:
            worst, flip_score, drop_score = recurring["worst"], recurring["flip_score"], recurring["drop_score"]
        noise = drop_within_noise(artifact, summary)
        if noise is not None:
            flip_score = min(flip_score, UNHARMED_FLIP_CAP)
        score = max(flip_score, drop_score)
        if score <= 0:
            return
        fragile = [f for f in summary.features if interp(f.flip_rate, FLIP_SCORE) > 0][:SHOWN]
        fragile = fragile or [worst]
        yield self.signal(
            "model",
            score=score,
            confidence=0.8 if summary.n_rows >= 200 else 0.6,
            detail=(
                f"{pct(worst.flip_rate)} of {summary.n_rows} sampled predictions change when "
                f"{worst.feature!r} gets {worst.perturbation}; with every input perturbed "
                f"{pct(summary.flip_rate)} change and {summary.metric} drops by "
                f"{summary.score_drop or 0.0:.3f}"
                + (
                    f", within the test score's noise ({noise:.3f}): the moved predictions "
                    "cost no measurable score: low"
                    if noise is not None and flip_score == UNHARMED_FLIP_CAP
                    else ""
                )
                + (
                    f"; {', '.join(map(repr, recurring['names']))} take recurring values "
                    "(each training value held by 2 or more rows: the fixed attribute of an "
                    "entity that recurs, such as a route's distance in a panel), so noise "
                    "between them makes cases that never occur, not a wobble: their flips "
                    f"count at most low, and the score lost is read from the other inputs "
                    f"alone ({recurring['drop']:.3f})"
                    if recurring is not None
                    else ""
                )
            ),
            value=worst.flip_rate,
            fragile=[f.feature for f in fragile],
            flip_rate=worst.flip_rate,
            perturbation=worst.perturbation,
            score_drop=summary.score_drop,
            metric=summary.metric,
        )
        for item in fragile[1:]:
            yield self.signal(
                "model",
                score=(
                    interp(item.flip_rate, FLIP_SCORE)
                    if noise is None and (recurring is None or item.feature not in recurring["names"])
                    else min(interp(item.flip_rate, FLIP_SCORE), UNHARMED_FLIP_CAP)
                ),
                confidence=0.6,
                detail=f"{pct(item.flip_rate)} of predictions change when {item.feature!r} "
                f"gets {item.perturbation}",
                value=item.flip_rate,
            )

    def subjects(self, signals, artifact):
        """The inputs whose own small change flips predictions beyond the normal rate,
        when they are a minority of the perturbed inputs: the fragility then sits in
        those inputs (a code read as a number, a case-sensitive token), not in a model
        that is rough everywhere, and a cause that names none of them (overfitting's
        train/test gap) does not explain it."""
        summary = artifact.robustness
        if summary is None or not summary.features:
            return ()
        fragile = [f.feature for f in summary.features if interp(f.flip_rate, FLIP_SCORE) > 0]
        if 2 * len(fragile) >= len(summary.features):
            return ()
        return tuple(fragile)

    def title(self, signals, artifact):
        fragile = self.fact(signals, "fragile") or []
        rate = self.fact(signals, "flip_rate")
        if not fragile or rate is None:
            return self.name
        names = ", ".join(repr(f) for f in fragile)
        return f"{pct(rate)} of predictions flip under small changes of {names}"

    def explanation(self, signals, artifact):
        fragile = self.fact(signals, "fragile") or []
        drop = self.fact(signals, "score_drop") or 0.0
        metric = self.fact(signals, "metric") or "score"
        return (
            "Small changes that real inputs undergo (a few percent of a feature's usual "
            "spread, a neighbouring category, a typo or a brighter image) change many of the "
            f"model's answers; the most fragile inputs are {', '.join(map(repr, fragile))}. "
            f"With every input nudged at once the {metric} drops by {drop:.3f}. The test "
            "score looks fine only because the test set was recorded exactly like the "
            "training set; decisions that hinge on such details will not be reproducible."
        )
