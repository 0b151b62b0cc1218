"""The shared driver of the ``corpus_*_refresh.py`` scripts that re-measure one section
of cached artifacts with the current code, into a new folder: every file of the source
folder is hard-linked into the destination, and the records a script's ``wants`` picks
are re-measured by its ``refresh`` in worker processes and written over their links
(never over the source's files). A record that fails keeps its cached version, and the
failure is printed.

A script calls :func:`run_refresh` from its ``main`` with its own module name; the
workers import that module and call its ``refresh(record) -> (record, status)``.
Statuses ``changed`` and ``mismatch`` are written; ``error`` and ``mismatch`` are printed.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import multiprocessing as mp
import os
import warnings
from collections.abc import Callable
from pathlib import Path

WRITTEN = ("changed", "mismatch")
PRINTED = ("error", "mismatch")


def interventions_sample(case_id: str):
    """(config, inputs, features, rows) of a case's served inputs (deterministic from its
    id, without the bug-free refit): ``rows`` is the training sample the interventions
    draw, exactly as ``run_interventions`` draws it (labelled rows, seeded)."""
    from mlflow_deepfix.bench.corpus.runner import served_inputs
    from mlflow_deepfix.testing.interventions import training_sample
    from mlflow_deepfix.testing.predictions import labelled

    _spec, config, inputs = served_inputs(case_id)
    train = labelled(inputs.train, inputs.target)
    features = [c for c in inputs.feature_names if c != inputs.target]
    return config, inputs, features, training_sample(train, config.seed)


def _work(module: str, paths: list[str], dest: str, queue) -> None:
    warnings.simplefilter("ignore")
    logging.basicConfig(level=logging.ERROR)
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    refresh = importlib.import_module(module).refresh
    for path in paths:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
        try:
            record, status = refresh(record)
        except Exception as error:  # noqa: BLE001 - keep the cached record, say so
            queue.put((Path(path).stem, f"error {type(error).__name__}: {error}"))
            continue
        if status in WRITTEN:
            out = Path(dest) / Path(path).name
            tmp = out.with_suffix(".tmp")
            tmp.write_text(json.dumps(record, default=str), encoding="utf-8")
            tmp.replace(out)  # replaces the hard link, never the source's file
        queue.put((Path(path).stem, status))


def run_refresh(argv: list[str] | None, *, description: str, module: str,
                wants: Callable[[dict], bool], what: str) -> int:
    """Parse ``--source --dest [--workers] [--only]``, link, refresh the records ``wants``
    picks with ``module``'s ``refresh``, and print the counts of each status."""
    parser = argparse.ArgumentParser(description=description)
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
        if wants(json.loads(path.read_text(encoding="utf-8"))):
            todo.append(str(path))
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    chunks = [todo[i::args.workers] for i in range(args.workers)]
    procs = [ctx.Process(target=_work, args=(module, chunk, str(args.dest), queue))
             for chunk in chunks]
    for proc in procs:
        proc.start()
    counts: dict[str, int] = {}
    for done in range(len(todo)):
        case_id, status = queue.get()
        key = status.split(" ")[0]
        counts[key] = counts.get(key, 0) + 1
        if key in PRINTED:
            print(f"{case_id}: {status}", flush=True)
        if done % 200 == 0:
            print(f"{done}/{len(todo)} {counts}", flush=True)
    for proc in procs:
        proc.join()
    print(f"{len(todo)} {what}: {counts}")
    return 0
