"""Spark input at scale (issue 13 A): ``mlflow.models.evaluate`` on a seeded Spark
evaluation table of N rows and a training table of N/5 rows, ``local[2]``; prints the
phase timings deepfix logs, the wall time and the peak resident memory of this process
(the Python driver) and of Spark's JVM.

    python benchmarks/spark_scale.py --rows 1000000
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("mlflow_deepfix").setLevel(logging.INFO)

    import mlflow

    from tests.test_spark import FEATURES, PeakRSS, fit_model, local_spark, spark_table

    session = local_spark()
    with tempfile.TemporaryDirectory() as tmp:
        mlflow.set_tracking_uri(f"sqlite:///{tmp}/mlflow.db")
        mlflow.set_experiment("spark-scale")
        spark_test = spark_table(session, args.rows, seed=1, partitions=8)
        spark_train = spark_table(session, args.rows // 5, seed=1_000, partitions=4)
        with mlflow.start_run():
            info = mlflow.sklearn.log_model(
                fit_model(spark_train.limit(20_000).toPandas()), name="model",
                input_example=spark_train.limit(3).toPandas()[FEATURES],
                serialization_format="cloudpickle",
            )
        started = time.perf_counter()
        with PeakRSS() as memory, mlflow.start_run() as run:
            mlflow.models.evaluate(
                info.model_uri, data=spark_test, targets="label", model_type="classifier",
                evaluators=["deepfix"],
                evaluator_config={"deepfix": {"train_data": spark_train,
                                              "eval_data": spark_test, "cache": False}},
            )
        seconds = time.perf_counter() - started
        artifact = mlflow.artifacts.load_dict(
            f"runs:/{run.info.run_id}/deepfix/artifact_data.json"
        )
        print(
            f"rows={args.rows:,} evaluate={seconds:.1f}s "
            f"python_peak_rss={memory.python_peak / 2**20:.0f}MiB "
            f"jvm_peak_rss={memory.jvm_peak / 2**20:.0f}MiB "
            f"test_rows={artifact['dataset']['test']['n_rows']:,} "
            f"checks_seconds={artifact['checks_seconds']}"
        )
    session.stop()


if __name__ == "__main__":
    main()
