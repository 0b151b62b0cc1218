"""Property-based fuzzing of the evaluator at scale: >= 1,000 random evaluation calls.

Each case (random frame sizes, dtypes, column label types, NaN/inf patterns, label types,
models that raise or return odd shapes, valid and invalid config values; see
``tests/fuzz_cases.py``) goes through ``mlflow.models.evaluate`` on a real sqlite store
and ends as one of: clean refusal, complete run, uncaught crash, half-written run, hang.
Only the first two are acceptable; the others are listed with their case.

    python benchmarks/fuzz.py --cases 1000 [--timeout 120] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path

os.environ.setdefault("DISABLE_DEEPCHECKS_ANONYMOUS_TELEMETRY", "1")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
os.environ["TQDM_DISABLE"] = "1"  # before tqdm is imported: one progress line per 50 cases
os.environ["MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR"] = "false"
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per case")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="write every case's outcome here")
    args = parser.parse_args(argv)

    import mlflow
    from hypothesis import HealthCheck, given, seed, settings

    from tests.fuzz_cases import OUTCOMES, fuzz_cases, run_case

    logging.disable(logging.CRITICAL)
    warnings.simplefilter("ignore")
    folder = tempfile.mkdtemp(prefix="deepfix-fuzz-")
    mlflow.set_tracking_uri(f"sqlite:///{folder}/mlflow.db")
    mlflow.create_experiment("fuzz", artifact_location=Path(folder, "artifacts").as_uri())
    mlflow.set_experiment("fuzz")
    import mlflow_deepfix.checks  # noqa: F401 - import once, outside the timed cases

    records: list[dict] = []
    started = time.perf_counter()

    @seed(args.seed)
    @settings(
        max_examples=args.cases, deadline=None, database=None, derandomize=False,
        suppress_health_check=list(HealthCheck), phases=["generate"],
    )
    @given(case=fuzz_cases())
    def one(case):
        t0 = time.perf_counter()
        result = run_case(case, timeout=args.timeout)
        records.append({"outcome": result.outcome, "detail": result.detail,
                        "traceback": result.traceback,
                        "seconds": round(time.perf_counter() - t0, 2), "case": case.description})
        if len(records) % 50 == 0:
            tally = Counter(r["outcome"] for r in records)
            print(f"{len(records)} cases, {time.perf_counter() - started:.0f} s: {dict(tally)}",
                  file=sys.stderr, flush=True)

    one()
    tally = Counter(r["outcome"] for r in records)
    print(f"deepfix fuzz: {len(records)} cases in {time.perf_counter() - started:.0f} s "
          f"(per-case timeout {args.timeout:.0f} s)")
    for outcome in OUTCOMES:
        print(f"  {outcome:<18} {tally.get(outcome, 0)}")
    bad = [r for r in records if r["outcome"] not in ("clean refusal", "complete run")]
    for record in bad[:25]:
        print(f"- {record['outcome']}: {record['detail']}\n    case: {record['case']}")
    refusals = Counter(r["detail"].split(":")[0] + ": " + r["detail"].split(":", 1)[-1][:70]
                       for r in records if r["outcome"] == "clean refusal")
    print("most frequent refusals:")
    for text, count in refusals.most_common(8):
        print(f"  {count:4d}  {text}")
    if args.json:
        Path(args.json).write_text(json.dumps(records, indent=1, default=str))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
