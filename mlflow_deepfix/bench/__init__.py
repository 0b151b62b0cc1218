"""The benchmark: :mod:`~mlflow_deepfix.bench.scenarios` (deterministic buggy workflows,
each with the category of its planted bug) and :mod:`~mlflow_deepfix.bench.runner`
(``deepfix bench``: run them through ``mlflow.models.evaluate`` and score the ranking).

The runner's public names are re-exported here, so ``from mlflow_deepfix.bench import
run_bench`` keeps working as it did when the runner was the module ``bench.py``.
"""

from __future__ import annotations

from mlflow_deepfix.bench.runner import (
    BASELINES,
    EXPERIMENT_NAME,
    BenchReport,
    ScenarioResult,
    Summary,
    add_bench_parser,
    baseline_categories,
    deepchecks_mapping,
    findings_categories,
    format_table,
    run_bench,
    run_bench_cli,
    run_scenario,
    summarize,
)

__all__ = [
    "BASELINES",
    "EXPERIMENT_NAME",
    "BenchReport",
    "ScenarioResult",
    "Summary",
    "add_bench_parser",
    "baseline_categories",
    "deepchecks_mapping",
    "findings_categories",
    "format_table",
    "run_bench",
    "run_bench_cli",
    "run_scenario",
    "summarize",
]
