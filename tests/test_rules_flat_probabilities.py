"""degenerate_predictions: a flat probability output (every row stated the class shares) whose decisions still follow the inputs is a collapsed model."""

from __future__ import annotations

import math

from deepfix_agents.reasoner import reason
from deepfix_agents.rules.degenerate_predictions import flat_probabilities

from mlflow_deepfix.schemas import Intervention
from tests.test_rules_model import HEALTHY_PERF, _all_signals, artifact, modified

_DET25_THIRDS = {"0": 1 / 3, "1": 1 / 3, "2": 1 / 3}


def _flat(train_log_loss, *, decisions=0.86, shuffled=0.32, noise=0.066):
    """A 3-class model whose decisions score ``decisions`` (shuffled labels ``shuffled``)
    and whose training log loss is ``train_log_loss`` (ln 3 = the class shares stated
    for every row), with the expected calibration error such a flat output shows."""
    perf = modified(
        HEALTHY_PERF,
        test_score=decisions,
        train_score=0.91,
        prediction_distribution={"0": 0.33, "1": 0.42, "2": 0.25},
        train_prediction_distribution={"0": 0.33, "1": 0.38, "2": 0.29},
        calibration_error=0.55,
        calibration_noise=0.24,
        best_threshold=None,
        f1_at_default=None,
        f1_at_best=None,
        scores={
            "test": {"accuracy": decisions, "log_loss": 1.0986},
            "train": {"accuracy": 0.91, "log_loss": train_log_loss},
        },
    )
    data = artifact(
        task="multiclass_classification",
        n_train=105,
        n_test=45,
        train_labels=_DET25_THIRDS,
        test_labels=_DET25_THIRDS,
        performance=perf,
    )
    chance = Intervention(
        kind="chance_level", category="underfitting", metric="f1_macro",
        score_before=shuffled, score_after=decisions, noise=noise, n_rows=45,
    )
    model = data.model.model_copy(update={"classes": ["0", "1", "2"]})
    return data.model_copy(update={"interventions": [chance], "model": model})


def test_flat_probabilities_with_informative_decisions_are_degenerate():
    """Every row stated the class shares (training log loss = ln 3) while the decisions
    beat shuffled labels by 8 noise units: a collapsed probability output, named as
    degenerate_predictions ahead of the calibration error it causes (which it folds in),
    although the predicted labels still vary."""
    flat = _flat(math.log(3))
    assert flat_probabilities(flat) is not None
    findings = reason(_all_signals(flat), flat)
    assert findings[0].category == "degenerate_predictions"
    assert findings[0].severity == "high"
    assert "poor_calibration" not in [f.category for f in findings[1:]]


def test_informative_probabilities_or_chance_decisions_are_not_flat():
    """Probabilities that explain 2% of the labels' entropy on the training rows are not
    flat; nor is a flat output whose decisions are at chance (no signal: underfitting's
    reading, not a collapse)."""
    assert flat_probabilities(_flat(0.98 * math.log(3))) is None
    at_chance = _flat(math.log(3), decisions=0.36, shuffled=0.32, noise=0.066)
    assert flat_probabilities(at_chance) is None
    findings = reason(_all_signals(at_chance), at_chance)
    assert "degenerate_predictions" not in [f.category for f in findings]
