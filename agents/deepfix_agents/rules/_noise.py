"""One reading of "harm, not chance" for a measured change (a refit's gain, the extra
error of affected rows): beyond ``NOISE_UNITS`` of the measurement's own noise. Shared by
``outliers`` and ``missing_values`` (a private module: ``missing_values`` imports
``outliers`` only lazily, and neither rule should own the other's test). Also the
sampling-noise floor of a score on a number of rows, which the ladder readings share."""

from __future__ import annotations

#: a measured change beyond this many noise units (standard errors) is harm, not chance
NOISE_UNITS = 2.0


def beyond_noise(measured) -> bool:
    """A measured change (a refit's gain, affected rows' extra error) beyond
    :data:`NOISE_UNITS` of its noise: harm, not chance."""
    return measured.change > NOISE_UNITS * (measured.noise or 0.0)


def sampling_noise(n_rows: int) -> float:
    """The sampling noise of a score (an accuracy or an R2) on ``n_rows`` rows, 0.5/sqrt(n):
    the floor under a measured noise, since a near-constant model's chance-level
    measurement has none while the score it is compared with still does."""
    return 0.5 / max(n_rows, 1) ** 0.5
