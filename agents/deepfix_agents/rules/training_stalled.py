"""training_stalled: the training loss stayed flat from the first epoch on.

Added since the contract (version 0.2.0). Read from the model's training history (the
``training`` source): the metric curves its MLflow run logged.
"""

from __future__ import annotations

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, interp
from deepfix_agents.rules._training import Curve, at_chance, diverged_from_start, lr_text

#: relative improvement of the loss from its first value to its best -> share of the harm
PROGRESS_FACTOR = ((0.02, 1.0), (0.05, 0.75), (0.1, 0.0))
#: harm: the model is at chance / cannot tell (a flat curve on a model that is fine --
#: it converged in its first epoch -- is no finding)
HARM_SCORE = {True: 0.8, None: 0.5}


@register_rule
class TrainingStalled(Rule):
    id = "training_stalled"
    name = "Training never got going (the loss stayed flat)"
    detects = (
        "A training loss that stays flat from the first logged epoch or step (it never "
        "improves by more than a few percent) while the model is no better than chance: a "
        "learning rate far too small, or a network whose weights are not being updated."
    )
    why = (
        "A model whose loss never moved is still (almost) its random initialisation: it "
        "learned nothing from the data. The usual causes are silent: a learning rate a few "
        "orders of magnitude too small, layers left frozen (`requires_grad=False`), an "
        "optimiser built over the wrong parameters, or `optimizer.step()` never called."
    )
    example = (
        "A CNN trained with `SGD(lr=1e-6)`: the loss goes 2.3205 -> 2.3200 over 12 epochs "
        "and the model predicts one digit for every image."
    )
    fixes = (
        "Raise the learning rate (try 1e-3 for Adam, 1e-2..1e-1 for SGD with momentum) or "
        "run a learning-rate range test.",
        "Check that the parameters you train are the ones the optimiser holds and that they "
        "require gradients: `sum(p.numel() for p in model.parameters() if p.requires_grad)`.",
        "Check the training loop: `optimizer.zero_grad()`, `loss.backward()` and "
        "`optimizer.step()` every batch, and the model in `model.train()` mode.",
        "Overfit one small batch first: a healthy setup drives its loss close to zero in a "
        "few hundred steps.",
    )
    severity_policy = (
        "Only when the evaluated model is at chance (0.8) or its quality cannot be measured "
        "(0.5) -- a flat curve after a good first epoch is convergence, not a stall -- times "
        "how flat the loss is: relative improvement first -> best <= 0.02 x1.0, 0.05 x0.75, "
        ">= 0.1 x0. A flat curve that rose, oscillates or sits above a uniform guess is "
        "divergence instead. Curves read smoothed (at most 20 bins); at least 3 points."
    )
    explains = ("degenerate_predictions", "underfitting", "poor_calibration")

    def detect_training(self, artifact):
        history = artifact.training
        if history is None:
            return
        loss = history.metric("train_loss") or history.metric("val_loss")
        if loss is None or loss.n_nonfinite:
            return
        curve = Curve.of(loss)
        if curve is None or diverged_from_start(curve, artifact) is not None:
            return  # rising or oscillating: divergence, not a stall
        harmed, how = at_chance(artifact)
        if harmed is False:
            return
        factor = interp(max(curve.progress, 0.0), PROGRESS_FACTOR)
        if factor <= 0:
            return
        if curve.constant:
            detail = f"{loss.key} never changed ({curve.first:.4g} at every logged point)"
        else:
            detail = (
                f"{loss.key} went from {curve.first:.4g} to {curve.last:.4g} (best "
                f"{curve.best:.4g}, {max(curve.progress, 0):.1%} better than the start)"
            )
        yield self.signal(
            "training",
            score=HARM_SCORE[harmed] * factor,
            confidence=0.85 if curve.constant else 0.75,
            detail=f"{detail}{lr_text(artifact)}; {how}",
            value=curve.progress,
            constant=curve.constant,
            key=loss.key,
        )

    def title(self, signals, artifact):
        key = self.fact(signals, "key", "the loss")
        lr = artifact.training.learning_rate if artifact.training else None
        at = f" (learning rate {lr:g})" if lr is not None else ""
        if self.fact(signals, "constant"):
            return f"Training never updated the model: {key} is constant{at}"
        return f"Training stalled from the start: {key} barely moved{at}"

    def explanation(self, signals, artifact):
        if self.fact(signals, "constant"):
            return (
                "The training loss is exactly the same at every logged point, so no weight of "
                "the model was ever updated: the layers are frozen, the learning rate is 0, "
                "the optimiser holds other parameters, or its step is never called. The "
                "shipped model is its random initialisation."
            )
        return (
            "The training loss hardly moved from its first value, and the model is no "
            "better than chance. The optimiser is taking steps far too small to learn (a "
            "learning rate orders of magnitude too low) or most of the network is not being "
            "trained. Training longer will not help; fix the step size or the training loop."
        )
