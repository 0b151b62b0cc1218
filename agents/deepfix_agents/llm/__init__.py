"""The optional LLM diagnosis layer: a reviewer on top of the rules engine.

DeepFix needs a server and an LLM for every diagnosis and breaks when the LLM answers
with prose. Here the deterministic rules engine always runs first; an LLM, when the
user asks for one (``provider`` other than ``rules``), reviews its findings with the
whole artifact picture: it can enrich explanations and fixes, re-rate severities and
add a root cause the rules missed, and it can never make the result worse or less
available:

* only condensed artifact data is sent (:mod:`._prompt`), never raw rows;
* answers must validate against a strict schema (:mod:`._schema`); an invalid answer
  is retried once with the validation error, then dropped;
* ``n`` samples are merged by majority (:mod:`._consistency`);
* any failure (timeout, HTTP error, no valid sample, agreement below
  ``min_agreement``) keeps the rules engine's findings, and the notes say why;
* reviews are cached on disk (:mod:`._cache`), so a repeated evaluation of the same
  inputs skips the LLM.

Entry point: :func:`review_with_llm` (in :mod:`._review`), called by
``mlflow_deepfix.diagnosis``; the options are :class:`LLMConfig` (:mod:`._config`).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from deepfix_agents.llm._config import MODEL_REQUIRED, RULES, LLMConfig, validate_llm_options

if TYPE_CHECKING:
    from deepfix_agents.llm._cache import ReviewCache, cache_key, default_cache_dir
    from deepfix_agents.llm._consistency import merge_reviews
    from deepfix_agents.llm._errors import InvalidOutput, ProviderError
    from deepfix_agents.llm._prompt import PROMPT_VERSION, build_messages
    from deepfix_agents.llm._review import LLMOutcome, review_with_llm
    from deepfix_agents.llm._schema import parse_review

__all__ = [
    "MODEL_REQUIRED",
    "PROMPT_VERSION",
    "RULES",
    "InvalidOutput",
    "LLMConfig",
    "LLMOutcome",
    "ProviderError",
    "ReviewCache",
    "build_messages",
    "cache_key",
    "default_cache_dir",
    "merge_reviews",
    "parse_review",
    "review_with_llm",
    "validate_llm_options",
]

#: public name -> module that defines it, imported on first use (PEP 562): the option
#: schema above is all ``mlflow_deepfix.config`` needs, and it must stay cheap to import
_EXPORTS = {
    "ReviewCache": "deepfix_agents.llm._cache",
    "cache_key": "deepfix_agents.llm._cache",
    "default_cache_dir": "deepfix_agents.llm._cache",
    "merge_reviews": "deepfix_agents.llm._consistency",
    "InvalidOutput": "deepfix_agents.llm._errors",
    "ProviderError": "deepfix_agents.llm._errors",
    "PROMPT_VERSION": "deepfix_agents.llm._prompt",
    "build_messages": "deepfix_agents.llm._prompt",
    "LLMOutcome": "deepfix_agents.llm._review",
    "review_with_llm": "deepfix_agents.llm._review",
    "parse_review": "deepfix_agents.llm._schema",
}


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'deepfix_agents.llm' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
