"""Split-layer scenarios: each split is fine on its own, the bug is how train and test
relate (copied rows, shifted populations, dates in the wrong order, schemas that
moved, sizes that cannot be trusted)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from mlflow_deepfix.bench.scenarios._base import (
    ScenarioData,
    fit,
    gradient_boosting,
    loan_workflow,
    logistic,
    make_data,
    random_forest,
    ridge,
    scenario,
    split,
)
from mlflow_deepfix.bench.scenarios._datasets import (
    CHURN_CATEGORICAL,
    breast_cancer,
    classification_frame,
    diabetes,
    make_churn,
    make_loan,
    make_sales,
    wine,
)


def _copy_train_rows_into_test(
    train: pd.DataFrame, test: pd.DataFrame, share: float, seed: int
) -> pd.DataFrame:
    """Replace ``share`` of the test rows by training rows, keeping the test size."""
    n_copied = round(share * len(test))
    kept = test.sample(n=len(test) - n_copied, random_state=seed)
    copied = train.sample(n=n_copied, random_state=seed + 1)
    return pd.concat([kept, copied]).sample(frac=1.0, random_state=seed + 2)


# --------------------------------------------------------------------------- train_test_overlap


@scenario(
    "train_test_overlap.breast_cancer_40pct",
    "train_test_overlap",
    "40% of the test rows are copies of training rows (the test file was assembled from a "
    "folder that also fed training).",
    tags=("breast_cancer", "binary", "split"),
)
def _overlap_bc(seed: int) -> ScenarioData:
    train, test = split(breast_cancer(), "benign", seed=seed)
    test = _copy_train_rows_into_test(train, test, 0.4, seed)
    return make_data(train, test, "benign", fit(random_forest(seed), train, "benign"), "classifier")


@scenario(
    "train_test_overlap.classification_15pct",
    "train_test_overlap",
    "15% of the test rows also appear in the training split.",
    tags=("make_classification", "binary", "split"),
)
def _overlap_cls(seed: int) -> ScenarioData:
    train, test = split(
        classification_frame(seed, n=2000, n_features=12, flip_y=0.05), "label", seed=seed
    )
    test = _copy_train_rows_into_test(train, test, 0.15, seed)
    return make_data(
        train, test, "label", fit(gradient_boosting(seed), train, "label"), "classifier"
    )


@scenario(
    "train_test_overlap.diabetes_evaluated_on_train",
    "train_test_overlap",
    "The model is evaluated on its own training rows (X_train passed where X_test was meant).",
    tags=("diabetes", "regression", "split"),
)
def _overlap_diab(seed: int) -> ScenarioData:
    train, _ = split(diabetes(), None, seed=seed, stratify=False)
    test = train.sample(frac=1.0, random_state=seed)
    model = fit(random_forest(seed, regression=True), train, "progression")
    return make_data(train, test, "progression", model, "regressor")


# --------------------------------------------------------------------------- label_drift


@scenario(
    "label_drift.breast_cancer_screening_prevalence",
    "label_drift",
    "The test set comes from a screening programme where 8% of the cases are malignant, against "
    "37% in training.",
    tags=("breast_cancer", "binary", "split"),
)
def _label_drift_bc(seed: int) -> ScenarioData:
    train, test = split(breast_cancer(), "benign", seed=seed)
    benign = test[test["benign"] == 1]
    n_malignant = round(len(benign) * 0.08 / 0.92)
    malignant = test[test["benign"] == 0].sample(n=n_malignant, random_state=seed)
    test = pd.concat([benign, malignant]).sample(frac=1.0, random_state=seed)
    return make_data(train, test, "benign", fit(logistic(seed), train, "benign"), "classifier")


@scenario(
    "label_drift.multiclass_recent_month_80pct_one_class",
    "label_drift",
    "The test month is 80% class 2, while the training classes are balanced.",
    tags=("make_classification", "multiclass", "split"),
)
def _label_drift_multi(seed: int) -> ScenarioData:
    frame = classification_frame(
        seed, n=2400, n_features=8, n_classes=3, n_informative=5, class_sep=1.2
    )
    train, test = split(frame, "label", seed=seed)
    parts = [test[test["label"] == 2]]
    n_other = round(len(parts[0]) * 0.125)
    parts += [test[test["label"] == c].sample(n=n_other, random_state=seed + c) for c in (0, 1)]
    test = pd.concat(parts).sample(frac=1.0, random_state=seed)
    return make_data(train, test, "label", fit(random_forest(seed), train, "label"), "classifier")


# --------------------------------------------------------------------------- feature_drift


@scenario(
    "feature_drift.loan_older_homeowner_market",
    "feature_drift",
    "Test applicants come from a new market: twenty-five years older, mostly home owners, mostly in the "
    "west region (features that barely move the default risk).",
    tags=("loan", "binary", "split"),
)
def _fdrift_loan(seed: int) -> ScenarioData:
    rng = np.random.default_rng(seed + 7)
    train, _ = split(make_loan(2000, seed), "default", seed=seed)
    test = make_loan(600, seed + 1000)
    test["age"] = np.clip(test["age"] + 25.0, 21, 95)
    test["home_ownership"] = rng.choice(["own", "mortgage", "rent"], len(test), p=[0.8, 0.15, 0.05])
    test["region"] = rng.choice(
        ["west", "north", "south", "east"], len(test), p=[0.7, 0.1, 0.1, 0.1]
    )
    return loan_workflow(train, test, seed)


@scenario(
    "feature_drift.diabetes_elderly_clinic",
    "feature_drift",
    "The test patients come from a geriatric clinic, twenty years older on average; age barely "
    "moves the progression score, so the predictions hardly shift.",
    tags=("diabetes", "regression", "split"),
)
def _fdrift_diab(seed: int) -> ScenarioData:
    rng = np.random.default_rng(seed)
    train, test = split(diabetes(), None, seed=seed, stratify=False)
    test = test.copy()
    test["age"] = (test["age"] + 20.0 + rng.integers(-3, 4, len(test))).clip(upper=95.0)
    return make_data(train, test, "progression", fit(ridge(), train, "progression"), "regressor")


# --------------------------------------------------------------------------- prediction_drift


@scenario(
    "prediction_drift.churn_new_region_predicted_churn_doubles",
    "prediction_drift",
    "In the test region customers have shorter tenures, pricier plans and more tickets, so "
    "predicted churn more than doubles while the actual churn rate stays the same.",
    tags=("churn", "binary", "split"),
)
def _pdrift_churn(seed: int) -> ScenarioData:
    train, _ = split(make_churn(2000, seed), "churned", seed=seed)
    test = make_churn(600, seed + 1000)
    test["tenure_months"] = np.clip(test["tenure_months"] - 15.0, 1, None)
    test["monthly_charges"] = (test["monthly_charges"] + 20.0).round(2)
    test["support_tickets"] = test["support_tickets"] + 2.0
    test["total_charges"] = (test["tenure_months"] * test["monthly_charges"]).round(2)
    model = fit(gradient_boosting(seed, CHURN_CATEGORICAL), train, "churned", drop=("signup_date",))
    return make_data(train, test, "churned", model, "classifier")


@scenario(
    "prediction_drift.diabetes_new_assay",
    "prediction_drift",
    "The test lab measures s5 and bmi on new equipment that reads higher, moving the predicted "
    "progression up by about half a standard deviation while outcomes did not change.",
    tags=("diabetes", "regression", "split"),
)
def _pdrift_diab(seed: int) -> ScenarioData:
    train, test = split(diabetes(), None, seed=seed, stratify=False)
    test = test.copy()
    test["s5"] = (test["s5"] + 0.6).round(4)
    test["bmi"] = (test["bmi"] + 3.5).round(1)
    return make_data(train, test, "progression", fit(ridge(), train, "progression"), "regressor")


# --------------------------------------------------------------------------- unseen_categories


@scenario(
    "unseen_categories.loan_new_purposes_35pct",
    "unseen_categories",
    "35% of the test loans have a purpose (solar, medical, wedding) that never occurs in training.",
    tags=("loan", "binary", "split"),
)
def _unseen_loan(seed: int) -> ScenarioData:
    rng = np.random.default_rng(seed)
    train, test = split(make_loan(2000, seed), "default", seed=seed)
    purpose = test["purpose"].to_numpy(dtype=object, copy=True)
    hit = rng.random(len(test)) < 0.35
    purpose[hit] = rng.choice(["solar", "medical", "wedding"], int(hit.sum()))
    test["purpose"] = pd.Series(purpose, index=test.index).astype(train["purpose"].dtype)
    return loan_workflow(train, test, seed)


@scenario(
    "unseen_categories.churn_expansion_markets_60pct",
    "unseen_categories",
    "60% of the test customers live in expansion markets (IT, NL, PL, SE) absent from training.",
    tags=("churn", "binary", "split"),
)
def _unseen_churn(seed: int) -> ScenarioData:
    rng = np.random.default_rng(seed)
    train, test = split(make_churn(2000, seed), "churned", seed=seed)
    country = test["country"].to_numpy(dtype=object, copy=True)
    hit = rng.random(len(test)) < 0.6
    country[hit] = rng.choice(["IT", "NL", "PL", "SE"], int(hit.sum()))
    test["country"] = pd.Series(country, index=test.index).astype(train["country"].dtype)
    model = fit(logistic(seed, CHURN_CATEGORICAL), train, "churned", drop=("signup_date",))
    return make_data(train, test, "churned", model, "classifier")


# --------------------------------------------------------------------------- temporal_leakage


@scenario(
    "temporal_leakage.churn_random_split_over_time",
    "temporal_leakage",
    "Customers who signed up over 30 months are split at random, so the model is tested on "
    "customers older than most it was trained on while churn drifts upwards over time.",
    tags=("churn", "binary", "split"),
)
def _temporal_churn(seed: int) -> ScenarioData:
    train, test = split(make_churn(2500, seed, trend=2.0), "churned", seed=seed)
    model = fit(gradient_boosting(seed, CHURN_CATEGORICAL), train, "churned", drop=("signup_date",))
    return make_data(train, test, "churned", model, "classifier", {"datetime_col": "signup_date"})


@scenario(
    "temporal_leakage.sales_sorted_newest_first",
    "temporal_leakage",
    "The sales history was sorted newest-first before an unshuffled split, so the model trains on "
    "the latest 27 months and is tested on the 9 months before them.",
    tags=("sales", "regression", "split"),
)
def _temporal_sales(seed: int) -> ScenarioData:
    frame = make_sales(1100, seed).sort_values("date", ascending=False)
    train, test = train_test_split(frame, test_size=0.25, shuffle=False)
    model = fit(gradient_boosting(seed, regression=True), train, "sales", drop=("date",))
    return make_data(train, test, "sales", model, "regressor", {"datetime_col": "date"})


# --------------------------------------------------------------------------- split_size_mismatch


@scenario(
    "split_size_mismatch.classification_25_test_rows",
    "split_size_mismatch",
    "3,000 training rows are evaluated on a test split of 25 rows.",
    tags=("make_classification", "binary", "split"),
)
def _size_small_test(seed: int) -> ScenarioData:
    frame = classification_frame(seed, n=3025, n_features=10, flip_y=0.03)
    train, test = split(frame, "label", seed=seed, test_size=25)
    return make_data(
        train, test, "label", fit(gradient_boosting(seed), train, "label"), "classifier"
    )


@scenario(
    "split_size_mismatch.breast_cancer_40_train_rows",
    "split_size_mismatch",
    "train_size and test_size were swapped: the model learns from 40 rows and is tested on 529.",
    tags=("breast_cancer", "binary", "split"),
)
def _size_small_train(seed: int) -> ScenarioData:
    train, test = split(breast_cancer(), "benign", seed=seed, test_size=529)
    return make_data(train, test, "benign", fit(logistic(seed), train, "benign"), "classifier")


# --------------------------------------------------------------------------- schema_mismatch


@scenario(
    "schema_mismatch.loan_renamed_income_column",
    "schema_mismatch",
    "Upstream renamed 'annual_income' to 'income' in the scoring data, so the model cannot find "
    "a column it was trained on.",
    tags=("loan", "binary", "split"),
)
def _schema_loan(seed: int) -> ScenarioData:
    train, test = split(make_loan(2000, seed), "default", seed=seed)
    test = test.rename(columns={"annual_income": "income"})
    return loan_workflow(train, test, seed)


@scenario(
    "schema_mismatch.diabetes_dropped_column",
    "schema_mismatch",
    "The scoring extract no longer has the 's3' column the model was trained with.",
    tags=("diabetes", "regression", "split"),
)
def _schema_diab(seed: int) -> ScenarioData:
    train, test = split(diabetes(), None, seed=seed, stratify=False)
    test = test.drop(columns=["s3"])
    return make_data(train, test, "progression", fit(ridge(), train, "progression"), "regressor")


@scenario(
    "schema_mismatch.wine_numbers_as_strings",
    "schema_mismatch",
    "The test export quotes 'alcohol' and 'magnesium', so they arrive as strings where the model "
    "was trained on floats.",
    tags=("wine", "multiclass", "split"),
)
def _schema_wine(seed: int) -> ScenarioData:
    train, test = split(wine(), "cultivar", seed=seed, test_size=0.3)
    test = test.copy()
    for col in ("alcohol", "magnesium"):
        test[col] = test[col].map(lambda v: f"{v:g}").astype(object)
    return make_data(train, test, "cultivar", fit(logistic(seed), train, "cultivar"), "classifier")
