"""Lead for a testing-step measurement: would the per-category error scan find planted weak
segments on the *training* rows, from cross-validated predictions?

The weak-segment rule scans every category of every categorical feature on the test split
only (``performance.segments``), at a Bonferroni bar over the contrasts scanned. The
corpus's ``weak_segment`` injector shuffles a share of the labels of one category in both
splits, so the training rows hold the same evidence, on two to three times as many rows;
the artifact has none of it. This script measures, on DEV datasets only and outside the
evaluator, what that evidence would add: per case it rebuilds the workflow (split and
planted bugs, no model fitted), predicts every training row out of fold (5 folds,
HistGradientBoosting on ordinal-coded columns: a ladder-like rung, not the served model),
and tests each category of each feature of 2-20 values against the other rows:

* z = (segment's mean error - expected) / Welch standard error, where the expected error
  is the other rows' error or, if higher, what comparable rows would get (the segment's
  own constant-guess error times the other categories' error per unit of theirs: a
  segment whose labels spread wider is harder, not failed; the weak-segment rule's
  ``comparable_error``);
* when every other category is one class (nothing there to get wrong), the segment is
  tested against its own constant-guess error instead (the rule's ``only_errable``);
* the bar is the rule's: z = 3 one-sided, shared (Bonferroni) among m - 1 contrasts per
  feature of m values.

It prints, per planted case and per clean control (one per dataset: a clean control's
training rows do not depend on the model family), the best z, the bar and the segment.

    python benchmarks/probe_training_segments.py --cache CACHE_ROOT/v2-KEY

Stop 46, on the 48 valid DEV weak_segment cases and 39 DEV datasets' clean controls: the
planted segment is found in 31 of 48 (every hit names the planted category), including 12
of the 24 the rules miss today; without the comparable-rows adjustment 37 of 48 but 5 of 39
clean datasets alarm (natural structural groups: married, 401(k) eligibility, prior
unemployment). With ``--others group_disparity,overconfident_slice,label_drift,
missing_values,outliers,unused_features,class_imbalance,conflicting_labels``: 8 of those
451 cases above the bar (4 overconfident slices, whose injector also plants wrong labels
on one slice).

Stop 47 built the measurement into the testing step with the ladder's own rungs
(``BaselineResult.train_segments``; the weak-segment rule reads the linear rung's, see
``deepfix_agents.rules._training_segments``). This probe stays as a yardstick for other
rungs: on the same 48 cases the ladder's linear rung clears the bar in 36 (the tree 30).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from deepfix_agents.rules.weak_segment import MAX_SCANNED_VALUES
from deepfix_agents.rules.weak_segment import scan_z as scan_bar  # the rule's own bar

#: categories with fewer training rows (or fewer rows outside them) are not tested
MIN_ROWS = 10


def constant_guess_error(y: pd.Series, classification: bool) -> float:
    y = y.dropna()
    if y.empty:
        return 0.0
    if classification:
        return float(1.0 - y.value_counts(normalize=True).iloc[0])
    y = y.astype(float)
    return float(np.abs(y - y.median()).mean())


def out_of_fold_errors(frame: pd.DataFrame, target: str, classification: bool) -> np.ndarray:
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
    from sklearn.model_selection import KFold, StratifiedKFold, cross_val_predict

    y = frame[target]
    X = frame.drop(columns=[target]).copy()
    for col in X.columns:
        if not pd.api.types.is_numeric_dtype(X[col]):
            X[col] = X[col].astype("category").cat.codes
    X = X.apply(pd.to_numeric, errors="coerce")
    if classification:
        model = HistGradientBoostingClassifier(max_iter=100, random_state=0)
        try:
            pred = cross_val_predict(model, X, y, cv=StratifiedKFold(5, shuffle=True, random_state=0))
        except ValueError:  # a class with fewer than 5 rows
            pred = cross_val_predict(model, X, y, cv=KFold(5, shuffle=True, random_state=0))
        return (pred != y.to_numpy()).astype(float)
    model = HistGradientBoostingRegressor(max_iter=100, random_state=0)
    pred = cross_val_predict(model, X, y.astype(float), cv=KFold(5, shuffle=True, random_state=0))
    return np.abs(pred - y.astype(float).to_numpy())


def best_segment(frame: pd.DataFrame, target: str, classification: bool):
    """(z, bar, 'feature=value') of the training rows' worst category, out of fold."""
    err = out_of_fold_errors(frame, target, classification)
    y = frame[target]
    contrasts, best = 0, (0.0, None)
    for col in frame.columns.drop(target):
        values = frame[col].astype(str)
        m = values.nunique()
        if m < 2 or m > MAX_SCANNED_VALUES:
            continue
        contrasts += max(m - 1, 1)
        groups = {v: (values == v).to_numpy() for v in values.unique()}
        for value, rows in groups.items():
            if rows.sum() < MIN_ROWS or (~rows).sum() < MIN_ROWS:
                continue
            seg, rest = err[rows], err[~rows]
            se = math.sqrt(seg.var(ddof=1) / len(seg) + rest.var(ddof=1) / len(rest)) or 1e-9
            own = constant_guess_error(y[rows], classification)
            others = [r for v, r in groups.items() if v != value]
            sibling = sum(constant_guess_error(y[r], classification) * r.sum() for r in others)
            sibling /= sum(r.sum() for r in others)
            if sibling > 0:
                expected = max(rest.mean(), own * rest.mean() / sibling)
            else:  # every other category is one class: test against its own guess
                expected = max(rest.mean(), own)
            z = (seg.mean() - expected) / se
            if z > best[0]:
                best = (z, f"{col}={value}")
    return best[0], scan_bar(contrasts), best[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", required=True, help="a corpus stage-1 cache folder")
    parser.add_argument("--others", metavar="A,B",
                        help="also scan the cases of these planted categories (every one of "
                        "them above the bar is a false alarm of the scan)")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    sys.path.insert(0, str(Path(__file__).parent))
    import corpus_split

    from mlflow_deepfix.bench.corpus.cases import CaseSpec, _workflow

    cache = Path(args.cache)
    dev = set(corpus_split.load_split()["dev"])
    ids = [p.stem for p in sorted(cache.glob("*.json")) if p.stem.split(".")[1] in dev]
    planted = [i for i in ids if i.startswith("weak_segment.")]
    clean_per_dataset: dict[str, str] = {}
    for case_id in ids:
        if case_id.startswith("clean."):
            clean_per_dataset.setdefault(case_id.split(".")[1], case_id)
    clean = list(clean_per_dataset.values())
    groups = [("weak_segment", planted), ("clean", clean)]
    if args.others:
        wanted = tuple(f"{c}." for c in args.others.split(","))
        groups.append(("other", [i for i in ids if i.startswith(wanted)]))
    for group, case_ids in groups:
        hits = named = n = 0
        for case_id in case_ids:
            meta = json.loads((cache / f"{case_id}.json").read_text()).get("metadata") or {}
            if not meta.get("valid", True):
                continue
            spec = CaseSpec.from_id(case_id)
            wf = _workflow(spec, with_bugs=True)
            # a sensitive column is kept aside (the model does not read it): group
            # disparity's to judge, not a segment of the model's inputs
            frame = wf.train.drop(columns=wf.config.get("sensitive_features") or [])
            z, bar, segment = best_segment(frame, wf.target, wf.dataset.is_classification)
            n += 1
            hit = z >= bar
            hits += hit
            truth = f"{wf.segment[0]}={wf.segment[1]}" if wf.segment else None
            named += hit and segment == truth
            print(f"{group:12s} {'HIT ' if hit else '    '} z={z:6.2f} bar={bar:4.2f} "
                  f"{segment} {case_id}" + (f" (planted {truth})" if truth else ""), flush=True)
        print(f"== {group}: {hits}/{n} above the bar"
              + (f", {named} naming the planted segment" if group == "weak_segment" else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
