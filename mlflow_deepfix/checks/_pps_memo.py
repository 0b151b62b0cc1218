"""Compute each Predictive Power Score table once per :func:`run_checks`.

Feature Label Correlation (train) and Feature Label Correlation Change (train and test)
both call ``deepchecks.ppscore.predictors`` on the same seeded sample of the training
split with the same seed and parameters, so the training PPS (a cross-validated tree
per feature, the most expensive computation of the default suites) was computed twice.
:func:`shared_pps` memoizes ``predictors`` by the *content* of its arguments for the
duration of one run: identical calls get the same table (a copy), different ones are
computed as before. Concurrent identical calls wait for the first one instead of
repeating it. Outcomes are unchanged by construction: the memo only returns what the
same call returned.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
from collections.abc import Iterator
from typing import Any

import pandas as pd


def _content_key(df: pd.DataFrame, y: Any, args: tuple, kwargs: dict) -> str:
    digest = hashlib.sha256()
    header = [list(map(str, df.columns)), [str(t) for t in df.dtypes], str(y),
              repr(args), repr(sorted(kwargs.items(), key=lambda kv: kv[0]))]
    digest.update(json.dumps(header).encode())
    digest.update(pd.util.hash_pandas_object(df, index=True).to_numpy().tobytes())
    return digest.hexdigest()


class _Memo:
    def __init__(self, compute: Any):
        self.compute = compute
        self.lock = threading.Lock()
        self.entries: dict[str, tuple[threading.Lock, list]] = {}
        self.hits = 0

    def __call__(self, df: Any, y: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            key = _content_key(df, y, args, kwargs)
        except Exception:  # noqa: BLE001 - unhashable content: compute as Deepchecks would
            return self.compute(df, y, *args, **kwargs)
        with self.lock:
            entry_lock, slot = self.entries.setdefault(key, (threading.Lock(), []))
        with entry_lock:
            if slot:
                self.hits += 1
            else:
                slot.append(self.compute(df, y, *args, **kwargs))
            result = slot[0]
        return result.copy() if hasattr(result, "copy") else result


@contextlib.contextmanager
def shared_pps() -> Iterator[_Memo | None]:
    """Memoize ``deepchecks.ppscore.predictors`` inside the ``with`` block.

    Not re-entrant across overlapping runs in several threads of one process: a nested
    or concurrent block reuses the memo already installed.
    """
    import deepchecks.ppscore as pps

    current = pps.predictors
    if isinstance(current, _Memo):  # an outer run already shares its tables
        yield current
        return
    memo = _Memo(current)
    pps.predictors = memo
    try:
        yield memo
    finally:
        pps.predictors = current
