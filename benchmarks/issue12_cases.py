"""Quick real-data cases of issue 12's failure classes, for working on the rules.

Each case builds a (train, test, model) from scikit-learn's or statsmodels' bundled data,
runs the testing step once (cached as ArtifactData JSON under ``--cache``) and prints
the diagnosis, so a rule change is re-scored in seconds with ``--rescore``. These are
development probes, not the held-out measurement (that is the fault-injection corpus).

    python benchmarks/issue12_cases.py [--case SUBSTR] [--rescore] [--no-interventions]
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits, load_wine
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestClassifier
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler


class Wrapped:
    """The smallest pyfunc look-alike: ``predict`` plus ``get_raw_model`` (None for a
    labels-only model that cannot be cloned)."""

    def __init__(self, model, raw=True):
        self._model, self._raw, self.metadata = model, raw, None

    def predict(self, X):
        return self._model.predict(X)

    def get_raw_model(self):
        if not self._raw:
            raise ValueError("no raw model")
        return self._model


def _frame(bunch, target="y"):
    frame = pd.DataFrame(bunch.data, columns=[str(c).replace(" ", "_") for c in bunch.feature_names])
    frame[target] = bunch.target
    return frame


def _fit(model, train, target="y"):
    return model.fit(train.drop(columns=[target]), train[target])


def _split(frame, seed=0, stratify=True, target="y"):
    return train_test_split(
        frame, test_size=0.3, random_state=seed, stratify=frame[target] if stratify else None
    )


def logistic():
    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))


CASES = {}


def case(name, expected, model_type):
    def register(fn):
        CASES[name] = (fn, expected, model_type)
        return fn

    return register


# ---- class 1: natural heavy tails (clean: nothing above low)
@case("clean.grunfeld_heavy_tails_hgb", None, "regressor")
def _grunfeld():
    import statsmodels.api as sm

    d = sm.datasets.grunfeld.load_pandas().data.drop(columns=["firm"]).rename(columns={"invest": "y"})
    d["year"] = d["year"].astype(float)
    tr, te = _split(d, stratify=False)
    return tr, te, _fit(HistGradientBoostingRegressor(max_iter=100, random_state=0), tr), {}


@case("clean.randhie_heavy_tails_ridge", None, "regressor")
def _randhie():
    import statsmodels.api as sm

    d = sm.datasets.randhie.load_pandas().data.rename(columns={"mdvis": "y"}).sample(4000, random_state=0)
    tr, te = _split(d, stratify=False)
    return tr, te, _fit(make_pipeline(StandardScaler(), Ridge()), tr), {}


@case("clean.star98_heavy_tails_ridge", None, "regressor")
def _star98():
    import statsmodels.api as sm

    d = sm.datasets.star98.load_pandas().data.rename(columns={"NABOVE": "y"}).drop(columns=["NBELOW"])
    tr, te = _split(d, stratify=False)
    return tr, te, _fit(make_pipeline(StandardScaler(), Ridge()), tr), {}


@case("clean.breast_cancer_rf", None, "classifier")
def _bc_clean():
    tr, te = _split(_frame(load_breast_cancer()))
    return tr, te, _fit(RandomForestClassifier(n_estimators=100, random_state=0), tr), {}


@case("clean.breast_cancer_logistic", None, "classifier")
def _bc_clean_lr():
    tr, te = _split(_frame(load_breast_cancer()))
    return tr, te, _fit(logistic(), tr), {}


# ---- class 2: no better than chance
@case("chance.breast_cancer_labels_misaligned", "underfitting", "classifier")
def _misaligned():
    frame = _frame(load_breast_cancer())
    frame["y"] = np.roll(frame["y"].to_numpy(), 37)  # labels shifted against rows by a merge
    tr, te = _split(frame)
    return tr, te, _fit(logistic(), tr), {}


@case("chance.digits_noise_labels", "underfitting", "classifier")
def _noise():
    frame = _frame(load_digits())
    frame["y"] = np.random.default_rng(0).integers(0, 10, len(frame))
    tr, te = _split(frame)
    return tr, te, _fit(RandomForestClassifier(n_estimators=50, random_state=0), tr), {}


# ---- class 3: leak below blatant, linear model
@case("leak.wine_post_outcome_linear", "target_leakage", "classifier")
def _leak():
    frame = _frame(load_breast_cancer())
    rng = np.random.default_rng(0)
    frame["followup_score"] = frame["y"] * 1.0 + rng.normal(0, 0.35, len(frame))
    tr, te = _split(frame)
    return tr, te, _fit(logistic(), tr), {}


# ---- class 5: calibration
@case("calibration.digits_naive_bayes", "poor_calibration", "classifier")
def _nb():
    tr, te = _split(_frame(load_digits()))
    return tr, te, _fit(GaussianNB(), tr), {}


@case("calibration.wine_naive_bayes", "poor_calibration", "classifier")
def _nb_wine():
    tr, te = _split(_frame(load_wine()))
    return tr, te, _fit(GaussianNB(), tr), {}


# ---- class 4: regression data faults
@case("missing.diabetes_zero_sentinel_bmi", "missing_values", "regressor")
def _sentinel():
    frame = _frame(load_diabetes(scaled=False))
    rows = np.random.default_rng(0).random(len(frame)) < 0.13
    frame.loc[rows, "bmi"] = 0.0
    tr, te = _split(frame, stratify=False)
    return tr, te, _fit(make_pipeline(StandardScaler(), Ridge()), tr), {}


def run(names, cache: Path, rescore: bool, interventions: bool):
    from mlflow_deepfix.config import parse_config
    from mlflow_deepfix.diagnosis import diagnose
    from mlflow_deepfix.inputs import build_inputs
    from mlflow_deepfix.schemas import ArtifactData
    from mlflow_deepfix.testing import run_testing

    cache.mkdir(parents=True, exist_ok=True)
    times = []
    for name in names:
        fn, expected, model_type = CASES[name]
        path = cache / f"{name}.json"
        if rescore and path.exists():
            artifact = ArtifactData.model_validate_json(path.read_text())
            config = parse_config({"kb": False, "interventions": interventions})
        else:
            train, test, model, extra = fn()
            config = parse_config(
                {"train_data": train, "kb": False, "interventions": interventions, **extra}
            )
            inputs = build_inputs(
                model=Wrapped(model), dataset=_Dataset(test, "y"), model_type=model_type,
                config=config,
            )
            started = time.perf_counter()
            artifact, _ = run_testing(inputs, config, progress=False)
            times.append(time.perf_counter() - started)
            path.write_text(artifact.model_dump_json())
        diagnosis, _ = diagnose(artifact, config, kb=None)
        top = [(f.category, f.severity) for f in diagnosis.findings[:4]]
        ok = (
            (diagnosis.findings and diagnosis.findings[0].category == expected)
            if expected
            else all(f.severity in ("low", "info") for f in diagnosis.findings)
        )
        print(f"{'OK ' if ok else 'BAD'} {name:45s} {diagnosis.status:4s} {top}")
        for i in artifact.interventions:
            print(
                f"      {i.kind:14s} {i.target[:30]:30s} {i.metric} {i.score_before} -> "
                f"{i.score_after} noise {i.noise} ({i.model_used}, {i.seconds}s) {i.values}"
            )
    if times:
        print("median testing seconds:", round(float(np.median(times)), 2))


class _Dataset:
    """What build_inputs reads from an mlflow dataset: ``df`` and ``targets``."""

    def __init__(self, frame, target):
        self.features_data = frame.drop(columns=[target])
        self.labels_data = frame[target].to_numpy()
        self.targets_name = target


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", action="append")
    parser.add_argument("--cache", default="/tmp/rules12_cases")
    parser.add_argument("--rescore", action="store_true")
    parser.add_argument("--no-interventions", action="store_true")
    args = parser.parse_args()
    selected = [n for n in CASES if not args.case or any(s in n for s in args.case)]
    run(selected, Path(args.cache), args.rescore, not args.no_interventions)
