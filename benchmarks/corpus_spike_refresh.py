"""Refresh only the spike typicality of cached corpus artifacts (the ``rows_auc``,
``rows_auc_noise``, ``column_r2`` and ``spike_rows`` values of their ``impute_sentinel``
interventions) with the current code, into a new folder.

Stage 1 caches whole artifacts per testing-code fingerprint. Stop 56 added one
measurement to the spike refit: how ordinary the spike's training rows are
(:mod:`mlflow_deepfix.testing.spike_typicality`). It reads only the training sample the
interventions draw, so this script rebuilds each case's served inputs (deterministic
from its id, without the bug-free refit), draws that sample exactly as
``run_interventions`` does, measures every spike the artifact refitted, and writes the
record with those values added. Every other file is hard-linked from the source folder,
unchanged. A spike whose refit is absent (budget, a missing column) is left as it is.

    python benchmarks/corpus_spike_refresh.py --source DIR --dest NEW_DIR [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import logging
import multiprocessing as mp
import os
import warnings
from pathlib import Path


def spike_items(artifact: dict) -> list[dict]:
    return [i for i in artifact.get("interventions") or [] if i.get("kind") == "impute_sentinel"]


def refresh(record: dict) -> tuple[dict, str]:
    """The record with its spike refits' typicality measured, and ``changed`` or
    ``untouched``."""
    from mlflow_deepfix.bench.corpus.runner import served_inputs
    from mlflow_deepfix.testing.interventions import MAX_TRAIN_ROWS
    from mlflow_deepfix.testing.predictions import labelled
    from mlflow_deepfix.testing.spike_typicality import spike_typicality
    from mlflow_deepfix.testing.stats.sampling import sample_index

    artifact = record.get("artifact")
    if not artifact or not spike_items(artifact):
        return record, "untouched"
    _spec, config, inputs = served_inputs(record["case_id"])
    target = inputs.target
    train = labelled(inputs.train, target)
    features = [c for c in inputs.feature_names if c != target]
    rows = train.iloc[sample_index(len(train), MAX_TRAIN_ROWS, config.seed)]
    rows = rows.reset_index(drop=True)[features]
    items = []
    for item in artifact["interventions"]:
        item = dict(item)
        if item.get("kind") == "impute_sentinel":
            values = dict(item.get("values") or {})
            found = spike_typicality(rows, item["target"], float(values.get("value", 0.0)),
                                     config.seed)
            values.update(found or {})
            item["values"] = values
        items.append(item)
    record = dict(record)
    record["artifact"] = dict(artifact, interventions=items)
    return record, "changed"


def _work(paths: list[str], dest: str, queue) -> None:
    warnings.simplefilter("ignore")
    logging.basicConfig(level=logging.ERROR)
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    for path in paths:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
        try:
            record, status = refresh(record)
        except Exception as error:  # noqa: BLE001 - keep the cached record, say so
            queue.put((Path(path).stem, f"error {type(error).__name__}: {error}"))
            continue
        if status == "changed":
            out = Path(dest) / Path(path).name
            tmp = out.with_suffix(".tmp")
            tmp.write_text(json.dumps(record, default=str), encoding="utf-8")
            tmp.replace(out)  # replaces the hard link, never the source's file
        queue.put((Path(path).stem, status))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, required=True)
    parser.add_argument("--dest", type=Path, required=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", default="", help="refresh only case ids containing this")
    args = parser.parse_args(argv)
    args.dest.mkdir(parents=True, exist_ok=True)
    todo = []
    for path in sorted(args.source.glob("*.json")):
        target = args.dest / path.name
        if not target.exists():
            os.link(path, target)
        if args.only and args.only not in path.stem:
            continue
        record = json.loads(path.read_text(encoding="utf-8"))
        if record.get("artifact") and spike_items(record["artifact"]):
            todo.append(str(path))
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    chunks = [todo[i::args.workers] for i in range(args.workers)]
    procs = [ctx.Process(target=_work, args=(chunk, str(args.dest), queue)) for chunk in chunks]
    for proc in procs:
        proc.start()
    counts: dict[str, int] = {}
    for done in range(len(todo)):
        case_id, status = queue.get()
        key = status.split(" ")[0]
        counts[key] = counts.get(key, 0) + 1
        if key == "error":
            print(f"{case_id}: {status}", flush=True)
        if done % 200 == 0:
            print(f"{done}/{len(todo)} {counts}", flush=True)
    for proc in procs:
        proc.join()
    print(f"{len(todo)} cases with spike refits: {counts}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
