"""The deep-learning examples run as a user runs them (``python examples/<name>.py``),
within issue 14's two minutes each, and rank their planted bug first.

Each runs in a fresh interpreter with its output folder under ``tmp_path`` (the examples
read ``DEEPFIX_EXAMPLE_DIR``), so the test also catches an example that only works from
the repository root or with a warm import cache.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="the deep-learning examples need the [image] extra (torch)")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
#: issue 14's limit for each example, training included
LIMIT_S = 120


def _run_example(name: str, tmp_path: Path) -> tuple[str, float]:
    env = {**os.environ, "DEEPFIX_EXAMPLE_DIR": str(tmp_path / "out")}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=3 * LIMIT_S,
    )
    seconds = time.perf_counter() - started
    assert done.returncode == 0, f"{name} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return done.stdout, seconds


def _rank_one(stdout: str) -> str:
    match = re.search(r"^#1 \[(\w+)\] (\w+):", stdout, flags=re.MULTILINE)
    assert match, f"no rank-1 finding printed:\n{stdout[-2000:]}"
    return match.group(2)


@pytest.mark.parametrize(
    ("example", "planted"),
    [
        ("torch_image_classifier.py", "feature_drift"),
        ("transformer_text_classifier.py", "class_imbalance"),
    ],
)
def test_deep_learning_example_ranks_its_planted_bug_first_within_two_minutes(
    example, planted, tmp_path
):
    if example.startswith("transformer"):
        pytest.importorskip("sentence_transformers", reason="needs the [text] extra")
    stdout, seconds = _run_example(example, tmp_path)
    assert _rank_one(stdout) == planted
    assert "deepfix status: FAIL" in stdout
    assert (tmp_path / "out" / "mlflow.db").exists()
    assert seconds <= LIMIT_S, f"{example} took {seconds:.1f}s (limit {LIMIT_S}s)"
