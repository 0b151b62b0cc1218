"""Data-layer scenarios: the bug sits in the rows and columns themselves.

Each scenario otherwise follows a healthy workflow (stratified split, reasonable
model), so the planted defect is the one thing a diagnosis should point at.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from mlflow_deepfix.bench.scenarios._base import (
    ScenarioData,
    fit,
    gradient_boosting,
    loan_workflow,
    logistic,
    make_data,
    one_hot,
    random_forest,
    ridge,
    scenario,
    split,
)
from mlflow_deepfix.bench.scenarios._datasets import (
    CHURN_CATEGORICAL,
    LOAN_CATEGORICAL,
    breast_cancer,
    classification_frame,
    diabetes,
    make_churn,
    make_loan,
)

#: the five breast-cancer features most associated with the diagnosis
BC_TOP_FEATURES = [
    "worst_concave_points",
    "worst_perimeter",
    "mean_concave_points",
    "worst_radius",
    "worst_area",
]


# --------------------------------------------------------------------------- missing_values


@scenario(
    "missing_values.breast_cancer_30pct_zero_filled",
    "missing_values",
    "30% of the values of the five most informative features are missing and the pipeline fills them with 0.",
    tags=("breast_cancer", "binary", "data"),
)
def _missing_bc(seed: int) -> ScenarioData:
    rng = np.random.default_rng(seed)
    frame = breast_cancer()
    for col in BC_TOP_FEATURES:
        frame.loc[rng.random(len(frame)) < 0.3, col] = np.nan
    train, test = split(frame, "benign", seed=seed)
    model = Pipeline(
        [
            ("impute", SimpleImputer(strategy="constant", fill_value=0.0)),
            ("scale", StandardScaler()),
            ("model", LogisticRegression(max_iter=2000, random_state=seed)),
        ]
    )
    return make_data(train, test, "benign", fit(model, train, "benign"), "classifier")


@scenario(
    "missing_values.loan_mnar_mixed_markers",
    "missing_values",
    "Income, employment and debt-to-income are missing for about 20% of applicants (more often for "
    "defaulters) and home ownership mixes NaN, 'N/A' and '' as null markers.",
    tags=("loan", "binary", "data"),
)
def _missing_loan(seed: int) -> ScenarioData:
    rng = np.random.default_rng(seed)
    frame = make_loan(2000, seed)
    p_missing = np.where(frame["default"] == 1, 0.4, 0.13)
    for col in ("annual_income", "employment_years", "debt_to_income"):
        frame.loc[rng.random(len(frame)) < p_missing, col] = np.nan
    home = frame["home_ownership"].astype(object)
    blank = rng.random(len(frame)) < 0.2
    home[blank] = rng.choice(np.array([np.nan, "N/A", ""], dtype=object), int(blank.sum()))
    frame["home_ownership"] = home
    train, test = split(frame, "default", seed=seed)
    model = Pipeline(
        [
            ("encode", one_hot(LOAN_CATEGORICAL)),
            ("impute", SimpleImputer(strategy="mean")),
            ("model", GradientBoostingClassifier(n_estimators=60, max_depth=3, random_state=seed)),
        ]
    )
    model = fit(model, train, "default", drop=("application_date",))
    return make_data(train, test, "default", model, "classifier")


# --------------------------------------------------------------------------- data_type_issues


def _money(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Amounts exported as text in several formats: '$52,300', '52,300.00', '52300'."""
    fmt = rng.integers(0, 3, len(values))
    out = np.empty(len(values), dtype=object)
    for i, (value, f) in enumerate(zip(values, fmt)):
        out[i] = (f"${value:,.0f}", f"{value:,.2f}", f"{value:.0f}")[f]
    return out


@scenario(
    "data_type_issues.loan_amounts_as_text",
    "data_type_issues",
    "Income and loan amount arrive as text with currency symbols and thousands separators, so the "
    "pipeline one-hot encodes them as if they were categories.",
    tags=("loan", "binary", "data"),
)
def _dtype_loan(seed: int) -> ScenarioData:
    rng = np.random.default_rng(seed)
    frame = make_loan(2000, seed)
    frame["annual_income"] = _money(frame["annual_income"].to_numpy(), rng)
    frame["loan_amount"] = _money(frame["loan_amount"].to_numpy(), rng)
    train, test = split(frame, "default", seed=seed)
    cats = [*LOAN_CATEGORICAL, "annual_income", "loan_amount"]
    model = fit(logistic(seed, cats), train, "default", drop=("application_date",))
    return make_data(train, test, "default", model, "classifier")


def _variants(values: pd.Series, rng: np.random.Generator, share: float) -> pd.Series:
    """Re-type ``share`` of the values with case and whitespace variants."""
    out = values.astype(object).copy()
    hit = rng.random(len(out)) < share
    styles = rng.integers(0, 4, len(out))
    for i in np.flatnonzero(hit):
        v = str(out.iloc[i])
        out.iloc[i] = (v.upper(), v.title() + " ", " " + v, v.capitalize())[styles[i]]
    return out


@scenario(
    "data_type_issues.churn_category_variants",
    "data_type_issues",
    "Plan, contract and country are typed by hand: 35% of the values are case or whitespace "
    "variants ('Premium ', ' premium', 'PREMIUM') of the same category.",
    tags=("churn", "binary", "data"),
)
def _dtype_churn(seed: int) -> ScenarioData:
    rng = np.random.default_rng(seed)
    frame = make_churn(2000, seed)
    for col in CHURN_CATEGORICAL:
        frame[col] = _variants(frame[col], rng, 0.35)
    train, test = split(frame, "churned", seed=seed)
    model = fit(logistic(seed, CHURN_CATEGORICAL), train, "churned", drop=("signup_date",))
    return make_data(train, test, "churned", model, "classifier")


# --------------------------------------------------------------------------- duplicate_samples


@scenario(
    "duplicate_samples.breast_cancer_oversampled_by_copy",
    "duplicate_samples",
    "The malignant training rows were oversampled by copying each of them twice more, so about 43% "
    "of the training rows are exact duplicates.",
    tags=("breast_cancer", "binary", "data"),
)
def _dup_bc(seed: int) -> ScenarioData:
    train, test = split(breast_cancer(), "benign", seed=seed)
    minority = train[train["benign"] == 0]
    train = pd.concat([train, minority, minority], ignore_index=True)
    train = train.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    model = fit(random_forest(seed), train, "benign")
    return make_data(train, test, "benign", model, "classifier")


@scenario(
    "duplicate_samples.classification_batch_loaded_twice",
    "duplicate_samples",
    "A retried ETL job appended a quarter of the training rows a second time (20% of the training "
    "split are duplicates).",
    tags=("make_classification", "binary", "data"),
)
def _dup_cls(seed: int) -> ScenarioData:
    train, test = split(classification_frame(seed, n=2000, n_features=10), "label", seed=seed)
    batch = train.sample(frac=0.25, random_state=seed)
    train = pd.concat([train, batch], ignore_index=True)
    model = fit(gradient_boosting(seed), train, "label")
    return make_data(train, test, "label", model, "classifier")


# --------------------------------------------------------------------------- conflicting_labels


@scenario(
    "conflicting_labels.breast_cancer_second_annotator_20pct",
    "conflicting_labels",
    "20% of the training cases were annotated twice with opposite diagnoses and both copies kept.",
    tags=("breast_cancer", "binary", "data"),
)
def _conflict_bc(seed: int) -> ScenarioData:
    train, test = split(breast_cancer(), "benign", seed=seed)
    relabelled = train.sample(frac=0.2, random_state=seed).copy()
    relabelled["benign"] = 1 - relabelled["benign"]
    train = pd.concat([train, relabelled], ignore_index=True).sample(frac=1.0, random_state=seed)
    model = fit(random_forest(seed), train, "benign")
    return make_data(train, test, "benign", model, "classifier")


@scenario(
    "conflicting_labels.multiclass_merged_sources_10pct",
    "conflicting_labels",
    "Two labelled sources were merged with different class codes: 10% of the training rows appear "
    "again under another class.",
    tags=("make_classification", "multiclass", "data"),
)
def _conflict_multi(seed: int) -> ScenarioData:
    rng = np.random.default_rng(seed)
    frame = classification_frame(seed, n=1500, n_features=8, n_classes=3, n_informative=5)
    train, test = split(frame, "label", seed=seed)
    again = train.sample(frac=0.1, random_state=seed).copy()
    again["label"] = (again["label"] + rng.integers(1, 3, len(again))) % 3
    train = pd.concat([train, again], ignore_index=True).sample(frac=1.0, random_state=seed)
    model = fit(random_forest(seed), train, "label")
    return make_data(train, test, "label", model, "classifier")


# --------------------------------------------------------------------------- target_leakage


@scenario(
    "target_leakage.breast_cancer_biopsy_score",
    "target_leakage",
    "A 'biopsy_score' column is the diagnosis itself plus small noise, entered after the outcome "
    "was known.",
    tags=("breast_cancer", "binary", "data"),
)
def _leak_bc(seed: int) -> ScenarioData:
    rng = np.random.default_rng(seed)
    frame = breast_cancer()
    frame.insert(3, "biopsy_score", (frame["benign"] + rng.normal(0, 0.1, len(frame))).round(3))
    train, test = split(frame, "benign", seed=seed)
    return make_data(train, test, "benign", fit(random_forest(seed), train, "benign"), "classifier")


@scenario(
    "target_leakage.loan_collection_calls",
    "target_leakage",
    "The warehouse snapshot includes 'collection_calls', recorded after a borrower defaulted.",
    tags=("loan", "binary", "data"),
)
def _leak_loan(seed: int) -> ScenarioData:
    rng = np.random.default_rng(seed)
    frame = make_loan(2000, seed)
    calls = np.where(
        frame["default"] == 1, rng.poisson(4.0, len(frame)), rng.poisson(0.05, len(frame))
    )
    frame.insert(7, "collection_calls", calls.astype(float))
    train, test = split(frame, "default", seed=seed)
    return loan_workflow(train, test, seed)


# --------------------------------------------------------------------------- identifier_leakage


@scenario(
    "identifier_leakage.breast_cancer_sorted_record_id",
    "identifier_leakage",
    "The export was sorted by diagnosis before a running 'record_id' was assigned, and the model "
    "is fed that id.",
    tags=("breast_cancer", "binary", "data"),
)
def _ident_bc(seed: int) -> ScenarioData:
    frame = breast_cancer().sort_values("benign", kind="stable").reset_index(drop=True)
    frame.insert(0, "record_id", np.arange(100001, 100001 + len(frame)))
    train, test = split(frame, "benign", seed=seed)
    return make_data(train, test, "benign", fit(random_forest(seed), train, "benign"), "classifier")


@scenario(
    "identifier_leakage.churn_customer_id_ranges",
    "identifier_leakage",
    "80% of churned customers were migrated from the retention system with ids above 700000; the id "
    "is declared as index_col but still fed to the model.",
    tags=("churn", "binary", "data"),
)
def _ident_churn(seed: int) -> ScenarioData:
    rng = np.random.default_rng(seed)
    frame = make_churn(2000, seed)
    migrated = (frame["churned"] == 1).to_numpy() & (rng.random(len(frame)) < 0.8)
    ids = rng.choice(np.arange(100000, 400000), len(frame), replace=False)
    ids[migrated] = rng.choice(np.arange(700000, 800000), int(migrated.sum()), replace=False)
    frame.insert(0, "customer_id", ids)
    train, test = split(frame, "churned", seed=seed)
    model = fit(gradient_boosting(seed, CHURN_CATEGORICAL), train, "churned", drop=("signup_date",))
    return make_data(train, test, "churned", model, "classifier", {"index_col": "customer_id"})


# --------------------------------------------------------------------------- constant_feature


@scenario(
    "constant_feature.breast_cancer_5_constant_columns",
    "constant_feature",
    "Five columns from a failed lab-system join hold a single value in every row.",
    tags=("breast_cancer", "binary", "data"),
)
def _const_bc(seed: int) -> ScenarioData:
    frame = breast_cancer()
    for i, (col, value) in enumerate(
        {
            "scanner_version": 3.0,
            "calibration_factor": 1.0,
            "lab_id": 7.0,
            "protocol": 2.0,
            "reviewed": 0.0,
        }.items()
    ):
        frame.insert(5 + 4 * i, col, value)
    train, test = split(frame, "benign", seed=seed)
    return make_data(train, test, "benign", fit(random_forest(seed), train, "benign"), "classifier")


@scenario(
    "constant_feature.diabetes_3_frozen_sensors",
    "constant_feature",
    "Three of the ten measurements (bp, s4, s6) come from stuck devices that report one value for "
    "every patient.",
    tags=("diabetes", "regression", "data"),
)
def _const_diab(seed: int) -> ScenarioData:
    frame = diabetes()
    for col in ("bp", "s4", "s6"):
        frame[col] = float(frame[col].iloc[0])
    train, test = split(frame, None, seed=seed, stratify=False)
    return make_data(train, test, "progression", fit(ridge(), train, "progression"), "regressor")


# --------------------------------------------------------------------------- outliers


@scenario(
    "outliers.breast_cancer_unit_error_5pct",
    "outliers",
    "For 5% of the cases three size measurements were recorded in the wrong unit (x1000).",
    tags=("breast_cancer", "binary", "data"),
)
def _outlier_bc(seed: int) -> ScenarioData:
    rng = np.random.default_rng(seed)
    frame = breast_cancer()
    rows = rng.random(len(frame)) < 0.05
    for col in ("mean_radius", "worst_perimeter", "mean_area"):
        frame.loc[rows, col] = frame.loc[rows, col] * 1000.0
    train, test = split(frame, "benign", seed=seed)
    return make_data(train, test, "benign", fit(logistic(seed), train, "benign"), "classifier")


@scenario(
    "outliers.diabetes_sensor_glitch_3pct",
    "outliers",
    "3% of the patients carry the device error code 9999 in place of bmi and blood pressure.",
    tags=("diabetes", "regression", "data"),
)
def _outlier_diab(seed: int) -> ScenarioData:
    rng = np.random.default_rng(seed)
    frame = diabetes()
    rows = rng.random(len(frame)) < 0.03
    rows[rng.integers(0, len(frame))] = True
    frame.loc[rows, ["bmi", "bp"]] = 9999.0
    train, test = split(frame, None, seed=seed, stratify=False)
    return make_data(train, test, "progression", fit(ridge(), train, "progression"), "regressor")


# --------------------------------------------------------------------------- class_imbalance


@scenario(
    "class_imbalance.loan_3pct_defaults",
    "class_imbalance",
    "Only 3% of the loans default and the model is trained without any class weighting or "
    "resampling, so it almost never predicts a default.",
    tags=("loan", "binary", "data"),
)
def _imb_binary(seed: int) -> ScenarioData:
    train, test = split(make_loan(3000, seed, default_rate_shift=-3.0), "default", seed=seed)
    return loan_workflow(train, test, seed)


@scenario(
    "class_imbalance.multiclass_90_8_2",
    "class_imbalance",
    "A three-class problem where the rarest class holds 2% of the rows and the forest is trained "
    "without class weights.",
    tags=("make_classification", "multiclass", "data"),
)
def _imb_multi(seed: int) -> ScenarioData:
    frame = classification_frame(
        seed,
        n=3000,
        n_features=10,
        n_classes=3,
        weights=[0.9, 0.08, 0.02],
        flip_y=0.0,
        class_sep=1.5,
        n_informative=4,
    )
    train, test = split(frame, "label", seed=seed)
    return make_data(train, test, "label", fit(random_forest(seed), train, "label"), "classifier")
