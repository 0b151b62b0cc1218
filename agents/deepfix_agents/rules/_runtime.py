"""Which category a crash of the model belongs to: one answer per crash.

A failing ``predict`` / ``predict_proba`` is always a finding, in the most specific
category its runtime evidence supports (checked in this order): expected columns that
are absent -> ``schema_mismatch``; an output of the wrong shape or type ->
``wrong_task_type``; categories never seen in training -> ``unseen_categories`` (when
they all sit in columns the model's signature declares numeric but that arrive as text,
:func:`retyped_columns`, ``schema_mismatch`` folds that finding: the values are only new
because their type changed); NaN
input -> ``missing_values``; infinite input -> ``outliers``; text where numbers are
expected -> ``data_type_issues``; MLflow's signature refusing the data's types
(:func:`signature_refusal`), or its packaging refusing the model's own category
columns (:func:`category_dtype_refused`) -> ``schema_mismatch``; any other dtype complaint ->
``data_type_issues``; anything else -> ``schema_mismatch`` (the inputs do not fit what
the model expects). Each rule's ``detect_runtime`` yields only for the crashes
classified to its own id, so one crash never becomes two competing findings.
"""

from __future__ import annotations

from collections.abc import Iterable

from mlflow_deepfix.schemas import ArtifactData, RuntimeFailure

#: the model's predictions are unusable: every model check is lost
PREDICT_CRASH_SCORE = 0.95
#: only probabilities failed: labels and most checks still work
PROBA_CRASH_SCORE = 0.3
#: the pyfunc refused the data, the raw model predicted it (``served_by_raw_model``):
#: every check stands and no prediction is worse for it, but the model as logged cannot
#: be served this data: a defect to fix before deploying (medium), not a cause of the
#: model's scores to rank above the findings that are
SERVING_CRASH_SCORE = 0.55

_OUTPUT_WORDS = ("one value per row", "expected rows x classes", "model output", "returned")
_UNSEEN_WORDS = ("unknown categor", "unseen", "found unknown", "previously unseen",
                 "not seen during fit", "unknown label")
_NAN_WORDS = ("nan", "missing value", "null")
_INF_WORDS = ("inf", "too large", "overflow")
_TYPE_WORDS = ("could not convert", "convert", "dtype", "invalid literal", "unsupported operand",
               "cannot cast", "not supported between", "must be real number", "incompatible",
               "type", "str", "expected numeric", "not a number", "float")
_COLUMN_WORDS = ("column", "feature", "not in index", "keyerror", "schema", "names")


def missing_columns(failure: RuntimeFailure) -> list[str]:
    given = set(failure.given_columns)
    return [c for c in failure.expected_columns if c not in given]


#: signature types that hold numbers (MLflow's column types)
_NUMERIC_TYPES = ("double", "float", "long", "integer")
#: pandas dtypes that hold text
_TEXT_DTYPES = ("object", "str", "string", "category")


def input_unseen_counts(failure: RuntimeFailure) -> dict[str, int]:
    """The crash's unseen-value counts for the columns the model reads: with a known
    signature (``expected_columns``), a column handed over but not in it (a date or id
    column the signature drops before predict) cannot have caused the crash, and a
    time-ordered split makes every test date "unseen"; without one, all counts."""
    counts = failure.unseen_counts
    if not failure.expected_columns:
        return dict(counts)
    expected = set(failure.expected_columns)
    return {c: n for c, n in counts.items() if c in expected}


def retyped_columns(failure: RuntimeFailure) -> list[str]:
    """Columns the model's signature declares numeric that arrive as text."""
    return [
        name
        for name, expected in failure.expected_types.items()
        if str(expected).lower() in _NUMERIC_TYPES
        and str(failure.given_types.get(name, "")).lower().startswith(_TEXT_DTYPES)
    ]


#: how ``testing.crash.condensed_message`` starts the reason of MLflow's schema enforcement
SIGNATURE_REFUSAL = "failed to enforce schema"


def signature_refusal(failure: RuntimeFailure) -> bool:
    """MLflow's pyfunc refused the data before the model saw it: its signature declares
    other types (an integer column given fractions, a pandas ``category`` column the
    signature stores as string). The types differ from what the model expects, a
    schema mismatch, unless the data itself holds text where numbers belong (counted
    in ``non_numeric_counts`` and classified first)."""
    return failure.message.lower().startswith(SIGNATURE_REFUSAL)


def category_dtype_refused(failure: RuntimeFailure) -> list[str]:
    """The pandas ``category`` columns the MLflow packaging refused, though the model
    reads them (``RuntimeFailure.refused_category_columns``, recorded by the testing
    step, empty unless ``category_refusal`` is set): a string signature (MLflow schemas have no categorical type,
    ``infer_signature`` records such a column as string, and enforcement then cannot
    convert it back), or the xgboost flavour building a native booster's DMatrix without
    ``enable_categorical`` (``category_refusal == "xgboost_dmatrix"``). The model and the
    data are fine; the logged model cannot be served them."""
    return list(failure.refused_category_columns)


def classify(failure: RuntimeFailure) -> str:
    """The category id of one crash (see the module docstring for the order)."""
    text = f"{failure.exception_type} {failure.message}".lower()
    if failure.stage.startswith("predict_proba") and not failure.output_shape:
        return "wrong_task_type"
    if missing_columns(failure):
        return "schema_mismatch"
    if failure.output_shape or failure.exception_type == "ModelOutputError" or any(
        w in text for w in _OUTPUT_WORDS
    ):
        return "wrong_task_type"
    if any(w in text for w in _UNSEEN_WORDS) or (
        failure.unseen_counts and "categor" in text
    ):
        return "unseen_categories"
    if failure.nan_counts and any(w in text for w in _NAN_WORDS):
        return "missing_values"
    if failure.inf_counts and any(w in text for w in _INF_WORDS):
        return "outliers"
    if failure.non_numeric_counts and (
        failure.exception_type in ("ValueError", "TypeError")
        or any(w in text for w in _TYPE_WORDS)
    ):
        return "data_type_issues"
    if signature_refusal(failure) or category_dtype_refused(failure):
        return "schema_mismatch"
    if any(w in text for w in _TYPE_WORDS[:9]):
        return "data_type_issues"
    if failure.unseen_counts:
        return "unseen_categories"
    if failure.nan_counts and not any(w in text for w in _COLUMN_WORDS):
        return "missing_values"
    return "schema_mismatch"


def crashes_for(artifact: ArtifactData, category: str) -> Iterable[RuntimeFailure]:
    """The crashes of ``artifact`` classified to ``category``."""
    for failure in artifact.runtime_failures:
        if classify(failure) == category:
            yield failure


def crash_score(failure: RuntimeFailure) -> float:
    """Impact: a failed ``predict`` loses every prediction, a failed ``predict_proba``
    only the probability-based checks, a refusal the raw model got round none (only
    serving breaks)."""
    if failure.served_by_raw_model:
        return SERVING_CRASH_SCORE
    return PROBA_CRASH_SCORE if failure.stage.startswith("predict_proba") else PREDICT_CRASH_SCORE


def crash_detail(failure: RuntimeFailure, columns: dict[str, int] | None = None,
                 what: str = "") -> str:
    """The evidence line: stage, exception, the columns involved with dtypes and counts."""
    detail = f"{failure.stage} raised {failure.exception_type}"
    if failure.message:
        detail += f": {failure.message[:200]}"
    if columns:
        shown = sorted(columns.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
        parts = [
            f"{name!r} ({failure.given_types.get(name, '?')}, {count} {what})".replace(" )", ")")
            for name, count in shown
        ]
        more = f" and {len(columns) - 5} more" if len(columns) > 5 else ""
        detail += "; columns involved: " + ", ".join(parts) + more
    return detail
