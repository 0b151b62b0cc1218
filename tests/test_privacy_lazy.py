"""The Scrubber looks numeric cells up lazily (issue 13 B): it must scrub exactly what
the eager index (every distinct number of the frames, sorted) scrubbed."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mlflow_deepfix import privacy
from mlflow_deepfix.privacy import REDACTED, Scrubber


def _eager_is_cell_number(frames: list[pd.DataFrame], number: float) -> bool:
    """The previous rule, written out: any numeric cell (or number written in a string
    cell) equal to ``number``, small integers never."""
    if number == round(number) and abs(number) < 10_000:
        return False
    for frame in frames:
        for name in frame.columns:
            column = frame[name]
            if pd.api.types.is_numeric_dtype(column.dtype) and not pd.api.types.is_bool_dtype(
                column.dtype
            ):
                if (column.to_numpy(dtype=float, na_value=np.nan) == number).any():
                    return True
            else:
                if any(privacy._as_number(str(v).strip()) == number for v in column.dropna()):
                    return True
    return False


@pytest.fixture
def frames() -> list[pd.DataFrame]:
    rng = np.random.default_rng(3)
    n = 5_000
    test = pd.DataFrame({
        "amount": np.round(rng.normal(5_000, 3_000, n), 4),
        "count": rng.integers(0, 50_000, n),
        "nullable": pd.array(rng.integers(10_000, 10_100, n), dtype="Int64"),
        "code": [f"{x:.5f}" for x in rng.random(n)],
    })
    test.loc[7, "nullable"] = pd.NA
    train = pd.DataFrame({"amount": np.round(rng.normal(0, 1, n), 6), "count": rng.integers(0, 9, n),
                          "nullable": pd.array([None] * n, dtype="Int64"), "code": ["x"] * n})
    return [test, train]


def test_lazy_lookup_matches_the_eager_rule_across_chunks(frames, monkeypatch):
    monkeypatch.setattr(privacy, "_LOOKUP_CHUNK", 777)  # many chunk boundaries
    scrubber = Scrubber(frames)
    test, train = frames
    candidates = [
        *test["amount"].iloc[[0, 776, 777, 4999]], *train["amount"].iloc[[1, 3000]],
        *test["count"].iloc[:5], float(test["nullable"].iloc[0]), float(test["code"].iloc[9]),
        123456.789, 0.1234567, 10_050.0, 5.0, 42.0,
    ]
    for number in candidates:
        text = f"{number!r}"
        expected = _eager_is_cell_number(frames, number) and privacy._long_number(text) is not None
        assert (scrubber.scrub(f"value {text} here") == f"value {REDACTED} here") == expected, text


def test_learn_batches_the_lookups_into_one_scan(frames, monkeypatch):
    scrubber = Scrubber(frames)
    scans = []
    original = scrubber._numeric_chunks

    def counted():
        scans.append(1)
        yield from original()

    monkeypatch.setattr(scrubber, "_numeric_chunks", counted)
    test = frames[0]
    texts = [f"a {test['amount'].iloc[i]!r} b" for i in range(20)] + ["c 98765.4321 d"]
    scrubber.learn(texts)
    assert len(scans) == 1
    cleaned = [scrubber.scrub(t) for t in texts]
    assert len(scans) == 1, "scrubbing learned texts must not scan again"
    assert all(REDACTED in c for c in cleaned[:20]) and cleaned[20] == texts[20]


def test_texts_without_long_numbers_scan_nothing(frames, monkeypatch):
    scrubber = Scrubber(frames)
    monkeypatch.setattr(scrubber, "_numeric_chunks", lambda: pytest.fail("scanned the frames"))
    assert scrubber.scrub("accuracy 0.913 on 5000 rows") == "accuracy 0.913 on 5000 rows"


def test_rare_text_values_scrubbed_group_levels_kept():
    frame = pd.DataFrame({
        "city": pd.Categorical(["Springfield"] * 2 + ["north"] * 6, categories=["Springfield", "north", "unused"]),
        "mixed": [1, "1", "ZQ-42", None, 2.5, "ab", "ab", "ab"],
    })
    scrubber = Scrubber([frame])
    assert scrubber.scrub("Springfield and north and ZQ-42") == f"{REDACTED} and north and {REDACTED}"
    assert "unused" not in scrubber.strings  # a categorical's unused level is no cell
