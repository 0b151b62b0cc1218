"""Step 3 of the flow: :class:`EvalInputs` -> :class:`ArtifactData`.

Runs, in this order: one prediction pass per split (captured as runtime information if
the model crashes), then the Deepchecks suites and the baseline ladder side by side,
plus dataset statistics, model metadata and performance, all condensed into typed
artifact data with no raw rows.

Layout: :mod:`~mlflow_deepfix.testing.predictions` (one prediction pass),
:mod:`~.tabular` (tabular suites + baselines + statistics), :mod:`~.content` (text and
image properties and suites), :mod:`~.stats` (dataset statistics by concern),
:mod:`~.baselines`, :mod:`~.performance`, :mod:`~.model_info`, :mod:`~.crash`.
"""

from __future__ import annotations

import logging
import time

from mlflow_deepfix import __version__
from mlflow_deepfix.config import DeepfixConfig
from mlflow_deepfix.inputs import EvalInputs
from mlflow_deepfix.schemas import ArtifactData
from mlflow_deepfix.testing.predictions import Predictions, labelled, predict_all
from mlflow_deepfix.testing.tabular import performance_summary, tabular_tests

__all__ = ["Predictions", "run_testing"]

logger = logging.getLogger(__name__)


def run_testing(
    inputs: EvalInputs, config: DeepfixConfig, *, progress: bool = True
) -> tuple[ArtifactData, Predictions]:
    """Run every test of the testing step and condense the results."""
    from mlflow_deepfix.testing.model_info import describe_model
    from mlflow_deepfix.testing.performance import segment_errors
    from mlflow_deepfix.testing.stats import infer_cat_features

    started = time.perf_counter()
    notes = list(inputs.notes)
    target = inputs.target
    test, train = labelled(inputs.test, target), labelled(inputs.train, target)
    for name, raw, kept in (("data", inputs.test, test), ("train_data", inputs.train, train)):
        if raw is not None and len(kept) < len(raw):
            notes.append(
                f"{len(raw) - len(kept)} rows of {name} without a label were left out of the "
                "model checks."
            )

    feature_names = inputs.feature_names
    cat_features = inputs.cat_features
    if cat_features is None:
        tabular = [c for c in feature_names if c in inputs.test and c != inputs.content_column]
        cat_features = infer_cat_features(inputs.test, tabular)

    contents = None
    if inputs.modality != "tabular":
        from mlflow_deepfix.testing.content import prepare_contents

        # bad text or image cells are a call error: refuse them before the model runs
        contents = prepare_contents(
            {"test": test} if train is None else {"train": train, "test": test},
            modality=inputs.modality,
            column=inputs.content_column,
        )
    predictions, failures = predict_all(inputs, test, train)
    # a signature refusal the raw model got round (ModelAdapter._served_predict) left
    # every prediction in place: the model checks run on them
    predict_failed = any(
        f.stage.startswith("predict:") and not f.served_by_raw_model for f in failures
    )
    if any(f.served_by_raw_model for f in failures):
        notes.append(
            "Predictions come from the raw model: the logged signature refuses the data's "
            "pandas category columns (see the schema_mismatch finding)."
        )
    model_skip_reason = None
    if predict_failed:
        first = next(f for f in failures if f.stage.startswith("predict:"))
        model_skip_reason = f"the model's predict failed ({first.exception_type}: {first.message})"
        notes.append(f"Model checks skipped: {model_skip_reason}.")

    adapter = None if predict_failed else inputs.adapter
    if adapter is not None and adapter.proba_source == "pyfunc_positive":
        notes.append(
            "The model returns the probability of class 1 (a LightGBM or XGBoost booster "
            "with a binary objective): labels are read at 0.5, probabilities as [1 - p, p]."
        )
    if adapter is not None and not adapter.has_proba and inputs.task != "regression":
        notes.append(
            f"Probability-based checks skipped: {adapter.no_proba_reason or 'no predict_proba'}."
        )
    model_info = describe_model(inputs.model, inputs.adapter, feature_names)
    training = _training_history(inputs.model, notes)
    importances = dict(model_info.feature_importances)

    if inputs.modality == "tabular":
        checks, baselines, dataset, segment_frame, segment_features = tabular_tests(
            inputs, config, test, train, predictions, cat_features, importances,
            adapter=adapter, model_skip_reason=model_skip_reason, notes=notes,
            progress=progress,
        )
    else:
        from mlflow_deepfix.testing.content.runner import run_content_tests

        checks, baselines, dataset, segment_frame, segment_features = run_content_tests(
            inputs, config, test, train, contents, predictions, cat_features,
            model_skip_reason=model_skip_reason, notes=notes, progress=progress,
        )
    performance = performance_summary(inputs, test, train, predictions)
    if predictions.test is not None:
        performance.segments = segment_errors(
            segment_frame,
            task=inputs.task,
            y_true=test[target].to_numpy(),
            y_pred=predictions.test,
            features=segment_features,
        )

    # ---- behaviour probes (issue 15): robustness, confidence, fairness, spurious
    from mlflow_deepfix.testing.probes import run_probes

    probes = run_probes(
        inputs, config, test, train, predictions, cat_features, importances, adapter=adapter
    )
    notes.extend(probes.notes)
    # ---- end of behaviour probes
    interventions = []
    if (
        config.interventions
        and inputs.modality == "tabular"
        and adapter is not None
        and predictions.test is not None
    ):
        interventions = _interventions(
            inputs, config, test, train, predictions, dataset, cat_features, notes,
            spurious=probes.spurious,
        )

    artifact = ArtifactData(
        deepfix_version=__version__,
        task=inputs.task,
        modality=inputs.modality,
        seed=config.seed,
        sample_size=config.sample_size,
        dataset=dataset,
        checks=checks,
        model=model_info,
        performance=performance,
        baselines=baselines,
        runtime_failures=failures,
        robustness=probes.robustness,
        confidence=probes.confidence,
        fairness=probes.fairness,
        spurious=probes.spurious,
        probe_seconds=probes.seconds,
        interventions=interventions,
        training=training,
        notes=notes,
        checks_seconds=round(time.perf_counter() - started, 3),
    )
    logger.info("deepfix testing done in %.1fs", artifact.checks_seconds)
    return artifact, predictions


def _training_history(model, notes: list[str]):
    """The model's training curves from its MLflow run (None, with a note, when absent
    or unreadable: the rest of the evaluation goes on)."""
    from mlflow_deepfix.testing.training_history import read_training_history

    try:
        history, note = read_training_history(model)
    except Exception as error:  # noqa: BLE001 - a broken history must not sink the evaluation
        logger.warning("reading the training history failed: %r", error)
        history, note = None, f"Training history errored: {type(error).__name__}: {error}"[:300]
    if note:
        notes.append(note)
    return history


def _interventions(inputs, config, test, train, predictions, dataset, cat_features, notes,
                   spurious=None):
    """Measured harm (:mod:`~.interventions`); never stops the evaluation. The spurious
    probe's shuffle importance on evaluation rows tells which weaker leak candidates the
    model relies on."""
    from mlflow_deepfix.testing.interventions import refit_inputs, run_interventions

    reliance = (
        {f.feature: f.importance_test for f in spurious.features} if spurious is not None else {}
    )
    try:
        found, extra = run_interventions(
            **refit_inputs(inputs, config.seed, train, test, cat_features),
            pred_test=predictions.test,
            dataset=dataset,
            reliance=reliance,
        )
    except Exception as error:  # noqa: BLE001 - measurements are optional evidence
        logger.warning("interventions failed: %s: %s", type(error).__name__, error)
        notes.append(f"Interventions skipped: {type(error).__name__}: {error}")
        return []
    notes.extend(extra)
    from mlflow_deepfix.testing.time_split import time_split_gap

    return found + time_split_gap(inputs, config, test, train, dataset, cat_features)
