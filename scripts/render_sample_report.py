"""Render a realistic, hand-built deepfix report to an HTML file, for eyeballing.

Usage: python scripts/render_sample_report.py [OUTPUT.html] [--empty]

The objects below are built by hand (no Deepchecks run) so that the page can be looked
at while the report template changes; ``scripts/screenshot_report.sh`` screenshots it.
``--empty`` renders the "no findings" state of a healthy run without training data.
"""

from __future__ import annotations

import sys
from pathlib import Path

from mlflow_deepfix.report import render_report
from mlflow_deepfix.schemas import (
    ArtifactData,
    BaselineResult,
    CheckOutcome,
    ColumnStats,
    ConditionResult,
    DatasetSummary,
    Diagnosis,
    Evidence,
    Finding,
    ModelInfo,
    PerformanceSummary,
    Reference,
    SplitComparison,
    SplitStats,
    Timings,
)

COLUMNS = [
    (
        "customer_id",
        "int64",
        "numeric",
        {
            "n_unique": 4000,
            "unique_fraction": 1.0,
            "min": 1,
            "max": 5000,
            "mean": 2500.3,
            "monotonic": True,
            "target_association": 0.41,
        },
    ),
    (
        "age",
        "int64",
        "numeric",
        {
            "n_unique": 62,
            "min": 18,
            "max": 92,
            "mean": 44.1,
            "outlier_fraction": 0.0,
            "target_association": 0.08,
        },
    ),
    (
        "income",
        "float64",
        "numeric",
        {
            "missing_fraction": 0.042,
            "n_unique": 3411,
            "min": 8200.0,
            "max": 1.2e6,
            "mean": 61234.5,
            "outlier_fraction": 0.011,
            "target_association": 0.12,
        },
    ),
    (
        "tenure_months",
        "int64",
        "numeric",
        {"n_unique": 72, "min": 0, "max": 72, "mean": 31.6, "target_association": 0.35},
    ),
    (
        "monthly_charges",
        "float64",
        "numeric",
        {"n_unique": 1502, "min": 18.25, "max": 118.75, "mean": 64.8, "target_association": 0.19},
    ),
    (
        "refund_issued_after_churn",
        "float64",
        "numeric",
        {"n_unique": 2, "min": 0, "max": 1, "mean": 0.09, "target_association": 0.97},
    ),
    (
        "plan",
        "object",
        "categorical",
        {"n_unique": 4, "top_fraction": 0.52, "target_association": 0.22},
    ),
    (
        "region",
        "object",
        "categorical",
        {
            "n_unique": 7,
            "top_fraction": 0.31,
            "mixed_types": True,
            "string_mismatch_fraction": 0.013,
            "target_association": 0.03,
        },
    ),
    ("country", "object", "categorical", {"n_unique": 1, "top_fraction": 1.0}),
]


def _split(name: str, n_rows: int, churn: float) -> SplitStats:
    return SplitStats(
        name=name,
        n_rows=n_rows,
        n_columns=len(COLUMNS) + 1,
        columns=[ColumnStats(name=c, dtype=d, kind=k, **extra) for c, d, k, extra in COLUMNS],
        duplicate_fraction=0.012 if name == "train" else 0.004,
        conflicting_label_fraction=0.002,
        label_distribution={"0": 1 - churn, "1": churn},
    )


def _checks() -> list[CheckOutcome]:
    def c(name, suite, outcome, value=None, conds=(), reason=None, values=None):
        return CheckOutcome(
            name=name,
            suite=suite,
            outcome=outcome,
            value=value,
            reason=reason,
            values=values or {},
            conditions=[ConditionResult(name=n, status=s, details=d) for n, s, d in conds],
        )

    di, tt, me = "data_integrity", "train_test_validation", "model_evaluation"
    drift = {
        "income": 0.31,
        "monthly_charges": 0.22,
        "tenure_months": 0.12,
        "age": 0.05,
        "plan": 0.04,
        "region": 0.02,
        "refund_issued_after_churn": 0.01,
        "customer_id": 0.6,
        "country": 0.0,
    }
    return [
        c(
            "Is Single Value",
            di,
            "not_passed",
            1,
            [
                (
                    "Does not contain only a single value",
                    "FAIL",
                    "Found 1 out of 9 columns with a single value: ['country']",
                )
            ],
        ),
        c(
            "Special Characters",
            di,
            "passed",
            0.0,
            [
                (
                    "Ratio of samples containing solely special character is less or equal to 0.1%",
                    "PASS",
                    "",
                )
            ],
        ),
        c("Mixed Nulls", di, "passed", 1),
        c(
            "Mixed Data Types",
            di,
            "not_passed",
            0.013,
            [
                (
                    "Rare data types in column are either more than 10% or less than 1% of the data",
                    "WARN",
                    "Found 1 column with mixed types: region",
                )
            ],
        ),
        c("String Mismatch", di, "passed", 0.0),
        c(
            "Data Duplicates",
            di,
            "not_passed",
            0.012,
            [("Duplicate data ratio is less or equal to 0%", "WARN", "Found 1.2% duplicate data")],
        ),
        c("String Length Out Of Bounds", di, "passed", 0.0),
        c("Conflicting Labels", di, "passed", 0.002),
        c(
            "Outlier Sample Detection",
            di,
            "skipped",
            reason="sample too large for the configured time budget",
        ),
        c(
            "Feature Label Correlation",
            di,
            "not_passed",
            0.97,
            [
                (
                    "Features' Predictive Power Score is less than 0.8",
                    "FAIL",
                    "Found 1 out of 9 features with PPS above threshold: {'refund_issued_after_churn': '0.97'}",
                )
            ],
            values={"refund_issued_after_churn": 0.97, "tenure_months": 0.21},
        ),
        c("Identifier Label Correlation", di, "passed", 0.02),
        c("Datasets Size Comparison", tt, "passed", 0.25),
        c("New Label Train Test", tt, "passed", 0),
        c("New Category Train Test", tt, "passed", 0.0),
        c("String Mismatch Comparison", tt, "passed", 0.0),
        c("Date Train Test Leakage Duplicates", tt, "skipped", reason="no datetime_col was given"),
        c("Index Train Test Leakage", tt, "skipped", reason="no index_col was given"),
        c(
            "Train Test Samples Mix",
            tt,
            "not_passed",
            0.38,
            [
                (
                    "Percentage of test data samples that appear in train data is less or equal to 5%",
                    "FAIL",
                    "Percent of test data samples that appear in train data: 38%",
                )
            ],
        ),
        c("Feature Label Correlation Change", tt, "passed", 0.03),
        c(
            "Feature Drift",
            tt,
            "not_passed",
            0.6,
            [
                (
                    "categorical drift score < 0.2 and numerical drift score < 0.2",
                    "FAIL",
                    "Failed for 2 out of 9 columns. Found 2 numeric columns with drift score above threshold: {'customer_id': '0.6', 'income': '0.31'}",
                )
            ],
            values=drift,
        ),
        c("Label Drift", tt, "passed", 0.01),
        c(
            "Multivariate Drift",
            tt,
            "errored",
            reason="ValueError: Input contains NaN, infinity or a value too large for dtype('float64').",
        ),
        c(
            "Train Test Performance",
            me,
            "not_passed",
            0.11,
            [
                (
                    "Train-Test scores relative degradation is less than 0.1",
                    "FAIL",
                    "Found max degradation of 11% for metric F1 and class 1",
                )
            ],
        ),
        c("Roc Report", me, "passed", 0.93),
        c("Simple Model Comparison", me, "passed", 0.41),
        c("Weak Segments Performance", me, "passed", 0.08),
        c("Calibration Score", me, "passed", 0.04),
        c(
            "Unused Features",
            me,
            "not_passed",
            2,
            [
                ("Number of high variance unused features is less or equal to 5", "PASS", ""),
                ("Features with importance below 0.01", "WARN", "country, region"),
            ],
        ),
        c("Boosting Overfit", me, "skipped", reason="model is not a boosting model"),
        c("Prediction Drift", me, "passed", 0.02),
    ]


def build(empty: bool = False) -> tuple[Diagnosis, ArtifactData, dict]:
    """A realistic report input; ``empty`` gives a healthy run without training data."""
    train = None if empty else _split("train", 4000, 0.08)
    test = _split("test", 1000, 0.09)
    comparison = (
        None
        if empty
        else SplitComparison(
            overlap_fraction=0.38,
            test_to_train_ratio=0.25,
            unseen_category_fraction={"region": 0.004},
            dtype_mismatches={"tenure_months": "int64 -> float64"},
        )
    )
    data = ArtifactData(
        deepfix_version="0.1.0",
        task="binary_classification",
        seed=0,
        sample_size=5000,
        dataset=DatasetSummary(
            target="churned",
            feature_names=[c[0] for c in COLUMNS],
            cat_features=["plan", "region", "country"],
            train=train,
            test=test,
            comparison=comparison,
        ),
        checks=_checks(),
        model=ModelInfo(
            flavor="sklearn",
            model_class="sklearn.pipeline.Pipeline",
            is_pipeline=True,
            pipeline_steps=["ColumnTransformer", "StandardScaler", "GradientBoostingClassifier"],
            has_preprocessing=True,
            has_predict_proba=True,
            output_kind="probabilities",
            classes=["0", "1"],
            hyperparameters={
                "learning_rate": 0.1,
                "max_depth": 3,
                "n_estimators": 300,
                "subsample": 1.0,
                "random_state": 0,
                "loss": "log_loss",
                "min_samples_leaf": 1,
                "max_features": None,
            },
            feature_importances={
                "refund_issued_after_churn": 0.71,
                "tenure_months": 0.09,
                "monthly_charges": 0.07,
                "income": 0.05,
                "customer_id": 0.04,
                "age": 0.02,
                "plan": 0.015,
                "region": 0.003,
                "country": 0.0,
            },
            signature_inputs=[c[0] for c in COLUMNS],
        ),
        performance=PerformanceSummary(
            metric="roc_auc",
            test_score=0.934,
            train_score=0.999,
            scores={
                "train": {"roc_auc": 0.999, "accuracy": 0.995, "f1": 0.97},
                "test": {"roc_auc": 0.934, "accuracy": 0.941, "f1": 0.62},
            },
            prediction_distribution={"0": 0.93, "1": 0.07},
            calibration_error=0.041,
            best_threshold=0.31,
            f1_at_default=0.62,
            f1_at_best=0.68,
        ),
        baselines=[
            BaselineResult(name="majority class", metric="roc_auc", cv_score=0.5, test_score=0.5),
            BaselineResult(
                name="logistic regression", metric="roc_auc", cv_score=0.81, test_score=0.8
            ),
            BaselineResult(name="depth-3 tree", metric="roc_auc", cv_score=0.86, test_score=0.85),
        ],
        notes=[] if not empty else ["train/test checks skipped: no training data"],
        checks_seconds=18.4,
    )
    if empty:
        data = data.model_copy(
            update={
                "checks": [c for c in data.checks if c.suite != "train_test_validation"],
                "baselines": [],
            }
        )
        diagnosis = Diagnosis(
            status="pass",
            modality="tabular",
            task="binary_classification",
            timings=Timings(checks_seconds=9.2, diagnosis_seconds=0.3, total_seconds=10.1),
            notes=["no knowledge base found: references omitted"],
        )
        return diagnosis, data, {}

    ref = Reference
    findings = [
        Finding(
            rank=1,
            category="train_test_overlap",
            layer="split",
            severity="critical",
            confidence=0.93,
            title="38% of test rows also appear in the training data",
            explanation=(
                "More than a third of the rows you test on were also used to train the model. "
                "The model has already seen their answers, so the test score (ROC AUC 0.93) "
                "mostly measures memory, not how well it will do on new customers.\n\n"
                "This usually happens when the data is split after rows were duplicated "
                "(e.g. by a join), or when the same file is used for training and testing."
            ),
            fixes=[
                "Drop exact duplicates before splitting: df = df.drop_duplicates().",
                "Split by customer (GroupShuffleSplit on customer_id) so that no customer is in both splits.",
                "Re-run the evaluation and compare the new test score with the baselines below.",
            ],
            evidence=[
                Evidence(
                    source="deepchecks",
                    check="Train Test Samples Mix",
                    detail="share of test samples that appear in train",
                    value=0.38,
                ),
                Evidence(
                    source="statistics",
                    check=None,
                    detail="test rows whose features repeat a training row",
                    value=0.38,
                ),
                Evidence(
                    source="statistics",
                    check="Train Test Performance",
                    detail="train ROC AUC 0.999 vs test 0.934",
                    value=0.065,
                ),
            ],
            references=[
                ref(
                    title="Train-test contamination",
                    source="systematic-ml-debugging",
                    section="2.3 Splits",
                ),
                ref(
                    title="Train Test Samples Mix", source="deepchecks-docs/train_test_samples_mix"
                ),
            ],
        ),
        Finding(
            rank=2,
            category="target_leakage",
            layer="data",
            severity="high",
            confidence=0.88,
            title="“refund_issued_after_churn” predicts the label almost perfectly",
            explanation=(
                "This column has a predictive power score of 0.97 on its own and carries 71% "
                "of the model's importance. Its name suggests it is recorded after the outcome, "
                "so it will not be available when the model is used."
            ),
            fixes=[
                "Remove refund_issued_after_churn from the features.",
                "Audit every column for information that is only known after the label is decided.",
            ],
            evidence=[
                Evidence(
                    source="deepchecks",
                    check="Feature Label Correlation",
                    detail="PPS of refund_issued_after_churn",
                    value=0.97,
                ),
                Evidence(
                    source="model",
                    check=None,
                    detail="native importance of refund_issued_after_churn",
                    value=0.71,
                ),
            ],
            references=[ref(title="Target leakage", source="deepfix-paper", section="4.1")],
        ),
        Finding(
            rank=3,
            category="decision_threshold",
            layer="model",
            severity="medium",
            confidence=0.71,
            title="The default 0.5 threshold misses many churners (F1 0.62 vs 0.68 at 0.31)",
            explanation="Churners are 9% of the test rows; with probabilities this skewed the default threshold of 0.5 labels too few rows as churn.",
            fixes=[
                "Choose the threshold on a validation split (e.g. sklearn's TunedThresholdClassifierCV).",
                "Report precision and recall at the chosen threshold next to ROC AUC.",
            ],
            evidence=[
                Evidence(source="statistics", detail="F1 at best threshold 0.31", value=0.68)
            ],
        ),
        Finding(
            rank=4,
            category="constant_feature",
            layer="data",
            severity="low",
            confidence=0.99,
            title="“country” holds a single value",
            explanation="A column with one value carries no information and only adds noise to pipelines.",
            fixes=["Drop the column country."],
            evidence=[
                Evidence(
                    source="deepchecks",
                    check="Is Single Value",
                    detail="columns with a single value",
                    value=1,
                )
            ],
        ),
        Finding(
            rank=5,
            category="unused_features",
            layer="model",
            severity="info",
            confidence=0.6,
            title="2 features carry almost no importance",
            explanation="region and country together account for 0.3% of the model's importance.",
            fixes=["Consider dropping region and country to simplify the model."],
            evidence=[
                Evidence(
                    source="deepchecks",
                    check="Unused Features",
                    detail="features with importance below 0.01",
                    value=2,
                )
            ],
        ),
    ]
    diagnosis = Diagnosis(
        status="fail",
        modality="tabular",
        task="binary_classification",
        findings=findings,
        provider="rules",
        timings=Timings(checks_seconds=18.4, diagnosis_seconds=0.6, total_seconds=21.7),
        notes=["Outlier Sample Detection skipped: sample too large for the time budget"],
    )
    context = {
        "footer": ["LLM cache: 0 of 0 calls served from cache (provider: rules)"],
        "sections": [
            {
                "title": "Fix verification",
                "rows": [
                    ("Findings repaired", "2 of 3"),
                    ("Repair rate", 0.667),
                    ("Negative flip rate", 0.012),
                ],
            }
        ],
    }
    return diagnosis, data, context


def main(argv: list[str]) -> int:
    empty = "--empty" in argv
    paths = [a for a in argv if not a.startswith("--")]
    out = Path(paths[0] if paths else "/tmp/report.html")
    diagnosis, data, context = build(empty=empty)
    out.write_text(render_report(diagnosis, data, context=context), encoding="utf-8")
    sys.stderr.write(f"wrote {out} ({out.stat().st_size / 1024:.1f} KiB)\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
