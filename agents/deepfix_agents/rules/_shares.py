"""Share statistics that several rules read (label_drift, poor_calibration,
prediction_drift, overconfident_slice). They live in their own module, which imports no
rule, so that a rule reading a label shift does not import label_drift and, through it,
feature_drift and the ladder (an import circle the architecture contracts refuse)."""

from __future__ import annotations


def share_difference_z(share_a: float, n_a: int, share_b: float, n_b: int) -> float | None:
    """Signed z of share a above share b: their difference over its standard error under
    the null of one population (pooled two-proportion test). None without rows on either
    side or without spread (a pooled share of 0 or 1)."""
    if n_a < 1 or n_b < 1:
        return None
    pooled = (share_a * n_a + share_b * n_b) / (n_a + n_b)
    se = (pooled * (1.0 - pooled) * (1.0 / n_a + 1.0 / n_b)) ** 0.5
    return (share_a - share_b) / se if se > 0 else None


def share_shift_z(train_share: float, n_train: int, test_share: float, n_test: int) -> float:
    """The difference of one class's share between the splits over its standard error
    under the null of one population (pooled share, both splits sampled); 0 where
    :func:`share_difference_z` has none."""
    z = share_difference_z(test_share, n_test, train_share, n_train)
    return abs(z) if z is not None else 0.0


def total_variation(a: dict[str, float], b: dict[str, float]) -> float:
    """Half the summed absolute share differences, summed in a fixed order (a set of
    strings iterates in the hash seed's order, which moves a float sum's last digit)."""
    return 0.5 * sum(abs(a.get(k, 0.0) - b.get(k, 0.0)) for k in sorted(set(a) | set(b)))


def class_share_shift(dataset) -> dict | None:
    """How the test split's class shares moved from training's: {"tv": their total
    variation, "label": the most moved class, "train_share", "test_share": its shares,
    "z": :func:`share_shift_z` of its move}. None without both splits' shares. Each
    reader applies its own bar to ``z`` (label_drift scores the distance and caps a
    shift within noise; poor_calibration takes out what a shift beyond noise can add)."""
    if dataset.train is None:
        return None
    train, test = dataset.train.label_distribution, dataset.test.label_distribution
    if not train or not test:
        return None
    moved = max(set(train) | set(test),
                key=lambda k: (abs(train.get(k, 0.0) - test.get(k, 0.0)), k))
    return {
        "tv": total_variation(train, test),
        "label": moved,
        "train_share": train.get(moved, 0.0),
        "test_share": test.get(moved, 0.0),
        "z": share_shift_z(train.get(moved, 0.0), dataset.train.n_rows,
                           test.get(moved, 0.0), dataset.test.n_rows),
    }
