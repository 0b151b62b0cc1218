"""Refresh only ``performance.prediction_stats`` of cached corpus artifacts (regression
cases) with the current testing code, into a new folder; every other case is copied.

Stage 1 caches whole artifacts per testing-code fingerprint, and re-running it costs the
whole testing step per case. Stop 50 added to the regression prediction statistics the
set the test predictions are drawn from (``testing.performance._answer_set``), which
nothing else in the artifact depends on. This script rebuilds each regression case
(deterministic from its id), predicts with the real adapter and summarises the
performance exactly as the testing step does (``predict_all``, ``performance_summary``),
and replaces that one field. The old ``mean`` and ``std`` must come back unchanged (the
check that the rebuild served the same model the cache measured); a case where they do
not keeps its old field and is counted. A refreshed record says so (``refreshed``).
Name the destination after the current testing code (``runner.cache_dir``) to score it
like a stage-1 cache.

    nice -n 10 python benchmarks/corpus_prediction_stats_refresh.py \\
        --source CACHE_ROOT/v3-KEY --dest NEW_DIR [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import shutil
import warnings
from pathlib import Path


def refresh(record: dict) -> tuple[dict, str]:
    """(record, outcome): outcome is "refreshed", "skipped" (not a regression case with
    statistics) or "mismatch" (the rebuilt model's mean/std differ: old field kept)."""
    from mlflow_deepfix.bench.corpus.runner import served_inputs
    from mlflow_deepfix.testing.predictions import labelled, predict_all
    from mlflow_deepfix.testing.tabular import performance_summary

    artifact = record.get("artifact") or {}
    old = (artifact.get("performance") or {}).get("prediction_stats") or {}
    if artifact.get("task") != "regression" or "test" not in old:
        return record, "skipped"
    _spec, _config, inputs = served_inputs(record["case_id"])
    test, train = labelled(inputs.test, inputs.target), labelled(inputs.train, inputs.target)
    predictions, _failures = predict_all(inputs, test, train)
    new = performance_summary(inputs, test, train, predictions).prediction_stats
    for split, stats in old.items():
        for key in ("mean", "std"):
            a, b = stats.get(key), (new.get(split) or {}).get(key)
            if a is None or b is None or not math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9):
                return record, "mismatch"
    record = dict(record)
    performance = dict(artifact["performance"], prediction_stats=new)
    record["artifact"] = dict(artifact, performance=performance)
    record["refreshed"] = ["performance.prediction_stats"]
    return record, "refreshed"


def _one(paths: tuple[Path, Path]) -> str:
    source, dest = paths
    record = json.loads(source.read_text(encoding="utf-8"))
    try:
        record, outcome = refresh(record)
    except Exception as error:  # noqa: BLE001 - keep the old field, say so
        record["refresh_error"] = f"{type(error).__name__}: {error}"
        outcome = "error"
    if outcome == "skipped":
        shutil.copyfile(source, dest)
    else:
        dest.write_text(json.dumps(record, default=str), encoding="utf-8")
    return outcome


def _init() -> None:
    """A worker process: quiet, one native thread (refits of small samples gain nothing
    from more, and two workers share two cores)."""
    os.environ.setdefault("DISABLE_DEEPCHECKS_ANONYMOUS_TELEMETRY", "1")
    warnings.simplefilter("ignore")
    logging.basicConfig(level=logging.ERROR)
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, required=True)
    parser.add_argument("--dest", type=Path, required=True)
    parser.add_argument("--workers", type=int, choices=(1, 2), default=1)
    args = parser.parse_args(argv)
    from collections import Counter
    from multiprocessing import get_context

    from tqdm.auto import tqdm

    args.dest.mkdir(parents=True, exist_ok=True)
    jobs = [(p, args.dest / p.name) for p in sorted(args.source.glob("*.json"))
            if not (args.dest / p.name).exists()]
    counts: Counter = Counter()

    def tally(results) -> None:
        for outcome in tqdm(results, total=len(jobs), desc="refresh prediction_stats",
                            unit="case"):
            counts[outcome] += 1

    if args.workers == 1:
        # in this process: its warning filters and thread limits are restored after
        from threadpoolctl import threadpool_limits

        with warnings.catch_warnings(), threadpool_limits(1):
            warnings.simplefilter("ignore")
            tally(map(_one, jobs))
    else:
        with get_context("spawn").Pool(args.workers, initializer=_init) as pool:
            tally(pool.imap(_one, jobs, chunksize=4))
    print(dict(counts))
    return 0 if not counts["mismatch"] and not counts["error"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
