"""The regression target's mean shift from train to test and the bar at which it is
measured (beyond noise). Shared by ``label_drift``, which reads the shift, and
``prediction_drift``, which must know when no shift was measured (a private module:
``label_drift`` imports ``prediction_drift``, so the reverse import would be a cycle)."""

from __future__ import annotations

#: a target mean's difference beyond this many of its standard errors is a measured
#: shift, not sampling noise
MEAN_SHIFT_Z = 3.0


def target_mean_shift(train: dict[str, float], n_train: int, test: dict[str, float],
                      n_test: int) -> tuple[float, float] | None:
    """(signed shift of the regression target's mean from train to test, its standard
    error), from the summaries' mean and std (Welch's standard error)."""
    try:
        m1, s1, m2, s2 = train["mean"], train["std"], test["mean"], test["std"]
    except KeyError:
        return None
    if not (s1 and s1 > 0) or n_train < 2 or n_test < 2:
        return None
    return m2 - m1, ((s1 ** 2) / n_train + ((s2 or 0.0) ** 2) / n_test) ** 0.5
