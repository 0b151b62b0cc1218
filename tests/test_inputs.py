"""The inputs step's one table reader (``mlflow_deepfix.inputs.tables``), shared with the
gate, and training data recovered from run lineage through it."""

from __future__ import annotations

import mlflow
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from mlflow_deepfix.errors import DeepfixInputError
from mlflow_deepfix.gate import load_table as gate_load_table
from mlflow_deepfix.inputs.lineage import training_data_from_lineage
from mlflow_deepfix.inputs.tables import TABLE_EXTENSIONS, load_table


def test_gate_and_inputs_share_the_one_reader():
    assert gate_load_table is load_table


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".pq", ".json"])
def test_each_accepted_extension_round_trips(tmp_path, suffix):
    frame = pd.DataFrame({"a": [1, 2, 3], "label": [0, 1, 0]})
    path = tmp_path / f"table{suffix}"
    if suffix == ".csv":
        frame.to_csv(path, index=False)
    elif suffix == ".json":
        frame.to_json(path)
    else:
        frame.to_parquet(path)
    pd.testing.assert_frame_equal(load_table(path), frame)


def test_unknown_extension_names_the_path_and_the_accepted_ones(tmp_path):
    path = tmp_path / "train.xlsx"
    path.write_bytes(b"not a table")
    with pytest.raises(DeepfixInputError) as error:
        load_table(path, name="train_data")
    message = str(error.value)
    assert "train_data" in message and str(path) in message and "'.xlsx'" in message
    assert all(extension in message for extension in TABLE_EXTENSIONS)


def _model_with_training_source(train: pd.DataFrame, source: str):
    with mlflow.start_run():
        dataset = mlflow.data.from_pandas(train, source=source, targets="label", name="train")
        mlflow.log_input(dataset, context="training")
        info = mlflow.sklearn.log_model(
            LogisticRegression(max_iter=500).fit(train.drop(columns=["label"]), train["label"]),
            name="model",
            input_example=train.drop(columns=["label"]).head(3), pip_requirements=["scikit-learn"],
        )
    return mlflow.pyfunc.load_model(info.model_uri)


@pytest.fixture
def small_train():
    return pd.DataFrame({"x": [float(i) for i in range(40)], "label": [i % 2 for i in range(40)]})


def test_lineage_treats_an_unreadable_extension_as_cannot_be_loaded(
    tracking_uri, tmp_path, small_train
):
    path = tmp_path / "train.xlsx"
    path.write_bytes(b"not a table")
    model = _model_with_training_source(small_train, str(path))
    frame, why = training_data_from_lineage(model, "label")
    assert frame is None
    assert "cannot be loaded" in why


def test_lineage_reads_a_json_training_table(tracking_uri, tmp_path, small_train):
    path = tmp_path / "train.json"
    small_train.to_json(path)
    model = _model_with_training_source(small_train, str(path))
    frame, why = training_data_from_lineage(model, "label")
    assert frame is not None and "logged on run" in why
    pd.testing.assert_frame_equal(frame, small_train, check_dtype=False)  # JSON: 1.0 -> 1
