"""The MLflow evaluator plugin, registered as ``deepfix`` (entry point group
``mlflow.model_evaluator``).

It only wires the steps together, in one direction (see DESIGN.md): config -> inputs ->
testing -> diagnosis -> output. Each step lives in its own module and takes the
previous step's typed output.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from mlflow.models.evaluation.artifacts import JsonEvaluationArtifact, TextEvaluationArtifact
from mlflow.models.evaluation.base import EvaluationResult, ModelEvaluator

from mlflow_deepfix.config import DeepfixConfig, parse_config
from mlflow_deepfix.inputs import MODEL_TYPES, build_inputs
from mlflow_deepfix.schemas import ArtifactData, Diagnosis, Timings

logger = logging.getLogger(__name__)


class DeepfixEvaluator(ModelEvaluator):
    """Runs Deepchecks on the data and model, diagnoses root causes and logs the result."""

    @classmethod
    def can_evaluate(cls, *, model_type, evaluator_config, **kwargs) -> bool:
        return model_type in MODEL_TYPES

    def evaluate(
        self,
        *,
        model_type,
        dataset,
        run_id,
        evaluator_config,
        model=None,
        extra_metrics=None,
        custom_artifacts=None,
        predictions=None,
        **kwargs,
    ) -> EvaluationResult:
        started = time.perf_counter()
        config = parse_config(evaluator_config)
        # ---- Spark input (issue 13 A): eval_data / Spark tables -> driver samples + full tables
        full_tables, spark_notes = None, []
        if _has_table_input(config, dataset):
            from mlflow_deepfix.inputs.spark import prepare_tables

            dataset, config, full_tables, spark_notes = prepare_tables(
                config, dataset, model, model_type=model_type
            )
        # ---- end of Spark input
        try:
            inputs = build_inputs(
                model=model, dataset=dataset, model_type=model_type, config=config
            )
            inputs.notes.extend(spark_notes)
            logger.info(
                "deepfix: %s task, %d test rows, %s training rows",
                inputs.task,
                len(inputs.test),
                len(inputs.train) if inputs.train is not None else "no",
            )
            return evaluate_inputs(
                inputs, config, run_id=run_id, started=started, full_tables=full_tables
            )
        finally:
            if full_tables is not None:  # Spark tables deepfix cached, also on errors
                full_tables.release()


def _has_table_input(config: DeepfixConfig, dataset: Any) -> bool:
    """eval_data given, a Spark train_data, or a dataset that may be MLflow's cut of a
    Spark ``data`` (exactly its 10,000 rows while pyspark is loaded)."""
    import sys

    if config.eval_data is not None:
        return True
    if "pyspark" not in sys.modules:
        return False
    from mlflow_deepfix.inputs.spark import is_spark_frame, mlflow_spark_limit

    features = getattr(dataset, "features_data", None)
    cut = features is not None and len(features) == mlflow_spark_limit()
    return cut or is_spark_frame(config.train_data)


def evaluate_inputs(
    inputs: Any,
    config: DeepfixConfig,
    *,
    run_id: str,
    started: float | None = None,
    full_tables: Any = None,
) -> EvaluationResult:
    """Testing, diagnosis and output for already validated inputs, with the privacy
    level of ``config`` applied to everything stored and logged."""
    from mlflow_deepfix.privacy import Scrubber, scrubbed_logs

    started = time.perf_counter() if started is None else started
    scrubber = Scrubber((inputs.test, inputs.train), keep=inputs.feature_names)
    with scrubbed_logs(scrubber):
        return _evaluate(
            inputs, config, run_id=run_id, started=started, scrubber=scrubber,
            full_tables=full_tables,
        )


def _evaluate(
    inputs: Any,
    config: DeepfixConfig,
    *,
    run_id: str,
    started: float,
    scrubber: Any,
    full_tables: Any = None,
) -> EvaluationResult:
    """Testing, diagnosis and output (see :func:`evaluate_inputs`)."""
    from deepfix_agents.grounding import prefetch_kb

    from mlflow_deepfix.cache import run_testing_cached
    from mlflow_deepfix.diagnosis import diagnose
    from mlflow_deepfix.mlflow_io import contract_metrics, contract_tags, write_outputs
    from mlflow_deepfix.privacy import protect_artifact, protect_diagnosis
    from mlflow_deepfix.report import render_report

    # Deepchecks is imported (on a cache miss) before the KB's embedding model starts
    # loading in the background: two imports at once only fight over the GIL, while the
    # checks that follow mostly release it.
    kb_future: list = []

    def start_kb() -> None:
        kb_future.append(prefetch_kb(config.kb))

    # Spark input: on a miss the artifact is completed with the full-table statistics
    # and test performance computed in Spark (a hit holds them already)
    artifact, cached = run_testing_cached(
        inputs, config, before_testing=start_kb, full_tables=full_tables
    )
    if not kb_future:
        start_kb()
    # privacy applies before the diagnosis: findings quote only what may be stored
    artifact = protect_artifact(artifact, scrubber, config.privacy)
    diagnosis_started = time.perf_counter()
    diagnosis, extra = diagnose(artifact, config, kb=kb_future[0])
    diagnosis_seconds = time.perf_counter() - diagnosis_started
    diagnosis = protect_diagnosis(diagnosis, scrubber, config.privacy)
    diagnosis = _with_timings(diagnosis, artifact, diagnosis_seconds, started)
    context = extra.get("report_context") or {}
    context.setdefault("footer", []).insert(0, cached.footer)
    report_html = render_report(diagnosis, artifact, context=context)
    metrics = {**contract_metrics(diagnosis), **(extra.get("metrics") or {})}
    metrics["deepfix_cache_hit"] = cache_hit_metric(cached.hit, extra.get("metrics") or {})
    tags = {**contract_tags(diagnosis), **(extra.get("tags") or {})}
    uris = write_outputs(
        run_id,
        diagnosis=diagnosis,
        artifact=artifact,
        report_html=report_html,
        metrics=metrics,
        tags=tags,
    )
    artifacts = {
        "deepfix_findings": JsonEvaluationArtifact(
            uri=uris["findings.json"], content=diagnosis.model_dump(mode="json")
        ),
        "deepfix_artifact_data": JsonEvaluationArtifact(
            uri=uris["artifact_data.json"], content=artifact.model_dump(mode="json")
        ),
        "deepfix_report": TextEvaluationArtifact(uri=uris["report.html"], content=report_html),
    }
    logger.info(
        "deepfix: status=%s, %d findings, top=%s (%.1fs)",
        diagnosis.status,
        len(diagnosis.findings),
        diagnosis.findings[0].category if diagnosis.findings else "none",
        diagnosis.timings.total_seconds,
    )
    return EvaluationResult(metrics=metrics, artifacts=artifacts, run_id=run_id)


def cache_hit_metric(results_hit: bool, llm_metrics: dict[str, float]) -> float:
    """``deepfix_cache_hit``: 1.0 when nothing was recomputed, i.e. the testing step came
    from the results cache and, when an LLM provider reviewed the findings, its review
    came from the LLM cache too (the LLM layer reports its own part under the same name);
    0.0 otherwise, including with ``cache: false``."""
    llm_hit = llm_metrics.get("deepfix_cache_hit", 1.0) == 1.0
    return 1.0 if results_hit and llm_hit else 0.0


def _with_timings(
    diagnosis: Diagnosis, artifact: ArtifactData, diagnosis_seconds: float, started: float
) -> Diagnosis:
    timings = Timings(
        checks_seconds=round(artifact.checks_seconds, 3),
        diagnosis_seconds=round(diagnosis_seconds, 3),
        total_seconds=round(time.perf_counter() - started, 3),
    )
    return diagnosis.model_copy(update={"timings": timings})
