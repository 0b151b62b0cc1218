"""Benchmark of the deep-learning scenarios: rank of the planted bug, loud findings on
the clean controls, and where the time goes (build = training / encoding, evaluate =
``mlflow.models.evaluate`` with deepfix), plus the process's CPU time.

Run: ``python benchmarks/deep_learning_scenarios.py [--out results.json] [--seed 0]``

The four scenarios are the ``deep_learning``-tagged ones of the bench library (a torch
CNN logged with ``mlflow.pytorch``, a frozen MiniLM + linear head logged as a pyfunc,
each with a planted bug and a clean control). CPU time next to wall time tells a
loaded machine's numbers apart from an idle one's.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write the results as JSON here")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    from mlflow_deepfix.bench.runner import run_bench
    from mlflow_deepfix.bench.scenarios import all_scenarios

    scenarios = [s for s in all_scenarios() if "deep_learning" in s.tags]
    rows = []
    for scenario in scenarios:
        wall, cpu = time.perf_counter(), time.process_time()
        (result,) = run_bench([scenario], seed=args.seed, progress=False).results
        rows.append({
            "scenario": scenario.id, "expected": scenario.expected, "rank": result.rank,
            "top1": result.top1, "medium_or_worse": result.n_medium_or_worse,
            "error": result.error, "build_s": round(result.build_seconds, 1),
            "evaluate_s": round(result.seconds, 1),
            "wall_s": round(time.perf_counter() - wall, 1),
            "cpu_s": round(time.process_time() - cpu, 1),
        })
        print(json.dumps(rows[-1]), flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return {"results": rows}


if __name__ == "__main__":
    main()
