"""The two ways an LLM sample can go wrong, kept apart because they are handled apart.

* :class:`ProviderError`: the provider could not answer at all (timeout, HTTP error,
  model not found). Sampling stops and the rules engine's findings stand.
* :class:`InvalidOutput`: the provider answered, but not with JSON that validates. The
  sample is retried once with the error appended to the conversation, then dropped.
"""

from __future__ import annotations


class ProviderError(RuntimeError):
    """The provider failed to produce an answer; the message says why, in a few words
    (it ends up in the report's notes, so it never carries a secret)."""


class InvalidOutput(ValueError):
    """The answer is not a valid review; the message is fed back to the model."""
