"""The diagnosis through MLflow's own LightGBM and XGBoost flavours, with and without a
signature, on the DEV datasets that hold categorical columns.

The corpus serves every model as an in-process scikit-learn ``PyFuncModel``. Users of
gradient-boosting libraries log with ``mlflow.lightgbm`` / ``mlflow.xgboost`` and keep
their categorical columns as pandas ``category`` (both libraries read them natively).
With ``infer_signature`` such a model refuses its own training frame (MLflow has no
categorical type, see README "Robustness"), so this script measures both packagings:

* ``signature``: logged with ``infer_signature(X_train, ...)``, as the MLflow docs show;
* ``no_signature``: logged without one;
* ``booster`` (binary datasets only): the library's native API (``lgb.train``,
  ``xgb.train`` with a binary objective), whose pyfunc returns P(class 1).

Per dataset, library and packaging, four workflows go through ``mlflow.models.evaluate``
on a local sqlite store: ``clean``; ``leak`` (a post-outcome column: the label plus
noise at 0.3 of its spread, in both splits); ``noise_labels`` (the training labels
shuffled); ``drift`` (the two numeric features the label depends on most moved by 1.5
training SDs in the test split; integer columns by whole units). The expected top
finding: ``target_leakage``, ``underfitting`` and ``feature_drift``. Scored: top-1 and
top-3 of the planted category, and clean workflows with a medium+ finding, counted with
and without the signature finding itself (the one real defect of every ``signature``
workflow).

Not a corpus: no harm filter (a drift the model shrugs off still counts), one seed, DEV
datasets only (their cases may be read). Needs ``lightgbm`` (the test extra installs
it) and/or ``xgboost`` (installed apart: ``pip install xgboost``); neither is a
dependency of deepfix, and a library that is missing is skipped with a message.

    python benchmarks/mlflow_flavors.py [--datasets tips,penguins] [--json out.json]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

os.environ.setdefault("DISABLE_DEEPCHECKS_ANONYMOUS_TELEMETRY", "1")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
os.environ["TQDM_DISABLE"] = "1"
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

LIBRARIES = ("lightgbm", "xgboost")
PACKAGINGS = ("signature", "no_signature", "booster")
EXPECTED = {"leak": "target_leakage", "noise_labels": "underfitting", "drift": "feature_drift"}
KINDS = ("clean", *EXPECTED)
MEDIUM_PLUS = ("medium", "high", "critical")


def dev_categorical_datasets() -> list[str]:
    """DEV datasets with at least one categorical column (never a sealed one)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import corpus_split

    from mlflow_deepfix.bench.corpus.datasets import load_dataset

    return [d for d in sorted(corpus_split.load_split()["dev"]) if load_dataset(d).cat_features]


def prepared(name: str):
    """The dataset with categorical columns as pandas ``category`` and class labels as
    0..k-1 (XGBoost's requirement), split 70/30 with a fixed seed."""
    from sklearn.model_selection import train_test_split

    from mlflow_deepfix.bench.corpus.datasets import load_dataset

    ds = load_dataset(name)
    frame = ds.frame.drop(columns=[ds.datetime_col] if ds.datetime_col else []).copy()
    for column in ds.cat_features:
        frame[column] = frame[column].astype(str).astype("category")
    if ds.is_classification:
        codes = {v: i for i, v in enumerate(sorted(frame[ds.target].astype(str).unique()))}
        frame[ds.target] = frame[ds.target].astype(str).map(codes).astype(int)
    train, test = train_test_split(frame, test_size=0.3, random_state=0)
    return ds, train.reset_index(drop=True), test.reset_index(drop=True)


def planted(kind: str, ds, train, test, seed: int = 0):
    """``train`` and ``test`` with the bug of ``kind``."""
    import numpy as np

    rng = np.random.default_rng(seed)
    train, test = train.copy(), test.copy()
    target = ds.target
    if kind == "leak":
        spread = float(train[target].astype(float).std()) or 1.0
        for frame in (train, test):
            frame["post_outcome"] = frame[target].astype(float) + rng.normal(
                0.0, 0.3 * spread, len(frame))
    elif kind == "noise_labels":
        train[target] = rng.permutation(train[target].to_numpy())
    elif kind == "drift":
        numeric = [c for c in ds.numeric_features if c in train.columns]
        strength = {c: abs(float(np.corrcoef(train[c].astype(float),
                                             train[target].astype(float))[0, 1]))
                    for c in numeric if train[c].std() > 0}
        for column in sorted(strength, key=lambda c: (-strength[c], c))[:2]:
            by = 1.5 * float(train[column].std())
            if np.issubdtype(test[column].dtype, np.integer):
                test[column] = test[column] + max(1, round(by))
            else:
                test[column] = test[column].astype(float) + by
    return train, test


def model_for(library: str, classification: bool):
    if library == "lightgbm":
        import lightgbm

        cls = lightgbm.LGBMClassifier if classification else lightgbm.LGBMRegressor
        return cls(n_estimators=200, random_state=0, verbose=-1)
    import xgboost

    cls = xgboost.XGBClassifier if classification else xgboost.XGBRegressor
    return cls(n_estimators=200, random_state=0, enable_categorical=True, tree_method="hist")


def native_booster(library: str, features, labels):
    """A binary booster trained through the library's own API."""
    if library == "lightgbm":
        import lightgbm

        params = {"objective": "binary", "verbose": -1, "seed": 0, "num_threads": 1}
        return lightgbm.train(params, lightgbm.Dataset(features, labels), num_boost_round=200)
    import xgboost

    data = xgboost.DMatrix(features, labels, enable_categorical=True)
    params = {"objective": "binary:logistic", "seed": 0, "tree_method": "hist", "nthread": 1}
    return xgboost.train(params, data, num_boost_round=200)


def log_model(library: str, model, features, packaging: str) -> str:
    import mlflow

    signature = None
    if packaging == "signature":
        signature = mlflow.models.infer_signature(features, model.predict(features.head(20)))
    flavour = mlflow.lightgbm if library == "lightgbm" else mlflow.xgboost
    return flavour.log_model(model, name="model", signature=signature,
                             pip_requirements=[library]).model_uri


def run_case(name: str, library: str, packaging: str, kind: str) -> dict:
    import mlflow

    ds, train, test = prepared(name)
    train, test = planted(kind, ds, train, test)
    features = [c for c in train.columns if c != ds.target]
    if packaging == "booster":
        model = native_booster(library, train[features], train[ds.target])
    else:
        model = model_for(library, ds.is_classification)
        model.fit(train[features], train[ds.target])
    started = time.perf_counter()
    with mlflow.start_run(run_name=f"{name}.{library}.{packaging}.{kind}"):
        uri = log_model(library, model, train[features], packaging)
        result = mlflow.models.evaluate(
            uri, test, targets=ds.target, model_type=ds.model_type, evaluators=["deepfix"],
            evaluator_config={"deepfix": {"train_data": train}})
    findings = result.artifacts["deepfix_findings"].content["findings"]
    return {
        "case": f"{name}.{library}.{packaging}.{kind}", "dataset": name, "library": library,
        "packaging": packaging, "kind": kind,
        "findings": [[f["category"], f["severity"]] for f in findings],
        "seconds": round(time.perf_counter() - started, 1),
    }


def scored(rows: list[dict]) -> dict:
    """Top-1 / top-3 of the planted category and clean alarms, per library x packaging."""
    out = {}
    for library in LIBRARIES:
        for packaging in PACKAGINGS:
            mine = [r for r in rows if r["library"] == library and r["packaging"] == packaging]
            if not mine:
                continue
            bugs = [r for r in mine if r["kind"] in EXPECTED]
            ranks = [[c for c, _ in r["findings"]] for r in bugs]
            hit1 = sum(1 for r, cats in zip(bugs, ranks) if cats[:1] == [EXPECTED[r["kind"]]])
            hit3 = sum(1 for r, cats in zip(bugs, ranks) if EXPECTED[r["kind"]] in cats[:3])
            clean = [r for r in mine if r["kind"] == "clean"]
            alarms = sum(1 for r in clean if any(s in MEDIUM_PLUS for _, s in r["findings"]))
            other = sum(1 for r in clean if any(s in MEDIUM_PLUS and c != "schema_mismatch"
                                                for c, s in r["findings"]))
            out[f"{library}/{packaging}"] = {
                "bugs": len(bugs), "top1": hit1, "top3": hit3,
                "clean": len(clean), "clean_medium_plus": alarms,
                "clean_medium_plus_besides_signature": other,
                "median_seconds": sorted(r["seconds"] for r in mine)[len(mine) // 2],
            }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=None,
                        help="comma-separated DEV datasets (default: every DEV dataset "
                             "with a categorical column)")
    parser.add_argument("--packaging", choices=PACKAGINGS, action="append",
                        help="only these packagings (repeatable; default: all)")
    parser.add_argument("--json", default=None, help="write every case and the scores here")
    args = parser.parse_args(argv)

    libraries = [lib for lib in LIBRARIES if importlib.util.find_spec(lib) is not None]
    for lib in sorted(set(LIBRARIES) - set(libraries)):
        print(f"{lib} is not installed: skipped (pip install {lib})")
    if not libraries:
        return 2
    allowed = dev_categorical_datasets()
    names = args.datasets.split(",") if args.datasets else allowed
    unknown = [n for n in names if n not in allowed]
    if unknown:
        print(f"--datasets: {unknown} are not DEV datasets with categorical columns; "
              f"choose from {allowed}")
        return 2

    import mlflow

    from mlflow_deepfix.bench.corpus.datasets import load_dataset

    logging.disable(logging.WARNING)
    warnings.simplefilter("ignore")
    folder = tempfile.mkdtemp(prefix="deepfix-flavours-")
    mlflow.set_tracking_uri(f"sqlite:///{folder}/mlflow.db")
    mlflow.set_experiment("flavours")
    rows = []
    for name in names:
        for library in libraries:
            for packaging in args.packaging or PACKAGINGS:
                if packaging == "booster" and load_dataset(name).task != "binary_classification":
                    continue
                for kind in KINDS:
                    row = run_case(name, library, packaging, kind)
                    rows.append(row)
                    print(f"{row['case']}: {row['findings'][:3]} ({row['seconds']} s)",
                          flush=True)
    scores = scored(rows)
    print()
    print("| library / packaging | top-1 | top-3 | clean medium+ | besides the signature "
          "finding | median s |")
    print("|---|---|---|---|---|---|")
    for key, s in scores.items():
        print(f"| {key} | {s['top1']}/{s['bugs']} | {s['top3']}/{s['bugs']} | "
              f"{s['clean_medium_plus']}/{s['clean']} | "
              f"{s['clean_medium_plus_besides_signature']}/{s['clean']} | "
              f"{s['median_seconds']} |")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "scores": scores}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
