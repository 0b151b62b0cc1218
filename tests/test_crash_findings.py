"""Every failure of predict / predict_proba becomes a finding in its most specific
category, with the runtime evidence (exception, columns, dtypes, counts) and a fix."""

from __future__ import annotations

import pytest
from deepfix_agents import diagnose_with_rules
from deepfix_agents.rules._runtime import classify

from mlflow_deepfix.schemas import ArtifactData, DatasetSummary, RuntimeFailure, SplitStats


def _failure(**kw) -> RuntimeFailure:
    base = {"stage": "predict:test", "exception_type": "ValueError", "message": "boom",
                "expected_columns": ["a", "b"], "given_columns": ["a", "b"],
                "given_types": {"a": "float64", "b": "object"}, "shape": [100, 2]}
    base.update(kw)
    return RuntimeFailure(**base)


CASES = [
    ({"given_columns": ["a"], "exception_type": "KeyError", "message": "['b'] not in index"}, "schema_mismatch"),
    ({"output_shape": [100, 2], "exception_type": "ModelOutputError",
          "message": "predictions of shape (100, 2) for 100 rows (expected one value per row)"}, "wrong_task_type"),
    ({"stage": "predict_proba:test", "message": "predict_proba is not available"}, "wrong_task_type"),
    ({"message": "Found unknown categories ['<redacted>'] in column 1 during transform",
          "unseen_counts": {"b": 3}}, "unseen_categories"),
    ({"message": "Input X contains NaN.", "nan_counts": {"a": 4}}, "missing_values"),
    ({"message": "Input X contains infinity or a value too large for dtype('float64').",
          "inf_counts": {"a": 2}}, "outliers"),
    ({"message": "could not convert string to float: '<redacted>'", "non_numeric_counts": {"b": 1}},
     "data_type_issues"),
    # strict privacy: no message at all, the counts still decide
    ({"message": "(hidden: privacy=strict)", "non_numeric_counts": {"b": 1}}, "data_type_issues"),
    ({"exception_type": "RuntimeError", "message": "something else entirely"}, "schema_mismatch"),
    # MLflow's signature refusing the types (testing.crash.condensed_message keeps its
    # reason): a schema mismatch, though the reason says "convert"; with MLflow's own
    # missing-values hint and NaNs in the data, the missing values
    ({"exception_type": "MlflowException",
      "message": "Failed to enforce schema (the model signature refused the data): Incompatible "
                 "input types for column a. Can not safely convert float64 to int64."},
     "schema_mismatch"),
    ({"exception_type": "MlflowException", "nan_counts": {"a": 3},
      "message": "Failed to enforce schema (the model signature refused the data): Incompatible "
                 "input types for column a. Can not safely convert float64 to int64. Hint: the "
                 "type mismatch is likely caused by missing values."},
     "missing_values"),
    # MLflow's xgboost flavour hands a native booster a DMatrix without
    # enable_categorical: the packaging refuses the model's own category column
    ({"given_types": {"a": "float64", "b": "category"},
      "message": "DataFrame.dtypes for data must be int, float, bool or category. When "
                 "categorical type is supplied, the experimental DMatrix parameter"
                 "`enable_categorical` must be set to `True`. Invalid columns:b: category",
      "category_refusal": "xgboost_dmatrix", "refused_category_columns": ["b"]},
     "schema_mismatch"),
]


@pytest.mark.parametrize(("fields", "category"), CASES)
def test_each_crash_has_one_most_specific_category(fields, category):
    assert classify(_failure(**fields)) == category


def _artifact(failure: RuntimeFailure) -> ArtifactData:
    dataset = DatasetSummary(target="y", feature_names=["a", "b"],
                             test=SplitStats(name="test", n_rows=100, n_columns=3))
    return ArtifactData(task="binary_classification", dataset=dataset, runtime_failures=[failure])


@pytest.mark.parametrize(("fields", "category"), [c for c in CASES if "predict_proba" not in str(c)])
def test_a_predict_crash_is_the_top_finding_with_evidence_and_fix(fields, category):
    failure = _failure(**fields)
    findings = diagnose_with_rules(_artifact(failure)).findings
    assert findings, "a crash must become a finding"
    top = findings[0]
    assert top.category == category
    assert top.severity == "critical"  # no prediction at all: every model check is lost
    runtime = [e for e in top.evidence if e.source == "runtime"]
    assert runtime and failure.exception_type in runtime[0].detail
    counts = failure.non_numeric_counts or failure.nan_counts or failure.inf_counts or failure.unseen_counts
    for column in counts:
        assert repr(column) in runtime[0].detail and failure.given_types[column] in runtime[0].detail
    assert top.fixes and len(top.fixes[0]) > 40


def test_a_proba_only_crash_ranks_low():
    findings = diagnose_with_rules(_artifact(_failure(stage="predict_proba:test"))).findings
    crash = [f for f in findings if f.category == "wrong_task_type"]
    assert crash and crash[0].severity in ("low", "info")


def _retyped_crash_artifact(expected_type: str) -> ArtifactData:
    """A predict crash on 'unseen categories' in ``b``, whose values arrive as text while
    training held ``expected_type``; the split comparison sees ``b``'s dtype change."""
    from mlflow_deepfix.schemas import SplitComparison

    failure = _failure(message="Found unknown categories ['<redacted>'] in column 1 during transform",
                       unseen_counts={"b": 3}, expected_types={"a": "double", "b": expected_type})
    dataset = DatasetSummary(target="y", feature_names=["a", "b"],
                             test=SplitStats(name="test", n_rows=100, n_columns=3),
                             comparison=SplitComparison(dtype_mismatches={"b": "float64 -> object"}))
    return ArtifactData(task="binary_classification", dataset=dataset, runtime_failures=[failure])


def test_unseen_values_of_a_column_retyped_to_text_are_the_schema_change():
    """Issue 12 C: numbers quoted as text in the evaluation data make every value of the
    column 'unseen' to the model; the cause is the changed type, so the schema finding
    names it and folds the unseen-categories symptom. A column that was text in the
    signature too keeps its own unseen-categories finding."""
    retyped = diagnose_with_rules(_retyped_crash_artifact("double")).findings
    assert retyped[0].category == "schema_mismatch"
    assert "unseen_categories" not in [f.category for f in retyped]
    assert any("unseen_categories" in e.detail for e in retyped[0].evidence)
    text_all_along = diagnose_with_rules(_retyped_crash_artifact("string")).findings
    assert text_all_along[0].category == "unseen_categories"


# --- round 31: schema31 ---


def test_schema31_a_dropped_date_column_does_not_hide_the_retyped_cause():
    """A time-ordered evaluation frame carries its date column beside the model inputs;
    the signature drops it, yet the crash counts every test date as 'unseen'. Only the
    columns the model reads decide whether the unseen values are the retyped column's:
    the schema change stays the cause, and the unseen-categories finding names the
    model input, not the date."""
    from deepfix_agents.rules._runtime import input_unseen_counts

    artifact = _retyped_crash_artifact("double")
    failure = artifact.runtime_failures[0].model_copy(update={
        "given_columns": ["date", "a", "b"],
        "given_types": {"date": "datetime64[us]", "a": "float64", "b": "object"},
        "unseen_counts": {"date": 100, "b": 3},
    })
    assert input_unseen_counts(failure) == {"b": 3}
    with_date = artifact.model_copy(update={"runtime_failures": [failure]})
    findings = diagnose_with_rules(with_date).findings
    assert findings[0].category == "schema_mismatch"
    assert "unseen_categories" not in [f.category for f in findings]
    # without a signature every count stays: nothing says which columns the model reads
    unsigned = failure.model_copy(update={"expected_columns": []})
    assert input_unseen_counts(unsigned) == {"date": 100, "b": 3}
    # a column that was text in the signature too keeps its own finding, named by input
    text = _retyped_crash_artifact("string")
    text_failure = text.runtime_failures[0].model_copy(update={
        "given_columns": ["date", "a", "b"], "unseen_counts": {"date": 100, "b": 3}})
    text_findings = diagnose_with_rules(
        text.model_copy(update={"runtime_failures": [text_failure]})).findings
    assert text_findings[0].category == "unseen_categories"
    assert "'b'" in text_findings[0].title


def test_a_crash_message_keeps_its_reason_and_no_rows():
    """MLflow's schema enforcement prints the whole input frame before its reason; a
    600-character cut kept rows of the data and lost the reason. Only the reason is
    stored; any other long message keeps its head and its tail (where the cause is)."""
    from mlflow_deepfix.testing.crash import condensed_message

    rows = "\n".join(f"{i}  private-value-{i}  {i * 1.5}" for i in range(200))
    mlflow_error = ValueError(
        f"Failed to enforce schema of data '{rows}' with schema "
        "'['a': double (required)]'. Error: Incompatible input types for column a. "
        "Can not safely convert float64 to int64.")
    message = condensed_message(mlflow_error)
    assert message == ("Failed to enforce schema (the model signature refused the data): "
                       "Incompatible input types for column a. Can not safely convert "
                       "float64 to int64.")
    long_error = RuntimeError("while scoring " + "x" * 2000 + " because column b is empty")
    kept = condensed_message(long_error)
    assert len(kept) <= 600 and kept.startswith("while scoring")
    assert kept.endswith("because column b is empty")


def test_the_xgboost_flavour_refusing_category_columns_names_its_own_fix():
    """The xgboost flavour's DMatrix without ``enable_categorical`` is not the data's
    types being wrong (data_type_issues said "cast the columns to the signature"): it
    is the packaging, with a fix that names the parameter; served by the raw booster
    (``served_by_raw_model``) it is a medium finding."""
    failure = _failure(
        exception_type="ValueError", given_types={"a": "float64", "b": "category"},
        message="DataFrame.dtypes for data must be int, float, bool or category. When "
                "categorical type is supplied, the experimental DMatrix parameter"
                "`enable_categorical` must be set to `True`. Invalid columns:b: category",
        served_by_raw_model=True, category_refusal="xgboost_dmatrix",
        refused_category_columns=["b"],
    )
    top = diagnose_with_rules(_artifact(failure)).findings[0]
    assert top.category == "schema_mismatch" and top.severity == "medium"
    assert "'b'" in top.title and "enable_categorical=True" in top.fixes[0]
    assert "xgboost flavour" in top.explanation and "rest of this report" in top.explanation


def test_s55_the_testing_step_records_a_category_refusal_once_for_the_rules():
    """The packaging's refusal of the model's own ``category`` columns is read from
    MLflow's and XGBoost's messages in one place (``model_adapter.category_refusal``) and
    recorded on the failure; the rules read the record, not the text. A signature
    refusal names the category columns the signature stores as string; the xgboost
    flavour's DMatrix refusal names every category column; any other error, none."""
    import pandas as pd

    from mlflow_deepfix.testing.crash import capture_failure

    frame = pd.DataFrame({"a": [1.0, 2.0], "b": pd.Categorical(["x", "y"]),
                          "c": pd.Categorical(["u", "v"])})
    dmatrix = ValueError("DataFrame.dtypes for data must be int, float, bool or category. "
                         "When categorical type is supplied, the experimental DMatrix "
                         "parameter`enable_categorical` must be set to `True`.")
    failure = capture_failure("predict:test", dmatrix, frame=frame, expected_columns=["a", "b", "c"])
    assert failure.category_refusal == "xgboost_dmatrix"
    assert failure.refused_category_columns == ["b", "c"]
    top = diagnose_with_rules(_artifact(failure)).findings[0]
    assert top.category == "schema_mismatch" and "enable_categorical=True" in top.fixes[0]

    other = capture_failure("predict:test", ValueError("shapes do not align"), frame=frame,
                            expected_columns=["a", "b", "c"])
    assert other.category_refusal == "" and other.refused_category_columns == []
    # the same message over a frame without category columns is no category refusal
    plain = capture_failure("predict:test", dmatrix, frame=frame.astype({"b": str, "c": str}),
                            expected_columns=["a", "b", "c"])
    assert plain.category_refusal == ""
