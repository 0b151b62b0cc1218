"""The scenario library in two stages, like the corpus: test once, re-diagnose in seconds.

Stage 1 builds every tabular scenario and runs the real testing step on it (``build_inputs`` +
``run_testing``, the path of ``mlflow.models.evaluate`` minus MLflow's I/O; the model is
wrapped in an in-memory ``PyFuncModel`` as the corpus does) and caches the
``ArtifactData`` JSON. Stage 2 re-runs only the rules diagnosis, so a rule change is
checked against the whole library in seconds (``deepfix bench`` remains the end-to-end
measurement through MLflow). Deep-learning scenarios (tag ``deep_learning``) log their own
flavour and, for some, training curves: the in-memory tabular wrapper cannot stand in for
them, so both stages count them as "not testable here" and only ``deepfix bench`` measures them.

    python benchmarks/scenario_artifacts.py stage1 --cache DIR     # slow, resumable
    python benchmarks/scenario_artifacts.py score --cache DIR      # seconds
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import time
from pathlib import Path


def stage1(cache: Path, only: list[str] | None = None) -> None:
    from mlflow.models.evaluation.base import EvaluationDataset
    from threadpoolctl import threadpool_limits

    from mlflow_deepfix.bench.corpus.models import as_pyfunc
    from mlflow_deepfix.bench.scenarios import all_scenarios
    from mlflow_deepfix.config import parse_config
    from mlflow_deepfix.inputs import build_inputs
    from mlflow_deepfix.testing import run_testing

    threadpool_limits(1)
    cache.mkdir(parents=True, exist_ok=True)
    for scenario in all_scenarios():
        path = cache / f"{scenario.id}.json"
        if path.exists() or (only and not any(o in scenario.id for o in only)):
            continue
        if _needs_own_flavour(scenario.id):
            continue
        record = {"id": scenario.id, "expected": scenario.expected}
        started = time.perf_counter()
        try:
            data = scenario.build(0)
            features = data.train[[c for c in data.feature_names if c in data.train.columns]]
            config = parse_config({"seed": 0, "cache": False, "kb": False, **data.config,
                                   "train_data": data.train})
            inputs = build_inputs(
                model=as_pyfunc(data.model, features),
                dataset=EvaluationDataset(data.test, targets=data.target, name="scenario"),
                model_type=data.model_type, config=config,
            )
            artifact, _ = run_testing(inputs, config, progress=False)
            record["artifact"] = artifact.model_dump(mode="json")
        except Exception as error:  # noqa: BLE001 - recorded, the next scenario goes on
            record["error"] = f"{type(error).__name__}: {error}"
        record["seconds"] = round(time.perf_counter() - started, 2)
        path.write_text(json.dumps(record, default=str))
        print(f"{scenario.id} {record['seconds']}s {record.get('error', '')}", flush=True)


@functools.cache
def _scenario_tags() -> dict[str, tuple[str, ...]]:
    from mlflow_deepfix.bench.scenarios import all_scenarios

    return {s.id: s.tags for s in all_scenarios()}


def _needs_own_flavour(scenario_id: str) -> bool:
    """Deep-learning scenarios: their model is logged with its own flavour (torch, a
    transformer pyfunc), which the tabular stand-in of stage 1 does not reproduce."""
    return "deep_learning" in _scenario_tags().get(scenario_id, ())


def score(cache: Path, verbose: bool, calibration: bool = True) -> int:
    from deepfix_agents import diagnose_with_rules

    from mlflow_deepfix.schemas import ArtifactData

    hits = total = clean = alarms = errors = 0
    for path in sorted(cache.glob("*.json")):
        record = json.loads(path.read_text())
        if "artifact" not in record or _needs_own_flavour(record["id"]):
            errors += 1
            continue
        findings = diagnose_with_rules(ArtifactData.model_validate(record["artifact"]),
                                       calibration=calibration).findings
        cats = list(dict.fromkeys(f.category for f in findings))
        loud = [f"{f.category}:{f.severity}" for f in findings
                if f.severity in ("critical", "high", "medium")]
        if record["expected"] is None:
            clean += 1
            alarms += bool(loud)
            if loud and verbose:
                print(f"CLEAN ALARM {record['id']}: {loud}")
            continue
        total += 1
        ok = bool(cats) and cats[0] == record["expected"]
        hits += ok
        if not ok and verbose:
            print(f"MISS {record['id']}: got {cats[:4]}")
    print(f"scenario library (cached artifacts, {'calibrated' if calibration else 'rules only'}): top-1 {hits}/{total} = {hits / max(total, 1):.3f};"
          f" clean controls with medium+ {alarms}/{clean}; not testable here {errors}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("stage1", "score"))
    parser.add_argument("--cache", required=True, metavar="DIR",
                        help="where stage 1 caches the scenario artifacts")
    parser.add_argument("-q", "--quiet", action="store_true")
    parser.add_argument("--only", action="append", help="stage1: ids containing this only")
    parser.add_argument("--rules-only", action="store_true",
                        help="score: the rules without the learned calibration (the "
                             "evaluator's default has it on)")
    args = parser.parse_args(argv)
    if args.command == "stage1":
        stage1(Path(args.cache), args.only)
        return 0
    return score(Path(args.cache), not args.quiet, calibration=not args.rules_only)


if __name__ == "__main__":
    sys.exit(main())
