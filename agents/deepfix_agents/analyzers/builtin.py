"""The built-in analyzers of DeepFix's architecture (paper II-A2), plus two of ours."""

from __future__ import annotations

from deepfix_agents.analyzers import register_analyzer
from deepfix_agents.analyzers._base import RuleSourceAnalyzer


@register_analyzer
class DatasetAnalyzer(RuleSourceAnalyzer):
    id = "dataset"
    description = (
        "Dataset statistics: class balance, nulls, cardinality, constant columns, "
        "duplicates, scale of features, split sizes and split comparison."
    )
    source = "dataset"


@register_analyzer
class DeepchecksAnalyzer(RuleSourceAnalyzer):
    id = "deepchecks"
    description = "Deepchecks outcomes and their values: integrity, drift, performance checks."
    source = "deepchecks"


@register_analyzer
class ModelCheckpointAnalyzer(RuleSourceAnalyzer):
    id = "model"
    description = (
        "Model metadata and behaviour: flavor, class, hyperparameters, pipeline steps, "
        "whether preprocessing is inside the model, output type versus task, scores."
    )
    source = "model"


@register_analyzer
class BaselineAnalyzer(RuleSourceAnalyzer):
    id = "baseline"
    description = (
        "The baseline ladder: dummy, linear and small-tree models cross-validated on the "
        "training data, compared with the user's model on test."
    )
    source = "baseline"


@register_analyzer
class RuntimeAnalyzer(RuleSourceAnalyzer):
    id = "runtime"
    description = "Crash diagnosis: runtime information captured when the model's predict failed."
    source = "runtime"


@register_analyzer
class InterventionAnalyzer(RuleSourceAnalyzer):
    id = "intervention"
    description = (
        "Measured harm: the model against chance, its score on affected rows against the "
        "rest, and counterfactual refits of a clone with a suspected cause removed."
    )
    source = "intervention"


@register_analyzer
class TrainingHistoryAnalyzer(RuleSourceAnalyzer):
    id = "training"
    description = (
        "The model's training history from its MLflow run: loss and accuracy curves per "
        "step or epoch, NaN/inf values, learning rate, epochs and early stopping."
    )
    source = "training"
