"""OpenMP limits of deepfix's model calls and worker threads (mlflow_deepfix.native_threads):
one thread inside the block, on that thread only, restored afterwards."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import sklearn.ensemble  # noqa: F401 - loads scikit-learn's OpenMP runtime
from threadpoolctl import threadpool_info

from mlflow_deepfix.native_threads import SINGLE_THREAD_ROWS, one_native_thread, threads_for_rows


def _openmp_threads() -> int:
    found = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "openmp"]
    assert found, "scikit-learn's OpenMP runtime should be loaded"
    return found[0]


def test_one_thread_inside_the_block_and_restored_after():
    before = _openmp_threads()
    with one_native_thread():
        assert _openmp_threads() == 1
    assert _openmp_threads() == before


def test_the_limit_is_per_thread():
    seen: dict[str, int] = {}
    inside, release = threading.Event(), threading.Event()

    def limited() -> None:
        with one_native_thread():
            seen["limited"] = _openmp_threads()
            inside.set()
            release.wait(10)

    worker = threading.Thread(target=limited)
    before = _openmp_threads()
    worker.start()
    assert inside.wait(10)
    seen["other"] = _openmp_threads()  # the main thread, while the worker holds its limit
    release.set()
    worker.join(10)
    assert seen == {"limited": 1, "other": before}


def test_small_batches_single_threaded_large_ones_default():
    before = _openmp_threads()
    with threads_for_rows(SINGLE_THREAD_ROWS - 1):
        assert _openmp_threads() == 1
    with threads_for_rows(SINGLE_THREAD_ROWS):
        assert _openmp_threads() == before


def test_predictions_unchanged_by_the_limit():
    from sklearn.ensemble import HistGradientBoostingClassifier

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(3000, 5)), columns=list("abcde"))
    y = (X["a"] + rng.normal(0, 0.5, 3000) > 0).astype(int)
    model = HistGradientBoostingClassifier(max_iter=30, random_state=0).fit(X, y)
    default = model.predict_proba(X)
    with one_native_thread():
        limited = model.predict_proba(X)
    np.testing.assert_array_equal(default, limited)
