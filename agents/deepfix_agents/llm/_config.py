"""The LLM provider options (``evaluator_config["deepfix"]["llm"]``) and their check.

They live with the LLM layer that uses them, so that ``mlflow_deepfix.config`` imports
them from here (and re-exports ``LLMConfig``) and nothing in ``deepfix_agents`` has to
import the config module back. Kept free of heavy imports: the config module imports
this one whenever ``mlflow_deepfix`` is imported.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

RULES = "rules"
#: providers whose ``llm.model`` must be given (third-party ones validate themselves)
MODEL_REQUIRED = ("openai", "transformers")


class LLMConfig(BaseModel):
    """Options of an LLM provider. The API key itself is never accepted, only the name
    of the environment variable that holds it, so that it cannot end up in artifacts."""

    model_config = ConfigDict(extra="forbid")

    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    n: int = Field(default=1, ge=1, le=16)
    timeout: float = Field(default=60.0, gt=0)
    temperature: float = Field(default=0.2, ge=0.0, le=2.0)
    max_retries: int = Field(default=2, ge=0, le=10)
    #: share of samples that must agree on a category for the LLM result to stand
    min_agreement: float = Field(default=0.5, ge=0.0, le=1.0)
    cache: bool = True
    cache_dir: str | None = None
    max_new_tokens: int = Field(default=1024, ge=16)
    #: torch threads for an in-process provider (``local``); None: the provider's default
    n_threads: int | None = Field(default=None, ge=1, le=256)


def validate_llm_options(provider: str, options: Any) -> None:
    """Raise :class:`~mlflow_deepfix.errors.DeepfixConfigError` when a built-in LLM
    provider is chosen without the options it cannot work without.

    Meant to be called right after the config is parsed, before any work starts.
    """
    from mlflow_deepfix.errors import DeepfixConfigError

    if provider == RULES or provider not in MODEL_REQUIRED:
        return
    model = getattr(options, "model", None) if options is not None else None
    if not model or not str(model).strip():
        example = (
            "{'provider': 'openai', 'llm': {'base_url': 'http://localhost:8000/v1', "
            "'model': 'qwen2.5-7b-instruct'}}"
            if provider == "openai"
            else "{'provider': 'transformers', 'llm': {'model': '/path/to/local/model'}}"
        )
        raise DeepfixConfigError(
            f"evaluator_config['deepfix']['llm']['model'] is required when provider="
            f"{provider!r}; got {model!r}. Example: {example}"
        )
