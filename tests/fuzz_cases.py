"""Random evaluation calls for property-based fuzzing (``tests/test_fuzz.py`` runs a
bounded number in CI, ``benchmarks/fuzz.py`` runs >= 1,000 and counts the outcomes).

One case is a test frame (random size, dtypes, column label types, NaN/inf patterns,
label type), an optional training frame, a model (a plain callable that may raise or
return odd shapes) and an ``evaluator_config``, valid or not. :func:`run_case` calls
``mlflow.models.evaluate`` for real (sqlite store) and sorts the result into one of
:data:`OUTCOMES`; only the first two are acceptable.
"""

from __future__ import annotations

import json
import signal
import traceback
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import mlflow
import numpy as np
import pandas as pd
from hypothesis import strategies as st
from mlflow.tracking import MlflowClient

from mlflow_deepfix.errors import DeepfixError

OUTCOMES = (
    "clean refusal",
    "complete run",
    "uncaught crash",
    "half-written run",
    "hang",
)
CONTRACT_FILES = {"deepfix/findings.json", "deepfix/report.html", "deepfix/artifact_data.json"}
CONTRACT_TAGS = {"deepfix.status", "deepfix.top_finding", "deepfix.provider", "deepfix.version"}
CONTRACT_METRICS = {
    "deepfix_findings_count", "deepfix_critical_count", "deepfix_high_count",
    "deepfix_medium_count", "deepfix_low_count", "deepfix_checks_run",
    "deepfix_checks_not_passed", "deepfix_checks_errored", "deepfix_duration_seconds",
}
#: small suites keep a case around a second or two; every suite is drawn sometimes
SUITE_CHOICES = (
    ["data_integrity"],
    ["model_evaluation"],
    ["train_test_validation"],
    ["data_integrity", "model_evaluation"],
)


# --------------------------------------------------------------------------- models


def _first_numeric(frame: pd.DataFrame) -> np.ndarray:
    for index in range(frame.shape[1]):
        column = frame.iloc[:, index]
        values = pd.to_numeric(column, errors="coerce")
        if values.notna().any():
            return values.fillna(0).to_numpy(dtype=float)
    return np.zeros(len(frame))


@dataclass(frozen=True)
class FuzzModel:
    """A model as a plain callable (MLflow wraps it in a pyfunc)."""

    behaviour: str
    classes: tuple = (0, 1)

    def __call__(self, frame: pd.DataFrame):
        n = len(frame)
        x = _first_numeric(frame)
        if self.behaviour == "threshold":
            return np.where(x > np.median(x) if n else x > 0, self.classes[-1], self.classes[0])
        if self.behaviour == "constant":
            return np.full(n, self.classes[0], dtype=object if isinstance(self.classes[0], str) else None)
        if self.behaviour == "continuous":
            return x * 0.5 + 1.0
        if self.behaviour == "raises_value":
            raise ValueError("could not convert string to float: 'fuzz-cell'")
        if self.behaviour == "raises_key":
            raise KeyError("missing_feature")
        if self.behaviour == "raises_type":
            raise TypeError("unsupported operand type(s) for +: 'float' and 'str'")
        if self.behaviour == "wrong_length":
            return np.zeros(max(n - 1, 0))
        if self.behaviour == "two_columns":
            return np.zeros((n, 2))
        if self.behaviour == "strings":
            return np.array(["yes"] * n, dtype=object)
        if self.behaviour == "nan":
            return np.full(n, np.nan)
        if self.behaviour == "none":
            return None
        if self.behaviour == "frame":
            return pd.DataFrame({"a": np.zeros(n), "b": np.ones(n)})
        raise AssertionError(self.behaviour)


MODEL_BEHAVIOURS = (
    "threshold", "threshold", "constant", "continuous", "raises_value", "raises_key",
    "raises_type", "wrong_length", "two_columns", "strings", "nan", "none", "frame",
)


# --------------------------------------------------------------------------- frames

_LABEL_TYPES = ("int", "str", "bool", "float")
_DTYPES = (
    "float", "float_nan", "float_inf", "int", "bool", "str_cat", "mixed_object",
    "all_nan", "datetime", "category", "nullable_int", "constant", "big_numbers",
)


def _column(kind: str, n: int, rng: np.random.Generator) -> pd.Series:
    if kind == "float":
        return pd.Series(rng.normal(size=n))
    if kind == "float_nan":
        values = rng.normal(size=n)
        values[rng.random(n) < rng.uniform(0.05, 0.9)] = np.nan
        return pd.Series(values)
    if kind == "float_inf":
        values = rng.normal(size=n)
        mask = rng.random(n) < 0.2
        values[mask] = rng.choice([np.inf, -np.inf, np.nan], size=int(mask.sum()))
        return pd.Series(values)
    if kind == "int":
        return pd.Series(rng.integers(-5, 50, n))
    if kind == "bool":
        return pd.Series(rng.random(n) < 0.5)
    if kind == "str_cat":
        return pd.Series(rng.choice(["a", "b", "c <script>", "ZQ-1"], size=n).astype(object))
    if kind == "mixed_object":
        pool = np.array([1, "two", 3.5, None, "4", True], dtype=object)
        return pd.Series(pool[rng.integers(0, len(pool), n)], dtype=object)
    if kind == "all_nan":
        return pd.Series(np.full(n, np.nan))
    if kind == "datetime":
        return pd.Series(pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 400, n), unit="D"))
    if kind == "category":
        return pd.Series(pd.Categorical(rng.choice(["x", "y", "z"], size=n)))
    if kind == "nullable_int":
        values = pd.array(rng.integers(0, 9, n), dtype="Int64")
        if n:
            values[rng.random(n) < 0.3] = pd.NA
        return pd.Series(values)
    if kind == "constant":
        return pd.Series(np.full(n, 7.0))
    if kind == "big_numbers":
        return pd.Series(rng.choice([1e300, -1e300, 1e-300, 0.0], size=n))
    raise AssertionError(kind)


def _labels(kind: str, n: int, rng: np.random.Generator, regression: bool, nan_share: float):
    if regression:
        values = rng.normal(size=n).astype(object if kind == "str" else float)
        if kind == "str":
            values = np.array([f"{v:.2f}" for v in rng.normal(size=n)], dtype=object)
    else:
        codes = rng.integers(0, 2, n)
        if kind == "int":
            values = codes
        elif kind == "str":
            values = np.array(["neg", "pos"], dtype=object)[codes]
        elif kind == "bool":
            values = codes.astype(bool)
        else:
            values = codes.astype(float)
    series = pd.Series(values)
    if nan_share and n:
        series = series.astype(object) if kind in ("int", "bool") else series
        series[rng.random(n) < nan_share] = np.nan
    return series


def _column_label(kind: str, index: int) -> Any:
    return {
        "str": f"f{index}",
        "int": index,
        "float": float(index) + 0.5,
        "bool": bool(index % 2),
        "weird": f"col <img src=x onerror=alert({index})> {index}",
        "numeric_str": str(index),
    }[kind]


@dataclass
class FuzzCase:
    test: pd.DataFrame
    train: pd.DataFrame | None
    model: FuzzModel
    model_type: str
    config: dict[str, Any]
    target: str = "label"
    description: dict[str, Any] = field(default_factory=dict)


@st.composite
def fuzz_cases(draw) -> FuzzCase:
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    n_test = draw(st.sampled_from([0, 1, 2, 5, 12, 30, 30, 60, 60]))
    with_train = draw(st.booleans())
    n_train = draw(st.sampled_from([0, 3, 20, 50])) if with_train else None
    n_features = draw(st.sampled_from([0, 1, 2, 2, 3, 4, 4]))
    label_kind = draw(st.sampled_from(_LABEL_TYPES))
    # no bool column labels: MLflow's own dataset digest fails on them before any
    # evaluator runs (pandas reads a list of bools as a row mask)
    column_label_kind = draw(st.sampled_from(["str", "str", "int", "float", "weird", "numeric_str"]))
    dtypes = [draw(st.sampled_from(_DTYPES)) for _ in range(n_features)]
    regression = draw(st.sampled_from([False, False, True]))
    label_nan = draw(st.sampled_from([0.0, 0.0, 0.0, 0.3, 1.0]))
    behaviour = draw(st.sampled_from(MODEL_BEHAVIOURS))
    target = draw(st.sampled_from(["label", "label", "target <b>x</b>"]))

    def frame(n: int) -> pd.DataFrame:
        data = {_column_label(column_label_kind, i): _column(kind, n, rng) for i, kind in enumerate(dtypes)}
        out = pd.DataFrame(data, index=range(n))
        out[target] = _labels(label_kind, n, rng, regression, label_nan).to_numpy()
        return out

    test = frame(n_test)
    train = frame(n_train) if n_train is not None else None
    if train is not None and draw(st.booleans()) and n_features:
        train = train.drop(columns=[train.columns[0]])  # schema differs between splits
    classes = {"int": (0, 1), "str": ("neg", "pos"), "bool": (False, True), "float": (0.0, 1.0)}[label_kind]
    config: dict[str, Any] = {"kb": False, "suites": draw(st.sampled_from(SUITE_CHOICES))}
    if train is not None:
        config["train_data"] = train
    extra = draw(
        st.sampled_from(
            [
                {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {},
                {"privacy": "strict"}, {"privacy": "strict"}, {"seed": 3}, {"fail_on": "low"},
                {"sample_size": 100}, {"sample_size": 5}, {"unknown_key": 1},
                {"cat_features": ["no_such_column"]}, {"index_col": "no_such_column"},
                {"privacy": "loud"}, {"suites": []}, {"fail_on": "sometimes"},
                {"provider": "no-such-provider"}, {"seed": "zero"},
            ]
        )
    )
    config.update(extra)
    return FuzzCase(
        test=test,
        train=train,
        model=FuzzModel(behaviour, classes),
        model_type="regressor" if regression else "classifier",
        config=config,
        target=target,
        description={
            "seed": seed, "n_test": n_test, "n_train": n_train, "dtypes": dtypes,
            "label": label_kind, "label_nan": label_nan, "column_labels": column_label_kind,
            "model": behaviour, "task": "regression" if regression else "classification",
            "config": {k: v for k, v in config.items() if k != "train_data"},
        },
    )


# --------------------------------------------------------------------------- running


class CaseTimeout(BaseException):
    """Raised by the alarm of :func:`time_limit` (a BaseException: nothing swallows it)."""


@contextmanager
def time_limit(seconds: float):
    def _raise(signum, frame):
        raise CaseTimeout()

    previous = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class CaseResult:
    outcome: str
    detail: str = ""
    traceback: str = ""


def _deepfix_outputs(run_id: str) -> tuple[set[str], set[str], set[str]]:
    client = MlflowClient()
    run = client.get_run(run_id)
    files = {a.path for a in client.list_artifacts(run_id, "deepfix")}
    tags = {k for k in run.data.tags if k.startswith("deepfix.")}
    metrics = {k for k in run.data.metrics if k.startswith("deepfix_")}
    return files, tags, metrics


def _valid_json_outputs(run_id: str) -> str | None:
    """None when findings.json / artifact_data.json parse and follow the contract."""
    folder = mlflow.artifacts.download_artifacts(run_id=run_id, artifact_path="deepfix")
    from pathlib import Path

    findings = json.loads((Path(folder) / "findings.json").read_text(encoding="utf-8"))
    json.loads((Path(folder) / "artifact_data.json").read_text(encoding="utf-8"))
    html = (Path(folder) / "report.html").read_text(encoding="utf-8")
    ranks = [f["rank"] for f in findings["findings"]]
    if ranks != list(range(1, len(ranks) + 1)):
        return f"ranks {ranks}"
    if findings["status"] not in ("pass", "warn", "fail") or "<html" not in html.lower():
        return "bad status or report"
    return None


def run_case(case: FuzzCase, *, timeout: float = 120.0) -> CaseResult:
    """Evaluate ``case`` in a new run of the current tracking store and sort the result."""
    with mlflow.start_run() as run:
        run_id = run.info.run_id
        error: BaseException | None = None
        try:
            with time_limit(timeout):
                mlflow.models.evaluate(
                    case.model,
                    case.test,
                    targets=case.target,
                    model_type=case.model_type,
                    evaluators=["deepfix"],
                    evaluator_config={"deepfix": case.config},
                )
        except CaseTimeout:
            return CaseResult("hang", f"no result after {timeout:.0f} s")
        except Exception as caught:  # noqa: BLE001 - sorted below
            error = caught
    files, tags, metrics = _deepfix_outputs(run_id)
    if error is not None:
        if files or tags or metrics:
            return CaseResult("half-written run", f"{type(error).__name__} after {sorted(files | tags)}")
        if isinstance(error, DeepfixError) and str(error).strip():
            return CaseResult("clean refusal", _first_line(error))
        return CaseResult("uncaught crash", _describe(error),
                          "".join(traceback.format_exception(error)[-12:]))
    missing = (CONTRACT_FILES - files) | (CONTRACT_TAGS - tags) | (CONTRACT_METRICS - metrics)
    if missing:
        return CaseResult("half-written run", f"missing {sorted(missing)}")
    problem = _valid_json_outputs(run_id)
    if problem:
        return CaseResult("half-written run", problem)
    return CaseResult("complete run")


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0][:160] if text else ''}"


def _describe(error: BaseException) -> str:
    frames = traceback.extract_tb(error.__traceback__)
    ours = [f for f in frames if "mlflow_deepfix" in f.filename or "deepfix_agents" in f.filename]
    where = ours[-1] if ours else (frames[-1] if frames else None)
    place = f" at {where.filename.split('/')[-1]}:{where.lineno}" if where else ""
    origin = "" if ours else " (raised before deepfix ran)"
    return f"{_first_line(error)}{place}{origin}"


def counts(results: list[CaseResult]) -> dict[str, int]:
    return {name: sum(r.outcome == name for r in results) for name in OUTCOMES}


RunCase = Callable[[FuzzCase], CaseResult]
