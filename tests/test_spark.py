"""Spark input (issue 13 A): Spark tables as ``eval_data`` / ``train_data``, statistics
computed in Spark over every row, Deepchecks and the rest on bounded driver samples.

One SparkSession (``local[2]``, 4 shuffle partitions, bounded driver memory) serves the
whole module. The done-when test evaluates a 1,000,000-row Spark table through
``mlflow.models.evaluate`` on a real sqlite tracking store.
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import mlflow
import numpy as np
import pandas as pd
import pytest

pytest.importorskip("pyspark", reason="Spark input needs the [spark] extra (pyspark)")

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from mlflow_deepfix.config import parse_config
from mlflow_deepfix.errors import DeepfixConfigError, DeepfixInputError
from mlflow_deepfix.inputs.spark import (
    _FrameDataset,
    class_quotas,
    count_and_fingerprint,
    prepare_tables,
    stratified_sample,
)
from mlflow_deepfix.testing import spark_stats
from mlflow_deepfix.testing.performance import summarize_performance
from mlflow_deepfix.testing.spark_stats import (
    KS_APPROX_ERROR,
    _classification_from_confusion,
    _column_drift,
    _distinct_targets,
    _in_spark,
    _regression_from_sums,
    full_table_summary,
)
from mlflow_deepfix.testing.stats import summarize_dataset
from tests.conftest import log_model

FEATURES = ["x1", "x2", "x3", "n_items", "color"]
#: the done-when bound on the driver's peak resident memory
MAX_DRIVER_RSS_BYTES = int(2.5 * 1024**3)
#: a fresh driver process with pyspark, MLflow, Deepchecks and deepfix imported holds
#: about 450 MiB before the call (measured: 690 MiB peak for this whole test run alone);
#: in a full pytest session the process also holds earlier tests' memory, so the test
#: bounds what the call adds on top of a fresh driver
FRESH_DRIVER_BYTES = 600 * 1024**2


def local_spark() -> SparkSession:
    """Spark in ``local[2]`` mode with small shuffles and a bounded driver."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    session = (
        SparkSession.builder.master("local[2]")
        .appName("deepfix-tests")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.default.parallelism", "2")
        .config("spark.driver.memory", "1g")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.python.worker.reuse", "true")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    return session


@pytest.fixture(scope="session")
def spark():
    session = local_spark()
    yield session
    session.stop()


def spark_table(spark, n_rows: int, seed: int, *, partitions: int = 4):
    """A seeded table generated in Spark: numeric, integer and text features (some
    missing), and a binary label planted on x1, x2 and the colour.

    Spark seeds ``rand(seed)`` per partition with ``seed + partition``: tables meant to
    share no row need seeds further apart than their partition counts (seeds 1 and 2
    once gave a 20% train/test overlap, which deepfix duly reported)."""
    noise = F.randn(seed + 4) * 0.5
    color = F.element_at(
        F.array(*[F.lit(c) for c in ("red", "green", "blue", "black", "white")]),
        (F.floor(F.rand(seed + 3) * 5) + 1).cast("int"),
    )
    table = (
        spark.range(n_rows, numPartitions=partitions)
        .withColumn("x1", F.randn(seed))
        .withColumn("x2", F.rand(seed + 1))
        .withColumn("x3", F.when(F.rand(seed + 2) < 0.05, F.lit(None)).otherwise(F.randn(seed + 5)))
        .withColumn("n_items", F.floor(F.rand(seed + 6) * 20).cast("long"))
        .withColumn("color", color)
    )
    signal = F.col("x1") + 2.0 * F.col("x2") - 1.0 + F.when(F.col("color") == "red", 1.0).otherwise(0.0)
    return table.withColumn("label", (signal + noise > 0).cast("int")).drop("id")


def fit_model(train_frame: pd.DataFrame):
    numeric = ["x1", "x2", "x3", "n_items"]
    prep = ColumnTransformer(
        [
            ("num", SimpleImputer(strategy="median"), numeric),
            ("cat", OneHotEncoder(handle_unknown="ignore"), ["color"]),
        ]
    )
    model = make_pipeline(prep, LogisticRegression(max_iter=200))
    return model.fit(train_frame[FEATURES], train_frame["label"])


class PeakRSS:
    """Peak resident memory of this process during the block, and of Spark's JVM (sampled).

    The process-lifetime peak (``getrusage``) would also count what earlier tests of the
    same pytest process held (a torch model, the local LLM's weights), so the kernel's
    high-water mark is reset on entry (``/proc/self/clear_refs`` <- 5) and read from
    ``VmHWM`` on exit; where that is unavailable, the RSS is sampled every 50 ms.
    ``growth`` is the peak minus the RSS on entry: what the evaluation itself added.
    """

    def __init__(self):
        import psutil

        self._self = psutil.Process()
        self._jvm = [p for p in self._self.children(recursive=True) if "java" in p.name()]
        self.jvm_peak = 0
        self._sampled_peak = 0
        self._reset = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self):
        while not self._stop.is_set():
            self._sampled_peak = max(self._sampled_peak, self._self.memory_info().rss)
            for process in self._jvm:
                with contextlib.suppress(Exception):  # a process that ended
                    self.jvm_peak = max(self.jvm_peak, process.memory_info().rss)
            self._stop.wait(0.05)

    @staticmethod
    def _high_water_mark() -> int | None:
        with contextlib.suppress(OSError, ValueError):
            for line in Path("/proc/self/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
        return None

    def __enter__(self):
        with contextlib.suppress(OSError):
            Path("/proc/self/clear_refs").write_text("5")
            self._reset = True
        self.before = self._self.memory_info().rss
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        mark = self._high_water_mark() if self._reset else None
        self.python_peak = max(mark or 0, self._sampled_peak)
        self.growth = self.python_peak - self.before


# ------------------------------------------------------------------ done-when test


def test_a_million_row_spark_table_is_counted_in_full_with_bounded_driver_memory(
    spark, tracking_uri, capsys
):
    spark_test = spark_table(spark, 1_000_000, seed=1, partitions=8)
    spark_train = spark_table(spark, 200_000, seed=1_000, partitions=4)
    model_uri = log_model(fit_model(spark_train.limit(20_000).toPandas()),
                          spark_train.limit(5).toPandas()[FEATURES])
    started = time.perf_counter()
    with PeakRSS() as memory, mlflow.start_run() as run:
        mlflow.models.evaluate(
            model_uri,
            data=spark_test,
            targets="label",
            model_type="classifier",
            evaluators=["deepfix"],
            evaluator_config={"deepfix": {"train_data": spark_train, "eval_data": spark_test}},
        )
    seconds = time.perf_counter() - started
    with capsys.disabled():
        print(
            f"\n[spark 1M] evaluate {seconds:.1f}s, python peak RSS "
            f"{memory.python_peak / 2**20:.0f} MiB (+{memory.growth / 2**20:.0f} MiB during the "
            f"call), JVM peak RSS {memory.jvm_peak / 2**20:.0f} MiB"
        )
    artifact = mlflow.artifacts.load_dict(f"runs:/{run.info.run_id}/deepfix/artifact_data.json")
    dataset = artifact["dataset"]
    # the truth, counted by Spark in one pass over each table
    truth = spark_test.agg(
        F.count(F.lit(1)).alias("n"),
        F.sum(F.col("x3").isNull().cast("long")).alias("x3_missing"),
        F.sum((F.col("label") == 1).cast("long")).alias("positives"),
    ).first()
    n_test, n_train = truth["n"], spark_train.count()
    assert dataset["test"]["n_rows"] == n_test == 1_000_000
    assert dataset["train"]["n_rows"] == n_train == 200_000
    assert artifact["performance"]["scores"]["test"]["n_rows"] == n_test
    # full-table numbers, not the sample's: missing share of x3 and the label shares
    missing = truth["x3_missing"] / n_test
    x3 = next(c for c in dataset["test"]["columns"] if c["name"] == "x3")
    assert x3["missing_fraction"] == pytest.approx(missing, rel=1e-12)
    positives = truth["positives"] / n_test
    assert dataset["test"]["label_distribution"]["1"] == pytest.approx(positives, rel=1e-12)
    # continuous random features: no test row repeats a training row, nor a test row
    assert dataset["comparison"]["overlap_fraction"] == 0.0
    assert dataset["test"]["duplicate_fraction"] == 0.0
    accuracy = artifact["performance"]["scores"]["test"]["accuracy"]
    assert 0.7 < accuracy < 1.0  # the planted relation is learnt
    assert any(n.startswith("Spark input:") and "of 1,000,000 test rows" in n
               for n in artifact["notes"])
    # what the evaluation adds to the driver, on top of a fresh driver's imports
    assert memory.growth + FRESH_DRIVER_BYTES <= MAX_DRIVER_RSS_BYTES


# ------------------------------------------------------------------ smaller tests


def mixed_frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Small splits with every statistic's edge: missing and infinite numbers, case and
    space variants, numbers stored as text, duplicates, conflicting labels, overlap,
    unseen categories, dates."""
    rng = np.random.default_rng(0)

    def split(n, offset, colors):
        frame = pd.DataFrame({
            "num": rng.normal(size=n),
            "counter": np.arange(offset, offset + n, dtype="int64"),
            "small": rng.integers(0, 4, size=n).astype("int64"),
            "flag": rng.random(n) < 0.3,
            "color": rng.choice(colors, size=n).astype(object),
            "price": rng.choice(["$1,200", "15", "n/a", "3.5"], size=n).astype(object),
            "when": pd.Timestamp("2024-01-01") + pd.to_timedelta(offset + np.arange(n), "h"),
        })
        frame.loc[rng.random(n) < 0.1, "num"] = np.nan
        frame.loc[:4, "num"] = [np.inf, -np.inf, 40.0, -35.0, 1e3]
        frame.loc[rng.random(n) < 0.05, "color"] = None
        frame["label"] = np.where(frame["num"].fillna(0) + rng.normal(size=n) > 0, "yes", "no")
        copied = ["num", "small", "flag", "color", "price"]
        # duplicates: rows 50-80 again (features and label) at 10-40
        frame.loc[10:40, [*copied, "label"]] = frame.loc[50:80, [*copied, "label"]].to_numpy()
        # conflicting labels: rows 90-99's features again at 200-209 with the other label
        frame.loc[200:209, copied] = frame.loc[90:99, copied].to_numpy()
        frame.loc[200:209, "label"] = np.where(frame.loc[90:99, "label"] == "yes", "no", "yes")
        return frame

    train = split(2000, 0, ["Red", "red ", "blue", "Green"])
    test = split(1200, 1500, ["Red", "blue", "Green", "purple"])
    test = pd.concat([test, train.iloc[100:160]], ignore_index=True)  # overlap
    return train, test


def test_spark_statistics_equal_the_pandas_path_on_the_same_rows(spark):
    train, test = mixed_frames()
    common = {"label": "label", "task": "binary_classification",
              "feature_names": ["num", "small", "flag", "color", "price"],
              "cat_features": ["small", "flag", "color"], "datetime_col": "when"}
    pandas_summary = summarize_dataset(train, test, **common)
    # the Spark path starts from the summary of a tiny sample: every compared number
    # below must come from the Spark aggregation, not from the sample
    sample_summary = summarize_dataset(train.iloc[:150], test.iloc[:150], **common)
    spark_summary = full_table_summary(
        sample_summary, train=spark.createDataFrame(train), test=spark.createDataFrame(test),
        task="binary_classification", exact=True,
    )
    compared = 0
    for split in ("train", "test"):
        want, got = getattr(pandas_summary, split), getattr(spark_summary, split)
        for key in ("n_rows", "n_columns", "duplicate_fraction", "conflicting_label_fraction",
                    "label_missing_fraction", "label_distribution"):
            assert getattr(got, key) == pytest.approx(getattr(want, key), rel=1e-9), (split, key)
            compared += 1
        for column in want.columns:
            mine = got.column(column.name)
            for key in ("missing_fraction", "n_unique", "unique_fraction", "top_fraction",
                        "mixed_types", "string_mismatch_fraction", "numeric_string_fraction",
                        "mean", "std", "min", "max", "q01", "q50", "q99", "outlier_fraction",
                        "n_inf", "kind"):
                expected, actual = getattr(column, key), getattr(mine, key)
                if isinstance(expected, float):
                    assert actual == pytest.approx(expected, rel=1e-9, abs=1e-12), (
                        split, column.name, key)
                else:
                    assert actual == expected, (split, column.name, key)
                compared += 1
    for split in (spark_summary.train, spark_summary.test):
        assert split.duplicate_fraction > 0 and split.conflicting_label_fraction > 0
    want, got = pandas_summary.comparison, spark_summary.comparison
    assert want.overlap_fraction > 0 and want.unseen_category_fraction
    for key in ("overlap_fraction", "unseen_category_fraction", "unseen_label_fraction",
                "test_to_train_ratio", "test_before_train_fraction"):
        assert getattr(got, key) == pytest.approx(getattr(want, key), rel=1e-9), key
    assert compared > 150


def test_full_table_drift_scores_equal_scipy_and_deepchecks_on_every_row(spark):
    """KS of numeric features equals scipy's ks_2samp over all rows (exact: ties, nulls);
    Cramer's V of a categorical feature equals Deepchecks' own cramers_v with Feature
    Drift's defaults over all rows; every number differs from the small sample's."""
    import mlflow_deepfix.checks  # noqa: F401 - Deepchecks' compatibility patches
    from deepchecks.utils.distribution.drift import cramers_v
    from scipy.stats import ks_2samp

    train = spark_table(spark, 6_000, seed=81).toPandas()
    test = spark_table(spark, 4_000, seed=91).toPandas()
    test["x1"] = test["x1"] + 0.15  # a shifted feature
    rare = test.index[test["color"] == "red"][::3]
    test.loc[rare, "color"] = "purple"  # a category new in test ("Other" bin)
    test.loc[test.index[:60], "color"] = [f"c{i}" for i in range(60)]  # many rare ones
    features = ["x1", "x2", "x3", "n_items", "color"]
    common = {"label": "label", "task": "binary_classification", "feature_names": features,
              "cat_features": ["color"], "datetime_col": None}
    sample = summarize_dataset(train.iloc[:300], test.iloc[:300], **common)
    assert sample.comparison.column_drift == {}  # the pandas path leaves it empty
    summary = full_table_summary(
        sample, train=spark.createDataFrame(train), test=spark.createDataFrame(test),
        task="binary_classification",
    )
    drift, method = summary.comparison.column_drift, summary.comparison.column_drift_method
    assert list(drift) == features
    for name in ["x1", "x2", "x3", "n_items"]:
        want = ks_2samp(train[name].dropna(), test[name].dropna()).statistic
        assert method[name] == "Kolmogorov-Smirnov"
        assert drift[name] == pytest.approx(want, rel=1e-12, abs=1e-15), name
        small = ks_2samp(train[name].iloc[:300].dropna(), test[name].iloc[:300].dropna())
        assert drift[name] != pytest.approx(small.statistic, abs=1e-6), name
    assert drift["x1"] > 0.05 > drift["x2"]
    want = cramers_v(train["color"].dropna(), test["color"].dropna(),
                     min_category_size_ratio=0.01, max_num_categories=None, sort_by="difference")
    assert method["color"] == "Cramer's V"
    assert drift["color"] == pytest.approx(want, rel=1e-12) and want > 0
    assert summary.comparison.column_drift_error == 0.0
    # large tables: KS from 1,000 quantiles of each split, within the stated bound
    tables = spark.createDataFrame(train), spark.createDataFrame(test)
    families = {c: ("string" if c == "color" else "float") for c in features}
    approx, _ = _column_drift(*tables, features, ["color"], families, exact=False)
    for name in ["x1", "x2", "x3", "n_items"]:
        assert abs(approx[name] - drift[name]) <= KS_APPROX_ERROR, name
    assert approx["color"] == drift["color"]
    assert KS_APPROX_ERROR == pytest.approx(0.0012)


def test_sentinel_shares_are_recomputed_over_the_full_tables(spark):
    """A spike value found on the driver sample (sentinel_candidates) gets its share
    over every row of train (what the missing_values rule reads) and of test."""
    from mlflow_deepfix.schemas import Intervention
    from mlflow_deepfix.testing.interventions import sentinel_candidates
    from mlflow_deepfix.testing.spark_stats import _with_full_sentinel_shares

    train = spark_table(spark, 5_000, seed=101).toPandas()
    test = spark_table(spark, 2_000, seed=111).toPandas()
    train.loc[train.index[:400], "x2"] = -999.0  # dense at the top: the "sample" over-counts
    train.loc[train.index[400::25], "x2"] = -999.0
    test.loc[test.index[::10], "x2"] = -999.0
    train.loc[train.index[7], "x2"] = np.nan  # missing cells are not in the denominator
    sample = train.iloc[:600]
    (column, value, sample_share), = [
        t for t in sentinel_candidates(sample, ["x1", "x2", "x3", "n_items"]) if t[0] == "x2"
    ]
    assert (column, value) == ("x2", -999.0)

    def measured(kind: str) -> Intervention:
        return Intervention(kind=kind, category="missing_values", target=column,
                            metric="f1_macro", score_before=0.8, score_after=0.84, noise=0.01,
                            values={"value": value, "share": round(sample_share, 4)})

    others = Intervention(kind="drop_feature", category="leakage", target="x1",
                          metric="f1_macro", values={"share": 0.5})
    done = _with_full_sentinel_shares(
        [measured("impute_sentinel"), measured("sentinel_rows"), others],
        spark.createDataFrame(train), spark.createDataFrame(test),
    )
    full_train = (train["x2"] == -999.0).sum() / train["x2"].notna().sum()
    full_test = (test["x2"] == -999.0).sum() / test["x2"].notna().sum()
    assert abs(sample_share - full_train) > 0.3  # the sample's share is far off
    for item in done[:2]:
        assert item.values["share"] == pytest.approx(full_train, abs=1e-6)
        assert item.values["test_share"] == pytest.approx(full_test, abs=1e-6)
        assert item.values["sample_share"] == round(sample_share, 4)
    assert done[2] == others  # other interventions are left alone


def test_a_failed_full_table_step_keeps_the_sample_figure_with_a_note_and_is_not_cached():
    """One Spark step failing (here: any exception from the computation) returns None,
    so the caller keeps the driver sample's figure, records the error in
    ``FullTables.errors`` (which keeps the result out of the cache) and says so in the
    notes; a step that works returns its result and adds nothing."""
    class Full:
        errors: list[str] = []

    full, notes = Full(), []

    def broken():
        raise RuntimeError("executor lost")

    assert _in_spark("statistics", "the statistics describe the driver sample", broken,
                     full, notes) is None
    assert full.errors == ["statistics: RuntimeError: executor lost"]
    assert notes == ["Full-table statistics in Spark errored (RuntimeError: executor lost); "
                     "the statistics describe the driver sample."]
    assert _in_spark("predictions", "unused", lambda: 42, full, notes) == 42
    assert len(full.errors) == 1 and len(notes) == 1


def test_full_table_scores_from_the_confusion_table_equal_the_pandas_scores():
    rng = np.random.default_rng(3)
    y = rng.choice(["a", "b", "c"], size=5000, p=[0.6, 0.3, 0.1]).astype(object)
    pred = np.where(rng.random(5000) < 0.7, y, rng.choice(["a", "b", "d"], size=5000)).astype(object)
    y[:25] = None
    pandas_scores = summarize_performance(task="multiclass_classification", y_test=y,
                                          pred_test=pred)
    rows = (pd.DataFrame({"y": y, "p": pred}).groupby(["y", "p"], dropna=False).size()
            .rename("count").reset_index())
    rows = [{"y": None if pd.isna(r.y) else r.y, "p": r.p, "count": r.count}
            for r in rows.itertuples()]
    scores, distribution = _classification_from_confusion(rows)
    assert scores == pytest.approx(pandas_scores.scores["test"], rel=1e-12)
    assert distribution == pytest.approx(pandas_scores.prediction_distribution, rel=1e-12)


def test_full_table_answer_set_equals_the_pandas_path(spark, monkeypatch):
    """The answer-set statistics wrong_task_type reads for a pyfunc regressor (issue 12,
    stop 51): over the full tables, a classifier's answers (training targets only) and a
    regressor's (between them) give what the pandas path records on the same rows; a
    NaN prediction counts as in the pandas path (left out); with more distinct targets
    than are looked up, the share is not recorded rather than guessed."""
    rng = np.random.default_rng(11)
    y_train = rng.integers(0, 40, 3000).astype(float)
    y_test = rng.integers(0, 40, 800).astype(float)
    classifier = rng.choice(y_train[:300], 800)
    classifier[:5] = np.nan
    regressor = y_test + rng.normal(0.0, 0.3, 800)
    train = spark.createDataFrame(pd.DataFrame({"count": y_train}))
    targets = _distinct_targets(train, "count")
    assert targets[1] == 40
    shares = []
    for pred in (classifier, regressor):
        expected = summarize_performance(task="regression", y_test=y_test, pred_test=pred,
                                         y_train=y_train).prediction_stats["test"]
        predicted = spark.createDataFrame(pd.DataFrame({"y": y_test, "p": pred}))
        _, update = _regression_from_sums(predicted, targets)
        got = update["prediction_stats"]["test"]
        assert got["in_train_targets"] == pytest.approx(expected["in_train_targets"], abs=1e-12)
        assert got["train_target_distinct"] == expected["train_target_distinct"] == 40
        assert got["distinct"] == pytest.approx(expected["distinct"], rel=0.15)  # HyperLogLog
        assert got["mean"] == pytest.approx(expected["mean"], rel=1e-9)
        shares.append(got["in_train_targets"])
    # the classifier answers only with training targets; the regressor between them
    assert shares[0] == 1.0 and shares[1] < 0.2
    monkeypatch.setattr(spark_stats, "MAX_TARGETS_LOOKED_UP", 10)
    _, update = _regression_from_sums(predicted, targets)
    assert "in_train_targets" not in update["prediction_stats"]["test"]
    _, update = _regression_from_sums(predicted)
    assert set(update["prediction_stats"]["test"]) == {"mean", "std"}


def test_a_pyfunc_classifier_on_a_count_target_is_named_from_spark_tables(spark, tracking_uri):
    """The Spark path records the answer set over the full tables (it kept only the mean
    and spread before), so a pyfunc hiding a classifier fitted on a count target is
    named there too, as on pandas input (tests/test_wrong_task_pyfunc.py)."""
    from sklearn.ensemble import RandomForestClassifier

    from tests.test_wrong_task_pyfunc import _counts, _Served

    train, test = _counts()
    features = ["x0", "x1", "x2", "x3"]
    model = RandomForestClassifier(n_estimators=30, random_state=0).fit(
        train[features], train["visits"])
    spark_train, spark_test = spark.createDataFrame(train), spark.createDataFrame(test)
    with mlflow.start_run() as run:
        info = mlflow.pyfunc.log_model(name="model", python_model=_Served(model, features),
                                       input_example=train[features].head(3),
                                       pip_requirements=["scikit-learn", "pandas"])
        mlflow.models.evaluate(info.model_uri, spark_test, targets="visits",
                               model_type="regressor", evaluators=["deepfix"],
                               evaluator_config={"deepfix": {"train_data": spark_train,
                                                             "eval_data": spark_test,
                                                             "kb": False}})
    artifact = mlflow.artifacts.load_dict(f"runs:/{run.info.run_id}/deepfix/artifact_data.json")
    assert any("mlflow.pyfunc.spark_udf" in n for n in artifact["notes"])
    # the training rows' statistics stay the driver sample's (label and prediction
    # drift compare them with the test rows'): the full-table step used to drop them
    assert set(artifact["performance"]["prediction_stats"]) == {"train", "test"}
    stats = artifact["performance"]["prediction_stats"]["test"]
    assert stats["in_train_targets"] == 1.0
    assert stats["train_target_distinct"] == train["visits"].nunique()
    assert 2 <= stats["distinct"] <= train["visits"].nunique()
    findings = mlflow.artifacts.load_dict(f"runs:/{run.info.run_id}/deepfix/findings.json")
    assert "wrong_task_type" in {f["category"] for f in findings["findings"]}


def test_driver_samples_are_bounded_seeded_and_stratified(spark):
    table = spark_table(spark, 30_000, seed=7)
    counts = {r["label"]: r["count"] for r in table.groupBy("label").count().collect()}
    first = stratified_sample(table, target="label", n_rows=30_000, counts=counts,
                              max_rows=2_000, seed=0)
    again = stratified_sample(table, target="label", n_rows=30_000, counts=counts,
                              max_rows=2_000, seed=0)
    assert len(first) == 2_000
    pd.testing.assert_frame_equal(first, again)
    quotas = class_quotas(counts, 2_000)
    assert first["label"].value_counts().to_dict() == quotas
    assert class_quotas({"a": 990, "b": 10, None: 5}, 100) == {"a": 99, "b": 1}


def test_the_table_fingerprint_sees_every_row_and_not_the_partitioning(spark):
    frame = spark_table(spark, 4_000, seed=51).toPandas()
    n_rows, labels, base = count_and_fingerprint(
        spark.createDataFrame(frame), "label", by_label=True
    )
    assert n_rows == 4_000 and labels == frame["label"].value_counts().to_dict()
    same = spark.createDataFrame(frame.sample(frac=1.0, random_state=0)).repartition(3)
    assert count_and_fingerprint(same, "label", by_label=False)[2] == base
    changed = frame.copy()
    changed.loc[3_999, "x1"] += 1e-9
    assert count_and_fingerprint(spark.createDataFrame(changed), "label", by_label=True)[2] != base
    nulled = frame.copy()
    nulled.loc[17, "color"] = None
    assert count_and_fingerprint(spark.createDataFrame(nulled), "label", by_label=True)[2] != base
    doubled = pd.concat([frame, frame.iloc[:2]], ignore_index=True)  # XOR alone misses pairs
    assert count_and_fingerprint(spark.createDataFrame(doubled), "label", by_label=True)[2] != base
    renamed = spark.createDataFrame(frame.rename(columns={"x1": "z1"}))
    assert count_and_fingerprint(renamed, "label", by_label=True)[2] != base


def test_a_spark_row_changed_outside_the_driver_sample_is_a_cache_miss(
    spark, tracking_uri, tmp_path, monkeypatch
):
    """The result cache keys Spark input by the full tables, not by the driver samples:
    one row changed outside the sample is a miss, an identical table a hit whose
    artifact holds the full-table statistics (and no Spark statistics are recomputed)."""
    from mlflow_deepfix import cache

    monkeypatch.setenv(cache.ENV_DIR, str(tmp_path / "deepfix-cache"))
    frame = spark_table(spark, 3_000, seed=61).toPandas()
    train = spark_table(spark, 2_000, seed=71).toPandas()
    model_uri = log_model(fit_model(train), train[FEATURES].head(5))
    spark_train = spark.createDataFrame(train)
    sample_size = 500

    def evaluate(table: pd.DataFrame) -> tuple[float, dict]:
        config = {"train_data": spark_train, "eval_data": spark.createDataFrame(table),
                  "sample_size": sample_size, "interventions": False}
        with mlflow.start_run() as run:
            result = mlflow.models.evaluate(
                model_uri, data=table.head(200), targets="label", model_type="classifier",
                evaluators=["deepfix"], evaluator_config={"deepfix": config},
            )
        artifact = mlflow.artifacts.load_dict(
            f"runs:/{run.info.run_id}/deepfix/artifact_data.json")
        return result.metrics["deepfix_cache_hit"], artifact

    def driver_sample(table: pd.DataFrame) -> pd.DataFrame:
        counts = table["label"].value_counts().to_dict()
        return stratified_sample(spark.createDataFrame(table), target="label",
                                 n_rows=len(table), counts=counts, max_rows=sample_size, seed=0)

    changed = frame.copy()
    changed.loc[1_234, "x1"] += 100.0
    sample = driver_sample(frame)
    # the changed row is outside the driver sample, which is therefore the same
    assert not np.isclose(sample["x1"], changed.loc[1_234, "x1"]).any()
    pd.testing.assert_frame_equal(sample, driver_sample(changed))

    hit, first = evaluate(frame)
    assert hit == 0.0
    assert first["dataset"]["test"]["n_rows"] == 3_000
    comparison = first["dataset"]["comparison"]  # full-table drift reaches the artifact
    assert set(comparison["column_drift"]) == set(FEATURES)
    assert comparison["column_drift_method"]["x1"] == "Kolmogorov-Smirnov"

    def no_spark_work(*args, **kwargs):
        raise AssertionError("full-table statistics recomputed on a cache hit")

    with monkeypatch.context() as patched:
        patched.setattr(spark_stats, "complete_with_full_tables", no_spark_work)
        hit, again = evaluate(frame.copy())
    assert hit == 1.0
    x1 = next(c for c in again["dataset"]["test"]["columns"] if c["name"] == "x1")
    # the full table's mean (the stored artifact rounds to 4 decimals)
    assert x1["mean"] == pytest.approx(frame["x1"].mean(), abs=6e-5)
    assert again["dataset"] == first["dataset"]

    hit, third = evaluate(changed)
    assert hit == 0.0
    x1 = next(c for c in third["dataset"]["test"]["columns"] if c["name"] == "x1")
    assert x1["mean"] == pytest.approx(changed["x1"].mean(), abs=6e-5)
    assert abs(changed["x1"].mean() - frame["x1"].mean()) > 0.03  # +100 / 3,000 rows
    assert len(list((tmp_path / "deepfix-cache" / "results").glob("*/*.json"))) == 2


def _dataset_of(frame: pd.DataFrame) -> _FrameDataset:
    return _FrameDataset(frame, "label")


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"eval_data": "table.parquet"}, ["eval_data", "'table.parquet'", "Spark DataFrame"]),
        ({"train_data": 42}, ["train_data", "42", "Spark DataFrame"]),
    ],
)
def test_wrong_table_types_are_refused_naming_the_key_and_what_is_accepted(config, message):
    with pytest.raises(DeepfixConfigError) as raised:
        parse_config(config)
    assert all(part in str(raised.value) for part in message), str(raised.value)


def test_bad_spark_tables_are_refused_with_the_problem_and_the_fix(spark):
    good = spark_table(spark, 500, seed=11)
    data = _dataset_of(good.limit(50).toPandas())

    def refused(**deepfix) -> str:
        with pytest.raises(DeepfixInputError) as raised:
            prepare_tables(parse_config(deepfix), data, None, model_type="classifier")
        return str(raised.value)

    message = refused(eval_data=good.drop("label"))
    assert "eval_data" in message and "no target column 'label'" in message
    message = refused(eval_data=good.where(F.lit(False)))
    assert "eval_data" in message and "empty" in message
    message = refused(eval_data=good.drop("color"))
    assert "lacks columns of `data`" in message and "color" in message
    message = refused(eval_data=good, train_data=good.withColumn("x1", F.col("x1").cast("string")))
    assert "disagree on column types" in message and "x1" in message and "cast" in message
    message = refused(eval_data=good, train_data=good.select(F.col("x1").alias("z"), "label"))
    assert "share no column" in message


def test_a_truncated_spark_data_is_reported_and_a_spark_dataset_is_read_in_full(
    spark, tracking_uri, caplog
):
    """data = a 12,000-row Spark frame (MLflow keeps 10,000), train_data = an
    mlflow.data SparkDataset: the report says what was cut and how to pass the rest."""
    table = spark_table(spark, 12_000, seed=21)
    train = mlflow.data.from_spark(spark_table(spark, 3_000, seed=22), targets="label")
    model_uri = log_model(fit_model(train.df.toPandas()), train.df.limit(5).toPandas()[FEATURES])
    with caplog.at_level(logging.WARNING, logger="mlflow_deepfix"), mlflow.start_run() as run:
        mlflow.models.evaluate(
            model_uri, data=table, targets="label", model_type="classifier",
            evaluators=["deepfix"],
            evaluator_config={"deepfix": {"train_data": train, "interventions": False}},
        )
    artifact = mlflow.artifacts.load_dict(f"runs:/{run.info.run_id}/deepfix/artifact_data.json")
    note = next(n for n in artifact["notes"] if n.startswith("Only the first 10,000"))
    assert "of the 12,000 rows" in note and "eval_data" in note
    assert any("Only the first 10,000 of the 12,000 rows" in r.getMessage() for r in caplog.records)
    assert artifact["dataset"]["test"]["n_rows"] == 10_000
    assert artifact["dataset"]["train"]["n_rows"] == 3_000
    report = mlflow.artifacts.load_text(f"runs:/{run.info.run_id}/deepfix/report.html")
    assert "Only the first 10,000 of the 12,000 rows" in report


def test_importing_deepfix_and_pandas_input_need_no_pyspark():
    code = textwrap.dedent(
        """
        import sys
        sys.modules["pyspark"] = None  # as if pyspark were not installed
        import pandas as pd
        import mlflow_deepfix, mlflow_deepfix.evaluator, mlflow_deepfix.inputs
        from mlflow_deepfix.config import parse_config
        frame = pd.DataFrame({"x": [1.0, 2.0], "label": [0, 1]})
        config = parse_config({"train_data": frame, "eval_data": frame})
        print(config.eval_data is frame, "mlflow_deepfix.inputs.spark" in sys.modules)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "False"]
