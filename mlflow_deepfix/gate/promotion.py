"""The promotion gate, step by step: check the call (:func:`_prepare`), evaluate the
candidate (and the baseline) in one gate run and judge it (:func:`_judge_in_run`), then
tag the registry version and move the alias (:func:`_publish`).

Every step before :func:`_judge_in_run` may raise :class:`DeepfixInputError`; none of
them starts a run, so a bad call never leaves a half-written run behind.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from mlflow_deepfix.errors import DeepfixInputError
from mlflow_deepfix.gate.evaluation import _evaluate, _outputs, _verify_against_baseline
from mlflow_deepfix.gate.models import _load_model, _predict, _task, infer_model_type, resolve_model
from mlflow_deepfix.gate.options import _as_frame, _check_options, _check_target, _deepfix_config
from mlflow_deepfix.gate.registry import _experiment_id, _promote, _tag_version
from mlflow_deepfix.gate.report import _rewrite_report
from mlflow_deepfix.gate.result import GateResult, ModelRef
from mlflow_deepfix.gate.thresholds import (
    _drop_undefined_rates,
    blocking_severities,
    build_thresholds,
    check_thresholds,
    describe_threshold,
)
from mlflow_deepfix.gate.verification import FixVerification
from mlflow_deepfix.schemas import Diagnosis, Finding

logger = logging.getLogger(__name__)


@dataclass
class _Call:
    """The checked call: everything resolved and loaded before any run is started."""

    frame: pd.DataFrame
    targets: str
    model_type: str
    task: str
    config: dict
    fail_on: str
    promote_to: str | None
    tolerance: float | None
    client: Any
    candidate: ModelRef
    candidate_model: Any
    baseline: ModelRef | None
    baseline_model: Any
    #: both models' predictions on ``frame`` (only with a baseline)
    predictions: dict[str, Any]
    experiment_id: str | None
    thresholds: dict[str, Any]


@dataclass
class _Verdict:
    """What the gate run measured and decided."""

    run_id: str
    diagnosis: Diagnosis
    metrics: dict[str, float]
    failures: list[str]
    passed: bool
    status: str
    blocking: list[Finding]
    threshold_text: dict[str, str]
    verification: FixVerification | None = None
    baseline_run_id: str | None = None
    notes: list[str] = field(default_factory=list)


def gate(
    model_uri: str,
    data: Any,
    *,
    targets: str,
    model_type: str | None = None,
    train_data: Any = None,
    fail_on: str = "critical",
    promote_to: str | None = None,
    baseline_uri: str | None = None,
    max_negative_flip_rate: float | None = None,
    min_repair_rate: float | None = None,
    tolerance: float | None = None,
    evaluator_config: dict | None = None,
    experiment: str | None = None,
) -> GateResult:
    """Evaluate a model with deepfix and decide whether it may be promoted.

    Parameters
    ----------
    model_uri : str
        The candidate, e.g. ``"models:/churn/3"`` or ``"models:/churn@challenger"``.
        Registered versions get the tags ``deepfix.status``, ``deepfix.run_id``,
        ``deepfix.top_finding`` and ``deepfix.summary``; other URIs are evaluated but
        not tagged.
    data : DataFrame, mlflow.data dataset or path to a .csv/.parquet file
        Labelled evaluation rows (the same rows are used for the baseline).
    targets : str
        The label column.
    model_type : {"classifier", "regressor"}, optional
        Inferred from a scikit-learn model, else from the labels, when left out.
    train_data : DataFrame or path, optional
        The training split, for the train/test checks (else taken from the model's run
        lineage when possible).
    fail_on : {"critical", "high", "medium", "low"}
        Findings at or above this severity block promotion.
    promote_to : str, optional
        Registry alias to point at the candidate when (and only when) it passes.
    baseline_uri : str, optional
        The model to compare with (usually ``"models:/churn@champion"``): adds fix
        verification (repair rate, negative flip rate, main metric of both, findings
        resolved/introduced) to the gate run.
    max_negative_flip_rate, min_repair_rate : float in [0, 1], optional
        Thresholds on the fix verification (need ``baseline_uri``).
    tolerance : float, optional
        Regression fix verification only: absolute error under which a prediction
        counts as correct (default: the baseline's median absolute error).
    evaluator_config : dict, optional
        Further deepfix options (CONTRACT.md section 2), e.g. ``{"suites": [...]}``.
    experiment : str, optional
        Experiment name for the gate run (created when missing); default: the active one.

    Returns
    -------
    GateResult
        ``passed`` tells the verdict; the gate run holds the deepfix outputs.

    Raises
    ------
    DeepfixInputError
        For problems with the call (unknown model, unreadable data, missing column...),
        before any run is started.
    """
    started = time.perf_counter()
    call = _prepare(
        model_uri,
        data,
        targets=targets,
        model_type=model_type,
        train_data=train_data,
        fail_on=fail_on,
        promote_to=promote_to,
        baseline_uri=baseline_uri,
        max_negative_flip_rate=max_negative_flip_rate,
        min_repair_rate=min_repair_rate,
        tolerance=tolerance,
        evaluator_config=evaluator_config,
        experiment=experiment,
    )
    verdict = _judge_in_run(call)
    promoted_to = _publish(call, verdict)
    return GateResult(
        passed=verdict.passed,
        status=verdict.status,
        run_id=verdict.run_id,
        model=call.candidate,
        fail_on=fail_on,
        metrics=verdict.metrics,
        findings=list(verdict.diagnosis.findings),
        blocking_findings=verdict.blocking,
        failures=verdict.failures,
        thresholds=verdict.threshold_text,
        promoted_to=promoted_to,
        baseline=call.baseline,
        baseline_run_id=verdict.baseline_run_id,
        verification=verdict.verification,
        duration_seconds=round(time.perf_counter() - started, 3),
        notes=verdict.notes,
    )


def _prepare(
    model_uri: str,
    data: Any,
    *,
    targets: str,
    model_type: str | None,
    train_data: Any,
    fail_on: str,
    promote_to: str | None,
    baseline_uri: str | None,
    max_negative_flip_rate: float | None,
    min_repair_rate: float | None,
    tolerance: float | None,
    evaluator_config: dict | None,
    experiment: str | None,
) -> _Call:
    """Check options and data, resolve and load both models, and predict with them when
    they are to be compared: a model that cannot predict is an input error, raised
    before any run exists."""
    from mlflow.tracking import MlflowClient

    _check_options(
        targets=targets,
        model_type=model_type,
        fail_on=fail_on,
        promote_to=promote_to,
        baseline_uri=baseline_uri,
        max_negative_flip_rate=max_negative_flip_rate,
        min_repair_rate=min_repair_rate,
        tolerance=tolerance,
    )
    frame = _as_frame(data, name="data")
    if len(frame) == 0:  # refused before MLflow's dataset digest fails on it
        raise DeepfixInputError(
            "data is empty (0 rows): the gate needs labelled evaluation rows; check the file "
            "or the filter that produced it."
        )
    _check_target(frame, targets, name="data")
    train = _as_frame(train_data, name="train_data") if train_data is not None else None
    if train is not None:
        _check_target(train, targets, name="train_data")
    config = _deepfix_config(evaluator_config, fail_on, train)

    client = MlflowClient()
    candidate = resolve_model(model_uri, client=client, name="model_uri")
    if promote_to is not None and not candidate.registered:
        raise DeepfixInputError(
            f"promote_to={promote_to!r} needs a registered model version; model_uri="
            f"{model_uri!r} is not one (use 'models:/<name>/<version>')."
        )
    baseline = (
        resolve_model(baseline_uri, client=client, name="baseline_uri") if baseline_uri else None
    )
    candidate_model = _load_model(candidate, name="model_uri")
    baseline_model = _load_model(baseline, name="baseline_uri") if baseline else None
    if model_type is None:
        model_type = infer_model_type(candidate_model, frame[targets])
        logger.info("deepfix gate: model_type inferred as %r", model_type)
    task = _task(model_type, frame[targets])
    predictions = {}
    if baseline is not None:  # before any run: a model that cannot predict is an input error
        predictions["baseline"] = _predict(
            baseline_model, frame, targets, task, name="baseline_uri"
        )
        predictions["candidate"] = _predict(candidate_model, frame, targets, task, name="model_uri")
    experiment_id = _experiment_id(experiment, client)
    thresholds = build_thresholds(
        fail_on, max_negative_flip_rate=max_negative_flip_rate, min_repair_rate=min_repair_rate
    )
    return _Call(
        frame=frame,
        targets=targets,
        model_type=model_type,
        task=task,
        config=config,
        fail_on=fail_on,
        promote_to=promote_to,
        tolerance=tolerance,
        client=client,
        candidate=candidate,
        candidate_model=candidate_model,
        baseline=baseline,
        baseline_model=baseline_model,
        predictions=predictions,
        experiment_id=experiment_id,
        thresholds=thresholds,
    )


def _judge_in_run(call: _Call) -> _Verdict:
    """One gate run: evaluate the candidate (and the baseline, nested), check the
    thresholds, log the gate's metrics and tags, and re-render report.html."""
    import mlflow

    candidate, baseline, thresholds = call.candidate, call.baseline, call.thresholds
    notes: list[str] = []
    with mlflow.start_run(
        experiment_id=call.experiment_id,
        run_name=f"deepfix-gate {candidate.describe()}",
        nested=mlflow.active_run() is not None,
        tags={
            "deepfix.gate.model_uri": candidate.uri,
            "deepfix.gate.fail_on": call.fail_on,
            **({"deepfix.gate.baseline_uri": baseline.uri} if baseline else {}),
        },
    ) as run:
        run_id = run.info.run_id
        logger.info("deepfix gate: evaluating %s in run %s", candidate.describe(), run_id)
        result = _evaluate(
            call.candidate_model, call.frame, call.targets, call.model_type, call.config
        )
        diagnosis, artifact = _outputs(result)
        metrics = dict(result.metrics)

        verification = baseline_run_id = None
        if baseline is not None:
            verification, baseline_run_id = _verify_against_baseline(
                baseline,
                call.baseline_model,
                diagnosis,
                call.frame,
                call.targets,
                call.model_type,
                call.config,
                call.predictions,
                task=call.task,
                tolerance=call.tolerance,
            )
            metrics.update(verification.metrics())
            notes.extend(_drop_undefined_rates(thresholds, verification))

        failures = check_thresholds(thresholds, metrics)
        passed = not failures
        status = "fail" if not passed else diagnosis.status
        blocking = [
            f for f in diagnosis.findings if f.severity in blocking_severities(call.fail_on)
        ]
        metrics["deepfix_gate_passed"] = 1.0 if passed else 0.0
        mlflow.log_metrics(
            {k: v for k, v in metrics.items() if k not in result.metrics}, run_id=run_id
        )
        mlflow.set_tags(
            {
                "deepfix.gate.result": "passed" if passed else "failed",
                **({"deepfix.gate.baseline_run_id": baseline_run_id} if baseline_run_id else {}),
            }
        )
        threshold_text = {name: describe_threshold(t) for name, t in thresholds.items()}
        _rewrite_report(
            run_id,
            diagnosis,
            artifact,
            passed,
            call.fail_on,
            threshold_text,
            failures,
            verification,
            baseline,
        )
    return _Verdict(
        run_id=run_id,
        diagnosis=diagnosis,
        metrics=metrics,
        failures=failures,
        passed=passed,
        status=status,
        blocking=blocking,
        threshold_text=threshold_text,
        verification=verification,
        baseline_run_id=baseline_run_id,
        notes=notes,
    )


def _publish(call: _Call, verdict: _Verdict) -> str | None:
    """Tag the registered version with the verdict; move the alias only when it passed.
    Returns the alias moved, if any (and notes on ``verdict`` when one was not)."""
    promoted_to = None
    if call.candidate.registered:
        _tag_version(
            call.client,
            call.candidate,
            status=verdict.status,
            run_id=verdict.run_id,
            diagnosis=verdict.diagnosis,
            verification=verdict.verification,
        )
        if verdict.passed and call.promote_to:
            promoted_to = _promote(call.client, call.candidate, call.promote_to)
    if not verdict.passed and call.promote_to:
        verdict.notes.append(f"Alias {call.promote_to!r} was not moved.")
    return promoted_to
