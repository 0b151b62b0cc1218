"""Clean controls: healthy workflows with no planted bug.

A diagnosis engine that raises medium-or-worse findings here produces false alarms;
the bench counts them. They cover binary, multiclass and regression tasks, tree
ensembles, linear pipelines and a neighbours model, and one correct time-based split.
"""

from __future__ import annotations

from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

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
    breast_cancer,
    diabetes,
    iris,
    make_loan,
    regression_frame,
    wine,
)


@scenario(
    "clean.breast_cancer_random_forest",
    None,
    "A shallow random forest on a stratified breast-cancer split.",
    tags=("breast_cancer", "binary", "clean"),
)
def _clean_bc(seed: int) -> ScenarioData:
    train, test = split(breast_cancer(), "benign", seed=seed)
    model = fit(random_forest(seed, max_depth=4), train, "benign")
    return make_data(train, test, "benign", model, "classifier")


@scenario(
    "clean.wine_logistic_pipeline",
    None,
    "A scaled logistic regression on a stratified three-class wine split.",
    tags=("wine", "multiclass", "clean"),
)
def _clean_wine(seed: int) -> ScenarioData:
    train, test = split(wine(), "cultivar", seed=seed, test_size=0.3)
    return make_data(train, test, "cultivar", fit(logistic(seed), train, "cultivar"), "classifier")


@scenario(
    "clean.diabetes_ridge_pipeline",
    None,
    "A scaled ridge regression on a shuffled diabetes split.",
    tags=("diabetes", "regression", "clean"),
)
def _clean_diab(seed: int) -> ScenarioData:
    train, test = split(diabetes(), None, seed=seed, stratify=False, test_size=0.33)
    return make_data(train, test, "progression", fit(ridge(), train, "progression"), "regressor")


@scenario(
    "clean.loan_gradient_boosting_time_split",
    None,
    "Gradient boosting on a loan book split by application date (train on the past, test on the "
    "latest quarter), with datetime_col declared.",
    tags=("loan", "binary", "clean"),
)
def _clean_loan(seed: int) -> ScenarioData:
    frame = (
        make_loan(2500, seed).sort_values("application_date", kind="stable").reset_index(drop=True)
    )
    cut = int(len(frame) * 0.75)
    train, test = frame.iloc[:cut], frame.iloc[cut:]
    return loan_workflow(train, test, seed, {"datetime_col": "application_date"})


@scenario(
    "clean.regression_gradient_boosting",
    None,
    "Gradient boosting on a generated regression problem with ten informative-or-not features.",
    tags=("make_regression", "regression", "clean"),
)
def _clean_reg(seed: int) -> ScenarioData:
    train, test = split(
        regression_frame(seed, n=1500, n_features=10, n_informative=7),
        None,
        seed=seed,
        stratify=False,
    )
    model = fit(gradient_boosting(seed, regression=True, n_estimators=150), train, "target")
    return make_data(train, test, "target", model, "regressor")


@scenario(
    "clean.iris_nearest_neighbours",
    None,
    "A scaled 7-nearest-neighbour classifier on a stratified iris split.",
    tags=("iris", "multiclass", "clean"),
)
def _clean_iris(seed: int) -> ScenarioData:
    train, test = split(iris(), "species", seed=seed, test_size=0.3)
    model = Pipeline([("scale", StandardScaler()), ("model", KNeighborsClassifier(n_neighbors=7))])
    return make_data(train, test, "species", fit(model, train, "species"), "classifier")
