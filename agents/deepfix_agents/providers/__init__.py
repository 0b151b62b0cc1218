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


__all__ = ["PROVIDERS", "Provider", "RULES_PROVIDER", "available_providers", "register_provider"]
