"""The scale curve: deepfix end to end at 10k / 100k / 1M rows, beside raw Deepchecks.

Each measurement runs in a fresh subprocess (no warm imports, caches or memory shared
between sizes), on the data of ``bench_vs_full_suite.py`` (33 features: 30 numeric + 3
categorical, binary label) split as issue 13 states it, 80/20 (``--train-fraction``),
with a random forest pipeline (``--model rf``: 100 trees of depth <= 12, fitted on
both cores on at most 100k bootstrap rows per tree, served with scikit-learn's default
``n_jobs``); ``--model hgb --train-fraction 0.7`` is the earlier setup
(HistGradientBoosting, 70/30):

* ``deepfix``: ``mlflow.models.evaluate(..., evaluators=["deepfix"])`` on a sqlite
  tracking store, result cache off; wall seconds, the CPU seconds (user + system, the
  process and its children) during the call, deepfix's own share
  (``deepfix_duration_seconds``; the rest is MLflow loading the model and logging the
  dataset), and the peak RSS during the call (``VmHWM`` after resetting it through
  ``/proc/self/clear_refs`` just before; the whole process's peak is printed too);
* ``cache``: at one size (``--cache-rows``), the same evaluation twice with the result
  cache on (a fresh cache dir): the first run (miss, stored) and the repeat (hit);
* ``full_suite``: Deepchecks' own ``full_suite().run(train, test, model)`` at
  ``--full-suite-rows`` (skip with ``--skip-full-suite``);
* ``import``: seconds to ``import mlflow_deepfix.checks`` (Deepchecks included) in a
  fresh interpreter, as shipped and with ``rfc3987_syntax`` imported eagerly first (the
  cost before the import-time fix), best of ``--import-repeats``.

Prints a Markdown table for the README and the load average (1-minute, before and
after each child: the machine is shared, so CPU seconds are the comparable number);
``--out`` also writes every measurement as JSON.

    python benchmarks/scale_curve.py --out benchmarks/scale_curve.json  # 10k, 100k, 1M
    python benchmarks/scale_curve.py --sizes 100000 --skip-full-suite --cache-rows 0
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
    """User + system CPU seconds of this process and of its waited-for children."""
    return sum(u.ru_utime + u.ru_stime for u in (resource.getrusage(resource.RUSAGE_SELF),
                                                 resource.getrusage(resource.RUSAGE_CHILDREN)))


def _forest(train, seed: int):
    """A random forest pipeline, bounded so that 800k training rows fit in seconds and
    megabytes (depth <= 12, at most 100k bootstrap rows per tree)."""
    import bench_vs_full_suite as bench
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OrdinalEncoder

    features = [c for c in train.columns if c != bench.LABEL]
    numeric = [c for c in features if c not in bench.CAT_FEATURES]
    pre = ColumnTransformer(
        [("cat", OrdinalEncoder(), bench.CAT_FEATURES), ("num", "passthrough", numeric)],
        verbose_feature_names_out=False,
    )
    forest = RandomForestClassifier(
        n_estimators=100, max_depth=12, max_samples=min(1.0, 100_000 / len(train)),
        n_jobs=2, random_state=seed,
    )
    model = Pipeline([("pre", pre), ("clf", forest)]).fit(train[features], train[bench.LABEL])
    return model.set_params(clf__n_jobs=None)  # served as users leave it: one job


def _setup(rows: int, seed: int, model_kind: str, train_fraction: float):
    import bench_vs_full_suite as bench

    train, test = bench.make_data(rows, seed, train_fraction)
    model = _forest(train, seed) if model_kind == "rf" else bench.train_model(train, seed)
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


def child_deepfix(rows: int, seed: int, cache_repeat: bool, model_kind: str,
                  train_fraction: float) -> dict:
    import mlflow

    bench, train, test, model = _setup(rows, seed, model_kind, train_fraction)
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


def child_full_suite(rows: int, seed: int, model_kind: str, train_fraction: float) -> dict:
    import importlib

    import mlflow_deepfix.checks  # noqa: F401 - the compatibility patches, before Deepchecks

    # imported by name, after the line above (an import sorter must not move them up)
    Dataset = importlib.import_module("deepchecks.tabular").Dataset
    full_suite = importlib.import_module("deepchecks.tabular.suites").full_suite

    bench, train, test, model = _setup(rows, seed, model_kind, train_fraction)
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
    print(f"running {' '.join(args)} (load {load:.1f})", file=sys.stderr, flush=True)
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
    parser.add_argument("--model", choices=("rf", "hgb"), default="rf",
                        help="rf: random forest (issue 13's setup); hgb: HistGradientBoosting")
    parser.add_argument("--train-fraction", type=float, default=0.8)
    parser.add_argument("--out", type=Path, help="also write every measurement as JSON here")
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
        print(json.dumps(child_deepfix(args.rows, args.seed, args.cache_repeat, args.model,
                                       args.train_fraction)))
        return 0
    if args.child == "full_suite":
        print(json.dumps(child_full_suite(args.rows, args.seed, args.model,
                                          args.train_fraction)))
        return 0

    load_start = os.getloadavg()
    print(f"cpus: {os.cpu_count()}, load average at start: {load_start}", flush=True)
    common = ["--seed", str(args.seed), "--model", args.model,
              "--train-fraction", str(args.train_fraction)]
    results = []
    for rows in args.sizes:
        extra = ["--cache-repeat"] if rows == args.cache_rows else []
        result = _run_child(["--child", "deepfix", "--rows", str(rows), *common, *extra],
                            args.timeout)
        print(json.dumps(result), flush=True)
        results.append(result)
    full = None
    if not args.skip_full_suite:
        full = _run_child(["--child", "full_suite", "--rows", str(args.full_suite_rows),
                           *common], args.timeout)
        print(json.dumps(full), flush=True)
    imports = {
        "as shipped (rfc3987_syntax deferred)": _import_seconds(False, args.import_repeats),
        "rfc3987_syntax imported eagerly (before)": _import_seconds(True, args.import_repeats),
    }

    print(f"\nmodel: {args.model}, train fraction {args.train_fraction}")
    print("| rows (train + test) | wall s | CPU s | deepfix's own s | peak RSS MB (evaluate) "
          "| process peak MB | rows seen (train/test) | load before/after |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        e = r["evaluate"]
        seen = f"{e['rows_seen']['train']:,} / {e['rows_seen']['test']:,}"
        print(f"| {r['rows']:,} | {e['seconds']} | {e['cpu_seconds']} | {e['deepfix_seconds']} "
              f"| {e['peak_rss_mb']} | {r['process_peak_rss_mb']} | {seen} "
              f"| {r['load_before']} / {r['load_after']} |")
    if full is not None:
        print(f"| {full['rows']:,}: Deepchecks full_suite | {full['seconds']} "
              f"| {full['cpu_seconds']} | | {full['peak_rss_mb']} | | | "
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
    if args.out is not None:
        args.out.write_text(json.dumps({
            "model": args.model, "train_fraction": args.train_fraction, "seed": args.seed,
            "cpus": os.cpu_count(), "load_at_start": load_start, "load_at_end": os.getloadavg(),
            "deepfix": results, "full_suite": full, "import_seconds": imports,
        }, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
