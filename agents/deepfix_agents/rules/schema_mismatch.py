"""schema_mismatch: columns or types differ between splits or from what the model expects."""

from __future__ import annotations

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule
from deepfix_agents.rules._runtime import (
    category_dtype_refused,
    classify,
    crash_detail,
    crash_score,
    crashes_for,
    input_unseen_counts,
    missing_columns,
    retyped_columns,
)


def retyped_crash(failure) -> bool:
    """A crash on \"unseen categories\" that all sit in columns retyped from numbers to
    text: the changed schema made the values new. Only the model's input columns count
    (:func:`input_unseen_counts`): a date column handed over beside them, which the
    signature drops, is always \"new\" on a time-ordered split and says nothing about
    why the model crashed."""
    unseen = input_unseen_counts(failure)
    return bool(unseen) and set(unseen) <= set(retyped_columns(failure))


@register_rule
class SchemaMismatch(Rule):
    id = "schema_mismatch"
    name = "Columns or types do not match"
    detects = (
        "Columns present in one split but not the other, columns whose dtype changed between "
        "splits (integers and floats are both numbers: an int column that turned float64, "
        "as one missing value makes it, is no change), or inference data that lacks or "
        "mistypes what the model expects (a crash; MLflow's signature refusing the data)."
    )
    why = (
        "The model reads features by name and type. A renamed, dropped or retyped column "
        "either crashes prediction or, worse, is silently filled or misread, so the model "
        "scores garbage."
    )
    example = (
        "The training table has `age` (int); the evaluation export renamed it to `Age` and "
        "stores it as text, so `predict` fails with \"columns are missing: {'age'}\"."
    )
    fixes = (
        "Align the evaluation data with the model signature: same column names, order and "
        "dtypes (`mlflow.models.infer_signature(X_train)` documents them; "
        "`X_test = X_test[signature_cols].astype(train_dtypes)`).",
        "Build train and test from the same loading/feature code, and validate the schema at "
        "the boundary (e.g. pandera or a dtype assertion) before predicting.",
        "Log the model with a signature so MLflow enforces the schema and names the offending "
        "column at inference time.",
    )
    severity_policy = (
        "A predict crash that names missing/unknown columns, or expected columns absent from the "
        "data: 0.95. Model input columns missing from a split: 0.85. Dtype changes between "
        "splits: 0.45 for one column, up to 0.65 for several. Extra columns only in one split "
        "that the model does not use: 0.25."
    )
    explains = (
        "underfitting",
        "degenerate_predictions",
        "prediction_drift",
        "feature_drift",
        "unseen_categories",
        "data_type_issues",
        "overfitting",
        "poor_calibration",
        "weak_segment",
        "unused_features",
        "missing_values",
    )

    def explains_for(self, artifact):
        """A crash that the types of the data explain better (data_type_issues,
        missing_values, ...) stays its own, more specific finding. A signature refusal
        the raw model got round (``served_by_raw_model``) explains nothing: the model
        saw the data as it was trained on it, so what else was found is its own."""
        if _only_served_refusals(self, artifact):
            return ()
        crashed_elsewhere = {
            classify(f) for f in artifact.runtime_failures if not retyped_crash(f)
        } - {self.id}
        return tuple(c for c in self.explains if c not in crashed_elsewhere)

    def detect_runtime(self, artifact):
        for failure in crashes_for(artifact, self.id):
            missing = missing_columns(failure)
            categorical = category_dtype_refused(failure)
            by_xgboost = bool(categorical) and failure.category_refusal == "xgboost_dmatrix"
            detail = crash_detail(failure)
            if missing:
                detail += f"; expected columns absent from the data: {missing[:8]}"
            yield self.signal(
                "runtime",
                score=crash_score(failure),
                # a refusal the raw model got round is certain but explains none of the
                # model's scores: it ranks after findings of equal severity that do
                confidence=(
                    0.5 if failure.served_by_raw_model
                    else 0.9 if missing or categorical else 0.6
                ),
                detail=detail,
                missing=missing,
                categorical_refused=categorical,
                xgboost_dmatrix=by_xgboost,
                served_by_raw_model=failure.served_by_raw_model,
                crashed=True,
                stage=failure.stage,
                crash_fix=_crash_fix(missing, categorical, by_xgboost),
            )

    def detect_dataset(self, artifact):
        dataset = artifact.dataset
        comparison = dataset.comparison
        if comparison is None:
            return
        features = set(dataset.feature_names)
        absent = sorted(
            c
            for c in comparison.columns_only_in_train + comparison.columns_only_in_test
            if c in features
        )
        if absent:
            yield self.signal(
                "dataset",
                score=0.85,
                confidence=0.9,
                detail=f"model input column(s) present in only one split: {absent[:8]}",
                missing=absent,
            )
        other = sorted(
            set(comparison.columns_only_in_train + comparison.columns_only_in_test)
            - features
            - {dataset.target}
        )
        if other and not absent:
            yield self.signal(
                "dataset",
                score=0.25,
                confidence=0.8,
                detail=f"column(s) present in only one split (not used by the model): {other[:8]}",
                extra=other,
            )
        mismatched = {c: d for c, d in comparison.dtype_mismatches.items() if c in features}
        if mismatched:
            shown = ", ".join(f"{c}: {d}" for c, d in sorted(mismatched.items())[:5])
            yield self.signal(
                "dataset",
                score=min(0.45 + 0.1 * (len(mismatched) - 1), 0.65),
                confidence=0.85,
                detail=f"dtype differs between train and test for {shown}",
                retyped=sorted(mismatched),
            )

    def title(self, signals, artifact):
        missing = self.fact(signals, "missing")
        if self.fact(signals, "crashed"):
            if missing:
                return f"The model cannot predict: expected column(s) {missing[:3]} are missing"
            categorical = self.fact(signals, "categorical_refused")
            if categorical:
                return (
                    "The logged model cannot take its own categorical column(s) "
                    f"{categorical[:3]}"
                )
            return "The model crashed on the evaluation data's columns or types"
        if missing:
            return f"Column(s) {missing[:3]} are missing from one split"
        retyped = self.fact(signals, "retyped")
        if retyped:
            return f"Column type changed between train and test: {retyped[:3]}"
        return f"Columns differ between train and test: {self.fact(signals, 'extra', [])[:3]}"

    def explanation(self, signals, artifact):
        if self.fact(signals, "categorical_refused"):
            how = (
                "MLflow's xgboost flavour hands a native booster a DMatrix built without "
                "`enable_categorical`, so the booster refuses the pandas 'category' columns "
                "it was trained on."
                if self.fact(signals, "xgboost_dmatrix") else
                "MLflow signatures have no categorical type, so `infer_signature` recorded "
                "the pandas 'category' columns as strings, and at predict time MLflow will "
                "not convert a category column to a string one."
            )
            return (
                "MLflow refused the evaluation data before the model could use it. " + how
                + " The model and the data may be fine; the logged model cannot be served "
                "this data as it is, here or behind a serving endpoint."
                + (
                    " deepfix called the raw model directly (the data as it was trained on), "
                    "so the rest of this report stands."
                    if self.fact(signals, "served_by_raw_model") else
                    " Every score and model check depends on predictions, so fix the "
                    "signature first."
                )
            )
        if self.fact(signals, "crashed"):
            return (
                "Prediction failed because the data handed to the model does not have the "
                "columns or types it was trained with. Every score and model check depends on "
                "predictions, so fix the schema first; the other model findings cannot be "
                "trusted until then."
            )
        return (
            "The training and evaluation data do not share the same columns and types. The "
            "model reads features by name and type, so a column that is renamed, dropped or "
            "stored differently is misread or filled with defaults."
        )


def _only_served_refusals(rule, artifact) -> bool:
    """Every crash of this rule is a refusal the raw model got round, and the splits
    share their columns and types: no schema change that could explain a symptom."""
    crashes = list(crashes_for(artifact, rule.id))
    if not crashes or not all(f.served_by_raw_model for f in crashes):
        return False
    comparison = artifact.dataset.comparison if artifact.dataset is not None else None
    return comparison is None or not (
        comparison.dtype_mismatches
        or comparison.columns_only_in_train
        or comparison.columns_only_in_test
    )


def _crash_fix(missing: list[str], categorical: list[str], by_xgboost: bool) -> str:
    """The first fix for a crash, the most specific its evidence allows."""
    if missing:
        return (
            f"Pass the model the columns it was trained on: {missing[:5]} are absent "
            "(check renames and the feature selection before predict)."
        )
    if categorical and by_xgboost:
        return (
            "Log the scikit-learn API model (`xgboost.XGBClassifier(enable_categorical=True)` "
            "or `XGBRegressor`), which MLflow's flavour calls with the frame as it is, or "
            "wrap the booster in a pyfunc whose predict builds "
            "`xgboost.DMatrix(X, enable_categorical=True)`."
        )
    if categorical:
        return (
            f"Hand MLflow the categorical columns {categorical[:5]} as strings "
            "(`X[cols] = X[cols].astype(str)`) and restore their dtype inside the logged "
            "model: a first pipeline step (or pyfunc wrapper) that casts them to "
            "`pd.CategoricalDtype(<training categories>)`; log it with a signature inferred "
            "from the string frame."
        )
    return (
        "Compare the evaluation frame's columns and dtypes with the model signature "
        "(mlflow.models.get_model_info(uri).signature) and apply the training "
        "preprocessing before predict."
    )
