"""On-disk cache of LLM reviews, so that a repeated evaluation of the same inputs
skips the LLM (the paper names latency and cost as DeepFix's first limitation).

The key hashes everything that can change the answer and nothing that cannot:

* the artifact data without timings (``checks_seconds``, ``probe_seconds``, each check's
  ``duration_seconds``, checks that read a clock such as Model Inference Time), which
  vary from run to run;
* the messages sent (they hold the rules engine's findings and the prompt text);
* the provider id and the options that shape the answer (``base_url``, ``model``,
  ``n``, ``temperature``, ``min_agreement``, ``max_new_tokens``) and the seed; not
  ``timeout``, ``max_retries`` or cache settings, and never a secret (only the *name*
  of the key's environment variable exists in the config);
* the engine version: the installed ``mlflow-deepfix`` distribution's version (the
  artifact's ``deepfix_version`` when it is not installed) and :data:`PROMPT_VERSION`.

What is stored is the list of validated samples (and the reasons the others were
rejected), not the merged findings: merging is cheap and deterministic, and redoing it
keeps knowledge-base references current. A review whose samples were all invalid is
stored too: with the same prompt, options and seed a model answers the same way, so
asking again would only cost time. Provider failures (timeouts, HTTP errors) are
transient and never stored. Entries are JSON files written atomically; an unreadable
entry is a miss.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import logging
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deepfix_agents.llm._prompt import PROMPT_VERSION, is_clock_check
from deepfix_agents.llm._schema import LLMReview
from mlflow_deepfix.schemas import ArtifactData

logger = logging.getLogger(__name__)

CACHE_FORMAT = "1"
KEYED_OPTIONS = ("base_url", "model", "n", "temperature", "min_agreement", "max_new_tokens")


def default_cache_dir() -> Path:
    """``<user cache dir>/mlflow-deepfix/llm`` (platformdirs)."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("mlflow-deepfix", appauthor=False)) / "llm"


def _artifact_without_timings(artifact: ArtifactData) -> dict[str, Any]:
    data = artifact.model_dump(mode="json", exclude={"checks_seconds", "probe_seconds"})
    data["checks"] = [
        {k: v for k, v in entry.items() if k != "duration_seconds"}
        for check, entry in zip(artifact.checks, data.get("checks", []))
        if not is_clock_check(check)
    ]
    return data


@functools.lru_cache(maxsize=1)
def _installed_version() -> str | None:
    """The ``mlflow-deepfix`` distribution's version, read from its metadata (not by
    importing ``mlflow_deepfix``: the agents layer imports nothing of it but schemas)."""
    try:
        return importlib.metadata.version("mlflow-deepfix")
    except importlib.metadata.PackageNotFoundError:
        return None


def _engine_version(artifact: ArtifactData) -> str:
    return _installed_version() or artifact.deepfix_version


def cache_key(
    artifact: ArtifactData,
    messages: list[dict[str, str]],
    provider: str,
    options: Any,
    seed: int,
) -> str:
    """A sha256 hex digest of everything that shapes the review (see module docstring)."""
    engine = _engine_version(artifact)
    payload = {
        "format": CACHE_FORMAT,
        "engine": engine,
        "prompt": PROMPT_VERSION,
        "provider": provider,
        "options": {name: getattr(options, name, None) for name in KEYED_OPTIONS},
        "seed": seed,
        "artifact": _artifact_without_timings(artifact),
        "messages": messages,
    }
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass
class CachedReview:
    """A stored review: the valid samples, and why the others were rejected."""

    samples: list[LLMReview]
    invalid: list[str] = field(default_factory=list)


class ReviewCache:
    """Validated samples by key, one JSON file each under ``directory``."""

    def __init__(self, directory: str | os.PathLike | None = None):
        self.directory = Path(directory) if directory else default_cache_dir()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> CachedReview | None:
        path = self._path(key)
        if not path.is_file():
            return None
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
            if entry.get("format") != CACHE_FORMAT or entry.get("key") != key:
                return None
            return CachedReview(
                samples=[LLMReview.model_validate(s) for s in entry["samples"]],
                invalid=[str(e) for e in entry.get("invalid", [])],
            )
        except Exception as error:  # noqa: BLE001 - a broken entry is only a miss
            logger.warning("ignoring unreadable LLM cache entry %s: %s", path, error)
            return None

    def put(
        self, key: str, samples: list[LLMReview], *, model: str, invalid: Sequence[str] = ()
    ) -> None:
        path = self._path(key)
        entry = {
            "format": CACHE_FORMAT,
            "key": key,
            "model": model,
            "samples": [s.model_dump(mode="json") for s in samples],
            "invalid": list(invalid),
        }
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(entry, handle)
            os.replace(tmp, path)
        except OSError as error:
            logger.warning("could not write the LLM cache entry %s: %s", path, error)
