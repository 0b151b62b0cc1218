"""Progress bars that leave tqdm's own environment switches in the user's hands."""

from __future__ import annotations

from typing import Any


def bar_options(enabled: bool) -> dict[str, Any]:
    """Keyword arguments for a ``tqdm`` bar that the caller wants shown (``enabled``) or
    not: ``disable=True`` when it is off, and nothing when it is on.

    Why not ``disable=not enabled``: tqdm reads its environment overrides
    (``TQDM_DISABLE=1``, ``TQDM_MININTERVAL``, ...) as *defaults*, and an explicit
    ``disable=False`` beats them. A user who silences every bar in a CI log with
    ``TQDM_DISABLE=1`` would still get deepfix's, one line per redraw."""
    return {} if enabled else {"disable": True}
