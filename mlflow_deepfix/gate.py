"""A promotion gate for the MLflow model registry: evaluate a model version with
deepfix, refuse it when it has blocking findings (or, against a baseline, when the fix
broke too much of what the old model got right), tag the version, and only when it
passes move a registry alias such as ``champion``.

Why here: MLflow 3 removed ``validation_thresholds`` from ``evaluate``; thresholds are
now checked with :func:`mlflow.validate_evaluation_results` over
:class:`mlflow.models.MetricThreshold` objects, which is what the gate builds from the
deepfix metrics of CONTRACT.md section 3 (``deepfix_critical_count <= 0`` for
``fail_on="critical"``, ...) and from the fix-verification metrics of
:mod:`mlflow_deepfix.verification` (``deepfix_negative_flip_rate``,
``deepfix_repair_rate``).

Every problem with the call itself (unknown model, unreadable data, missing target
column, inconsistent options) raises :class:`~mlflow_deepfix.errors.DeepfixInputError`
*before* a run is started; the CLI turns it into exit code 2.
"""

from __future__ import annotations

import inspect
import logging
import math
import os
import sys
import time
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from mlflow_deepfix.config import FAIL_ON, parse_config
from mlflow_deepfix.errors import DeepfixInputError
from mlflow_deepfix.schemas import SEVERITY_ORDER, ArtifactData, Diagnosis, Finding, severity_rank
from mlflow_deepfix.verification import FixVerification, verify_fix

logger = logging.getLogger(__name__)

MODEL_TYPES = ("classifier", "regressor")
#: file extensions :func:`load_table` reads
TABLE_EXTENSIONS = (".csv", ".parquet", ".pq")

#: tags set on the registered model version (and the gate run)
TAG_STATUS = "deepfix.status"
TAG_RUN_ID = "deepfix.run_id"
TAG_TOP_FINDING = "deepfix.top_finding"


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class ModelRef:
    """A model URI and, when it names a registered model version, its name/version."""

    uri: str
    name: str | None = None
    version: str | None = None

    @property
    def registered(self) -> bool:
        return self.name is not None and self.version is not None

    @property
    def pinned_uri(self) -> str:
        """``models:/name/<version>``: an alias resolved once, so that moving it while
        the gate runs cannot change which model is evaluated."""
        return f"models:/{self.name}/{self.version}" if self.registered else self.uri

    def describe(self) -> str:
        return f"{self.name} version {self.version}" if self.registered else self.uri


@dataclass
class GateResult:
    """What the gate decided and why.

    ``status`` is the value written to the model version's ``deepfix.status`` tag:
    ``fail`` whenever the gate refused the model, else the evaluation's own status
    (``pass`` or ``warn``, CONTRACT.md section 3).
    """

    passed: bool
    status: str
    run_id: str
    model: ModelRef
    fail_on: str
    metrics: dict[str, float]
    findings: list[Finding]
    blocking_findings: list[Finding]
    #: one line per threshold that was not met (from mlflow.validate_evaluation_results)
    failures: list[str]
    thresholds: dict[str, str]
    promoted_to: str | None = None
    baseline: ModelRef | None = None
    baseline_run_id: str | None = None
    verification: FixVerification | None = None
    duration_seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def top_finding(self) -> str:
        return self.findings[0].category if self.findings else "none"

    def summary(self) -> str:
        """Plain-text summary for the command line."""
        verdict = "PASSED" if self.passed else "FAILED"
        plural = "" if len(self.findings) == 1 else "s"
        headline = (
            f"deepfix gate {verdict}: {self.model.describe()} "
            f"(status {self.status}, {len(self.findings)} finding{plural}, run {self.run_id}, "
            f"{self.duration_seconds:.1f}s)"
        )
        lines = [headline]
        if self.blocking_findings:
            lines.append(f"Blocking findings (fail_on={self.fail_on}):")
            for finding in self.blocking_findings:
                lines.append(
                    f"  #{finding.rank} [{finding.severity}] {finding.category}: {finding.title}"
                )
                if finding.fixes:
                    lines.append(f"      first fix: {finding.fixes[0]}")
        # severity-count failures are explained by the blocking findings above
        other = [
            f for f in self.failures if not any(f"deepfix_{s}_count" in f for s in SEVERITY_ORDER)
        ]
        if other:
            lines.append("Thresholds not met:")
            lines.extend(f"  - {line}" for line in other)
        if self.verification is not None and self.baseline is not None:
            v = self.verification
            metric_parts = [
                f"{name} {v.baseline_metrics[name]:.4f} -> {v.candidate_metrics[name]:.4f}"
                for name in v.candidate_metrics
            ]
            lines.append(f"Fix verification against {self.baseline.describe()}:")
            lines.append("  " + ", ".join(metric_parts))
            lines.append(
                f"  repair rate {_pct(v.repair_rate)} ({v.n_repaired}/{v.n_baseline_wrong}), "
                f"negative flip rate {_pct(v.negative_flip_rate)} "
                f"({v.n_broken}/{v.n_baseline_correct})"
            )
            lines.append(
                f"  findings resolved: {', '.join(v.findings_resolved) or 'none'}; "
                f"introduced: {', '.join(v.findings_introduced) or 'none'}"
            )
        if self.promoted_to:
            lines.append(
                f"Alias {self.promoted_to!r} of {self.model.name!r} now points to version "
                f"{self.model.version}."
            )
        lines.extend(f"Note: {note}" for note in self.notes)
        return "\n".join(lines)


def _pct(value: float | None) -> str:
    return "undefined" if value is None else f"{100 * value:.1f}%"


# --------------------------------------------------------------------------- inputs


def load_table(path: str | os.PathLike, *, name: str = "data") -> pd.DataFrame:
    """Read a CSV or Parquet file (chosen by extension) into a DataFrame."""
    location = Path(path)
    suffix = location.suffix.lower()
    if suffix not in TABLE_EXTENSIONS:
        raise DeepfixInputError(
            f"{name}: cannot read {str(location)!r}: unsupported file extension {suffix!r}; "
            f"accepted: {', '.join(TABLE_EXTENSIONS)}."
        )
    if not location.is_file():
        raise DeepfixInputError(f"{name}: file not found: {str(location)!r}.")
    try:
        if suffix == ".csv":
            return pd.read_csv(location)
        return pd.read_parquet(location)
    except Exception as error:  # noqa: BLE001 - any reader error is a bad input file
        detail = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise DeepfixInputError(
            f"{name}: cannot read {str(location)!r} as {suffix[1:]}: "
            f"{type(error).__name__}{': ' + detail if detail else ''}."
        ) from None


def _as_frame(value: Any, *, name: str) -> pd.DataFrame:
    if isinstance(value, pd.DataFrame):
        return value
    if isinstance(value, (str, os.PathLike)):
        return load_table(value, name=name)
    frame = getattr(value, "df", None)  # mlflow.data datasets
    if isinstance(frame, pd.DataFrame):
        return frame
    raise DeepfixInputError(
        f"{name} must be a pandas DataFrame, an mlflow.data dataset or a path to a "
        f"{'/'.join(e[1:] for e in TABLE_EXTENSIONS)} file; got {type(value).__name__}."
    )


def _check_target(frame: pd.DataFrame, target: str, *, name: str) -> None:
    if len(frame) == 0:
        raise DeepfixInputError(f"{name} is empty (0 rows); the gate needs labelled rows.")
    if target not in frame.columns:
        shown = ", ".join(map(str, list(frame.columns)[:12]))
        more = "..." if frame.shape[1] > 12 else ""
        raise DeepfixInputError(
            f"{name} has no target column {target!r}. Columns found: {shown}{more}."
        )


def resolve_model(uri: str, *, client: Any = None, name: str = "model_uri") -> ModelRef:
    """Check that ``uri`` names an existing model; resolve registry aliases to versions.

    ``models:/name/<version>``, ``models:/name@alias`` and ``models:/name/latest``
    resolve to a registered model version (which the gate tags and may promote); other
    URIs (``runs:/...``, a local path, ``models:/<model_id>``) are accepted as they are.
    """
    from mlflow.exceptions import MlflowException
    from mlflow.store.artifact.utils.models import _parse_model_uri
    from mlflow.tracking import MlflowClient

    if not isinstance(uri, str) or not uri.strip():
        raise DeepfixInputError(
            f"{name} must be a model URI such as 'models:/my-model/3' or "
            f"'models:/my-model@champion'; got {uri!r}."
        )
    uri = uri.strip()
    if not uri.startswith("models:/"):
        return ModelRef(uri=uri)
    try:
        parsed = _parse_model_uri(uri)
    except MlflowException as error:
        raise DeepfixInputError(
            f"{name}={uri!r} is not a valid models:/ URI: {error.message}"
        ) from None
    if parsed.name is None:  # models:/<model_id>: a logged model, not a registry version
        return ModelRef(uri=uri)
    client = client or MlflowClient()
    try:
        if parsed.version is not None:
            version = client.get_model_version(parsed.name, parsed.version).version
        elif parsed.alias is not None:
            version = client.get_model_version_by_alias(parsed.name, parsed.alias).version
        else:
            versions = client.search_model_versions(f"name='{parsed.name}'")
            if not versions:
                raise MlflowException(f"registered model {parsed.name!r} has no versions")
            version = str(max(int(v.version) for v in versions))
    except MlflowException as error:
        message = str(error.message).strip().splitlines()[0]
        raise DeepfixInputError(
            f"{name}={uri!r}: no such registered model version ({message})."
        ) from None
    return ModelRef(uri=uri, name=parsed.name, version=str(version))


def _load_model(ref: ModelRef, *, name: str) -> Any:
    import mlflow.pyfunc

    try:
        return mlflow.pyfunc.load_model(ref.pinned_uri)
    except Exception as error:  # noqa: BLE001 - any load failure means an unusable model URI
        message = str(getattr(error, "message", error)).strip().splitlines()
        raise DeepfixInputError(
            f"{name}={ref.uri!r}: the model cannot be loaded ({type(error).__name__}"
            f"{': ' + message[0] if message else ''})."
        ) from None


def infer_model_type(model: Any, labels: pd.Series) -> str:
    """``classifier`` or ``regressor``, from the raw model when it is a scikit-learn
    estimator, else from the labels (non-numeric or few integer values: classifier;
    non-integer numbers: regressor). Raises when it cannot tell."""
    from mlflow_deepfix.model_adapter import _raw_model

    raw = _raw_model(model)
    if raw is not None:
        try:
            from sklearn.base import is_classifier, is_regressor

            if is_classifier(raw):
                return "classifier"
            if is_regressor(raw):
                return "regressor"
        except Exception as error:  # noqa: BLE001 - not a scikit-learn estimator
            logger.debug("model_type not inferred from %s: %s", type(raw).__name__, error)
        if hasattr(raw, "predict_proba"):
            return "classifier"
    values = labels.dropna()
    if not pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
        return "classifier"
    as_float = values.astype(float)
    if (as_float != as_float.round()).any():
        return "regressor"
    if values.nunique() <= 20:
        return "classifier"
    raise DeepfixInputError(
        "model_type could not be inferred (the labels are integers with "
        f"{values.nunique()} distinct values and the model is not a scikit-learn "
        f"estimator); pass model_type, one of {MODEL_TYPES}."
    )


# --------------------------------------------------------------------------- thresholds


def blocking_severities(fail_on: str) -> tuple[str, ...]:
    """Severities that block promotion: ``fail_on`` and everything more urgent."""
    return SEVERITY_ORDER[: severity_rank(fail_on) + 1]


def build_thresholds(
    fail_on: str,
    *,
    max_negative_flip_rate: float | None = None,
    min_repair_rate: float | None = None,
) -> dict[str, Any]:
    """The gate's thresholds as :class:`mlflow.models.MetricThreshold` objects."""
    from mlflow.models import MetricThreshold

    thresholds = {
        f"deepfix_{severity}_count": MetricThreshold(threshold=0, greater_is_better=False)
        for severity in blocking_severities(fail_on)
    }
    if max_negative_flip_rate is not None:
        thresholds["deepfix_negative_flip_rate"] = MetricThreshold(
            threshold=float(max_negative_flip_rate), greater_is_better=False
        )
    if min_repair_rate is not None:
        thresholds["deepfix_repair_rate"] = MetricThreshold(
            threshold=float(min_repair_rate), greater_is_better=True
        )
    return thresholds


def describe_threshold(threshold: Any) -> str:
    """``"<= 0"`` / ``">= 0.5"``: a MetricThreshold as the comparison it makes."""
    return f"{'>=' if threshold.greater_is_better else '<='} {threshold.threshold:g}"


def check_thresholds(thresholds: dict[str, Any], metrics: dict[str, float]) -> list[str]:
    """Run :func:`mlflow.validate_evaluation_results`; return the failure lines."""
    import mlflow
    from mlflow.models.evaluation import EvaluationResult
    from mlflow.models.evaluation.validation import ModelValidationFailedException

    try:
        mlflow.validate_evaluation_results(
            thresholds, EvaluationResult(metrics=dict(metrics), artifacts={})
        )
    except ModelValidationFailedException as error:
        return [line for line in str(error.message).splitlines() if line.strip()]
    return []


def _check_rate(value: float | None, name: str) -> None:
    if value is None:
        return
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not (math.isfinite(value) and 0.0 <= value <= 1.0)
    ):
        raise DeepfixInputError(f"{name} must be a number between 0 and 1; got {value!r}.")


def _check_options(
    *,
    targets: Any,
    model_type: str | None,
    fail_on: str,
    promote_to: str | None,
    baseline_uri: str | None,
    max_negative_flip_rate: float | None,
    min_repair_rate: float | None,
    tolerance: float | None,
) -> None:
    if not isinstance(targets, str) or not targets:
        raise DeepfixInputError(
            f"targets must be the name of the label column (a non-empty str); got {targets!r}."
        )
    if model_type is not None and model_type not in MODEL_TYPES:
        raise DeepfixInputError(f"model_type must be one of {MODEL_TYPES}; got {model_type!r}.")
    if fail_on not in FAIL_ON:
        raise DeepfixInputError(f"fail_on must be one of {list(FAIL_ON)}; got {fail_on!r}.")
    if promote_to is not None and (not isinstance(promote_to, str) or not promote_to.strip()):
        raise DeepfixInputError(f"promote_to must be a non-empty alias name; got {promote_to!r}.")
    _check_rate(max_negative_flip_rate, "max_negative_flip_rate")
    _check_rate(min_repair_rate, "min_repair_rate")
    if baseline_uri is None:
        for value, option in (
            (max_negative_flip_rate, "max_negative_flip_rate"),
            (min_repair_rate, "min_repair_rate"),
            (tolerance, "tolerance"),
        ):
            if value is not None:
                raise DeepfixInputError(
                    f"{option}={value!r} needs a baseline to compare with; pass baseline_uri "
                    "(e.g. 'models:/my-model@champion')."
                )
    if tolerance is not None and (
        isinstance(tolerance, bool)
        or not isinstance(tolerance, (int, float))
        or not math.isfinite(tolerance)
        or tolerance < 0
    ):
        raise DeepfixInputError(f"tolerance must be a finite number >= 0; got {tolerance!r}.")


def _deepfix_config(
    evaluator_config: dict | None, fail_on: str, train: pd.DataFrame | None
) -> dict:
    if evaluator_config is None:
        evaluator_config = {}
    if not isinstance(evaluator_config, dict):
        raise DeepfixInputError(
            f"evaluator_config must be a dict of deepfix options; got "
            f"{type(evaluator_config).__name__}."
        )
    config = dict(evaluator_config)
    if set(config) == {"deepfix"} and isinstance(config["deepfix"], dict):
        config = dict(config["deepfix"])
    if "fail_on" in config and config["fail_on"] != fail_on:
        logger.warning(
            "evaluator_config fail_on=%r is replaced by the gate's fail_on=%r",
            config["fail_on"],
            fail_on,
        )
    config["fail_on"] = fail_on
    if train is not None:
        config["train_data"] = train
    elif config.get("train_data") is not None:
        config["train_data"] = _as_frame(config["train_data"], name="train_data")
    parse_config(config)  # refuse bad options now, before a run is started
    return config


# --------------------------------------------------------------------------- gate


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
        Registered versions get the tags ``deepfix.status``, ``deepfix.run_id`` and
        ``deepfix.top_finding``; other URIs are evaluated but not tagged.
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
    import mlflow
    from mlflow.tracking import MlflowClient

    started = time.perf_counter()
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

    notes: list[str] = []
    with mlflow.start_run(
        experiment_id=experiment_id,
        run_name=f"deepfix-gate {candidate.describe()}",
        nested=mlflow.active_run() is not None,
        tags={
            "deepfix.gate.model_uri": candidate.uri,
            "deepfix.gate.fail_on": fail_on,
            **({"deepfix.gate.baseline_uri": baseline.uri} if baseline else {}),
        },
    ) as run:
        run_id = run.info.run_id
        logger.info("deepfix gate: evaluating %s in run %s", candidate.describe(), run_id)
        result = _evaluate(candidate_model, frame, targets, model_type, config)
        diagnosis, artifact = _outputs(result)
        metrics = dict(result.metrics)

        verification = baseline_run_id = None
        if baseline is not None:
            verification, baseline_run_id = _verify_against_baseline(
                baseline,
                baseline_model,
                diagnosis,
                frame,
                targets,
                model_type,
                config,
                predictions,
                task=task,
                tolerance=tolerance,
            )
            metrics.update(verification.metrics())
            notes.extend(_drop_undefined_rates(thresholds, verification))

        failures = check_thresholds(thresholds, metrics)
        passed = not failures
        status = "fail" if not passed else diagnosis.status
        blocking = [f for f in diagnosis.findings if f.severity in blocking_severities(fail_on)]
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
            fail_on,
            threshold_text,
            failures,
            verification,
            baseline,
        )

    promoted_to = None
    if candidate.registered:
        _tag_version(
            client,
            candidate,
            status=status,
            run_id=run_id,
            diagnosis=diagnosis,
            verification=verification,
        )
        if passed and promote_to:
            promoted_to = _promote(client, candidate, promote_to)
    if not passed and promote_to:
        notes.append(f"Alias {promote_to!r} was not moved.")
    return GateResult(
        passed=passed,
        status=status,
        run_id=run_id,
        model=candidate,
        fail_on=fail_on,
        metrics=metrics,
        findings=list(diagnosis.findings),
        blocking_findings=blocking,
        failures=failures,
        thresholds=threshold_text,
        promoted_to=promoted_to,
        baseline=baseline,
        baseline_run_id=baseline_run_id,
        verification=verification,
        duration_seconds=round(time.perf_counter() - started, 3),
        notes=notes,
    )


def _verify_against_baseline(
    baseline: ModelRef,
    baseline_model: Any,
    candidate_diagnosis: Diagnosis,
    frame: pd.DataFrame,
    targets: str,
    model_type: str,
    config: dict,
    predictions: dict[str, Any],
    *,
    task: str,
    tolerance: float | None,
) -> tuple[FixVerification, str]:
    """Evaluate the baseline in a nested run (its findings are needed for the
    resolved/introduced comparison) and compare both models' predictions."""
    import mlflow

    with mlflow.start_run(
        run_name=f"deepfix-gate baseline {baseline.describe()}",
        nested=True,
        tags={"deepfix.gate.role": "baseline", "deepfix.gate.model_uri": baseline.uri},
    ) as baseline_run:
        logger.info("deepfix gate: evaluating baseline %s", baseline.describe())
        baseline_result = _evaluate(baseline_model, frame, targets, model_type, config)
    baseline_diagnosis, _ = _outputs(baseline_result)
    verification = verify_fix(
        frame[targets].to_numpy(),
        predictions["baseline"],
        predictions["candidate"],
        task=task,
        baseline_categories=[f.category for f in baseline_diagnosis.findings],
        candidate_categories=[f.category for f in candidate_diagnosis.findings],
        tolerance=tolerance,
    )
    return verification, baseline_run.info.run_id


def _promote(client: Any, ref: ModelRef, alias: str) -> str:
    client.set_registered_model_alias(ref.name, alias, ref.version)
    logger.info("deepfix gate: alias %r of %r -> version %s", alias, ref.name, ref.version)
    return alias


def _drop_undefined_rates(thresholds: dict[str, Any], verification: FixVerification) -> list[str]:
    """An undefined rate cannot fail its threshold: the repair rate when the baseline
    made no mistake (nothing to repair), the NFR when it got no row right (nothing to
    break). Remove those thresholds and say so."""
    notes = []
    undefined = (
        ("deepfix_repair_rate", verification.repair_rate, "the baseline made no mistake"),
        (
            "deepfix_negative_flip_rate",
            verification.negative_flip_rate,
            "the baseline got no row right",
        ),
    )
    for metric, rate, why in undefined:
        if rate is None and metric in thresholds:
            del thresholds[metric]
            notes.append(f"{metric} threshold not checked: the rate is undefined ({why}).")
    return notes


def _task(model_type: str, labels: pd.Series) -> str:
    if model_type == "regressor":
        return "regression"
    return "binary_classification" if labels.nunique() <= 2 else "multiclass_classification"


def _experiment_id(experiment: str | None, client: Any) -> str | None:
    if experiment is None:
        return None
    if not isinstance(experiment, str) or not experiment.strip():
        raise DeepfixInputError(f"experiment must be a non-empty name; got {experiment!r}.")
    found = client.get_experiment_by_name(experiment)
    if found is not None:
        return found.experiment_id
    return client.create_experiment(experiment)


def _evaluate(model: Any, frame: pd.DataFrame, targets: str, model_type: str, config: dict) -> Any:
    import mlflow

    return mlflow.models.evaluate(
        model,
        frame,
        targets=targets,
        model_type=model_type,
        evaluators=["deepfix"],
        evaluator_config={"deepfix": config},
    )


def _outputs(result: Any) -> tuple[Diagnosis, ArtifactData]:
    """The diagnosis and artifact data that the deepfix evaluator returned."""
    diagnosis = Diagnosis.model_validate(result.artifacts["deepfix_findings"].content)
    artifact = ArtifactData.model_validate(result.artifacts["deepfix_artifact_data"].content)
    return diagnosis, artifact


def _predict(model: Any, frame: pd.DataFrame, targets: str, task: str, *, name: str) -> Any:
    """Labels (classification) or values (regression) predicted for every row, through
    the same adapter the evaluator uses (so pyfunc probability outputs become labels).
    A model that cannot predict on ``data`` cannot be compared: that is an input error."""
    from mlflow_deepfix.model_adapter import ModelAdapter, resolve_feature_names

    candidates = [c for c in frame.columns if c != targets]
    features = resolve_feature_names(model, candidates)
    adapter = ModelAdapter(model, features, is_classifier=task != "regression")
    if task != "regression":
        adapter.detect_pyfunc_proba(frame, frame[targets].dropna().to_numpy())
    try:
        return adapter.predict(frame.drop(columns=[targets]))
    except Exception as error:  # noqa: BLE001 - any predict failure makes the comparison moot
        message = str(getattr(error, "message", error)).strip().splitlines()
        raise DeepfixInputError(
            f"{name}: the model cannot predict on data, so the fix cannot be verified "
            f"({type(error).__name__}{': ' + message[0] if message else ''})."
        ) from None


def _rewrite_report(
    run_id: str,
    diagnosis: Diagnosis,
    artifact: ArtifactData,
    passed: bool,
    fail_on: str,
    thresholds: dict[str, str],
    failures: list[str],
    verification: FixVerification | None,
    baseline: ModelRef | None,
) -> None:
    """Log report.html again with a "Promotion gate" (and "Fix verification") section.

    The report is re-rendered from findings.json/artifact_data.json. An LLM provider's
    extra report sections are not kept in those files, so for an LLM diagnosis without
    a baseline the evaluator's report is left as it is (the verdict is in the tags).
    """
    from mlflow_deepfix.mlflow_io import write_report
    from mlflow_deepfix.report import render_report

    if diagnosis.provider != "rules" and verification is None:
        return
    if diagnosis.provider != "rules":
        logger.warning(
            "deepfix gate: report.html re-rendered with the fix verification; the %s "
            "provider's extra report sections are not kept",
            diagnosis.provider,
        )
    gate_rows: list[tuple[str, Any]] = [
        ("verdict", "passed" if passed else "refused"),
        ("blocking severities", ", ".join(blocking_severities(fail_on))),
    ]
    gate_rows.extend((f"threshold {name}", text) for name, text in thresholds.items())
    gate_rows.extend(("not met", line) for line in failures)
    sections = [{"title": "Promotion gate", "rows": gate_rows}]
    if verification is not None:
        rows = list(verification.rows())
        if baseline is not None:
            rows.insert(0, ("baseline", baseline.describe()))
        sections.append({"title": "Fix verification", "rows": rows})
    html = render_report(diagnosis, artifact, context={"sections": sections})
    write_report(run_id, html)


def _tag_version(
    client: Any,
    ref: ModelRef,
    *,
    status: str,
    run_id: str,
    diagnosis: Diagnosis,
    verification: FixVerification | None,
) -> None:
    tags = {
        TAG_STATUS: status,
        TAG_RUN_ID: run_id,
        TAG_TOP_FINDING: diagnosis.findings[0].category if diagnosis.findings else "none",
    }
    if verification is not None:
        if verification.repair_rate is not None:
            tags["deepfix.repair_rate"] = f"{verification.repair_rate:.4f}"
        if verification.negative_flip_rate is not None:
            tags["deepfix.negative_flip_rate"] = f"{verification.negative_flip_rate:.4f}"
    for key, value in tags.items():
        client.set_model_version_tag(ref.name, ref.version, key, value)


class _CallableModule(types.ModuleType):
    """``mlflow_deepfix.gate`` is both this module and the function: importing the
    submodule sets the package attribute ``gate`` to the module, so the module forwards
    calls to :func:`gate` and ``mlflow_deepfix.gate(...)`` works either way."""

    def __call__(self, *args: Any, **kwargs: Any) -> GateResult:
        return gate(*args, **kwargs)


__signature__ = inspect.signature(gate)
sys.modules[__name__].__class__ = _CallableModule
