"""``benchmarks/probe_training_segments.py``: the training-rows segment scan behind the
weak-segment lead (stop 46) finds a category with shuffled labels and stays quiet on
a category that is merely harder (its labels spread wider)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd

_pts_path = Path(__file__).resolve().parents[1] / "benchmarks" / "probe_training_segments.py"
_pts_spec = importlib.util.spec_from_file_location("_pts_probe", _pts_path)
probe = importlib.util.module_from_spec(_pts_spec)
_pts_spec.loader.exec_module(probe)


def _frame(seed: int, shuffled: float) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = 800
    x = rng.normal(size=(n, 3))
    site = rng.choice(["a", "b", "c", "d"], n)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).astype(int)
    rows = np.flatnonzero(site == "d")
    hit = rows[rng.random(len(rows)) < shuffled]
    y[hit] = rng.permutation(y)[: len(hit)]
    return pd.DataFrame({"x0": x[:, 0], "x1": x[:, 1], "x2": x[:, 2], "site": site, "y": y})


def test_scan_bar_is_the_rules_bonferroni_bar():
    assert abs(probe.scan_bar(1) - 3.0) < 1e-9
    assert 3.3 < probe.scan_bar(3) < 3.5


def test_a_category_with_shuffled_labels_is_found_on_the_training_rows():
    z, bar, segment = probe.best_segment(_frame(0, shuffled=0.8), "y", True)
    assert segment == "site=d"
    assert z >= bar


def test_a_clean_frame_stays_below_the_bar():
    z, bar, _ = probe.best_segment(_frame(1, shuffled=0.0), "y", True)
    assert z < bar


def test_a_harder_regression_category_is_compared_with_comparable_rows():
    # category 'wide' has targets spreading three times wider (noise in y, learnable
    # part the same): the model errs more there, but no more per unit of its own
    # constant-guess error than elsewhere, so it is no failed segment
    rng = np.random.default_rng(2)
    n = 900
    x = rng.normal(size=n)
    group = rng.choice(["narrow", "mid", "wide"], n)
    scale = np.where(group == "wide", 3.0, 1.0)
    y = scale * (2.0 * x + rng.normal(scale=0.5, size=n))
    frame = pd.DataFrame({"x": x, "group": group, "y": y})
    z, bar, _ = probe.best_segment(frame, "y", False)
    assert z < bar
