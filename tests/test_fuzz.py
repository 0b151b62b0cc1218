"""Property-based fuzzing (CI profile): random frames, label types, NaN/inf patterns,
column label types, misbehaving models and config values; every call must end as a
clean refusal (a DeepfixError naming the problem, and no deepfix output on the run) or
a complete run (all contract artifacts, tags and metrics, valid JSON).

``benchmarks/fuzz.py`` runs the same cases >= 1,000 times and prints the counts.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, seed, settings

from tests.fuzz_cases import fuzz_cases, run_case

#: bounded for CI: a few dozen cases, each with its own time limit
CI_EXAMPLES = int(os.environ.get("DEEPFIX_FUZZ_EXAMPLES", "30"))


@pytest.fixture(autouse=True)
def _quiet_progress(monkeypatch):
    monkeypatch.setenv("TQDM_DISABLE", "1")
    monkeypatch.setenv("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")


@seed(20261125)
@settings(
    max_examples=CI_EXAMPLES,
    deadline=None,  # the per-case limit is run_case's timeout (a hang is an outcome)
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                           HealthCheck.data_too_large],
)
@given(case=fuzz_cases())
def test_every_call_ends_as_a_clean_refusal_or_a_complete_run(tracking_uri, case):
    result = run_case(case, timeout=90)
    assert result.outcome in ("clean refusal", "complete run"), (result, case.description)
