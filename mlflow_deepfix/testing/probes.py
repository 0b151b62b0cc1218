"""Behaviour probes of the testing step: robustness, confidence by slice, group
disparities and spurious correlations, each on bounded seeded samples.

One entry point, :func:`run_probes`, so the testing step calls them at one place.
A probe that raises is recorded in the notes (``... probe errored: ...``) and the other
probes and the rest of the evaluation go on.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from mlflow_deepfix.schemas import (
    ConfidenceSummary,
    FairnessSummary,
    RobustnessSummary,
    SpuriousSummary,
)

logger = logging.getLogger(__name__)


@dataclass
class ProbeResults:
    robustness: RobustnessSummary | None = None
    confidence: ConfidenceSummary | None = None
    fairness: FairnessSummary | None = None
    spurious: SpuriousSummary | None = None
    notes: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)


def run_probes(
    inputs,
    config,
    test: pd.DataFrame,
    train: pd.DataFrame | None,
    predictions,
    cat_features: list[str],
    importances: dict[str, float],
    *,
    adapter,
) -> ProbeResults:
    """Run every probe that the inputs allow; ``adapter`` is None when predict failed."""
    from mlflow_deepfix.testing.confidence import measure_confidence
    from mlflow_deepfix.testing.fairness import measure_fairness
    from mlflow_deepfix.testing.robustness import measure_robustness
    from mlflow_deepfix.testing.spurious import measure_spurious

    results = ProbeResults()
    if adapter is None or predictions.test is None:
        return results
    target, task = inputs.target, inputs.task
    features = list(inputs.feature_names)
    classes = list(adapter.classes_) if adapter.classes_ is not None else None
    content = inputs.content_column

    def run(name: str, call):
        started = time.perf_counter()
        try:
            setattr(results, name, call())
        except Exception as error:  # noqa: BLE001 - one probe must not sink the evaluation
            logger.warning("%s probe failed: %r", name, error)
            results.notes.append(f"The {name} probe errored ({type(error).__name__}: {error}).")
        results.seconds[name] = round(time.perf_counter() - started, 3)

    run(
        "robustness",
        lambda: measure_robustness(
            adapter.predict,
            test,
            target=target,
            task=task,
            feature_names=[f for f in features if f != content],
            cat_features=cat_features,
            reference=train,
            importances=importances,
            modality=inputs.modality,
            content_column=content,
            seed=config.seed,
            declared_cat_features=list(inputs.cat_features or []),
        ),
    )
    if predictions.proba_test is not None and task != "regression":
        tabular = [f for f in features if f != content]
        run(
            "confidence",
            lambda: measure_confidence(
                test,
                target=target,
                proba=predictions.proba_test,
                predicted=predictions.test,
                feature_names=tabular,
                cat_features=cat_features,
                importances=importances,
                seed=config.seed,
            ),
        )
    if inputs.sensitive_features:
        run(
            "fairness",
            lambda: measure_fairness(
                test,
                target=target,
                task=task,
                predicted=np.asarray(predictions.test),
                sensitive_features=inputs.sensitive_features,
                feature_names=features,
                classes=classes,
            ),
        )
    if train is not None and inputs.modality == "tabular" and len(train) >= 50:
        run(
            "spurious",
            lambda: measure_spurious(
                adapter.predict,
                train,
                test,
                target=target,
                task=task,
                feature_names=features,
                cat_features=cat_features,
                importances=importances,
                classes=classes,
                seed=config.seed,
            ),
        )
    logger.info("deepfix probes: %s", results.seconds)
    return results
