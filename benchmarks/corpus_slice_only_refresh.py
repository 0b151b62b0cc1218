"""Refresh only the ``spurious`` probe section of cached corpus artifacts with the
current probe code (the slice-only form of issue 15 included), into a new folder.

Stage 1 of the corpus caches whole artifacts per testing-code fingerprint; re-running
it to measure a change of one probe costs the whole testing step per case. This script
rebuilds each case (deterministic from its id), re-runs the real input validation and
:func:`mlflow_deepfix.testing.spurious.measure_spurious` exactly as the testing step
calls it (same frames, categorical features, model importances and seed), and writes
the record with that one section replaced. Compare the folders with
``benchmarks/corpus_probes_ab.py --cached-only --cache <folder>``.

    nice -n 10 python benchmarks/corpus_slice_only_refresh.py \
        --ids ids.txt --source DIR --dest NEW_DIR
"""

from __future__ import annotations

import argparse
import json
import logging
import warnings
from pathlib import Path


def refresh(record: dict) -> dict:
    from mlflow_deepfix.bench.corpus.runner import served_inputs
    from mlflow_deepfix.testing.predictions import labelled
    from mlflow_deepfix.testing.spurious import measure_spurious
    from mlflow_deepfix.testing.stats import infer_cat_features

    artifact = record.get("artifact")
    if not artifact or artifact.get("spurious") is None:
        return record
    # the served model and frames only (build_case also refits the workflow without
    # its bug to measure harm: not needed here, and the most expensive part)
    _spec, config, inputs = served_inputs(record["case_id"])
    target = inputs.target
    test, train = labelled(inputs.test, target), labelled(inputs.train, target)
    cat_features = inputs.cat_features
    if cat_features is None:
        tabular = [c for c in inputs.feature_names if c in inputs.test]
        cat_features = infer_cat_features(inputs.test, tabular)
    adapter = inputs.adapter
    summary = measure_spurious(
        adapter.predict, train, test, target=target, task=inputs.task,
        feature_names=list(inputs.feature_names), cat_features=list(cat_features),
        importances=dict(artifact["model"].get("feature_importances") or {}),
        classes=list(adapter.classes_) if adapter.classes_ is not None else None,
        seed=config.seed,
    )
    record = dict(record)
    record["artifact"] = dict(artifact, spurious=summary.model_dump(mode="json"))
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ids", type=Path, required=True)
    parser.add_argument("--source", type=Path, required=True)
    parser.add_argument("--dest", type=Path, required=True)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    logging.basicConfig(level=logging.ERROR)
    from threadpoolctl import threadpool_limits
    from tqdm.auto import tqdm

    threadpool_limits(1)
    args.dest.mkdir(parents=True, exist_ok=True)
    ids = [line.strip() for line in args.ids.read_text().splitlines() if line.strip()]
    found = 0
    for case_id in tqdm(ids, desc="refresh spurious", unit="case"):
        source, dest = args.source / f"{case_id}.json", args.dest / f"{case_id}.json"
        if dest.exists() or not source.exists():
            continue
        record = json.loads(source.read_text(encoding="utf-8"))
        try:
            record = refresh(record)
        except Exception as error:  # noqa: BLE001 - keep the old section, say so
            record["refresh_error"] = f"{type(error).__name__}: {error}"
        spurious = (record.get("artifact") or {}).get("spurious") or {}
        found += bool(spurious.get("slice_only"))
        dest.write_text(json.dumps(record, default=str), encoding="utf-8")
    print(f"{found} cases with a slice-only relation")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
