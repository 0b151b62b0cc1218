"""Which inputs the model reads at all: every model input shuffled, one at a time.

Native importances exist only for trees and linear models, and the shuffle tests of the
leak measurements (``permute_feature``) run only for features with a strong label
association, so a pipeline that silently drops half of its columns in front of a neural
network, a k-NN or an SVM went unseen. This measurement shuffles *every* model input
(up to :data:`MAX_READ_FEATURES`) on a seeded sample of test rows and records, per
feature, the share of rows (among those whose value the shuffle changed, when at least
:data:`MIN_CHANGED_ROWS`) whose model output moved. All permuted copies are stacked under the original rows and predicted in
ONE call, so the cost is a single batched prediction of at most
:data:`MAX_READ_CELLS` rows.

The output compared is the most continuous one the model offers: class probabilities
when it has them, regression predictions, otherwise labels (``values["continuous"]``
says which). With a continuous output there is no sampling noise to model for a dense
learner (a network, a kernel, a linear model without an L1 penalty, naive Bayes): a
column it reads moves its output on essentially every row whose value changed, so a
share of exactly 0 over dozens of changed rows means the column never reaches the model.
A tree (or an L1 model) legitimately never reads a column it did not split on, so the
share says nothing about a bug there; the rules decide which learners it applies to.
"""

from __future__ import annotations

import logging
import time
import warnings
from typing import Any

import numpy as np
import pandas as pd

from mlflow_deepfix.schemas import Intervention
from mlflow_deepfix.testing.stats import sample_index

logger = logging.getLogger(__name__)

#: test rows shuffled per feature (seeded sample)
MAX_READ_ROWS = 200
#: inputs shuffled (in the model's column order)
MAX_READ_FEATURES = 40
#: at most this many rows in the one stacked prediction (original + one copy per feature)
MAX_READ_CELLS = 8200
#: an input whose shuffle changed its value on fewer sampled rows is not recorded: a
#: local learner (k-NN) moves its output only where the neighbours change (on clean DEV
#: k-NNs, at least 11% of the changed rows for every input), and no row moving out of 30
#: then has a chance of 0.89^30 = 3%; a dense network or linear model moves every one
MIN_CHANGED_ROWS = 30
#: outputs closer than this (relative, plus an absolute floor) count as unchanged: a
#: batched prediction may differ in the last bits for the same row
RTOL, ATOL = 1e-7, 1e-10


def shuffle_reads(adapter: Any, test_rows: pd.DataFrame, features: list[str], task: str,
                  seed: int) -> Intervention | None:
    """Per model input, the share of sampled test rows whose output moves when that input
    alone is shuffled across the rows (only rows whose value the shuffle changed count).

    ``per_feature``: feature -> that share; ``values``: ``continuous`` (1 when
    probabilities or regression outputs were compared, 0 for labels), ``min_changed``
    (the fewest rows whose value a shuffle changed, over the features measured).
    None when there are no rows or features, or the prediction fails."""
    started = time.perf_counter()
    columns = [c for c in features if c in test_rows.columns][:MAX_READ_FEATURES]
    if not columns or len(test_rows) < 2:
        return None
    n = min(MAX_READ_ROWS, len(test_rows), MAX_READ_CELLS // (len(columns) + 1))
    if n < 2:
        return None
    base = test_rows.iloc[sample_index(len(test_rows), n, seed)][features].reset_index(drop=True)
    rng = np.random.default_rng(seed)
    blocks, changed = [base], []
    for column in columns:
        block = base.copy()
        values = block[column].to_numpy()
        shuffled = values[rng.permutation(n)]
        block[column] = shuffled
        differs = ~(pd.Series(values).eq(pd.Series(shuffled)).to_numpy()
                    | (pd.isna(values) & pd.isna(shuffled)))
        changed.append(differs)
        blocks.append(block)
    stacked = pd.concat(blocks, ignore_index=True)
    classification = task != "regression"
    continuous = not classification or bool(getattr(adapter, "has_proba", False))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if classification and continuous:
                output = np.asarray(adapter.predict_proba(stacked), dtype=float)
            else:
                output = np.asarray(adapter.predict(stacked))
    except Exception as error:  # noqa: BLE001 - optional evidence
        logger.warning("shuffle reads failed: %s: %s", type(error).__name__, error)
        return None
    if output.shape[0] != n * (len(columns) + 1):
        return None
    output = output.reshape(len(columns) + 1, n, -1)
    reference = output[0]
    per_feature: dict[str, float] = {}
    for j, column in enumerate(columns):
        rows = changed[j]
        if rows.sum() < MIN_CHANGED_ROWS:
            continue
        after = output[j + 1][rows]
        before = reference[rows]
        if continuous:
            same = np.isclose(after.astype(float), before.astype(float), rtol=RTOL, atol=ATOL)
        else:
            same = after == before
        moved = ~np.all(same, axis=1)
        per_feature[column] = round(float(moved.mean()), 4)
    if not per_feature:
        return None
    return Intervention(
        kind="shuffle_reads",
        category="unused_features",
        target="*",
        metric="moved_share",
        n_rows=int(n),
        seconds=round(time.perf_counter() - started, 3),
        model_used="predictions",
        values={
            "continuous": float(continuous),
            "min_changed": float(min(int(c.sum()) for c in changed
                                     if c.sum() >= MIN_CHANGED_ROWS)),
            "n_features": float(len(columns)),
        },
        per_feature=per_feature,
        detail="share of test rows whose output moves when each input alone is shuffled",
    )
