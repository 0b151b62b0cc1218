"""Model-layer scenarios: clean data and a clean split, but a model that is wrong for
the job (too flexible, too rigid, collapsed, miscalibrated, mis-thresholded, fed
untransformed inputs, built for another task, or blind to most of its inputs)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import sklearn
from sklearn.compose import TransformedTargetRegressor
from sklearn.datasets import make_friedman1
from sklearn.linear_model import Lasso, LinearRegression, LogisticRegression, Ridge
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsRegressor
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from mlflow_deepfix.bench.scenarios._base import (
    ScenarioData,
    fit,
    gradient_boosting,
    loan_workflow,
    logistic,
    make_data,
    random_forest,
    scenario,
    split,
    xy,
)
from mlflow_deepfix.bench.scenarios._datasets import (
    CHURN_CATEGORICAL,
    LOAN_CATEGORICAL,
    breast_cancer,
    classification_frame,
    diabetes,
    make_churn,
    make_loan,
    regression_frame,
)


def _l1_logistic(seed: int, C: float) -> LogisticRegression:
    """An L1-penalised logistic regression on any scikit-learn >= 1.3 (``penalty`` is
    deprecated from 1.8 in favour of ``l1_ratio``)."""
    major, minor = (int(p) for p in sklearn.__version__.split(".")[:2])
    if (major, minor) >= (1, 8):
        return LogisticRegression(
            l1_ratio=1.0, solver="saga", C=C, max_iter=5000, random_state=seed
        )
    return LogisticRegression(penalty="l1", solver="saga", C=C, max_iter=5000, random_state=seed)


# --------------------------------------------------------------------------- overfitting


@scenario(
    "overfitting.classification_unpruned_tree_noisy_labels",
    "overfitting",
    "An unpruned decision tree memorises a training set with 30% label noise: perfect on train, "
    "far worse on test.",
    tags=("make_classification", "binary", "model"),
)
def _overfit_tree(seed: int) -> ScenarioData:
    frame = classification_frame(seed, n=1500, n_features=20, n_informative=5, flip_y=0.3)
    train, test = split(frame, "label", seed=seed)
    model = fit(DecisionTreeClassifier(random_state=seed), train, "label")
    return make_data(train, test, "label", model, "classifier")


@scenario(
    "overfitting.diabetes_1_nearest_neighbour",
    "overfitting",
    "A 1-nearest-neighbour regressor reproduces every training target exactly and generalises poorly.",
    tags=("diabetes", "regression", "model"),
)
def _overfit_knn(seed: int) -> ScenarioData:
    train, test = split(diabetes(), None, seed=seed, stratify=False)
    model = Pipeline([("scale", StandardScaler()), ("model", KNeighborsRegressor(n_neighbors=1))])
    return make_data(train, test, "progression", fit(model, train, "progression"), "regressor")


# --------------------------------------------------------------------------- underfitting


def _dose_frame(seed: int, n: int = 2000) -> pd.DataFrame:
    """Adverse reactions at both too-low and too-high doses (a U-shaped risk), plus five
    patient measurements that do not matter; 5% of the labels are flipped."""
    rng = np.random.default_rng(seed)
    dose = rng.uniform(0, 10, n).round(2)
    frame = pd.DataFrame(
        {
            "dose_mg": dose,
            "patient_age": rng.integers(18, 90, n).astype(float),
            "weight_kg": rng.normal(75, 12, n).round(1),
            "creatinine": rng.normal(1.0, 0.2, n).round(2),
            "heart_rate": rng.normal(72, 9, n).round(),
            "systolic_bp": rng.normal(125, 14, n).round(),
        }
    )
    reaction = ((dose < 2.5) | (dose > 7.5)).astype(int)
    frame["reaction"] = np.where(rng.random(n) < 0.05, 1 - reaction, reaction)
    return frame


@scenario(
    "underfitting.dose_response_linear_model",
    "underfitting",
    "A linear logistic regression is fitted to a U-shaped dose response (reactions at both low "
    "and high doses) and scores no better than guessing, where a depth-2 tree would reach 90%.",
    tags=("generated", "binary", "model"),
)
def _underfit_dose(seed: int) -> ScenarioData:
    train, test = split(_dose_frame(seed), "reaction", seed=seed)
    return make_data(train, test, "reaction", fit(logistic(seed), train, "reaction"), "classifier")


@scenario(
    "underfitting.friedman_depth_1_stump",
    "underfitting",
    "A depth-1 regression tree on the non-linear Friedman #1 problem explains a fraction of what a "
    "plain linear model does.",
    tags=("make_friedman1", "regression", "model"),
)
def _underfit_stump(seed: int) -> ScenarioData:
    features, target = make_friedman1(n_samples=1500, n_features=8, noise=1.0, random_state=seed)
    frame = pd.DataFrame(features.round(4), columns=[f"x{i}" for i in range(8)])
    frame["target"] = target.round(3)
    train, test = split(frame, None, seed=seed, stratify=False)
    model = fit(DecisionTreeRegressor(max_depth=1, random_state=seed), train, "target")
    return make_data(train, test, "target", model, "regressor")


# --------------------------------------------------------------------------- degenerate_predictions


@scenario(
    "degenerate_predictions.breast_cancer_overregularised_logistic",
    "degenerate_predictions",
    "C=1e-6 (a config value in the wrong units) shrinks every coefficient to zero, so the model "
    "predicts 'benign' for every case.",
    tags=("breast_cancer", "binary", "model"),
)
def _degenerate_bc(seed: int) -> ScenarioData:
    train, test = split(breast_cancer(), "benign", seed=seed)
    return make_data(
        train, test, "benign", fit(logistic(seed, C=1e-6), train, "benign"), "classifier"
    )


@scenario(
    "degenerate_predictions.diabetes_double_log_target",
    "degenerate_predictions",
    "The target transform uses log1p as its own inverse, so every prediction lands near 1.7 for "
    "targets between 25 and 346.",
    tags=("diabetes", "regression", "model"),
)
def _degenerate_diab(seed: int) -> ScenarioData:
    train, test = split(diabetes(), None, seed=seed, stratify=False)
    model = TransformedTargetRegressor(
        regressor=Pipeline([("scale", StandardScaler()), ("model", Ridge())]),
        func=np.log1p,
        inverse_func=np.log1p,
        check_inverse=False,
    )
    return make_data(train, test, "progression", fit(model, train, "progression"), "regressor")


# --------------------------------------------------------------------------- poor_calibration


@scenario(
    "poor_calibration.noisy_naive_bayes_duplicated_signals",
    "poor_calibration",
    "Each of six noisy signals is logged by five systems; naive Bayes counts the copies as "
    "independent evidence and pushes probabilities to 0 or 1 on a task with 30% label noise.",
    tags=("make_classification", "binary", "model"),
)
def _calibration_nb(seed: int) -> ScenarioData:
    rng = np.random.default_rng(seed)
    base = classification_frame(seed, n=2000, n_features=6, n_informative=6, flip_y=0.3)
    columns = {}
    for i in range(6):
        for copy in range(5):
            columns[f"signal{i}_sys{copy}"] = (
                base[f"x{i}"] + rng.normal(0, 0.05, len(base))
            ).round(4)
    frame = pd.DataFrame(columns)
    frame["label"] = base["label"]
    train, test = split(frame, "label", seed=seed)
    return make_data(train, test, "label", fit(GaussianNB(), train, "label"), "classifier")


@scenario(
    "poor_calibration.loan_balanced_class_weights",
    "poor_calibration",
    "class_weight='balanced' on a book with 10% defaults inflates every predicted default "
    "probability about fourfold.",
    tags=("loan", "binary", "model"),
)
def _calibration_loan(seed: int) -> ScenarioData:
    train, test = split(make_loan(2500, seed, default_rate_shift=-1.2), "default", seed=seed)
    model = fit(
        logistic(seed, LOAN_CATEGORICAL, class_weight="balanced"),
        train,
        "default",
        drop=("application_date",),
    )
    return make_data(train, test, "default", model, "classifier")


# --------------------------------------------------------------------------- decision_threshold


@scenario(
    "decision_threshold.classification_90_10",
    "decision_threshold",
    "With 10% positives the model ranks well but the default 0.5 threshold misses most positives; "
    "a lower threshold gives a much better F1.",
    tags=("make_classification", "binary", "model"),
)
def _threshold_cls(seed: int) -> ScenarioData:
    frame = classification_frame(
        seed, n=3000, n_features=10, n_informative=4, weights=[0.9], class_sep=1.2, flip_y=0.0
    )
    train, test = split(frame, "label", seed=seed)
    return make_data(train, test, "label", fit(logistic(seed), train, "label"), "classifier")


@scenario(
    "decision_threshold.loan_8pct_defaults",
    "decision_threshold",
    "A default model for a book with about 8% defaults is used at the 0.5 threshold, which flags "
    "almost none of them.",
    tags=("loan", "binary", "model"),
)
def _threshold_loan(seed: int) -> ScenarioData:
    train, test = split(make_loan(3000, seed, default_rate_shift=-1.5), "default", seed=seed)
    return loan_workflow(train, test, seed)


# --------------------------------------------------------------------------- weak_segment


@scenario(
    "weak_segment.churn_partner_country_noisy_labels",
    "weak_segment",
    "Churn flags for German customers come from a reseller whose records are unreliable: in that "
    "15% segment labels are essentially random.",
    tags=("churn", "binary", "model"),
)
def _segment_churn(seed: int) -> ScenarioData:
    rng = np.random.default_rng(seed)
    frame = make_churn(2500, seed)
    de = (frame["country"] == "DE").to_numpy()
    frame.loc[de, "churned"] = (rng.random(int(de.sum())) < 0.5).astype(int)
    train, test = split(frame, "churned", seed=seed)
    model = fit(gradient_boosting(seed, CHURN_CATEGORICAL), train, "churned", drop=("signup_date",))
    return make_data(train, test, "churned", model, "classifier")


@scenario(
    "weak_segment.regression_wholesale_channel",
    "weak_segment",
    "Wholesale orders (20% of rows) carry targets booked against the wrong orders, so on that "
    "channel the model is no better than the mean.",
    tags=("make_regression", "regression", "model"),
)
def _segment_reg(seed: int) -> ScenarioData:
    rng = np.random.default_rng(seed)
    frame = regression_frame(seed, n=1500, n_features=8, n_informative=5, noise=5.0)
    frame.insert(
        0, "channel", rng.choice(["online", "retail", "wholesale"], len(frame), p=[0.45, 0.35, 0.2])
    )
    wholesale = (frame["channel"] == "wholesale").to_numpy()
    frame.loc[wholesale, "target"] = rng.permutation(frame.loc[wholesale, "target"].to_numpy())
    train, test = split(frame, None, seed=seed, stratify=False)
    model = fit(
        gradient_boosting(seed, ["channel"], regression=True, n_estimators=80), train, "target"
    )
    return make_data(train, test, "target", model, "regressor")


# --------------------------------------------------------------------------- preprocessing_mismatch


def _fit_on_scaled(model, train: pd.DataFrame, target: str):
    """Fit ``model`` on standardised features, then ship it without the scaler."""
    features, labels = xy(train, target)
    scaled = pd.DataFrame(StandardScaler().fit_transform(features), columns=features.columns)
    return model.fit(scaled, labels)


@scenario(
    "preprocessing_mismatch.breast_cancer_scaler_not_shipped",
    "preprocessing_mismatch",
    "A logistic regression was trained on standardised features, but only the estimator was "
    "logged, so at inference it sees raw features whose scales span four orders of magnitude.",
    tags=("breast_cancer", "binary", "model"),
)
def _prep_bc(seed: int) -> ScenarioData:
    train, test = split(breast_cancer(), "benign", seed=seed)
    model = _fit_on_scaled(LogisticRegression(max_iter=2000, random_state=seed), train, "benign")
    return make_data(train, test, "benign", model, "classifier")


@scenario(
    "preprocessing_mismatch.diabetes_knn_scaler_not_shipped",
    "preprocessing_mismatch",
    "A 10-nearest-neighbour regressor was trained on standardised clinical measurements and is "
    "served raw ones, so every query lands near the same neighbours.",
    tags=("diabetes", "regression", "model"),
)
def _prep_diab(seed: int) -> ScenarioData:
    train, test = split(diabetes(), None, seed=seed, stratify=False)
    model = _fit_on_scaled(KNeighborsRegressor(n_neighbors=10), train, "progression")
    return make_data(train, test, "progression", model, "regressor")


# --------------------------------------------------------------------------- wrong_task_type


@scenario(
    "wrong_task_type.breast_cancer_linear_regression_as_classifier",
    "wrong_task_type",
    "LinearRegression was used where LogisticRegression was meant: the 'classifier' outputs "
    "continuous scores such as 0.73 or -0.12.",
    tags=("breast_cancer", "binary", "model"),
)
def _task_bc(seed: int) -> ScenarioData:
    train, test = split(breast_cancer(), "benign", seed=seed)
    model = Pipeline([("scale", StandardScaler()), ("model", LinearRegression())])
    return make_data(train, test, "benign", fit(model, train, "benign"), "classifier")


@scenario(
    "wrong_task_type.diabetes_classifier_on_continuous_target",
    "wrong_task_type",
    "The integer-valued progression score was fitted with a classifier, treating each of ~200 "
    "distinct values as a class, and evaluated as a regressor.",
    tags=("diabetes", "regression", "model"),
)
def _task_diab(seed: int) -> ScenarioData:
    train, test = split(diabetes(), None, seed=seed, stratify=False)
    model = fit(
        random_forest(seed, n_estimators=30, max_depth=8, min_samples_leaf=1), train, "progression"
    )
    return make_data(train, test, "progression", model, "regressor")


# --------------------------------------------------------------------------- unused_features


@scenario(
    "unused_features.classification_20_of_25_ignored",
    "unused_features",
    "Twenty of twenty-five collected features carry no signal and the L1-penalised model gives "
    "them zero weight.",
    tags=("make_classification", "binary", "model"),
)
def _unused_cls(seed: int) -> ScenarioData:
    frame = classification_frame(
        seed, n=2000, n_features=25, n_informative=5, shuffle=False, flip_y=0.02
    )
    train, test = split(frame, "label", seed=seed)
    model = Pipeline([("scale", StandardScaler()), ("model", _l1_logistic(seed, C=0.02))])
    return make_data(train, test, "label", fit(model, train, "label"), "classifier")


@scenario(
    "unused_features.regression_lasso_26_of_30_ignored",
    "unused_features",
    "Only 4 of 30 columns drive the target; the lasso zeroes the other 26, which are still "
    "collected and served.",
    tags=("make_regression", "regression", "model"),
)
def _unused_reg(seed: int) -> ScenarioData:
    frame = regression_frame(seed, n=1500, n_features=30, n_informative=4, noise=10.0)
    train, test = split(frame, None, seed=seed, stratify=False)
    model = Pipeline([("scale", StandardScaler()), ("model", Lasso(alpha=2.0, random_state=seed))])
    return make_data(train, test, "target", fit(model, train, "target"), "regressor")
