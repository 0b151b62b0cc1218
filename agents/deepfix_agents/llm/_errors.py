"""The two ways an LLM sample can go wrong, kept apart because they are handled apart.

* :class:`ProviderError`: the provider could not answer at all (timeout, HTTP error,
  model not found). Sampling stops and the rules engine's findings stand.
* :class:`InvalidOutput`: the provider answered, but not with JSON that validates. The
  sample is retried once with the error appended to the conversation, then dropped.
"""

from __future__ import annotations

# defined with the provider interface (providers raise it; importing it from here would
# make providers and llm import each other)
from deepfix_agents.providers._base import ProviderError

__all__ = ["InvalidOutput", "ProviderError"]


class InvalidOutput(ValueError):
    """The answer is not a valid review; the message is fed back to the model."""
