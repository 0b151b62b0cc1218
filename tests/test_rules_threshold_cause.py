"""Pins how a rare class that the 0.5 threshold misses is attributed (branch thr24)."""

from __future__ import annotations

from deepfix_agents import diagnose_with_rules
from deepfix_agents.rules.class_imbalance import MIN_RARE_TEST_ROWS, threshold_is_the_cause
from tests.test_rules_model import HEALTHY_PERF, artifact, modified


def _rare(n_test: int, f1_best: float):
    """4% positives in both splits, never predicted at 0.5, F1 ``f1_best`` at 0.2."""
    rare = {"0": 0.96, "1": 0.04}
    perf = modified(
        HEALTHY_PERF, test_score=0.49, train_score=0.49, prediction_distribution={"0": 1.0},
        f1_at_default=0.0, f1_at_best=f1_best, best_threshold=0.2,
    )
    return artifact(performance=perf, n_test=n_test, train_labels=rare, test_labels=rare)


def test_few_rare_test_rows_leave_the_rarity_the_cause():
    """7 rare test rows: even a large F1 gain from a lower cut-off is within what picking
    the cut-off on those rows gains by chance (about 0.6/sqrt(7) = 0.23), so class_imbalance
    stays the cause and ranks first; with 12 rare rows the same gain names the threshold."""
    few = _rare(175, 0.45)
    assert 0.04 * 175 < MIN_RARE_TEST_ROWS
    assert threshold_is_the_cause(few) is False
    assert diagnose_with_rules(few).findings[0].category == "class_imbalance"
    enough = _rare(300, 0.45)
    assert threshold_is_the_cause(enough) is True
    assert diagnose_with_rules(enough).findings[0].category == "decision_threshold"


def test_a_threshold_that_barely_beats_flagging_everything_is_not_the_cause():
    """Enough rare rows, but the best cut-off's F1 (0.20) is under 0.15 above the
    all-positive F1 2p/(1+p) (0.08): the model does not rank the rare class, and the
    rarity is the cause."""
    weak = _rare(300, 0.20)
    assert threshold_is_the_cause(weak) is False
    assert diagnose_with_rules(weak).findings[0].category == "class_imbalance"
