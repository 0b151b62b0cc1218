"""wrong_task_type: the model's output does not fit the task.

A regressor evaluated as a classifier returns continuous numbers where class labels
are expected (many distinct values, most of them no class at all); a classifier
evaluated as a regressor can only return the handful of values it saw as classes.
Read from the model's metadata (``output_kind``, ``classes``) and from the predictions'
distribution (for regression: the set the predictions are drawn from, when the metadata
is silent, as for a pyfunc); a crash of the probability path is a weak hint.
"""

from __future__ import annotations

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, pct
from deepfix_agents.rules._ladder import best_baseline
from deepfix_agents.rules._noise import sampling_noise
from deepfix_agents.rules._runtime import crash_detail, crash_score, crashes_for

REGRESSOR_AS_CLASSIFIER = 0.85
CLASSIFIER_AS_REGRESSOR = 0.85
#: a classifier with a few classes on a target with no more values than that (a 0/1
#: target evaluated with model_type="regressor"): the evaluation, not the model, is
#: misconfigured
MISCONFIGURED_EVALUATION = 0.6
#: predictions that are mostly not class labels, without model metadata
UNKNOWN_OUTPUTS = 0.75
PROBA_CRASH = 0.3
#: regression, metadata silent (a pyfunc): the share of test predictions that equal one
#: of the training targets from which the outputs are a classifier's. A regressor
#: averages or weighs its training targets and lands between them; a classifier fitted
#: on the target's values as classes can answer only with one of them, on every row
ANSWERS_ARE_TARGETS = 0.99
#: ... the outputs alone, without a measured cost: a model that rounds its answers onto
#: an integer target's values reads the same (low)
CLASS_ANSWERS_PRESENCE = 0.3
#: ... and scoring below the baseline ladder's best rung on test by more than this many
#: units of a score's sampling noise on the test rows: the measured cost (high)
CLASS_ANSWERS_NOISE_UNITS = 2.0
#: at most this many classes can be a genuinely categorical target
MAX_CATEGORICAL = 10

_PROBA_WORDS = ("predict_proba", "probabilit", "decision_function")


def _label_set(artifact) -> set[str]:
    dataset = artifact.dataset
    labels = set(dataset.test.label_distribution)
    if dataset.train is not None:
        labels |= set(dataset.train.label_distribution)
    return labels - {"<other>"}


#: the two label sets a probability of "class 1" answers
_BINARY_01 = ({"0", "1"}, {"0.0", "1.0"}, {"False", "True"})


UNIT_INTERVAL_FIX = (
    "If `predict` returns the probability of class 1 (a pyfunc wrapping "
    "`predict_proba(X)[:, 1]`), return the labels instead, e.g. "
    "`(p >= threshold).astype(int)` with a threshold chosen on validation data, or log the "
    "estimator with its own flavour (`mlflow.sklearn.log_model`): MLflow then calls "
    "`predict` for labels and `predict_proba` for probabilities."
)


def scores_in_unit_interval(artifact) -> bool:
    """Whether a model of unknown kind (a custom pyfunc: no metadata says regressor)
    returns continuous outputs that all lie in [0, 1] on a binary task whose labels are
    0 and 1 (``PerformanceSummary.output_range``): what a pyfunc wrapping
    ``predict_proba(X)[:, 1]`` returns, and also what a regressor fitted on 0/1 labels
    returns (a tree's leaf means). The outputs alone cannot tell the two apart, so the
    finding names both; a model known to be a regressor keeps the regressor reading."""
    low_high = artifact.performance.output_range
    return (
        artifact.model.output_kind != "continuous"
        and len(low_high) == 2
        and 0.0 <= low_high[0] <= low_high[1] <= 1.0
        and _label_set(artifact) in _BINARY_01
    )


def class_answers(artifact) -> dict | None:
    """A regression model whose metadata is silent (no output kind, no classes: a pyfunc)
    but whose test predictions are all training targets (``in_train_targets`` at least
    ``ANSWERS_ARE_TARGETS``, at least two of them) on a target with more than
    ``MAX_CATEGORICAL`` distinct values: a classifier's answers (each target value
    learned as a class). With ``harmful`` when the model scores below the baseline
    ladder's best rung by more than ``CLASS_ANSWERS_NOISE_UNITS`` sampling-noise units of
    its test score. None otherwise (also without the statistics, from an artifact made
    before they were recorded)."""
    model = artifact.model
    if artifact.task != "regression" or model.output_kind != "unknown" or model.classes:
        return None
    stats = (artifact.performance.prediction_stats or {}).get("test") or {}
    share = stats.get("in_train_targets")
    distinct, targets = stats.get("distinct"), stats.get("train_target_distinct")
    if share is None or distinct is None or targets is None:
        return None
    if share < ANSWERS_ARE_TARGETS or distinct < 2 or targets <= MAX_CATEGORICAL:
        return None
    best, score = best_baseline(artifact), artifact.performance.test_score
    n_test = artifact.dataset.test.n_rows if artifact.dataset.test is not None else 0
    harmful = (
        best is not None and score is not None
        and best.test_score - score > CLASS_ANSWERS_NOISE_UNITS * sampling_noise(n_test)
    )
    return {"share": share, "distinct": int(distinct), "targets": int(targets),
            "harmful": harmful, "best": best, "model_score": score}


def _target_unique(artifact) -> int | None:
    dataset = artifact.dataset
    for split in (dataset.train, dataset.test):
        if split is None:
            continue
        column = split.column(dataset.target)
        if column is not None and column.n_unique:
            return column.n_unique
    return None


@register_rule
class WrongTaskType(Rule):
    id = "wrong_task_type"
    name = "The model's output does not fit the task"
    detects = (
        "A regression model used for a classification task (continuous outputs where class "
        "labels are expected), or a classifier used for a regression task (a few class values"
        " where a continuous quantity is expected)."
    )
    why = (
        "Scores and checks compare predictions with labels of the other kind: a predicted "
        "0.83 never equals class 1, and a classifier cannot predict values it never saw as a "
        "class. The model may even be good, but it answers a different question."
    )
    example = (
        "`RandomForestRegressor` is fitted on 0/1 churn labels and evaluated with "
        "`model_type='classifier'`: its predictions are 0.07, 0.31, 0.92... and accuracy is "
        "near zero; or `DecisionTreeClassifier` is fitted on house prices."
    )
    fixes = (
        "Use an estimator of the right kind: a classifier (`RandomForestClassifier`, "
        "`LogisticRegression`) for class labels, a regressor (`RandomForestRegressor`, "
        "`Ridge`) for continuous targets; `sklearn.base.is_classifier(model)` tells which "
        "you have.",
        "Evaluate with the matching `model_type` in `mlflow.models.evaluate` "
        "(`'classifier'` or `'regressor'`) and make sure the target column is the intended one.",
        "If a score must become a class, do it explicitly and document it, e.g. "
        "`(model.predict(X) >= 0.5).astype(int)` tuned on validation data, or use the "
        "classifier's `predict_proba`.",
    )
    severity_policy = (
        "Fixed scores, because the mismatch is categorical: a regressor (continuous output) "
        "on a classification task 0.85; a classifier on a regression task 0.85, or 0.6 when "
        "it has at most 10 classes and the target no more distinct values than that (the "
        "target is categorical: the evaluation's model_type is wrong); predictions mostly "
        "outside the label set with more distinct values than 2x the classes 0.75 (no "
        "metadata needed); regression with no metadata (a pyfunc): every test prediction "
        "(99%) one of the training targets, on a target with more than 10 distinct values, "
        "0.3, or 0.75 when the model also scores below the baseline ladder's best rung by "
        "more than 2 sampling-noise units; a crash of the probability path 0.3 (a hint)."
    )
    explains = (
        "degenerate_predictions",
        "underfitting",
        "overfitting",
        "poor_calibration",
        "decision_threshold",
        "weak_segment",
        "prediction_drift",
    )

    def detect_model(self, artifact):
        model = artifact.model
        predicted = artifact.performance.prediction_distribution
        if artifact.task != "regression":
            labels = _label_set(artifact)
            outside = sum(v for k, v in predicted.items() if k not in labels)
            distinct = len(predicted)
            if model.output_kind == "continuous":
                detail = (
                    f"{(model.model_class or 'the model').rsplit('.', 1)[-1]} returns continuous "
                    "values, not class labels"
                )
                if predicted:
                    detail += f"; {pct(outside)} of test predictions are not one of the labels"
                yield self.signal(
                    "model",
                    score=REGRESSOR_AS_CLASSIFIER,
                    confidence=0.9,
                    detail=detail,
                    value=outside if predicted else None,
                    direction="regressor_for_classes",
                    outside=outside if predicted else None,
                    estimator=model.model_class,
                    unit_interval=scores_in_unit_interval(artifact),
                )
            elif predicted and labels and outside >= 0.5 and distinct > 2 * max(len(labels), 2):
                yield self.signal(
                    "model",
                    score=UNKNOWN_OUTPUTS,
                    confidence=0.7,
                    detail=(
                        f"{pct(outside)} of test predictions are not one of the {len(labels)} "
                        f"labels ({distinct} distinct predicted values)"
                    ),
                    value=outside,
                    direction="regressor_for_classes",
                    outside=outside,
                    unit_interval=scores_in_unit_interval(artifact),
                )
            return
        answers = class_answers(artifact)
        if answers is not None:
            detail = (
                f"{pct(answers['share'])} of test predictions ({answers['distinct']} distinct "
                f"values) are one of the {answers['targets']} values the training target "
                "takes: the answers of a classifier, which can only name a value it saw as a "
                "class (a regressor lands between them)"
            )
            if answers["harmful"]:
                detail += (
                    f"; it scores {answers['model_score']:.3f} on test vs "
                    f"{answers['best'].test_score:.3f} for the {answers['best'].name} "
                    "baseline"
                )
            yield self.signal(
                "model",
                score=UNKNOWN_OUTPUTS if answers["harmful"] else CLASS_ANSWERS_PRESENCE,
                confidence=0.8 if answers["harmful"] else 0.6,
                detail=detail,
                value=answers["share"],
                direction="class_answers_for_values",
                distinct=answers["distinct"],
                target_unique=answers["targets"],
            )
            return
        if model.output_kind in ("class_labels", "probabilities") or model.classes:
            n_classes = len(model.classes)
            unique = _target_unique(artifact)
            score = CLASSIFIER_AS_REGRESSOR
            if (
                n_classes
                and n_classes <= MAX_CATEGORICAL
                and unique is not None
                and unique <= n_classes
            ):
                score = MISCONFIGURED_EVALUATION
            detail = f"{(model.model_class or 'the model').rsplit('.', 1)[-1]} is a classifier"
            if n_classes:
                detail += f" with {n_classes} classes"
            if unique is not None:
                detail += f"; the target has {unique} distinct values"
            yield self.signal(
                "model",
                score=score,
                confidence=0.9,
                detail=detail,
                value=n_classes or None,
                direction="classifier_for_values",
                n_classes=n_classes,
                target_unique=unique,
                estimator=model.model_class,
            )

    def detect_runtime(self, artifact):
        for failure in crashes_for(artifact, self.id):
            proba = failure.stage.startswith("predict_proba")
            shape = failure.output_shape
            yield self.signal(
                "runtime",
                score=PROBA_CRASH if proba and not shape else crash_score(failure),
                confidence=0.35 if proba and not shape else 0.85,
                detail=crash_detail(failure)
                + (f"; output shape {tuple(shape)} for {failure.shape[:1]} rows" if shape else ""),
                crash=failure.stage,
                output_shape=shape,
                crash_fix=(
                    "Make predict return one value per row (shape (n,)): class labels for a "
                    "classifier, numbers for a regressor; wrap the model in a pyfunc whose "
                    "predict selects the right output."
                    if shape or not proba else
                    "Check that the model's predict_proba fits the task, or log it with a "
                    "pyfunc that returns one column per class."
                ),
            )
            return

    def title(self, signals, artifact):
        direction = self.fact(signals, "direction")
        estimator = (self.fact(signals, "estimator") or "The model").rsplit(".", 1)[-1]
        if direction == "regressor_for_classes":
            if self.fact(signals, "unit_interval"):
                return (
                    f"{estimator} returns scores between 0 and 1, not the class labels 0 and "
                    "1: a probability of class 1, or a regressor's estimate"
                )
            outside = self.fact(signals, "outside")
            tail = f": {pct(outside)} of its predictions are not class labels" if outside else ""
            return f"{estimator} gives continuous outputs for a classification task{tail}"
        if direction == "classifier_for_values":
            n = self.fact(signals, "n_classes")
            classes = f" with {n} classes" if n else ""
            return f"{estimator} is a classifier{classes} evaluated on a regression task"
        if direction == "class_answers_for_values":
            return (
                "Every prediction is one of the training target's values: the model answers "
                "as a classifier on a regression task"
            )
        crash = self.fact(signals, "crash")
        shape = self.fact(signals, "output_shape")
        if crash and shape:
            return (f"The model's output does not fit the task: shape {tuple(shape)} instead "
                    "of one value per row")
        if crash and not crash.startswith("predict_proba"):
            return "The model's output does not fit the task"
        if crash:
            return f"The model's probability output failed ({crash}); check that it fits the task"
        return self.name

    def fix_list(self, signals, artifact):
        """Scores between 0 and 1 on a 0/1 task: first the fix for a pyfunc that returns
        ``predict_proba(X)[:, 1]``, the common way to get there with a real classifier."""
        fixes = super().fix_list(signals, artifact)
        if self.fact(signals, "unit_interval"):
            fixes.insert(0, UNIT_INTERVAL_FIX)
        return fixes

    def explanation(self, signals, artifact):
        if self.fact(signals, "unit_interval"):
            return (
                "The task is to predict the classes 0 and 1, but the model returns numbers "
                "between 0 and 1. A pyfunc that returns `predict_proba(X)[:, 1]` does this, "
                "and so does a regression model fitted on the 0/1 labels. MLflow and deepfix "
                "compare those numbers with the labels: a 0.83 never equals 1, so every "
                "classification score and check is wrong, however good the probabilities "
                "are. Return labels from predict (and the probabilities apart), or use a "
                "classifier."
            )
        if self.fact(signals, "direction") in ("classifier_for_values", "class_answers_for_values"):
            return (
                "The task is to predict a quantity, but the model is a classifier: it treats "
                "every target value it saw as an unrelated category and can only answer with "
                "one of those, never a value in between. Errors are large and the scores "
                "misleading. Use a regressor, or evaluate as a classifier if the target really "
                "is a set of classes."
            )
        return (
            "The task is to predict classes, but the model returns numbers on a continuous "
            "scale, as a regression model does. Those numbers are compared with the class "
            "labels and almost never match, so every classification score is wrong, whatever "
            "the model learned. Use a classifier, or convert the scores to classes explicitly."
        )
