"""How many OpenMP threads deepfix's own model calls and worker threads use.

Why this exists: scikit-learn's HistGradientBoosting (and other OpenMP code: its
training, k-means, some distances) opens a parallel region per tree on every
``predict``. On a small batch the threads' synchronisation costs more than the work, and
when the cores are busy (deepfix's own check threads already use every core, or other
processes do) the OpenMP threads spin and wait for each other. Measured with
``benchmarks/scale_curve.py`` on a shared 2-core machine at load ~13: a 10k-row
evaluation took 57.7 s wall / 16.2 s CPU with the library's default threads, 27.4 s /
8.3 s with one thread per call; the robustness probes alone went from 6.8 s to 0.4 s.

So, inside an evaluation:

* a model call on fewer than :data:`SINGLE_THREAD_ROWS` rows runs OpenMP on one thread
  (:func:`threads_for_rows`); larger batches keep the library's default, where the
  parallel speed-up outweighs the synchronisation;
* every unit of work on deepfix's worker threads (checks, baseline ladder) runs OpenMP on
  one thread (:func:`one_native_thread`): the pool is the parallelism.

OpenMP's thread count is a per-thread setting (``omp_set_num_threads`` from a plain
thread changes that thread only), so one thread's limit does not slow the others. BLAS
pools are left alone: their limit is process-wide. Results do not change: the
parallel loops are per-row, and a failure to set the limit only costs speed.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from typing import Any

logger = logging.getLogger(__name__)

#: model calls on fewer rows than this run their OpenMP loops on one thread
SINGLE_THREAD_ROWS = 50_000

_lock = threading.Lock()
_controller: list[Any] = []


def _openmp_controller() -> Any | None:
    """One threadpoolctl controller (building one scans every loaded library: ~7 ms),
    made on first use, when the model's libraries are loaded; None if unavailable."""
    with _lock:
        if not _controller:
            try:
                from threadpoolctl import ThreadpoolController

                _controller.append(ThreadpoolController().select(user_api="openmp"))
            except Exception as error:  # noqa: BLE001 - limits only cost or save speed
                logger.debug("threadpoolctl unavailable (%s): default OpenMP threads", error)
                _controller.append(None)
        return _controller[0]


@contextlib.contextmanager
def one_native_thread() -> Iterator[None]:
    """OpenMP code called inside the block (on this thread) uses one thread."""
    controller = _openmp_controller()
    if controller is None or not controller.lib_controllers:
        yield
        return
    try:
        limiter = controller.limit(limits=1)
    except Exception as error:  # noqa: BLE001 - limits only cost or save speed
        logger.debug("could not limit OpenMP threads (%s)", error)
        yield
        return
    with limiter:
        yield


def threads_for_rows(n_rows: int) -> contextlib.AbstractContextManager[None]:
    """The thread setting for a model call on ``n_rows`` rows (see module docstring)."""
    if n_rows < SINGLE_THREAD_ROWS:
        return one_native_thread()
    return contextlib.nullcontext()
