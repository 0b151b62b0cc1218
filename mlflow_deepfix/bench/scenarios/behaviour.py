"""Behaviour scenarios (0.2.0 categories): models whose test score looks acceptable but
that flip under small input changes, are confidently wrong on a slice, serve one group
of people worse, or lean on a relation that only held in the training data.

Each category has two workflows on different datasets and model families; every
healthy part (generator, split, model) follows the other scenario modules.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline

from mlflow_deepfix.bench.scenarios._base import (
    ScenarioData,
    fit,
    gradient_boosting,
    logistic,
    make_data,
    one_hot,
    random_forest,
    ridge,
    scenario,
    split,
)
from mlflow_deepfix.bench.scenarios._datasets import (
    LOAN_CATEGORICAL,
    breast_cancer,
    classification_frame,
    diabetes,
    make_loan,
    regression_frame,
)

# --------------------------------------------------------------------------- fragile


@scenario(
    "fragile_predictions.loan_branch_code_as_number",
    "fragile_predictions",
    "A random forest reads a 40-value branch code as a number; each branch has its own "
    "default rate, so moving the code by one or two (an unrelated neighbouring branch) "
    "flips many predictions while the test score looks fine.",
    tags=("loan", "binary", "model", "random_forest"),
)
def _fragile_branch(seed: int) -> ScenarioData:
    frame = make_loan(4000, seed, default_rate_shift=0.8)
    rng = np.random.default_rng(seed + 15)
    codes = np.arange(100, 140)
    effect = dict(zip(codes, rng.choice([-3.0, 3.0], size=codes.size)))
    frame["branch_code"] = rng.choice(codes, len(frame))
    logit = np.array([effect[c] for c in frame["branch_code"]])
    base = frame["default"].to_numpy()
    # the branch decides most outcomes: a real signal, keyed on an unordered code
    p = 1.0 / (1.0 + np.exp(-(logit + np.where(base == 1, 0.5, -0.5))))
    frame["default"] = (rng.random(len(frame)) < p).astype(int)
    train, test = split(frame.drop(columns=["application_date"]), "default", seed=seed)
    model = fit(
        random_forest(seed, LOAN_CATEGORICAL, max_depth=None, n_estimators=60,
                      min_samples_leaf=10, max_features=None),
        train,
        "default",
    )
    return make_data(train, test, "default", model, "classifier")


@scenario(
    "fragile_predictions.diabetes_clinic_code_as_number",
    "fragile_predictions",
    "Gradient boosting reads a 30-value clinic code as a number; each clinic shifts "
    "progression its own way, so a neighbouring code (an unrelated clinic) moves many "
    "predictions by more than a fifth of the target's spread.",
    tags=("diabetes", "regression", "model", "gradient_boosting"),
)
def _fragile_clinic(seed: int) -> ScenarioData:
    frame = diabetes()
    rng = np.random.default_rng(seed + 16)
    codes = np.arange(200, 230)
    effect = dict(zip(codes, rng.choice([-70.0, 70.0], size=codes.size)))
    frame["clinic_code"] = rng.choice(codes, len(frame))
    frame["progression"] = frame["progression"] + frame["clinic_code"].map(effect)
    train, test = split(frame, None, seed=seed, stratify=False)
    model = fit(
        gradient_boosting(seed, regression=True, n_estimators=200, max_depth=3,
                          learning_rate=0.1),
        train,
        "progression",
    )
    return make_data(train, test, "progression", model, "regressor")


@scenario(
    "fragile_predictions.text_case_sensitive_vectorizer",
    "fragile_predictions",
    "A TF-IDF + logistic regression built with lowercase=False on reviews that are always "
    "written in lower case: the same review in capitals or title case loses every known "
    "token and its prediction flips.",
    tags=("reviews", "binary", "text", "logistic"),
)
def _fragile_text(seed: int) -> ScenarioData:
    from sklearn.compose import ColumnTransformer
    from sklearn.feature_extraction.text import TfidfVectorizer

    from mlflow_deepfix.bench.scenarios._text_data import SENTIMENT, TEXT_COL, make_reviews

    frame = make_reviews(1400, seed)
    frame[TEXT_COL] = frame[TEXT_COL].str.lower()
    train, test = split(frame, SENTIMENT, seed=seed, test_size=400)
    vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True, lowercase=False)
    model = Pipeline(
        [
            ("tfidf", ColumnTransformer([("tfidf", vectorizer, TEXT_COL)])),
            ("model", LogisticRegression(C=20.0, max_iter=2000, random_state=seed)),
        ]
    )
    model = fit(model, train, SENTIMENT)
    return make_data(train, test, SENTIMENT, model, "classifier", {"text_col": TEXT_COL})


# --------------------------------------------------------------------------- confidence


def _health(n: int, seed: int) -> pd.DataFrame:
    """A readmission table: risk grows steeply with blood pressure and BMI, except for
    smokers over 62, who in this population are enrolled in a follow-up programme that
    treats the high-risk ones aggressively, so that for them the trend reverses (an
    interaction a linear model cannot express)."""
    rng = np.random.default_rng(seed)
    age = rng.integers(30, 80, n).astype(float)
    smoker = rng.choice(["no", "yes"], n, p=[0.6, 0.4])
    bp = rng.normal(130, 15, n).round()
    bmi = rng.normal(27, 4, n).round(1)
    visits = rng.poisson(2, n).astype(float)
    logit = (
        -0.5
        + 0.2 * (bp - 130)
        + 0.5 * (bmi - 27)
        + 0.03 * (age - 55)
        + np.where(smoker == "yes", 0.5, 0.0)
        + 0.2 * (visits - 2)
    )
    programme = (age > 62) & (smoker == "yes")
    logit = np.where(programme, -logit, logit)
    readmitted = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    return pd.DataFrame(
        {"age": age, "smoker": smoker, "blood_pressure": bp, "bmi": bmi,
         "prior_visits": visits, "readmitted": readmitted}
    )


@scenario(
    "overconfident_slice.health_old_smokers_logistic",
    "overconfident_slice",
    "A logistic regression on readmissions, where smokers over 62 (about 14% of patients) "
    "see the blood-pressure and BMI trend reversed (a follow-up programme treats the "
    "high-risk ones) while both drive risk everywhere else: the model is confidently wrong on "
    "them.",
    tags=("health", "binary", "model", "logistic"),
)
def _overconfident_health(seed: int) -> ScenarioData:
    train, test = split(_health(4000, seed), "readmitted", seed=seed)
    model = fit(logistic(seed, ["smoker"]), train, "readmitted")
    return make_data(train, test, "readmitted", model, "classifier")


@scenario(
    "overconfident_slice.crm_boosted_stumps_partner_veterans",
    "overconfident_slice",
    "Boosted stumps (an additive model) on a customer table where long-standing customers "
    "of the partner channel (about 12%) answer the opposite way to everyone else with the "
    "same profile: the model is sure about them and wrong.",
    tags=("make_classification", "binary", "model", "gradient_boosting"),
)
def _overconfident_crm(seed: int) -> ScenarioData:
    frame = classification_frame(seed, n=4000, n_features=6, n_informative=4, class_sep=2.0,
                                 n_clusters_per_class=1,
                                 flip_y=0.02)
    rng = np.random.default_rng(seed + 21)
    frame["channel"] = rng.choice(["web", "store", "partner"], len(frame), p=[0.45, 0.3, 0.25])
    frame["tenure_years"] = rng.gamma(2.0, 2.5, len(frame)).round(1)
    veterans = (frame["channel"] == "partner") & (frame["tenure_years"] > frame["tenure_years"].median())
    frame["label"] = np.where(veterans, 1 - frame["label"], frame["label"])
    train, test = split(frame, "label", seed=seed)
    model = Pipeline(
        [
            ("encode", one_hot(["channel"])),
            ("model", GradientBoostingClassifier(max_depth=1, n_estimators=150, random_state=seed)),
        ]
    )
    return make_data(train, test, "label", fit(model, train, "label"), "classifier")


# --------------------------------------------------------------------------- fairness


@scenario(
    "group_disparity.loan_thin_file_applicant_group",
    "group_disparity",
    "Gradient boosting on loans where the bureau's credit score of one applicant group "
    "(35%, a column the model does not read) is a thin-file estimate: the model misses "
    "far more of that group's defaults.",
    tags=("loan", "binary", "model", "gradient_boosting", "sensitive_features"),
)
def _disparity_loan(seed: int) -> ScenarioData:
    frame = make_loan(5000, seed, default_rate_shift=1.0)
    rng = np.random.default_rng(seed + 33)
    group = rng.choice(["A", "B"], len(frame), p=[0.65, 0.35])
    thin = group == "B"
    frame.loc[thin, "credit_score"] = (
        680 + rng.normal(0, 60, thin.sum())
    ).clip(300, 850).round()
    frame["applicant_group"] = group
    frame = frame.drop(columns=["application_date"])
    train, test = split(frame, "default", seed=seed)
    model = fit(
        gradient_boosting(seed, LOAN_CATEGORICAL), train, "default", drop=("applicant_group",)
    )
    return make_data(
        train, test, "default", model, "classifier", {"sensitive_features": ["applicant_group"]}
    )


@scenario(
    "group_disparity.classification_underrepresented_group",
    "group_disparity",
    "A random forest trained on data where group B is 4% of rows and follows another "
    "pattern; B is 25% of the people it is evaluated on, and the model, which never reads "
    "the group column, fails them.",
    tags=("make_classification", "binary", "model", "random_forest", "sensitive_features"),
)
def _disparity_underrepresented(seed: int) -> ScenarioData:
    rng = np.random.default_rng(seed + 44)
    frame = classification_frame(seed, n=6000, n_features=8, n_informative=4, flip_y=0.02)
    features = [c for c in frame.columns if c != "label"]
    group = np.where(rng.random(len(frame)) < 0.15, "B", "A")
    # group B's outcome follows its own rule, on the same features
    rule_b = (frame["x5"] + frame["x6"] - frame["x7"] > 0).astype(int)
    frame["label"] = np.where(group == "B", rule_b, frame["label"])
    frame["group"] = group
    a, b = frame[frame["group"] == "A"], frame[frame["group"] == "B"]
    train = pd.concat([a.iloc[:3600], b.iloc[:150]])
    test = pd.concat([a.iloc[3600:4500], b.iloc[150:450]])
    train = train.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    test = test.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    model = RandomForestClassifier(n_estimators=60, max_depth=8, random_state=seed, n_jobs=1)
    model.fit(train[features], train["label"])
    return make_data(train, test, "label", model, "classifier", {"sensitive_features": ["group"]})


def _housing(seed: int, *, degraded: bool) -> ScenarioData:
    """A property-value table with a ``district`` column the model does not read. With
    ``degraded``, district C's records (20% of rows, in both splits) were digitised from
    paper: their four most telling measurements carry errors of about half their spread."""
    frame = regression_frame(seed, n=4000, n_features=8, n_informative=6, noise=15.0)
    rng = np.random.default_rng(seed + 77)
    district = rng.choice(["A", "B", "C"], len(frame), p=[0.5, 0.3, 0.2])
    if degraded:
        from sklearn.feature_selection import f_regression

        scores, _ = f_regression(frame.drop(columns=["target"]), frame["target"])
        telling = [f"x{i}" for i in np.argsort(scores)[::-1][:4]]
        rows = district == "C"
        for col in telling:
            spread = frame[col].std()
            frame.loc[rows, col] = (frame.loc[rows, col]
                                    + rng.normal(0, 0.6 * spread, rows.sum())).round(4)
    frame["district"] = district
    train, test = split(frame, None, seed=seed, stratify=False)
    model = fit(random_forest(seed, regression=True, n_estimators=80, max_depth=10),
                train, "target", drop=("district",))
    return make_data(train, test, "target", model, "regressor",
                     {"sensitive_features": ["district"]})


@scenario(
    "group_disparity.housing_paper_records_district",
    "group_disparity",
    "A random-forest regressor of property values; one district's records (20%) were "
    "digitised from paper and their key measurements are noisy in training and evaluation "
    "alike. The model, which never reads the district, is far less accurate there.",
    tags=("make_regression", "regression", "model", "random_forest", "sensitive_features"),
)
def _disparity_housing(seed: int) -> ScenarioData:
    return _housing(seed, degraded=True)


@scenario(
    "clean.housing_district_groups",
    None,
    "The property-value forest with the district column named sensitive, and no district's "
    "records degraded: the groups are served alike.",
    tags=("make_regression", "regression", "clean", "sensitive_features"),
)
def _clean_housing(seed: int) -> ScenarioData:
    return _housing(seed, degraded=False)


def _digits_sites(seed: int, *, degraded: bool) -> ScenarioData:
    """Handwritten digits (8x8, 0..16) from two sites; the site is not a model input.
    With ``degraded``, site B (30% of scans, in both splits) uses a worn scanner: a
    blur and speckle noise on every pixel."""
    from sklearn.datasets import load_digits
    from sklearn.neighbors import KNeighborsClassifier

    from mlflow_deepfix.bench.scenarios._datasets import frame_from_sklearn

    frame = frame_from_sklearn(load_digits, target="digit")
    # the central 6x6 pixels are kept (the border is mostly blank), as a user would crop
    central = [f"pixel_{r}_{c}" for r in range(1, 7) for c in range(1, 7)]
    rng = np.random.default_rng(seed + 88)
    site = rng.choice(["A", "B"], len(frame), p=[0.7, 0.3])
    pixels = [c for c in frame.columns if c != "digit"]
    if degraded:
        rows = site == "B"
        images = frame.loc[rows, pixels].to_numpy(float).reshape(-1, 8, 8)
        blurred = images.copy()
        blurred[:, :, 1:] += images[:, :, :-1]
        blurred[:, 1:, :] += images[:, :-1, :]
        blurred = blurred / 2.0 + rng.normal(0, 5.0, blurred.shape)
        frame.loc[rows, pixels] = np.clip(blurred, 0, 16).round().reshape(-1, 64)
    frame = frame[[*central, "digit"]].copy()
    frame["site"] = site
    train, test = split(frame, "digit", seed=seed)
    model = Pipeline([("model", KNeighborsClassifier(n_neighbors=5))])
    model = fit(model, train, "digit", drop=("site",))
    return make_data(train, test, "digit", model, "classifier", {"sensitive_features": ["site"]})


@scenario(
    "group_disparity.digits_worn_scanner_site",
    "group_disparity",
    "A nearest-neighbour digit classifier (ten classes) on scans from two sites; site B's "
    "worn scanner blurs and speckles its scans (30%, in both splits). The model never reads "
    "the site and misreads far more of site B's digits.",
    tags=("digits", "multiclass", "model", "knn", "sensitive_features"),
)
def _disparity_digits(seed: int) -> ScenarioData:
    return _digits_sites(seed, degraded=True)


@scenario(
    "clean.digits_site_groups",
    None,
    "The nearest-neighbour digit classifier with the site named sensitive and both sites' "
    "scanners healthy.",
    tags=("digits", "multiclass", "clean", "sensitive_features"),
)
def _clean_digits(seed: int) -> ScenarioData:
    return _digits_sites(seed, degraded=False)


@scenario(
    "clean.diabetes_ridge_sex_groups",
    None,
    "A scaled ridge regression on diabetes with the patients' sex named sensitive (the "
    "model reads it): real data, no planted gap.",
    tags=("diabetes", "regression", "clean", "sensitive_features"),
)
def _clean_diabetes_sex(seed: int) -> ScenarioData:
    train, test = split(diabetes(), None, seed=seed, stratify=False, test_size=0.33)
    model = fit(ridge(), train, "progression")
    return make_data(train, test, "progression", model, "regressor",
                     {"sensitive_features": ["sex"]})


# --------------------------------------------------------------------------- spurious


@scenario(
    "spurious_correlation.breast_cancer_scanner_shortcut",
    "spurious_correlation",
    "In the training biopsies, scanner 'S2' was used for most malignant cases; in the "
    "evaluation data both scanners are used as often as before, but for everyone. A random "
    "forest learned the scanner as a shortcut.",
    tags=("breast_cancer", "binary", "split", "random_forest"),
)
def _spurious_scanner(seed: int) -> ScenarioData:
    frame = breast_cancer()
    # the weaker half of the measurements (the standard errors), as in a quick screen
    frame = frame[[c for c in frame.columns if c.endswith("_error")] + ["benign"]]
    train, test = split(frame, "benign", seed=seed)
    rng = np.random.default_rng(seed + 55)
    share = 0.45
    # training: scanner follows the label (malignant -> S2 mostly), same overall share
    malignant = train["benign"].to_numpy() == 0
    p_s2 = np.where(malignant, 0.97, max(0.0, (share - 0.97 * malignant.mean()) / (1 - malignant.mean())))
    train = train.assign(scanner=np.where(rng.random(len(train)) < p_s2, "S2", "S1"))
    test = test.assign(scanner=np.where(rng.random(len(test)) < share, "S2", "S1"))
    # a shallow forest that sees few of the real features per split leans on the scanner
    model = Pipeline(
        [
            ("encode", one_hot(["scanner"])),
            ("model", RandomForestClassifier(n_estimators=60, max_depth=4, random_state=seed,
                                             n_jobs=1)),
        ]
    )
    return make_data(train, test, "benign", fit(model, train, "benign"), "classifier")


@scenario(
    "spurious_correlation.diabetes_lab_batch_ridge",
    "spurious_correlation",
    "A lab-batch reading tracked disease progression in the training cohort (batches were "
    "processed by severity); in the evaluation cohort it has the same distribution but no "
    "link to progression. A ridge regression relies on it.",
    tags=("diabetes", "regression", "split", "ridge"),
)
def _spurious_batch(seed: int) -> ScenarioData:
    train, test = split(diabetes(), None, seed=seed, stratify=False)
    rng = np.random.default_rng(seed + 66)
    y = train["progression"].to_numpy()
    reading = 50 + 10 * (y - y.mean()) / y.std() + rng.normal(0, 4, len(y))
    train = train.assign(batch_reading=reading.round(2))
    test = test.assign(
        batch_reading=rng.choice(reading, len(test), replace=True).round(2)
    )
    model = fit(ridge(), train, "progression")
    return make_data(train, test, "progression", model, "regressor")


# --------------------------------------------------------------------------- slice-only


@scenario(
    "spurious_correlation.classification_one_site_watermark",
    "spurious_correlation",
    "Scans from three sites; site C (30%) stamped an overlay marker on its positive cases, "
    "the other sites' markers are random. Both splits hold the same pattern (no drift). A "
    "logistic regression learned 'marker -> positive' for every site.",
    tags=("make_classification", "binary", "split", "logistic", "slice_only"),
)
def _spurious_watermark(seed: int) -> ScenarioData:
    frame = classification_frame(seed, n=4000, n_features=6, n_informative=3, class_sep=0.6,
                                 flip_y=0.02)
    rng = np.random.default_rng(seed + 99)
    site = rng.choice(["A", "B", "C"], len(frame), p=[0.4, 0.3, 0.3])
    label = frame["label"].to_numpy()
    marked = 60 + 25 * label + rng.normal(0, 4, len(frame))
    frame["overlay_marker"] = np.where(site == "C", marked,
                                       rng.choice(marked, len(frame))).round(2)
    frame["site"] = site
    train, test = split(frame, "label", seed=seed)
    model = fit(logistic(seed, ["site"]), train, "label")
    return make_data(train, test, "label", model, "classifier")


@scenario(
    "spurious_correlation.diabetes_one_lab_reading_forest",
    "spurious_correlation",
    "Diabetes patients from two labs; the southern lab's (half) 'assay_index' was computed "
    "from the progression score itself, the northern lab's is an unrelated number with "
    "the same spread. A random forest uses the index for every patient.",
    tags=("diabetes", "regression", "split", "random_forest", "slice_only"),
)
def _spurious_one_lab(seed: int) -> ScenarioData:
    frame = diabetes()
    rng = np.random.default_rng(seed + 111)
    lab = rng.choice(["north", "south"], len(frame), p=[0.5, 0.5])
    y = frame["progression"].to_numpy()
    reading = 100 + 30 * (y - y.mean()) / y.std() + rng.normal(0, 5, len(y))
    frame["assay_index"] = np.where(lab == "south", reading,
                                    rng.choice(reading, len(frame))).round(1)
    frame["lab"] = lab
    train, test = split(frame, None, seed=seed, stratify=False)
    model = fit(random_forest(seed, ["lab"], regression=True, n_estimators=80, max_depth=6),
                train, "progression")
    return make_data(train, test, "progression", model, "regressor")
