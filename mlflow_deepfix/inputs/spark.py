"""Spark input (issue 13 A): accepting and validating Spark tables, and the bounded,
seeded, label-stratified samples of them that the pandas pipeline gets.

Why: MLflow keeps only the first 10,000 rows of a Spark ``data``
(``EvaluationDataset.SPARK_DATAFRAME_LIMIT``) before any evaluator runs. deepfix takes
the full table as ``eval_data`` (and ``train_data`` as a Spark table), and splits the
work: everything that must see every row (statistics, test performance) runs as Spark
aggregations in :mod:`mlflow_deepfix.testing.spark_stats`; everything that needs rows in
memory (Deepchecks, the baseline ladder, probes, interventions) gets a sample of at most
:data:`SPARK_SAMPLE_ROWS` rows per split, collected to the driver. A whole table is
never collected.

pyspark stays optional: this module imports it only inside functions that receive a
Spark frame, and nothing imports this module unless such a frame was passed.
"""

from __future__ import annotations

import hashlib
import inspect
import logging
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from mlflow_deepfix.config import DeepfixConfig, is_spark_frame, spark_frame_of
from mlflow_deepfix.errors import DeepfixInputError

logger = logging.getLogger(__name__)

__all__ = [
    "SPARK_SAMPLE_ROWS",
    "FullTables",
    "is_spark_frame",
    "model_uri_of",
    "prepare_tables",
    "spark_frame_of",
    "stratified_sample",
    "truncated_spark_rows",
]

#: rows per split collected to the driver for Deepchecks, baselines, probes and
#: interventions: the pandas path's budget for Deepchecks' suites (CHECKS_MAX_ROWS)
SPARK_SAMPLE_ROWS = 50_000
#: MLflow's cut of a Spark ``data`` (read from MLflow when available)
MLFLOW_SPARK_LIMIT_DEFAULT = 10_000

EVAL_NAME = "evaluator_config['deepfix']['eval_data']"
TRAIN_NAME = "evaluator_config['deepfix']['train_data']"


@dataclass
class FullTables:
    """The full Spark tables behind the sampled frames the pandas pipeline sees."""

    test: Any
    train: Any | None
    target: str
    n_test: int
    n_train: int | None
    #: rows of each split in the driver-side samples
    sample_rows: dict[str, int] = field(default_factory=dict)
    #: where the model can be loaded from inside Spark (``mlflow.pyfunc.spark_udf``)
    model_uri: str | None = None
    #: split -> label value -> rows (None: missing label), counted while sampling
    label_counts: dict[str, dict[Any, int]] = field(default_factory=dict)
    #: the tables :func:`prepare_tables` put in Spark's cache (a user's cache is left alone)
    persisted: list[Any] = field(default_factory=list)
    #: split -> fingerprint of the full table (:func:`count_and_fingerprint`), part of
    #: the result cache's key: a row changed outside the driver sample is a miss
    fingerprints: dict[str, str] = field(default_factory=dict)
    #: what failed while completing the artifact with full-table figures (then the
    #: result is not cached: it holds sample figures where full-table ones belong)
    errors: list[str] = field(default_factory=list)

    def release(self) -> None:
        """Drop the tables deepfix cached from Spark's cache."""
        while self.persisted:
            table = self.persisted.pop()
            if table is not None:
                try:
                    table.unpersist()
                except Exception as error:  # noqa: BLE001 - a stopped session
                    logger.debug("unpersist failed: %s", error)


def _is_cached(table: Any) -> bool:
    try:
        level = table.storageLevel
        return bool(level.useMemory or level.useDisk)
    except Exception:  # noqa: BLE001 - Spark Connect frames may not say
        return True


def _storage_level() -> Any:
    from pyspark import StorageLevel

    return StorageLevel.MEMORY_AND_DISK


class _FrameDataset:
    """The few attributes of MLflow's ``EvaluationDataset`` that the inputs step reads,
    over a pandas frame (a sample of the Spark evaluation table, or a pandas eval_data)."""

    def __init__(self, frame: pd.DataFrame, target: str):
        self.targets_name = target
        self.features_data = frame.drop(columns=[target])
        self.labels_data = frame[target].to_numpy()
        self.feature_names = [str(c) for c in self.features_data.columns]


def mlflow_spark_limit() -> int:
    try:
        from mlflow.data.evaluation_dataset import EvaluationDataset

        return int(EvaluationDataset.SPARK_DATAFRAME_LIMIT)
    except (ImportError, AttributeError):  # pragma: no cover - older/newer MLflow
        return MLFLOW_SPARK_LIMIT_DEFAULT


def truncated_spark_rows(dataset: Any) -> int | None:
    """Rows of the Spark ``data`` that MLflow cut to its first 10,000 before calling the
    evaluator, or None when ``data`` was not cut.

    MLflow keeps no reference to the original frame in the dataset it hands over, so the
    evaluator looks for it where it still is: the ``data`` argument of the
    ``mlflow.models.evaluate`` call on the stack (a Spark DataFrame or the SparkDataset
    MLflow turned it into). Only a dataset of exactly the limit's size is looked at, and
    the full table's row count decides.
    """
    limit = mlflow_spark_limit()
    features = getattr(dataset, "features_data", None)
    if features is None or len(features) != limit or "pyspark" not in sys.modules:
        return None
    frame = inspect.currentframe()
    try:
        while frame is not None:
            if (
                frame.f_code.co_name == "evaluate"
                and frame.f_globals.get("__name__") == "mlflow.models.evaluation.base"
            ):
                table = spark_frame_of(frame.f_locals.get("data"))
                if table is None:
                    return None
                n_rows = int(table.count())
                return n_rows if n_rows > limit else None
            frame = frame.f_back
    finally:
        del frame
    return None


def truncation_note(n_rows: int, limit: int) -> str:
    return (
        f"Only the first {limit:,} of the {n_rows:,} rows of the Spark `data` were evaluated: "
        f"MLflow keeps {limit:,} rows of a Spark DataFrame (EvaluationDataset."
        f"SPARK_DATAFRAME_LIMIT). Pass the full table as evaluator_config={{'deepfix': "
        f"{{'eval_data': spark_df}}}} to have deepfix's statistics and the test performance "
        f"cover every row (computed in Spark)."
    )


def model_uri_of(model: Any) -> str | None:
    """A URI ``mlflow.pyfunc.spark_udf`` can load the evaluated model from, or None (a
    model given as a Python function, say)."""
    model_id = getattr(model, "model_id", None)
    if isinstance(model_id, str) and model_id:
        return f"models:/{model_id}"
    meta = getattr(model, "metadata", None)
    run_id = getattr(meta, "run_id", None)
    path = getattr(meta, "artifact_path", None)
    if run_id and path:
        return f"runs:/{run_id}/{path}"
    return None


# ------------------------------------------------------------------------ validation


def _type_family(data_type: Any) -> str:
    from pyspark.sql import types as T

    if isinstance(data_type, T.BooleanType):
        return "boolean"
    if isinstance(data_type, T.NumericType):
        return "number"
    if isinstance(data_type, (T.StringType, T.VarcharType, T.CharType)):
        return "string"
    if isinstance(data_type, (T.DateType, T.TimestampType, T.TimestampNTZType)):
        return "datetime"
    return data_type.simpleString()


def _check_table(table: Any, *, name: str, target: str) -> None:
    """Target present and column names unique (schema only: no Spark job)."""
    columns = [str(c) for c in table.columns]
    if target not in columns:
        shown = ", ".join(columns[:12])
        raise DeepfixInputError(
            f"{name} has no target column {target!r} (targets={target!r}). Columns found: "
            f"{shown}{'...' if len(columns) > 12 else ''}. Include the label column under "
            f"the same name as `targets`."
        )
    dupes = sorted({c for c in columns if columns.count(c) > 1})
    if dupes:
        raise DeepfixInputError(
            f"{name} has duplicated column names {dupes}; rename them so each is unique."
        )


def _check_rows(n_rows: int, *, name: str) -> None:
    if n_rows == 0:
        raise DeepfixInputError(
            f"{name} is an empty Spark table (0 rows). deepfix needs at least one labelled "
            f"row: pass the full evaluation/training table."
        )


def _check_schemas(test: Any, train: Any | None, *, target: str,
                   data_columns: list[str] | None) -> None:
    """``eval_data`` holds every column of ``data`` (it is the same table, in full), and
    train and eval tables agree on the kind of values of each shared column."""
    test_columns = [str(c) for c in test.columns]
    if data_columns is not None:
        missing = [c for c in data_columns if c not in set(test_columns)]
        if missing:
            raise DeepfixInputError(
                f"{EVAL_NAME} lacks columns of `data`: {missing[:12]}. eval_data must be the "
                f"full evaluation table that `data` was taken from (same columns); got "
                f"columns {test_columns[:12]}."
            )
    if train is None:
        return
    train_types = {f.name: f.dataType for f in train.schema.fields}
    test_types = {f.name: f.dataType for f in test.schema.fields}
    shared = [c for c in test_columns if c in train_types and c != target]
    if not shared:
        raise DeepfixInputError(
            f"{TRAIN_NAME} and {EVAL_NAME} share no column besides the target {target!r} "
            f"(train: {list(train_types)[:12]}, eval: {test_columns[:12]}); pass the training "
            f"split of the same table."
        )
    conflicts = {
        c: f"{train_types[c].simpleString()} in train_data, {test_types[c].simpleString()} "
        f"in eval_data"
        for c in [*shared, target]
        if _type_family(train_types[c]) != _type_family(test_types[c])
    }
    if conflicts:
        raise DeepfixInputError(
            f"{TRAIN_NAME} and {EVAL_NAME} disagree on column types: {conflicts}. Cast the "
            f"column to one type in both tables (e.g. df.withColumn(name, col(name)."
            f"cast('double')))."
        )


# ---------------------------------------------------------------------------- samples


@contextmanager
def _arrow_transfer(session: Any):
    """Arrow for ``toPandas`` of the samples (several times faster than Row objects),
    the session's own setting restored afterwards."""
    key = "spark.sql.execution.arrow.pyspark.enabled"
    try:
        before = session.conf.get(key, None)
        session.conf.set(key, "true")
    except Exception:  # noqa: BLE001 - a locked conf only costs speed
        before = ...
    try:
        yield
    finally:
        if before is not ...:
            try:
                if before is None:
                    session.conf.unset(key)
                else:
                    session.conf.set(key, before)
            except Exception as error:  # noqa: BLE001
                logger.debug("could not restore the Arrow setting: %s", error)


_MASK64 = (1 << 64) - 1


def _hashable(field_: Any):
    """A column as ``xxhash64`` takes it: maps (which Spark refuses to hash) as JSON."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    column = F.col(_quoted(field_.name))
    return F.to_json(column) if isinstance(field_.dataType, T.MapType) else column


def count_and_fingerprint(
    table: Any, target: str, *, by_label: bool
) -> tuple[int, dict[Any, int] | None, str]:
    """Rows, rows per label value (when ``by_label``; None = missing label) and a
    fingerprint of the whole table, in one Spark aggregation.

    The fingerprint is an order-independent hash of the multiset of rows: per row,
    ``xxhash64`` over (null flag, value) of every column in schema order (a null and a
    shifted value do not collide, as Spark's hash alone skips nulls); over the rows, the
    count, the sum modulo 2**64 (summed as two 32-bit halves, so no long overflows) and
    the XOR of the row hashes, plus the schema. Any changed, added or removed row
    changes it (up to 64-bit hash collisions), whatever the partitioning.
    """
    from pyspark.sql import functions as F

    parts = []
    for field_ in table.schema.fields:
        column = _hashable(field_)
        parts += [column.isNull(), column]
    row_hash = F.xxhash64(*parts) if parts else F.lit(0).cast("long")
    high = F.shiftrightunsigned(row_hash, 32)
    low = row_hash.bitwiseAND(F.lit(0xFFFFFFFF))
    aggs = [
        F.count(F.lit(1)).alias("n"),
        F.sum(high).alias("hi"),
        F.sum(low).alias("lo"),
        F.bit_xor(row_hash).alias("x"),
    ]
    if by_label:
        rows = table.groupBy(F.col(_quoted(target)).alias("y")).agg(*aggs).collect()
    else:
        rows = table.agg(*aggs).collect()
    n_rows = total = xor = 0
    for row in rows:
        if not row["n"]:
            continue
        n_rows += int(row["n"])
        total += (int(row["hi"]) << 32) + int(row["lo"])
        xor ^= int(row["x"]) & _MASK64
    digest = hashlib.sha256(table.schema.json().encode())
    digest.update(f"{n_rows}:{total & _MASK64:016x}:{xor:016x}".encode())
    labels = {row["y"]: int(row["n"]) for row in rows} if by_label else None
    return n_rows, labels, digest.hexdigest()


def class_quotas(counts: dict[Any, int], max_rows: int) -> dict[Any, int]:
    """Rows per class in a sample of ``max_rows``: proportional, by largest remainder
    (ties by label order), every present class at least one row."""
    present = {k: c for k, c in counts.items() if k is not None and c > 0}
    total = sum(present.values())
    if total <= max_rows:
        return dict(present)
    exact = {k: c * max_rows / total for k, c in present.items()}
    quotas = {k: max(1, int(v)) for k, v in exact.items()}
    short = max_rows - sum(quotas.values())
    order = sorted(exact, key=lambda k: (-(exact[k] - int(exact[k])), str(k)))
    for k in order[: max(short, 0)]:
        quotas[k] += 1
    return {k: min(q, present[k]) for k, q in quotas.items()}


def stratified_sample(
    table: Any,
    *,
    target: str,
    n_rows: int,
    counts: dict[Any, int] | None,
    max_rows: int,
    seed: int,
) -> pd.DataFrame:
    """A seeded sample of at most ``max_rows`` rows of ``table`` as pandas, stratified
    by the label when ``counts`` (rows per class) is given.

    Spark draws a Bernoulli sample a little larger than needed (``sampleBy`` per class),
    then keeps each class's quota (:func:`class_quotas`) of rows with the smallest
    seeded row hash; only the sample crosses to the driver. Same table and seed: same
    rows, whatever the partitioning of the draw's input.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    session = table.sparkSession
    if n_rows <= max_rows:
        with _arrow_transfer(session):
            return table.toPandas()
    share = max_rows / n_rows
    row_hash = F.xxhash64(*[F.col(_quoted(c)) for c in table.columns], F.lit(seed))
    if counts:
        quotas = class_quotas(counts, max_rows)
        fractions = {
            value: min(1.0, (quota * 1.1 + 30) / counts[value]) for value, quota in quotas.items()
        }
        drawn = table.sampleBy(target, fractions=fractions, seed=seed)
        quota_of = F.create_map(*[x for k, q in quotas.items() for x in (F.lit(k), F.lit(q))])
        rank = F.row_number().over(Window.partitionBy(target).orderBy(row_hash))
        kept = (
            drawn.withColumn("__deepfix_rank", rank)
            .where(F.col("__deepfix_rank") <= quota_of[F.col(_quoted(target))])
            .drop("__deepfix_rank")
        )
    else:
        drawn = table.sample(withReplacement=False, fraction=min(1.0, share * 1.1 + 1e-4),
                             seed=seed)
        kept = drawn.orderBy(row_hash).limit(max_rows)
    with _arrow_transfer(session):
        frame = kept.toPandas()
    return frame.reset_index(drop=True)


def _quoted(name: str) -> str:
    return "`" + str(name).replace("`", "``") + "`"


# ----------------------------------------------------------------------------- entry


def prepare_tables(
    config: DeepfixConfig, dataset: Any, model: Any, *, model_type: str
) -> tuple[Any, DeepfixConfig, FullTables | None, list[str]]:
    """Resolve ``eval_data`` and Spark tables before the inputs step.

    Returns the dataset and config the inputs step should read (pandas samples when a
    Spark table is involved), the full Spark tables for the full-table statistics (None
    when no Spark table was given), and notes for the report.
    """
    notes: list[str] = []
    eval_table, train_table = config.eval_data, config.train_data
    spark_eval, spark_train = spark_frame_of(eval_table), spark_frame_of(train_table)
    target = getattr(dataset, "targets_name", None)
    if eval_table is None:
        truncated = truncated_spark_rows(dataset)
        if truncated is not None:
            note = truncation_note(truncated, mlflow_spark_limit())
            logger.warning("deepfix: %s", note)
            notes.append(note)
    if not target:
        return dataset, config, None, notes  # the inputs step refuses it with the fix
    data_columns = _data_columns(dataset, target)
    if spark_eval is None and spark_train is None:
        if isinstance(eval_table, pd.DataFrame):
            _check_pandas_eval(eval_table, target, data_columns)
            dataset = _FrameDataset(eval_table, target)
            notes.append(f"Evaluated on eval_data ({len(eval_table):,} rows) instead of `data`.")
        return dataset, config.model_copy(update={"eval_data": None}), None, notes

    started = time.perf_counter()
    session = (spark_eval if spark_eval is not None else spark_train).sparkSession
    if spark_eval is None:
        # a Spark train_data with a pandas test table: the test table goes to Spark too
        # (it is in memory already), so both splits are counted and hashed alike
        test_frame = eval_table if isinstance(eval_table, pd.DataFrame) else _dataset_frame(
            dataset, target
        )
        spark_eval = session.createDataFrame(test_frame)
    if spark_train is None and isinstance(train_table, pd.DataFrame):
        spark_train = session.createDataFrame(train_table)
    _check_table(spark_eval, name=EVAL_NAME if eval_table is not None else "data", target=target)
    if spark_train is not None:
        _check_table(spark_train, name=TRAIN_NAME, target=target)
    _check_schemas(spark_eval, spark_train, target=target,
                   data_columns=data_columns if eval_table is not None else None)

    logger.info("deepfix: Spark tables validated in %.1fs", time.perf_counter() - started)
    started = time.perf_counter()
    budget = min(config.sample_size or SPARK_SAMPLE_ROWS, SPARK_SAMPLE_ROWS)
    classification = model_type == "classifier"
    samples: dict[str, pd.DataFrame] = {}
    n_rows: dict[str, int] = {}
    labels: dict[str, dict[Any, int]] = {}
    fingerprints: dict[str, str] = {}
    persisted: list[Any] = []
    names = {"test": EVAL_NAME if eval_table is not None else "data", "train": TRAIN_NAME}
    try:
        for split, table in (("test", spark_eval), ("train", spark_train)):
            if table is None:
                continue
            # every later Spark job reads the table again: keep it (and one version of a
            # non-deterministic source) in Spark's cache until the statistics are done
            if not _is_cached(table):
                table.persist(_storage_level())
                persisted.append(table)
            n_rows[split], counted, fingerprints[split] = count_and_fingerprint(
                table, target, by_label=classification
            )
            if counted is not None:
                labels[split] = counted
            _check_rows(n_rows[split], name=names[split])
            samples[split] = stratified_sample(
                table, target=target, n_rows=n_rows[split],
                counts=labels.get(split), max_rows=budget, seed=config.seed,
            )
    except BaseException:
        FullTables(test=None, train=None, target=target, n_test=0, n_train=None,
                   persisted=persisted).release()
        raise
    full = FullTables(
        test=spark_eval,
        train=spark_train,
        target=target,
        n_test=n_rows["test"],
        n_train=n_rows.get("train"),
        sample_rows={split: len(frame) for split, frame in samples.items()},
        label_counts=labels,
        persisted=persisted,
        model_uri=model_uri_of(model),
        fingerprints=fingerprints,
    )
    seen = " and ".join(
        f"{len(samples[s]):,} of {n_rows[s]:,} {s} rows" for s in ("test", "train") if s in samples
    )
    notes.append(
        "Spark input: deepfix's statistics (counts, missing values, quantiles, duplicates, "
        "overlap, label shares, unseen categories, per-feature drift scores, sentinel "
        "shares) and the test performance cover every row, "
        f"computed in Spark; Deepchecks, the baseline ladder, probes and interventions saw a "
        f"seeded, label-stratified sample of {seen}."
    )
    logger.info("deepfix: Spark input, driver samples of %s in %.1fs", seen,
                time.perf_counter() - started)
    update = {"eval_data": None, "train_data": samples.get("train")}
    return _FrameDataset(samples["test"], target), config.model_copy(update=update), full, notes


def _data_columns(dataset: Any, target: str) -> list[str] | None:
    features = getattr(dataset, "features_data", None)
    if isinstance(features, pd.DataFrame):
        return [*map(str, features.columns), target]
    return None


def _dataset_frame(dataset: Any, target: str) -> pd.DataFrame:
    from mlflow_deepfix.inputs.validation import frame_from_dataset

    return frame_from_dataset(dataset)[0]


def _check_pandas_eval(frame: pd.DataFrame, target: str, data_columns: list[str] | None) -> None:
    from mlflow_deepfix.inputs.validation import check_frame

    check_frame(frame, name=EVAL_NAME, target=target,
                hint="pass the full evaluation table or leave eval_data out.")
    if data_columns is not None:
        missing = [c for c in data_columns if c not in set(map(str, frame.columns))]
        if missing:
            raise DeepfixInputError(
                f"{EVAL_NAME} lacks columns of `data`: {missing[:12]}. eval_data must be the "
                f"full evaluation table that `data` was taken from (same columns)."
            )

