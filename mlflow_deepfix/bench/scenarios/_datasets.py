"""The datasets scenarios are built from: scikit-learn's bundled ones and seeded
synthetic tables (loans, subscriptions, daily sales) with categoricals and dates.

Nothing here downloads anything: every frame comes from data shipped with
scikit-learn or from a generator seeded by the caller.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from sklearn.datasets import (
    load_breast_cancer,
    load_diabetes,
    load_iris,
    load_wine,
    make_classification,
    make_regression,
)


def frame_from_sklearn(
    loader: Callable[..., Any], target: str = "target", **kwargs: Any
) -> pd.DataFrame:
    """A bundled scikit-learn dataset as one frame with clean column names."""
    bunch = loader(as_frame=True, **kwargs)
    frame = bunch.frame.copy()
    frame.columns = [
        str(c).strip().replace(" ", "_").replace("/", "_").replace("(", "").replace(")", "")
        for c in frame.columns
    ]
    if target != "target":
        frame = frame.rename(columns={"target": target})
    return frame


def breast_cancer() -> pd.DataFrame:
    """Breast cancer (569 x 30), target ``benign`` (1 = benign, 0 = malignant)."""
    return frame_from_sklearn(load_breast_cancer, target="benign")


def diabetes(scaled: bool = False) -> pd.DataFrame:
    """Diabetes (442 x 10), target ``progression``; raw clinical units unless ``scaled``."""
    return frame_from_sklearn(load_diabetes, target="progression", scaled=scaled)


def wine() -> pd.DataFrame:
    """Wine (178 x 13), target ``cultivar`` (three classes)."""
    return frame_from_sklearn(load_wine, target="cultivar")


def iris() -> pd.DataFrame:
    """Iris (150 x 4), target ``species`` (three classes)."""
    return frame_from_sklearn(load_iris, target="species")


def classification_frame(
    seed: int, n: int = 2000, n_features: int = 10, prefix: str = "x", **params: Any
) -> pd.DataFrame:
    """``make_classification`` as a frame with columns ``x0..`` and target ``label``."""
    params.setdefault("n_informative", min(6, n_features))
    params.setdefault("n_redundant", 0)
    features, labels = make_classification(
        n_samples=n, n_features=n_features, random_state=seed, **params
    )
    frame = pd.DataFrame(features.round(4), columns=[f"{prefix}{i}" for i in range(n_features)])
    frame["label"] = labels
    return frame


def regression_frame(
    seed: int, n: int = 1500, n_features: int = 10, prefix: str = "x", **params: Any
) -> pd.DataFrame:
    """``make_regression`` as a frame with columns ``x0..`` and target ``target``."""
    params.setdefault("n_informative", min(6, n_features))
    params.setdefault("noise", 10.0)
    features, target = make_regression(
        n_samples=n, n_features=n_features, random_state=seed, **params
    )
    frame = pd.DataFrame(features.round(4), columns=[f"{prefix}{i}" for i in range(n_features)])
    frame["target"] = target.round(3)
    return frame


def make_loan(n: int, seed: int, default_rate_shift: float = 0.0) -> pd.DataFrame:
    """A synthetic loan book: numeric, categorical and date columns, target ``default``.

    The default probability follows a logistic model of credit score, debt-to-income,
    income and purpose, so a reasonable model reaches a ROC AUC around 0.8.
    """
    rng = np.random.default_rng(seed)
    age = rng.integers(21, 71, n).astype(float)
    income = np.round(np.exp(rng.normal(10.9, 0.45, n)), -2)
    loan_amount = np.round(income * rng.uniform(0.05, 0.6, n), -1)
    credit_score = np.clip(rng.normal(680, 60, n), 300, 850).round()
    employment_years = np.clip(rng.gamma(2.0, 3.0, n), 0, 45).round(1)
    dti = np.clip(rng.beta(2, 5, n) * 0.8, 0, 0.8).round(3)
    home = rng.choice(["rent", "own", "mortgage"], n, p=[0.45, 0.2, 0.35])
    purpose = rng.choice(
        ["car", "home", "education", "business", "debt_consolidation"],
        n,
        p=[0.25, 0.2, 0.15, 0.15, 0.25],
    )
    region = rng.choice(["north", "south", "east", "west"], n)
    term = rng.choice(["36m", "60m"], n, p=[0.7, 0.3])
    date = pd.Timestamp("2022-01-01") + pd.to_timedelta(rng.integers(0, 730, n), unit="D")
    logit = (
        -2.0
        - 0.022 * (credit_score - 680)
        + 4.0 * (dti - 0.23)
        - 0.9 * (np.log(income) - 10.9)
        + 0.02 * (loan_amount / 1000.0)
        + np.where(purpose == "business", 0.8, 0.0)
        + np.where(term == "60m", 0.5, 0.0)
        - 0.03 * employment_years
        + default_rate_shift
    )
    default = (rng.random(n) < 1.0 / (1.0 + np.exp(-logit))).astype(int)
    return pd.DataFrame(
        {
            "application_date": date,
            "age": age,
            "annual_income": income,
            "loan_amount": loan_amount,
            "credit_score": credit_score,
            "employment_years": employment_years,
            "debt_to_income": dti,
            "home_ownership": home,
            "purpose": purpose,
            "region": region,
            "term": term,
            "default": default,
        }
    )


LOAN_CATEGORICAL = ["home_ownership", "purpose", "region", "term"]
LOAN_NUMERIC = [
    "age",
    "annual_income",
    "loan_amount",
    "credit_score",
    "employment_years",
    "debt_to_income",
]

CHURN_COUNTRIES = ["US", "UK", "DE", "FR", "ES"]


def make_churn(n: int, seed: int, trend: float = 0.0) -> pd.DataFrame:
    """A synthetic subscription book with target ``churned`` (about 25 % positive).

    ``trend`` adds a churn increase over the signup period (used by the temporal
    scenarios, where the order of time matters).
    """
    rng = np.random.default_rng(seed)
    tenure = rng.integers(1, 72, n).astype(float)
    monthly = rng.uniform(15, 120, n).round(2)
    total = (tenure * monthly * rng.uniform(0.9, 1.1, n)).round(2)
    tickets = rng.poisson(1.5, n).astype(float)
    plan = rng.choice(["basic", "standard", "premium"], n, p=[0.4, 0.4, 0.2])
    contract = rng.choice(["monthly", "annual", "two_year"], n, p=[0.55, 0.3, 0.15])
    country = rng.choice(CHURN_COUNTRIES, n, p=[0.4, 0.2, 0.15, 0.15, 0.1])
    days = np.sort(rng.integers(0, 900, n))
    signup = pd.Timestamp("2021-01-01") + pd.to_timedelta(days, unit="D")
    logit = (
        -1.5
        - 0.045 * (tenure - 36)
        + 0.012 * (monthly - 65)
        + 0.45 * (tickets - 1.5)
        + np.select([contract == "monthly", contract == "annual"], [0.9, -0.4], -1.2)
        + np.where(plan == "basic", 0.3, 0.0)
        + trend * (days / 900.0 - 0.5)
    )
    churned = (rng.random(n) < 1.0 / (1.0 + np.exp(-logit))).astype(int)
    order = rng.permutation(n)
    return (
        pd.DataFrame(
            {
                "signup_date": signup,
                "tenure_months": tenure,
                "monthly_charges": monthly,
                "total_charges": total,
                "support_tickets": tickets,
                "plan": plan,
                "contract": contract,
                "country": country,
                "churned": churned,
            }
        )
        .iloc[order]
        .reset_index(drop=True)
    )


CHURN_CATEGORICAL = ["plan", "contract", "country"]
CHURN_NUMERIC = ["tenure_months", "monthly_charges", "total_charges", "support_tickets"]


def make_sales(n_days: int, seed: int) -> pd.DataFrame:
    """Daily sales of one store, target ``sales``: weekly and yearly cycles, promotions,
    price, temperature and a slow upward trend."""
    rng = np.random.default_rng(seed)
    dates = pd.date_range("2022-01-01", periods=n_days, freq="D")
    t = np.arange(n_days)
    dow = dates.dayofweek.to_numpy()
    month = dates.month.to_numpy()
    promo = (rng.random(n_days) < 0.2).astype(float)
    price = rng.uniform(8, 12, n_days).round(2)
    temperature = (15 + 10 * np.sin(2 * np.pi * (t - 100) / 365) + rng.normal(0, 3, n_days)).round(
        1
    )
    sales = (
        200
        + 0.08 * t
        + 40 * (dow >= 5)
        + 60 * promo
        - 12 * (price - 10)
        + 1.5 * temperature
        + rng.normal(0, 15, n_days)
    ).round(1)
    return pd.DataFrame(
        {
            "date": dates,
            "day_of_week": dow.astype(float),
            "month": month.astype(float),
            "promo": promo,
            "price": price,
            "temperature": temperature,
            "sales": sales,
        }
    )
