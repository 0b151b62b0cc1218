"""The arguments every Deepchecks runner takes, checked once for all three modalities.

:func:`~mlflow_deepfix.checks.run_checks`, ``run_text_checks`` and ``run_image_checks``
take the same ``suites`` / ``sample_size`` / ``seed`` with the same rules and the same
error messages; each runner's ``_validate`` calls :func:`validate_run_args` and then
checks only its own modality's inputs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mlflow_deepfix.checks._catalog import SUITES
from mlflow_deepfix.errors import DeepfixInputError


def validate_run_args(suites: Sequence[str], sample_size: int | None, seed: int) -> list[str]:
    """Check the arguments shared by every runner and return ``suites`` without
    repeats, in their given order.

    ``suites`` must be a non-empty list (not a string) of names from :data:`SUITES`,
    ``sample_size`` an int >= 100 or None, ``seed`` an int (numpy ints allowed, bools
    not); otherwise :class:`~mlflow_deepfix.errors.DeepfixInputError`.
    """
    if isinstance(suites, str):
        raise DeepfixInputError(f"suites must be a list of suite names, got the string {suites!r}")
    unknown = [s for s in suites if s not in SUITES]
    if unknown or not suites:
        raise DeepfixInputError(
            f"suites must be a non-empty list of {', '.join(SUITES)}; got {list(suites)!r}")
    if sample_size is not None and (isinstance(sample_size, bool)
                                    or not isinstance(sample_size, int) or sample_size < 100):
        raise DeepfixInputError(f"sample_size must be an int >= 100 or None; got {sample_size!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise DeepfixInputError(f"seed must be an int; got {seed!r}")
    return list(dict.fromkeys(suites))
