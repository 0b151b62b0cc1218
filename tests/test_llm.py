"""The optional LLM diagnosis layer (``deepfix_agents.llm``).

A real OpenAI-compatible HTTP server runs on loopback for each test and answers
according to the requested ``model``: valid, invalid-then-valid, always invalid,
invented evidence, slow, failing with 500, flaky, disagreeing, majority. Every fallback
path, the retry-once-with-the-error behaviour, the majority merge, the cache, privacy
and secrets are checked against what that server actually received. A tiny randomly
initialised transformers model exercises the local provider end to end.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import mlflow
import pandas as pd
import pytest
from deepfix_agents.llm import (
    InvalidOutput,
    LLMOutcome,
    build_messages,
    parse_review,
    review_with_llm,
    validate_llm_options,
)
from deepfix_agents.llm._schema import ReviewContext
from deepfix_agents.providers import available_providers
from mlflow.tracking import MlflowClient
from sklearn.ensemble import RandomForestClassifier

from mlflow_deepfix import DeepfixConfigError, parse_config
from mlflow_deepfix.schemas import (
    ArtifactData,
    BaselineResult,
    CheckOutcome,
    ConditionResult,
    DatasetSummary,
    Evidence,
    Finding,
    ModelInfo,
    PerformanceSummary,
    RuntimeFailure,
    SplitComparison,
    SplitStats,
)
from mlflow_deepfix.testing.stats import summarize_dataset
from tests.conftest import log_model

SECRET = "sk-test-7f3a9c1e-DO-NOT-LEAK"
PLANTED = "ZQX-PRIVATE-CELL-4711"

# --------------------------------------------------------------------------- answers


def _answer(*findings: dict) -> str:
    return json.dumps({"findings": list(findings)})


OVERLAP = {
    "category": "train_test_overlap",
    "severity": "critical",
    "title": "Many test rows are copies of training rows",
    "explanation": "The model is graded on rows it has already seen, so the test score "
    "reflects memory, not generalisation.",
    "evidence": [
        {"source": "deepchecks", "check": "Train Test Samples Mix", "detail": "38% of test rows"},
        {"source": "dataset", "check": None, "detail": "overlap_fraction is 0.38"},
    ],
    "fixes": ["Deduplicate before splitting and split by entity with GroupShuffleSplit."],
}
DRIFT = {
    "category": "feature_drift",
    "severity": "high",
    "title": "Feature distributions shift between splits",
    "explanation": "Some features are distributed differently in test than in train.",
    "evidence": [{"source": "deepchecks", "check": "Feature Drift", "detail": "drift score 0.3"}],
    "fixes": ["Compare the collection process of both splits."],
}
OUTLIERS = {
    "category": "outliers",
    "severity": "medium",
    "title": "Outliers in mean radius",
    "explanation": "A few samples lie far outside the bulk of the data.",
    "evidence": [{"source": "dataset", "detail": "outlier_fraction of mean radius is 0.02"}],
    "fixes": [],
}
INVENTED = dict(
    OVERLAP,
    evidence=[{"source": "deepchecks", "check": "Magic Leakage Oracle", "detail": "it says so"}],
)
VALID = "Here is my review:\n```json\n" + _answer(OVERLAP) + "\n```\nHope this helps."
PROSE = "The main problem is that test rows also appear in training. Deduplicate them."


class OpenAIStub:
    """An OpenAI-compatible ``/v1/chat/completions`` server on a free loopback port.

    The behaviour is chosen by the request's ``model``; every request is recorded
    (path, headers, raw body) so tests can check exactly what left the process."""

    def __init__(self):
        self.requests: list[dict] = []
        self.counts: dict[str, int] = {}
        self.lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output quiet
                pass

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                body = json.loads(raw)
                with stub.lock:
                    stub.requests.append(
                        {"path": self.path, "headers": dict(self.headers), "raw": raw, "body": body}
                    )
                    index = stub.counts.get(body["model"], 0)
                    stub.counts[body["model"]] = index + 1
                status, content = stub.behave(body, index, dict(self.headers))
                if status != 200:
                    payload = content.encode()
                else:
                    payload = json.dumps(
                        {
                            "id": "chatcmpl-test",
                            "object": "chat.completion",
                            "model": body["model"],
                            "choices": [
                                {
                                    "index": 0,
                                    "message": {"role": "assistant", "content": content},
                                    "finish_reason": "stop",
                                }
                            ],
                        }
                    ).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def behave(self, body: dict, index: int, headers: dict) -> tuple[int, str]:
        model, messages = body["model"], body["messages"]
        retrying = messages[-1]["role"] == "user" and "answer is invalid" in messages[-1]["content"]
        if model in ("valid", "test-model"):
            return 200, VALID
        if model == "healthy":
            return 200, '{"findings": []}'
        if model == "invalid-then-valid":
            return 200, (_answer(OVERLAP) if retrying else PROSE)
        if model == "always-invalid":
            return 200, PROSE if index % 2 == 0 else '{"findings": [{"category": "astrology"'
        if model == "invented-check":
            return 200, _answer(INVENTED)
        if model == "slow":
            time.sleep(3.0)
            return 200, VALID
        if model == "fail500":
            return 500, f"internal error while handling {headers.get('Authorization')}"
        if model == "flaky500":
            return (500, "temporarily unavailable") if index == 0 else (200, VALID)
        if model == "disagree":
            return 200, [_answer(OVERLAP), _answer(DRIFT), _answer(OUTLIERS)][index % 3]
        if model == "majority":
            low = dict(OVERLAP, severity="high")
            return 200, [_answer(OVERLAP, DRIFT), _answer(low, DRIFT), _answer(OUTLIERS)][index % 3]
        return 404, f"model {model!r} not found"

    def bodies(self) -> str:
        return "\n".join(r["raw"].decode() for r in self.requests)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stub():
    server = OpenAIStub()
    yield server
    server.close()


# --------------------------------------------------------------------------- data


def _artifact(seconds_per_row: float = 0.0007, **overrides) -> ArtifactData:
    train = SplitStats(
        name="train", n_rows=398, n_columns=31, label_distribution={"1": 0.63, "0": 0.37}
    )
    test = SplitStats(
        name="test", n_rows=171, n_columns=31, label_distribution={"1": 0.62, "0": 0.38}
    )
    values = {
        "deepfix_version": "0.1.0",
        "task": "binary_classification",
        "dataset": DatasetSummary(
            target="label",
            feature_names=["mean radius", "mean texture"],
            train=train,
            test=test,
            comparison=SplitComparison(overlap_fraction=0.38, test_to_train_ratio=0.43),
        ),
        "checks": [
            CheckOutcome(
                name="Train Test Samples Mix",
                suite="train_test_validation",
                outcome="not_passed",
                value=0.38,
                conditions=[
                    ConditionResult(
                        name="Percentage of test data samples that appear in train data is "
                        "less or equal to 5%",
                        status="FAIL",
                        details="Percent of test data samples that appear in train data: 38%",
                    )
                ],
                duration_seconds=0.41,
            ),
            CheckOutcome(
                name="Feature Drift", suite="train_test_validation", outcome="passed", value=0.05
            ),
            CheckOutcome(
                name="Model Inference Time",
                suite="model_evaluation",
                outcome="passed",
                values={"seconds_per_row": seconds_per_row},
                conditions=[
                    ConditionResult(
                        name="Average model inference time for one sample is less than 0.001",
                        status="PASS",
                        details=f"Found average inference time (seconds): {seconds_per_row}",
                    )
                ],
            ),
        ],
        "model": ModelInfo(
            flavor="sklearn",
            model_class="sklearn.ensemble.RandomForestClassifier",
            hyperparameters={"n_estimators": 30},
            has_predict_proba=True,
            output_kind="probabilities",
            classes=["0", "1"],
        ),
        "performance": PerformanceSummary(metric="f1_macro", test_score=0.99, train_score=1.0),
        "baselines": [
            BaselineResult(name="dummy", metric="f1_macro", cv_score=0.39, test_score=0.38)
        ],
        "checks_seconds": 12.5,
    }
    values.update(overrides)
    return ArtifactData(**values)


def _rules_findings() -> list[Finding]:
    return [
        Finding(
            rank=1,
            category="train_test_overlap",
            layer="split",
            title="38% of test rows also appear in the training data",
            severity="critical",
            confidence=0.95,
            evidence=[
                Evidence(
                    source="dataset", detail="38% of test rows have a copy in train", value=0.38
                )
            ],
            explanation="rules explanation",
            fixes=["Drop exact duplicates before splitting."],
        ),
        Finding(
            rank=2,
            category="class_imbalance",
            layer="data",
            title="Class 0 is 37% of the data",
            severity="low",
            confidence=0.5,
            evidence=[Evidence(source="dataset", detail="minority share 0.37", value=0.37)],
            explanation="rules explanation of imbalance",
            fixes=["Use class_weight='balanced'."],
        ),
    ]


def _config(stub: OpenAIStub | None, model: str, tmp_path, **llm):
    options = {
        "base_url": stub.base_url if stub else "http://127.0.0.1:9/v1",
        "model": model,
        "timeout": 5,
        "max_retries": 0,
        "cache_dir": str(tmp_path / "llm-cache"),
    }
    options.update(llm)
    return parse_config({"provider": "openai", "llm": options})


def _review(stub, model, tmp_path, artifact=None, findings=None, **llm) -> LLMOutcome:
    outcome = review_with_llm(
        artifact or _artifact(),
        findings if findings is not None else _rules_findings(),
        _config(stub, model, tmp_path, **llm),
    )
    assert [f.rank for f in outcome.findings] == list(range(1, len(outcome.findings) + 1))
    assert outcome.metrics["deepfix_cache_hit"] in (0.0, 1.0)
    return outcome


def _assert_fallback(outcome: LLMOutcome, reason: str):
    assert outcome.provider == "rules"
    assert [f.model_dump() for f in outcome.findings] == [f.model_dump() for f in _rules_findings()]
    assert len(outcome.notes) == 1 and "rules engine findings kept" in outcome.notes[0]
    assert reason in outcome.notes[0], outcome.notes
    assert outcome.metrics["deepfix_llm_fallback"] == 1.0
    assert any("fell back" in line for line in outcome.footer)


# --------------------------------------------------------------------------- registry, config


def test_builtin_providers_are_registered_and_validated():
    assert {"rules", "openai", "transformers"} <= set(available_providers())
    config = parse_config({"provider": "openai", "llm": {"model": "m", "base_url": "http://x/v1"}})
    assert config.provider == "openai" and config.llm.model == "m"
    for provider in ("openai", "transformers"):
        with pytest.raises(DeepfixConfigError, match=r"\['llm'\]\['model'\] is required"):
            validate_llm_options(provider, parse_config({"provider": provider}).llm)
    validate_llm_options("rules", None)
    with pytest.raises(DeepfixConfigError, match="api_key"):
        parse_config({"provider": "openai", "llm": {"model": "m", "api_key": "sk-x"}})


def test_provider_modules_import_nothing_heavy():
    code = (
        "import sys\n"
        "from deepfix_agents.providers import available_providers\n"
        "assert 'openai' in available_providers()\n"
        "print(sorted(m for m in ('httpx', 'torch', 'transformers') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_missing_model_is_refused_early_and_falls_back_late(tmp_path):
    from mlflow_deepfix.config import DeepfixConfig
    from mlflow_deepfix.errors import DeepfixConfigError

    with pytest.raises(DeepfixConfigError, match=r"\['llm'\]\['model'\] is required"):
        parse_config({"provider": "openai"})
    # a config built without parse_config still cannot break the evaluation
    outcome = review_with_llm(_artifact(), _rules_findings(), DeepfixConfig(provider="openai"))
    _assert_fallback(outcome, "['llm']['model'] is required")


# --------------------------------------------------------------------------- parsing


def test_extraction_is_lenient_about_wrapping():
    context = ReviewContext.from_artifact(_artifact())
    for text in (
        VALID,
        _answer(OVERLAP),
        "Sure! " + _answer(OVERLAP) + " Let me know.",
        json.dumps([OVERLAP]),
        "```\n" + _answer(OVERLAP) + "\n```",
    ):
        review = parse_review(text, context)
        assert [f.category for f in review.findings] == ["train_test_overlap"]
    # the artifact's spelling of a check wins over the model's case
    lowered = dict(
        OVERLAP,
        evidence=[{"source": "deepchecks", "check": "train test samples mix", "detail": "x"}],
    )
    assert (
        parse_review(_answer(lowered), context).findings[0].evidence[0].check
        == "Train Test Samples Mix"
    )
    assert parse_review('{"findings": []}', context).findings == []


@pytest.mark.parametrize(
    ("finding", "message"),
    [
        (dict(OVERLAP, category="astrology"), "'astrology' is not a category id"),
        (INVENTED, "'Magic Leakage Oracle' does not exist"),
        (
            dict(OVERLAP, evidence=[{"source": "deepchecks", "detail": "x"}]),
            "must name its 'check'",
        ),
        (dict(OVERLAP, evidence=[{"source": "runtime", "detail": "crash"}]), "source 'runtime'"),
        (dict(OVERLAP, evidence=[]), "evidence"),
        (dict(OVERLAP, severity="catastrophic"), "severity"),
        (dict(OVERLAP, explanation=None), "explanation"),
    ],
)
def test_validation_is_strict(finding, message):
    context = ReviewContext.from_artifact(_artifact())
    with pytest.raises(InvalidOutput, match="does not validate") as error:
        parse_review(_answer(finding), context)
    assert message in str(error.value)


def test_unparseable_answers_are_invalid():
    context = ReviewContext.from_artifact(_artifact())
    cases = {
        "": "the answer is empty",
        PROSE: "no JSON object found",
        '{"findings": [{"category": "outliers", "evidence": {"detail": "a,"source": 1}}]}': (
            "the JSON is malformed: Expecting ',' delimiter (character"
        ),
        '{"verdict": "fine"}': 'an object with a "findings" list',
        _answer(OVERLAP, OVERLAP): "listed twice",
    }
    for text, message in cases.items():
        with pytest.raises(InvalidOutput) as error:
            parse_review(text, context)
        assert message in str(error.value)


# --------------------------------------------------------------------------- happy paths


def test_valid_answer_reviews_the_rules_findings(stub, tmp_path):
    outcome = _review(stub, "valid", tmp_path, temperature=0.0)
    assert outcome.provider == "valid"
    assert len(stub.requests) == 1
    request = stub.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["body"]["model"] == "valid" and request["body"]["temperature"] == 0.0
    assert request["body"]["seed"] == 0 and "Authorization" not in request["headers"]
    top = outcome.findings[0]
    assert top.category == "train_test_overlap" and top.severity == "critical"
    # the rules' measured account stays first; the reviewer's text follows, labelled
    rules_top = next(f for f in _rules_findings() if f.category == "train_test_overlap")
    assert top.explanation == f"{rules_top.explanation}\n\nLLM review: {OVERLAP['explanation']}"
    # measured evidence stays; the LLM's extra citation gets the artifact's value
    assert top.evidence[0].detail == "38% of test rows have a copy in train"
    cited = [e for e in top.evidence if e.check == "Train Test Samples Mix"]
    assert cited and cited[0].value == 0.38 and cited[0].detail.startswith("(LLM)")
    assert top.fixes[0] == "Drop exact duplicates before splitting."
    assert OVERLAP["fixes"][0] in top.fixes
    assert top.confidence == pytest.approx(0.5 * 0.95 + 0.5 * 1.0)
    # the rules finding the LLM did not confirm stays, with less confidence
    imbalance = next(f for f in outcome.findings if f.category == "class_imbalance")
    assert imbalance.severity == "low" and imbalance.confidence == pytest.approx(0.25)
    assert imbalance.explanation == "rules explanation of imbalance"
    assert outcome.metrics["deepfix_llm_agreement"] == 1.0
    assert outcome.metrics["deepfix_cache_hit"] == 0.0
    assert outcome.metrics["deepfix_llm_fallback"] == 0.0
    assert "LLM cache: miss (0/1)" in outcome.footer
    assert "reviewed by LLM provider openai (model valid)" in outcome.notes[0]
    rows = dict(outcome.sections[0]["rows"])
    assert rows["outcome"] == "accepted" and rows["valid samples"] == "1/1"
    assert rows["train_test_overlap"].startswith("1/1 samples")


def test_healthy_answer_keeps_rules_findings(stub, tmp_path):
    outcome = _review(stub, "healthy", tmp_path)
    assert outcome.provider == "healthy"
    assert [f.category for f in outcome.findings] == ["train_test_overlap", "class_imbalance"]
    assert outcome.findings[0].severity == "critical"
    assert outcome.findings[0].confidence == pytest.approx(0.475)


def test_invalid_answer_is_retried_once_with_the_error(stub, tmp_path):
    outcome = _review(stub, "invalid-then-valid", tmp_path)
    assert outcome.provider == "invalid-then-valid"
    assert len(stub.requests) == 2
    first, second = (r["body"]["messages"] for r in stub.requests)
    assert len(first) == 2 and len(second) == 4
    assert [r["body"]["seed"] for r in stub.requests] == [0, 1]
    assert second[:2] == first
    assert second[2] == {"role": "assistant", "content": PROSE}
    assert "no JSON object found" in second[3]["content"]
    assert dict(outcome.sections[0]["rows"])["retries after an invalid answer"] == 1


def test_majority_merge_of_three_samples(stub, tmp_path):
    outcome = _review(stub, "majority", tmp_path, n=3, temperature=0.7)
    assert [r["body"]["seed"] for r in stub.requests] == [0, 1, 2]
    assert outcome.provider == "majority"
    by_category = {f.category: f for f in outcome.findings}
    # overlap: named by 2/3 (critical, high) -> median critical; outliers 1/3 dropped
    assert by_category["train_test_overlap"].severity == "critical"
    assert by_category["train_test_overlap"].confidence == pytest.approx(
        0.5 * 0.95 + 0.5 * 2 / 3, abs=1e-4
    )
    assert "outliers" not in by_category
    # drift: LLM only, 2/3 -> kept, severity capped at medium, confidence <= 0.5
    drift = by_category["feature_drift"]
    assert drift.severity == "medium" and drift.confidence == pytest.approx(1 / 3, abs=1e-4)
    assert drift.evidence[0].check == "Feature Drift" and drift.evidence[0].value == 0.05
    assert outcome.metrics["deepfix_llm_agreement"] == pytest.approx(2 / 3, abs=1e-4)
    rows = dict(outcome.sections[0]["rows"])
    assert rows["overall agreement"] == "0.67"
    assert rows["feature_drift"].startswith("2/3 samples (0.67); LLM only; kept")
    assert rows["outliers"].startswith("1/3 samples (0.33); LLM only; dropped")
    assert outcome.findings[0].category == "train_test_overlap"


@pytest.mark.parametrize(
    ("proposed", "rules", "fail_on", "expected"),
    [
        ("info", "critical", "critical", "critical"),  # never below the fail_on line
        ("critical", "high", "critical", "high"),  # nor above it
        ("info", "high", "critical", "medium"),  # at most one band down
        ("critical", "medium", "critical", "high"),  # at most one band up
        ("low", "medium", "high", "low"),
        ("medium", "high", "high", "high"),
    ],
)
def test_reviewed_severity_keeps_the_gate_verdict(proposed, rules, fail_on, expected):
    from deepfix_agents.llm._consistency import reviewed_severity

    assert reviewed_severity(proposed, rules, fail_on) == expected


@pytest.mark.parametrize(
    ("proposed", "fail_on", "expected"),
    [
        ("critical", "critical", "medium"),
        ("critical", "medium", "low"),
        ("high", "low", "info"),
        ("low", "critical", "low"),
    ],
)
def test_llm_only_severity_is_capped(proposed, fail_on, expected):
    from deepfix_agents.llm._consistency import llm_only_severity

    assert llm_only_severity(proposed, fail_on) == expected


# --------------------------------------------------------------------------- fallbacks


def test_disagreeing_samples_fall_back(stub, tmp_path):
    outcome = _review(stub, "disagree", tmp_path, n=3)
    _assert_fallback(outcome, "agreement 0.00 across 3 samples is below min_agreement=0.5")
    assert len(stub.requests) == 3
    assert outcome.metrics["deepfix_llm_agreement"] == 0.0


def test_always_invalid_output_falls_back(stub, tmp_path):
    outcome = _review(stub, "always-invalid", tmp_path, n=2)
    _assert_fallback(outcome, "no valid sample (2 of 2 invalid after a retry")
    assert len(stub.requests) == 4  # each sample: one answer + one retry


def test_invented_check_is_rejected_and_falls_back(stub, tmp_path):
    outcome = _review(stub, "invented-check", tmp_path)
    _assert_fallback(outcome, "'Magic Leakage Oracle' does not exist")
    assert len(stub.requests) == 2
    assert "Magic Leakage Oracle" in stub.requests[1]["body"]["messages"][-1]["content"]


def test_timeout_falls_back_fast(stub, tmp_path):
    started = time.perf_counter()
    outcome = _review(stub, "slow", tmp_path, timeout=0.3, n=3)
    _assert_fallback(outcome, "LLM provider openai (model slow) failed: timeout after 0.3s")
    assert time.perf_counter() - started < 2.5  # the server answers after 3 s
    assert len(stub.requests) == 1  # a provider failure stops the sampling


def test_http_500_is_retried_with_backoff_then_falls_back(stub, tmp_path):
    started = time.perf_counter()
    outcome = _review(stub, "fail500", tmp_path, max_retries=2)
    _assert_fallback(outcome, "HTTP 500 from")
    assert "(3 attempts)" in outcome.notes[0]
    assert len(stub.requests) == 3
    assert time.perf_counter() - started >= 0.5 + 1.0  # backoff 0.5 s then 1 s


def test_transient_500_recovers_after_a_retry(stub, tmp_path):
    outcome = _review(stub, "flaky500", tmp_path, max_retries=1)
    assert outcome.provider == "flaky500" and len(stub.requests) == 2


def test_unknown_model_404_is_not_retried(stub, tmp_path):
    outcome = _review(stub, "no-such-model", tmp_path, max_retries=3)
    _assert_fallback(outcome, "HTTP 404")
    assert len(stub.requests) == 1


def test_connection_refused_falls_back(tmp_path):
    outcome = _review(None, "valid", tmp_path, timeout=1)
    _assert_fallback(outcome, "connection error")


# --------------------------------------------------------------------------- cache


def test_cache_skips_the_llm_on_a_repeated_review(stub, tmp_path):
    first = _review(stub, "majority", tmp_path, n=3)
    assert len(stub.requests) == 3 and first.metrics["deepfix_cache_hit"] == 0.0
    # same inputs, different timings and clock readings: served from the cache
    artifact = _artifact(checks_seconds=99.0, seconds_per_row=0.0002)
    second = _review(stub, "majority", tmp_path, artifact=artifact, n=3)
    assert len(stub.requests) == 3
    assert second.metrics["deepfix_cache_hit"] == 1.0
    assert "LLM cache: hit (1/1)" in second.footer
    assert second.provider == "majority"
    assert [f.model_dump() for f in second.findings] == [f.model_dump() for f in first.findings]
    assert "cached review" in second.notes[0]
    # an option that shapes the answer changes the key; timeout does not
    _review(stub, "majority", tmp_path, n=3, timeout=7)
    assert len(stub.requests) == 3
    _review(stub, "majority", tmp_path, n=3, temperature=0.9)
    assert len(stub.requests) == 6
    # so does the artifact data
    changed = _artifact(performance=PerformanceSummary(metric="f1_macro", test_score=0.5))
    _review(stub, "majority", tmp_path, artifact=changed, n=3)
    assert len(stub.requests) == 9


def test_provider_failures_are_not_cached_and_cache_can_be_disabled(stub, tmp_path):
    _review(stub, "fail500", tmp_path)
    _review(stub, "fail500", tmp_path)
    assert len(stub.requests) == 2
    for _ in range(2):
        outcome = _review(stub, "valid", tmp_path, cache=False)
        assert outcome.metrics["deepfix_cache_hit"] == 0.0
        assert "LLM cache: disabled" in outcome.footer
    assert len(stub.requests) == 4
    assert not (tmp_path / "llm-cache").exists()


def test_invalid_outputs_are_cached_like_answers(stub, tmp_path):
    """Same prompt, options and seed: the model would fail the same way again."""
    first = _review(stub, "always-invalid", tmp_path)
    second = _review(stub, "always-invalid", tmp_path)
    assert len(stub.requests) == 2
    _assert_fallback(second, "no valid sample (1 of 1 invalid after a retry, cached")
    assert second.notes[0].split("last error")[1] == first.notes[0].split("last error")[1]
    assert second.metrics["deepfix_cache_hit"] == 1.0


def test_corrupt_cache_entry_is_a_miss(stub, tmp_path):
    _review(stub, "valid", tmp_path)
    for entry in (tmp_path / "llm-cache").rglob("*.json"):
        entry.write_text("{not json")
    outcome = _review(stub, "valid", tmp_path)
    assert outcome.metrics["deepfix_cache_hit"] == 0.0 and outcome.provider == "valid"
    assert len(stub.requests) == 2


# --------------------------------------------------------------------------- privacy, secrets


def test_only_condensed_artifact_data_is_sent(stub, tmp_path, breast_cancer_splits):
    train, test = breast_cancer_splits
    train = train.assign(comment="ok")
    test = test.assign(comment="ok")
    test.loc[3, "comment"] = PLANTED
    features = [c for c in train.columns if c != "label"]
    dataset = summarize_dataset(
        train,
        test,
        label="label",
        task="binary_classification",
        feature_names=features,
        cat_features=None,
    )
    failure = RuntimeFailure(
        stage="predict:test",
        exception_type="ValueError",
        message=f"could not convert string to float: '{PLANTED}' in column 'comment'",
    )
    artifact = _artifact(dataset=dataset, runtime_failures=[failure])
    assert PLANTED in artifact.model_dump_json()  # the exception text quoted the cell
    outcome = _review(stub, "valid", tmp_path, artifact=artifact)
    assert outcome.provider == "valid"
    sent = stub.bodies()
    assert PLANTED not in sent
    assert "'<value>'" in sent and "'comment'" in sent  # known column names are kept
    body = stub.requests[0]["body"]
    user = json.loads(body["messages"][1]["content"].split("\n", 1)[1].rsplit("\n\n", 1)[0])
    assert set(user) == {"artifact_data", "rules_engine_findings"}
    assert "checks_seconds" not in json.dumps(user) and "duration_seconds" not in json.dumps(user)


def test_secret_is_sent_only_as_a_header_and_never_leaks(stub, tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("DEEPFIX_TEST_KEY", SECRET)
    caplog.set_level(logging.DEBUG)
    ok = _review(stub, "valid", tmp_path, api_key_env="DEEPFIX_TEST_KEY")
    assert stub.requests[0]["headers"]["Authorization"] == f"Bearer {SECRET}"
    assert SECRET not in stub.bodies()
    failed = _review(stub, "fail500", tmp_path, api_key_env="DEEPFIX_TEST_KEY")
    assert "Bearer ***" in failed.notes[0]  # the server echoed the key; it is masked
    for outcome in (ok, failed):
        dumped = json.dumps(
            [f.model_dump() for f in outcome.findings]
            + [outcome.notes, outcome.footer, outcome.sections, outcome.metrics],
            default=str,
        )
        assert SECRET not in dumped
    assert all(SECRET not in record.getMessage() for record in caplog.records)
    for path in (tmp_path / "llm-cache").rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text()


def test_third_party_provider_plugs_in_and_its_errors_are_masked(tmp_path, monkeypatch):
    from deepfix_agents.providers import PROVIDERS, Provider, register_provider

    monkeypatch.setenv("DEEPFIX_TEST_KEY", SECRET)

    class Canned(Provider):
        id = "canned-test"
        description = "answers from a list, for tests"
        answers: ClassVar[list[str]] = []

        def complete(self, messages):  # no seed parameter: still supported
            answer = self.answers.pop(0)
            if answer == "boom":
                raise RuntimeError(f"upstream refused key {SECRET}")
            return answer

    register_provider(Canned)
    try:
        options = {"model": "canned", "api_key_env": "DEEPFIX_TEST_KEY", "cache": False}
        config = parse_config({"provider": "canned-test", "llm": options})
        Canned.answers = [VALID]
        outcome = review_with_llm(_artifact(), _rules_findings(), config)
        assert outcome.provider == "canned" and outcome.findings[0].explanation.endswith(
            "LLM review: " + OVERLAP["explanation"])
        Canned.answers = ["boom"]
        failed = review_with_llm(_artifact(), _rules_findings(), config)
        _assert_fallback(failed, "RuntimeError: upstream refused key ***")
        assert SECRET not in json.dumps([failed.notes, failed.footer, failed.sections], default=str)
    finally:
        PROVIDERS.unregister("canned-test")
    assert "canned-test" not in available_providers()


def test_missing_key_variable_falls_back(stub, tmp_path, monkeypatch):
    monkeypatch.delenv("DEEPFIX_UNSET_KEY", raising=False)
    outcome = _review(stub, "valid", tmp_path, api_key_env="DEEPFIX_UNSET_KEY")
    _assert_fallback(outcome, "'DEEPFIX_UNSET_KEY' named by llm.api_key_env is not set")
    assert stub.requests == []


def test_prompt_lists_every_category_and_the_checks():
    messages = build_messages(_artifact(), _rules_findings())
    system, user = messages[0]["content"], messages[1]["content"]
    from mlflow_deepfix.schemas import CATEGORIES

    assert all(c in system for c in CATEGORIES)
    assert "Train Test Samples Mix" in user and "rules explanation" not in user
    assert "Model Inference Time" not in user and "seconds" not in user  # no clock readings


# --------------------------------------------------------------------------- local model


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory):
    """A randomly initialised one-layer GPT-2 with a word-level tokenizer and a chat
    template, built offline and saved like a user's local model."""
    torch = pytest.importorskip("torch")
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    words = [
        "<unk>",
        "<pad>",
        "<eos>",
        "{",
        "}",
        "[",
        "]",
        ":",
        ",",
        '"',
        "findings",
        "category",
        "severity",
        "evidence",
        "system",
        "user",
        "assistant",
        "the",
        "data",
    ]
    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, unk_token="<unk>", pad_token="<pad>", eos_token="<eos>"
    )
    fast.chat_template = (
        "{% for m in messages %}{{ m['role'] }} : {{ m['content'] }}\n{% endfor %}"
        "{% if add_generation_prompt %}assistant :{% endif %}"
    )
    torch.manual_seed(0)
    config = GPT2Config(
        n_layer=1,
        n_head=2,
        n_embd=32,
        vocab_size=len(words),
        n_positions=4096,
        bos_token_id=2,
        eos_token_id=2,
        pad_token_id=1,
    )
    path = tmp_path_factory.mktemp("models") / "tiny-gpt2"
    GPT2LMHeadModel(config).save_pretrained(path)
    fast.save_pretrained(path)
    return path


def _local_config(path, tmp_path, **llm):
    options = {"model": str(path), "max_new_tokens": 24, "cache_dir": str(tmp_path / "c")}
    options.update(llm)
    return parse_config({"provider": "transformers", "llm": options})


def test_local_model_garbage_falls_back_cleanly(tiny_model_dir, tmp_path):
    from deepfix_agents.providers.transformers_local import TransformersProvider

    config = _local_config(tiny_model_dir, tmp_path, temperature=0.8)
    provider = TransformersProvider(config.llm)
    assert provider.model_name == "tiny-gpt2"
    messages = build_messages(_artifact(), _rules_findings())
    first = provider.complete(messages, seed=3)
    assert isinstance(first, str) and first
    assert provider.complete(messages, seed=3) == first  # seeded sampling is reproducible
    outcome = review_with_llm(_artifact(), _rules_findings(), config)
    _assert_fallback(outcome, "LLM provider transformers (model tiny-gpt2) failed: no valid sample")


def test_local_model_path_must_exist(tmp_path):
    outcome = review_with_llm(
        _artifact(), _rules_findings(), _local_config(tmp_path / "nowhere", tmp_path)
    )
    _assert_fallback(outcome, "does not exist; the transformers provider needs a local model")


# --------------------------------------------------------------------------- end to end


@pytest.fixture
def overlap_model(tracking_uri, breast_cancer_splits):
    train, test = breast_cancer_splits
    train, test = train.iloc[:240].reset_index(drop=True), test.iloc[:120].copy()
    test = pd.concat([test.iloc[:80], train.iloc[:40]]).reset_index(drop=True)
    features = train.drop(columns=["label"])
    model = RandomForestClassifier(n_estimators=20, random_state=0).fit(features, train["label"])
    return log_model(model, features), train, test


def _evaluate(model_uri, test, config):
    with mlflow.start_run() as run:
        result = mlflow.models.evaluate(
            model_uri,
            test,
            targets="label",
            model_type="classifier",
            evaluators=["deepfix"],
            evaluator_config={"deepfix": config},
        )
    return run.info.run_id, result


def test_end_to_end_through_the_evaluator(stub, tmp_path, overlap_model, monkeypatch):
    model_uri, train, test = overlap_model
    test = test.assign(comment="ok")
    test.loc[5, "comment"] = PLANTED
    train = train.assign(comment="ok")
    monkeypatch.setenv("DEEPFIX_TEST_KEY", SECRET)
    config = {
        "train_data": train,
        "provider": "openai",
        "suites": ["train_test_validation", "model_evaluation"],
        "llm": {
            "base_url": stub.base_url,
            "model": "test-model",
            "timeout": 5,
            "api_key_env": "DEEPFIX_TEST_KEY",
            "cache_dir": str(tmp_path / "llm-cache"),
        },
    }
    timings = []
    runs = []
    for _ in range(2):
        started = time.perf_counter()
        runs.append(_evaluate(model_uri, test, config))
        timings.append(time.perf_counter() - started)
    assert len(stub.requests) == 1  # the second evaluation was served by the cache
    assert PLANTED not in stub.bodies() and SECRET not in stub.bodies()

    client = MlflowClient()
    for (run_id, result), hit in zip(runs, (0.0, 1.0)):
        run = client.get_run(run_id)
        assert run.data.tags["deepfix.provider"] == "test-model"
        assert run.data.metrics["deepfix_cache_hit"] == hit
        assert result.metrics["deepfix_cache_hit"] == hit
        findings = mlflow.artifacts.load_dict(f"runs:/{run_id}/deepfix/findings.json")
        assert findings["provider"] == "test-model"
        top = next(f for f in findings["findings"] if f["category"] == "train_test_overlap")
        assert top["explanation"].endswith("LLM review: " + OVERLAP["explanation"])
        html = mlflow.artifacts.load_text(f"runs:/{run_id}/deepfix/report.html")
        assert "LLM review: agreement across samples" in html
        assert ("LLM cache: hit (1/1)" if hit else "LLM cache: miss (0/1)") in html
        artifact_data = mlflow.artifacts.load_text(f"runs:/{run_id}/deepfix/artifact_data.json")
        for text in (
            json.dumps(findings),
            html,
            artifact_data,
            json.dumps(run.data.tags),
            json.dumps(run.data.params),
        ):
            assert SECRET not in text
    print(f"evaluation without cache {timings[0]:.2f}s, with cache {timings[1]:.2f}s")


def test_end_to_end_fallback_tags_rules(stub, tmp_path, overlap_model):
    model_uri, train, test = overlap_model
    config = {
        "train_data": train,
        "provider": "openai",
        "suites": ["train_test_validation"],
        "llm": {
            "base_url": stub.base_url,
            "model": "always-invalid",
            "timeout": 5,
            "cache_dir": str(tmp_path / "llm-cache"),
        },
    }
    run_id, result = _evaluate(model_uri, test, config)
    run = MlflowClient().get_run(run_id)
    assert run.data.tags["deepfix.provider"] == "rules"
    assert result.metrics["deepfix_cache_hit"] == 0.0
    findings = mlflow.artifacts.load_dict(f"runs:/{run_id}/deepfix/findings.json")
    assert any("rules engine findings kept" in n for n in findings["notes"])
    assert findings["findings"][0]["category"] == "train_test_overlap"
