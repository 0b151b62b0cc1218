"""The one table reader: a CSV, Parquet or JSON file (chosen by extension) into a
DataFrame. Used by the inputs step (training data from run lineage) and by the gate
(``data``/``train_data`` given as paths), so both accept and refuse the same files."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from mlflow_deepfix.errors import DeepfixInputError

#: file extensions :func:`load_table` reads
TABLE_EXTENSIONS = (".csv", ".parquet", ".pq", ".json")


def load_table(path: str | os.PathLike, *, name: str = "data") -> pd.DataFrame:
    """Read a table file into a DataFrame.

    Raises :class:`DeepfixInputError` naming ``name``, the path and the problem (an
    extension not in :data:`TABLE_EXTENSIONS`, a missing file, or a file the reader
    refuses), so callers either report it or treat the table as not loadable.
    """
    location = Path(path)
    suffix = location.suffix.lower()
    if suffix not in TABLE_EXTENSIONS:
        raise DeepfixInputError(
            f"{name}: cannot read {str(location)!r}: unsupported file extension {suffix!r}; "
            f"accepted: {', '.join(TABLE_EXTENSIONS)}."
        )
    if not location.is_file():
        raise DeepfixInputError(f"{name}: file not found: {str(location)!r}.")
    try:
        if suffix == ".csv":
            return pd.read_csv(location)
        if suffix == ".json":
            return pd.read_json(location)
        return pd.read_parquet(location)
    except Exception as error:  # noqa: BLE001 - any reader error is a bad input file
        detail = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise DeepfixInputError(
            f"{name}: cannot read {str(location)!r} as {suffix[1:]}: "
            f"{type(error).__name__}{': ' + detail if detail else ''}."
        ) from None
