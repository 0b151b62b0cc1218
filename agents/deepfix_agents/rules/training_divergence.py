"""training_divergence: the training loss exploded, oscillated upwards or turned NaN.

Added since the contract (version 0.2.0). Read from the model's training history (the
``training`` source): the metric curves its MLflow run logged.
"""

from __future__ import annotations

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, interp
from deepfix_agents.rules._training import Curve, at_chance, diverged_from_start, lr_text, stuck

#: it learned (best at most 0.9 x first), then ended this many times above its best -> score
LATE_RISE_SCORE = ((1.5, 0.0), (2.0, 0.3), (3.0, 0.45), (10.0, 0.6))
#: harm: the model is at chance / cannot tell / is demonstrably fine
HARM_SCORE = {True: 0.8, None: 0.5, False: 0.2}


@register_rule
class TrainingDivergence(Rule):
    id = "training_divergence"
    name = "Training diverged (the loss blew up)"
    detects = (
        "A training loss that turned NaN or infinite, climbed above its starting value "
        "without ever improving, or blew up after a good start, in the metric history "
        "the model's training run logged."
    )
    why = (
        "Divergence means the optimiser's steps are too large for the loss surface: the "
        "weights overshoot, activations saturate or overflow, and the network ends up "
        "predicting no better than chance (or NaN). No amount of evaluation-side tuning "
        "recovers a model whose training blew up."
    )
    example = (
        "A small CNN trained with `SGD(lr=5.0, momentum=0.9)`: the loss jumps from 2.3 to "
        "3.0 in the first epoch and oscillates there; every digit is predicted as one class."
    )
    fixes = (
        "Lower the learning rate by 10x (then tune on a log grid, e.g. 1e-4 .. 1e-1), or use "
        "a learning-rate finder and a warm-up schedule.",
        "Clip gradients (`torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)`) and "
        "check inputs and targets for NaN/inf and unscaled features before training.",
        "Use an adaptive optimiser (`Adam`) with its default step size, normalise inputs, "
        "and add normalisation layers (BatchNorm/LayerNorm) to deep networks.",
        "Log the loss per step and stop the run at the first non-finite value "
        "(`torch.autograd.set_detect_anomaly(True)` finds the operation that produced it).",
    )
    severity_policy = (
        "Divergence from the start: the loss never got below 0.8 ln(n_classes) (a "
        "classifier; else never improved by 10%) and it rose to 1.1x its start, oscillates "
        "(rises on >= 30% of points), started at >= 1.5x its level, or stays above "
        "1.03 ln(n_classes). Curves read smoothed (at most 20 bins). Harm decides: 0.8 when the evaluated model is at chance (test balanced accuracy "
        "within 15% of the distance from chance to perfect; else the last logged accuracy; "
        "else a last loss >= 0.8 ln(n_classes)), 0.5 when that cannot be measured, 0.2 when "
        "the model is demonstrably fine. A NaN/inf loss at the end of training scores at "
        "least 0.8 when harm is not disproved; NaN/inf only mid-run counts as 0.5 at most. "
        "A late blow-up (best <= 0.9 x first, last >= 2 x best) scores 2x -> 0.3, 3x -> "
        "0.45, 10x -> 0.6, capped by the harm score."
    )
    explains = ("degenerate_predictions", "underfitting", "poor_calibration", "training_stalled")

    def detect_training(self, artifact):
        history = artifact.training
        if history is None:
            return
        loss = history.metric("train_loss") or history.metric("val_loss")
        if loss is None:
            return
        harmed, how = at_chance(artifact)
        harm = HARM_SCORE[harmed]
        lr = lr_text(artifact)
        if loss.n_nonfinite:
            ended_bad = loss.values[-1] is None
            score = max(harm, 0.8) if ended_bad and harmed is not False else min(harm, 0.5)
            yield self.signal(
                "training",
                score=score,
                confidence=0.95,
                detail=(
                    f"{loss.key} is NaN or infinite in {loss.n_nonfinite} of {loss.n_points} "
                    f"logged steps, first at step {loss.first_nonfinite_step}"
                    f"{' and at the end' if ended_bad else ''}{lr}; {how}"
                ),
                value=float(loss.n_nonfinite),
                kind="nonfinite",
                key=loss.key,
            )
            return
        curve = Curve.of(loss)
        if curve is None:
            return
        how_diverged = diverged_from_start(curve, artifact)
        if how_diverged is not None:
            yield self.signal(
                "training", score=harm, confidence=0.85,
                detail=f"{loss.key} {how_diverged} and never improved{lr}; {how}",
                value=curve.best, kind="stuck", key=loss.key, how=how_diverged,
            )
            return
        if not stuck(curve, artifact) and curve.best <= 0.9 * curve.first and curve.best > 0:
            ratio = curve.last / curve.best
            score = min(interp(ratio, LATE_RISE_SCORE), harm)
            if score > 0:
                yield self.signal(
                    "training", score=score, confidence=0.8,
                    detail=(
                        f"{loss.key} fell to {curve.best:.3g}, then rose to {curve.last:.3g} "
                        f"({ratio:.1f}x its best) by the end of training{lr}; {how}"
                    ),
                    value=ratio, kind="late", key=loss.key, first=curve.first,
                    peak=curve.last,
                )

    def title(self, signals, artifact):
        strongest = self.strongest(signals)
        kind, key = strongest.facts.get("kind"), strongest.facts.get("key")
        lr = artifact.training.learning_rate if artifact.training else None
        at = f" (learning rate {lr:g})" if lr is not None else ""
        if kind == "nonfinite":
            return f"Training diverged: {key} became NaN or infinite{at}"
        if kind == "stuck":
            return f"Training diverged: {key} {strongest.facts['how']} and never improved{at}"
        return f"Training diverged late: {key} climbed back to {strongest.facts['peak']:.3g}{at}"

    def explanation(self, signals, artifact):
        return (
            "The training loss did not go down as it should: it climbed, oscillated or turned "
            "NaN. That is the signature of optimisation steps that are too large (a learning "
            "rate too high, no gradient clipping, unscaled inputs): the weights overshoot and "
            "the network ends up no better than a guess. The model was shipped from a run "
            "that failed; fix the training, not the evaluation."
        )
