"""Diagnosis providers: ``rules`` (built in, offline, deterministic) and optional LLM
providers registered here or through the entry point group ``deepfix.providers``."""

from __future__ import annotations

from deepfix_agents._registry import Registry
from deepfix_agents.providers._base import Provider, validate_provider

PROVIDERS: Registry = Registry("provider", Provider, "deepfix.providers", validate_provider)
register_provider = PROVIDERS.register

RULES_PROVIDER = "rules"


def available_providers() -> list[str]:
    return [RULES_PROVIDER, *PROVIDERS.ids()]


__all__ = ["PROVIDERS", "RULES_PROVIDER", "Provider", "available_providers", "register_provider"]


def _register_builtins() -> None:
    """The built-in LLM providers. Their modules import httpx / transformers / torch / gguf
    only inside their methods, so registering them costs nothing at import."""
    from deepfix_agents.providers.local_gguf import LocalGGUFProvider
    from deepfix_agents.providers.openai import OpenAIProvider
    from deepfix_agents.providers.transformers_local import TransformersProvider

    for cls in (OpenAIProvider, TransformersProvider, LocalGGUFProvider):
        register_provider(cls)


_register_builtins()
