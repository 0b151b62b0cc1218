"""The interface of an LLM diagnosis provider.

A provider receives the artifact data and the rules engine's findings and returns
reviewed findings. It must never make the result worse or less available: any
failure falls back to the rules engine's findings (handled by the caller).
"""

from __future__ import annotations

from typing import Any, ClassVar


class ProviderError(RuntimeError):
    """The provider failed to produce an answer; the message says why, in a few words
    (it ends up in the report's notes, so it never carries a secret)."""


class Provider:
    id: ClassVar[str]
    description: ClassVar[str]

    def __init__(self, options: Any):
        self.options = options

    def complete(self, messages: list[dict[str, str]]) -> str:
        """Return the model's raw text answer to chat ``messages``."""
        raise NotImplementedError

    @property
    def model_name(self) -> str:
        return getattr(self.options, "model", None) or self.id


def validate_provider(cls: type) -> None:
    from deepfix_agents._registry import RegistrationError

    for field in ("id", "description"):
        if not isinstance(getattr(cls, field, None), str):
            raise RegistrationError(f"provider {cls.__name__}: class attribute {field!r} missing")
    if cls.id == "rules":
        raise RegistrationError("provider id 'rules' is reserved for the built-in engine")
    if cls.complete is Provider.complete:
        raise RegistrationError(f"provider {cls.id!r} does not implement complete()")
