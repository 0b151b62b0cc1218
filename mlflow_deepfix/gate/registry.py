"""Writes to the MLflow model registry and tracking server: the tags on the model
version, the promotion alias, and the experiment of the gate run."""

from __future__ import annotations

import logging
from typing import Any

from mlflow_deepfix.errors import DeepfixInputError
from mlflow_deepfix.gate.result import ModelRef
from mlflow_deepfix.gate.verification import FixVerification
from mlflow_deepfix.schemas import Diagnosis

logger = logging.getLogger(__name__)

#: tags set on the registered model version (and the gate run)
TAG_STATUS = "deepfix.status"
TAG_RUN_ID = "deepfix.run_id"
TAG_TOP_FINDING = "deepfix.top_finding"


def _promote(client: Any, ref: ModelRef, alias: str) -> str:
    client.set_registered_model_alias(ref.name, alias, ref.version)
    logger.info("deepfix gate: alias %r of %r -> version %s", alias, ref.name, ref.version)
    return alias


def _experiment_id(experiment: str | None, client: Any) -> str | None:
    if experiment is None:
        return None
    if not isinstance(experiment, str) or not experiment.strip():
        raise DeepfixInputError(f"experiment must be a non-empty name; got {experiment!r}.")
    found = client.get_experiment_by_name(experiment)
    if found is not None:
        return found.experiment_id
    return client.create_experiment(experiment)


def _tag_version(
    client: Any,
    ref: ModelRef,
    *,
    status: str,
    run_id: str,
    diagnosis: Diagnosis,
    verification: FixVerification | None,
) -> None:
    from mlflow_deepfix.mlflow_io import verdict_tags

    tags = {
        TAG_STATUS: status,
        TAG_RUN_ID: run_id,
        # deepfix.top_finding and deepfix.summary, worded as on the evaluation run
        **verdict_tags(status, diagnosis.findings),
    }
    if verification is not None:
        if verification.repair_rate is not None:
            tags["deepfix.repair_rate"] = f"{verification.repair_rate:.4f}"
        if verification.negative_flip_rate is not None:
            tags["deepfix.negative_flip_rate"] = f"{verification.negative_flip_rate:.4f}"
    for key, value in tags.items():
        client.set_model_version_tag(ref.name, ref.version, key, value)
