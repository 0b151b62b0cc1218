"""The baseline ladder's per-category errors on the training rows, as a second test of a
weak segment.

The weak-segment scan tests each category of the test split at a Bonferroni bar, and a
test split is often small: a site whose labels are unreliable fails on 40 test rows
without reaching the bar. Its training rows, two to three times as many, hold the same
fault, and the ladder's linear rung predicts each of them out of fold while it is
cross-validated (``BaselineResult.train_segments``). A category that fails the rung on
the training rows beyond what comparable rows get, at the scan's own bar, is
corroborated there; its test-split evidence and its training-row evidence are
independent samples of the same question, so the two z-statistics combine (Stouffer:
their sum over sqrt(2)) before the scan's bar. The training rows must clear the bar on
their own: a category that is only somewhat harder (a tip dataset's dinners, three
quarters of its rows) reads z 2 on each split, and two such readings would combine past
the bar on a clean workflow.

What the rung's errors cannot tell apart on their own is a category that is merely
harder (its labels spread wider, or are one class elsewhere) from one that is failed:
the training-row test therefore compares each category with what comparable rows get,
its own constant-guess error times the rung's error per unit of constant-guess error on
the feature's other categories (the rule's comparable-rows reading), and only ever adds
to a category the model also serves worse on test: the finding's severity stays the
model's measured shortfall on test rows.
"""

from __future__ import annotations

import math

from deepfix_agents.rules._segment_tests import rest_error, z_binomial

#: the ladder rung whose out-of-fold training errors corroborate a test category. Its
#: labels unreliable, a category fails every rung; the linear rung (one-hot categories,
#: no interactions) cannot carve a category's errors out by splitting on a code or an
#: identifier, as the depth-4 tree does. Measured on DEV datasets only (stop 47): the
#: linear rung corroborated 13 planted segments and raised a weak-segment finding on no
#: case of another planted category (one clean control to low); the tree 8, and 6 cases
#: of other categories (fragile predictions' code column, an identifier leak)
TRAINING_RUNG = "linear"


def training_segments(artifact) -> tuple[dict[tuple[str, str], object], int]:
    """The training rung's categories by (feature, value), and the rows it scored."""
    rung = next(
        (b for b in artifact.baselines if b.name == TRAINING_RUNG and b.train_rows), None
    )
    if rung is None:
        return {}, 0
    return {(s.feature, s.value): s for s in rung.train_segments}, rung.train_rows


def comparable_rate(seg) -> float | None:
    """The error the rung would make on ``seg`` if it served it as well as the feature's
    other categories, given how hard each is to guess: the segment's constant-guess error
    times the others' error per unit of theirs. For a classification category whose
    siblings are all one class (no recorded sibling rows: nothing there to get wrong)
    the category's own constant-guess error; None without a measurement."""
    if seg.baseline_error is None or seg.baseline_error <= 0:
        return None
    if seg.sibling_baseline_error and seg.sibling_baseline_error > 0:
        return seg.baseline_error * (seg.sibling_error or 0.0) / seg.sibling_baseline_error
    if seg.sibling_n_rows is None:
        return seg.baseline_error
    return None


def reference_error(seg, n_rows: int) -> float:
    """What the rung's error on ``seg`` is tested against: the larger of the other rows'
    error and the comparable rows' (:func:`comparable_rate`)."""
    return max(rest_error(seg, n_rows), comparable_rate(seg) or 0.0)


def training_z(seg, n_rows: int, *, regression: bool) -> float:
    """How far the rung's out-of-fold error on ``seg``'s training rows lies above
    :func:`reference_error`, in standard errors. Classification: the exact one-sided binomial test of the
    segment's error count against that rate. Regression: the Welch z of the mean
    absolute errors from the segment's and the other rows' measured spreads. 0 when
    the segment is not worse."""
    expected = reference_error(seg, n_rows)
    if seg.error <= expected:
        return 0.0
    if not regression:
        return z_binomial(round(seg.error * seg.n_rows), seg.n_rows, min(expected, 1.0))
    n_rest = max(n_rows - seg.n_rows, 1)
    if seg.error_std is None or seg.rest_error_std is None or seg.n_rows < 2:
        return 0.0
    se = math.sqrt(seg.error_std**2 / seg.n_rows + seg.rest_error_std**2 / n_rest)
    return (seg.error - expected) / se if se > 0 else 0.0


def training_evidence(artifact, seg) -> dict[str, float]:
    """The facts a finding shows for test category ``seg`` from the training rows: the
    rung's out-of-fold error there, what comparable rows get, the z and the rows; empty
    when the rung's scan lists no such category or it is not worse there."""
    training, n_train = training_segments(artifact)
    train_seg = training.get((seg.feature, seg.value))
    if train_seg is None:
        return {}
    z = training_z(train_seg, n_train, regression=artifact.task == "regression")
    if z <= 0:
        return {}
    return {
        "train_error": train_seg.error,
        "train_expected": round(reference_error(train_seg, n_train), 6),
        "train_z": round(z, 2),
        "train_rows": train_seg.n_rows,
    }


def combined_z(z_test: float, z_train: float) -> float:
    """Stouffer's combination of two independent one-sided tests of one category."""
    return (z_test + z_train) / math.sqrt(2.0)
