"""The scale curve: deepfix end to end at 10k / 100k / 1M rows, beside raw Deepchecks.

Each measurement runs in a fresh subprocess (no warm imports, caches or memory shared
between sizes), on the data and model of ``bench_vs_full_suite.py`` (33 features: 30
numeric + 3 categorical, binary label, 70/30 split, HistGradientBoosting pipeline):

* ``deepfix``: ``mlflow.models.evaluate(..., evaluators=["deepfix"])`` on a sqlite
  tracking store, result cache off; wall seconds, the process's CPU seconds during the
  call, and the peak RSS during the call (``VmHWM`` after resetting it through
  ``/proc/self/clear_refs`` just before; the whole process's peak is printed too);
* ``cache``: at one size (``--cache-rows``), the same evaluation twice with the result
  cache on (a fresh cache dir): the first run (miss, stored) and the repeat (hit);
* ``full_suite``: Deepchecks' own ``full_suite().run(train, test, model)`` at
  ``--full-suite-rows`` (skip with ``--skip-full-suite``);
* ``import``: seconds to ``import mlflow_deepfix.checks`` (Deepchecks included) in a
  fresh interpreter, as shipped and with ``rfc3987_syntax`` imported eagerly first (the
  cost before the import-time fix), best of ``--import-repeats``.

Prints a Markdown table for the README, and the load average (the machine is shared).

    python benchmarks/scale_curve.py                        # 10k, 100k, 1M + full_suite
    python benchmarks/scale_curve.py --sizes 10000 100000 --skip-full-suite
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


# ------------------------------------------------------------------------- in a child


def _reset_peak_rss() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def _status_kb(field: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _setup(rows: int, seed: int):
    import bench_vs_full_suite as bench

    train, test = bench.make_data(rows, seed)
    model = bench.train_model(train, seed)
    return bench, train, test, model


def _evaluate_once(bench, model_uri, train, test, seed, cache: bool) -> dict:
    import mlflow

    config = {"train_data": train, "seed": seed, "cache": cache}
    peak_reset = _reset_peak_rss()
    cpu, start = _cpu_seconds(), time.perf_counter()
    with mlflow.start_run() as run:
        result = mlflow.models.evaluate(
            model=model_uri, data=test, targets=bench.LABEL, model_type="classifier",
            evaluators=["deepfix"], evaluator_config={"deepfix": config},
        )
    seconds = time.perf_counter() - start
    artifact = mlflow.artifacts.load_dict(f"runs:/{run.info.run_id}/deepfix/artifact_data.json")
    return {
        "seconds": round(seconds, 2),
        "cpu_seconds": round(_cpu_seconds() - cpu, 2),
        "deepfix_seconds": result.metrics.get("deepfix_duration_seconds"),
        "cache_hit": result.metrics.get("deepfix_cache_hit"),
        "peak_rss_mb": round((_status_kb("VmHWM") or 0) / 1024, 1) if peak_reset else None,
        "rows_seen": {s: (artifact["dataset"].get(s) or {}).get("n_rows")
                      for s in ("train", "test")},
    }


def child_deepfix(rows: int, seed: int, cache_repeat: bool) -> dict:
    import mlflow

    bench, train, test, model = _setup(rows, seed)
    tmp = tempfile.mkdtemp(prefix="deepfix-scale-")
    os.environ["DEEPFIX_CACHE_DIR"] = str(Path(tmp, "cache"))
    mlflow.set_tracking_uri(f"sqlite:///{tmp}/mlflow.db")
    mlflow.set_experiment(experiment_id=mlflow.create_experiment(
        "deepfix-scale", artifact_location=Path(tmp, "artifacts").as_uri()))
    features = [c for c in train.columns if c != bench.LABEL]
    with mlflow.start_run():
        info = mlflow.sklearn.log_model(model, name="model", serialization_format="cloudpickle",
                                        input_example=test[features].head(5))
    out = {"rows": rows, "setup_peak_rss_mb": round((_status_kb("VmHWM") or 0) / 1024, 1)}
    out["evaluate"] = _evaluate_once(bench, info.model_uri, train, test, seed, cache=False)
    if cache_repeat:
        out["cache_first"] = _evaluate_once(bench, info.model_uri, train, test, seed, cache=True)
        out["cache_repeat"] = _evaluate_once(bench, info.model_uri, train, test, seed, cache=True)
    out["process_peak_rss_mb"] = round(
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return out


def child_full_suite(rows: int, seed: int) -> dict:
    import importlib

    import mlflow_deepfix.checks  # noqa: F401 - the compatibility patches, before Deepchecks

    # imported by name, after the line above (an import sorter must not move them up)
    Dataset = importlib.import_module("deepchecks.tabular").Dataset
    full_suite = importlib.import_module("deepchecks.tabular.suites").full_suite

    bench, train, test, model = _setup(rows, seed)
    kwargs = {"label": bench.LABEL, "cat_features": bench.CAT_FEATURES}
    peak_reset = _reset_peak_rss()
    cpu, start = _cpu_seconds(), time.perf_counter()
    full_suite().run(Dataset(train, **kwargs), Dataset(test, **kwargs), model)
    return {
        "rows": rows,
        "seconds": round(time.perf_counter() - start, 2),
        "cpu_seconds": round(_cpu_seconds() - cpu, 2),
        "peak_rss_mb": round((_status_kb("VmHWM") or 0) / 1024, 1) if peak_reset else None,
    }


# ------------------------------------------------------------------------- the parent


def _run_child(args: list[str], timeout: int) -> dict:
    load = os.getloadavg()[0]
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), *args],
        capture_output=True, text=True, timeout=timeout, check=False,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"child {args} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    result = json.loads(lines[-1])
    result["load_before"], result["load_after"] = round(load, 1), round(os.getloadavg()[0], 1)
    return result


def _import_seconds(eager_rfc3987: bool, repeats: int) -> float:
    code = ("import rfc3987_syntax; " if eager_rfc3987 else "") + "import mlflow_deepfix.checks"
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
        best = min(best, time.perf_counter() - start)
    return round(best, 2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache-rows", type=int, default=100_000,
                        help="size at which the cache first run / repeat is measured (0: none)")
    parser.add_argument("--full-suite-rows", type=int, default=100_000)
    parser.add_argument("--skip-full-suite", action="store_true")
    parser.add_argument("--import-repeats", type=int, default=3)
    parser.add_argument("--timeout", type=int, default=1800, help="seconds per child")
    parser.add_argument("--child", choices=("deepfix", "full_suite"), help=argparse.SUPPRESS)
    parser.add_argument("--rows", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--cache-repeat", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    os.environ.setdefault("DISABLE_DEEPCHECKS_ANONYMOUS_TELEMETRY", "1")

    if args.child == "deepfix":
        print(json.dumps(child_deepfix(args.rows, args.seed, args.cache_repeat)))
        return 0
    if args.child == "full_suite":
        print(json.dumps(child_full_suite(args.rows, args.seed)))
        return 0

    print(f"cpus: {os.cpu_count()}, load average at start: {os.getloadavg()}", flush=True)
    results = []
    for rows in args.sizes:
        extra = ["--cache-repeat"] if rows == args.cache_rows else []
        result = _run_child(["--child", "deepfix", "--rows", str(rows), "--seed",
                             str(args.seed), *extra], args.timeout)
        print(json.dumps(result), flush=True)
        results.append(result)
    full = None
    if not args.skip_full_suite:
        full = _run_child(["--child", "full_suite", "--rows", str(args.full_suite_rows),
                           "--seed", str(args.seed)], args.timeout)
        print(json.dumps(full), flush=True)
    imports = {
        "as shipped (rfc3987_syntax deferred)": _import_seconds(False, args.import_repeats),
        "rfc3987_syntax imported eagerly (before)": _import_seconds(True, args.import_repeats),
    }

    print("\n| rows (train + test) | deepfix wall s | CPU s | peak RSS MB (evaluate) "
          "| process peak MB | rows seen (train/test) | load before/after |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        e = r["evaluate"]
        seen = f"{e['rows_seen']['train']:,} / {e['rows_seen']['test']:,}"
        print(f"| {r['rows']:,} | {e['seconds']} | {e['cpu_seconds']} | {e['peak_rss_mb']} "
              f"| {r['process_peak_rss_mb']} | {seen} | {r['load_before']} / {r['load_after']} |")
    if full is not None:
        print(f"| {full['rows']:,}: Deepchecks full_suite | {full['seconds']} "
              f"| {full['cpu_seconds']} | {full['peak_rss_mb']} | | | "
              f"{full['load_before']} / {full['load_after']} |")
    for r in results:
        if "cache_first" in r:
            first, repeat = r["cache_first"], r["cache_repeat"]
            print(f"\nresult cache at {r['rows']:,} rows: first run {first['seconds']} s "
                  f"(deepfix {first['deepfix_seconds']} s, hit={first['cache_hit']}), repeat "
                  f"{repeat['seconds']} s (deepfix {repeat['deepfix_seconds']} s, "
                  f"hit={repeat['cache_hit']})")
    print("\nimport mlflow_deepfix.checks (fresh interpreter, best of "
          f"{args.import_repeats}): " + "; ".join(f"{k}: {v} s" for k, v in imports.items()))
    print(f"load average at end: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
