"""The LLM review: sample the provider, validate, merge by majority, fall back to the
rules engine's findings on any failure (see :mod:`deepfix_agents.llm`)."""

from __future__ import annotations

import inspect
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from deepfix_agents.llm._cache import ReviewCache, cache_key
from deepfix_agents.llm._config import RULES, LLMConfig, validate_llm_options
from deepfix_agents.llm._consistency import MergeResult, merge_reviews
from deepfix_agents.llm._errors import InvalidOutput, ProviderError
from deepfix_agents.llm._prompt import PROMPT_VERSION, build_messages, retry_messages
from deepfix_agents.llm._schema import LLMReview, ReviewContext, constrained_schema, parse_review
from mlflow_deepfix.schemas import ArtifactData, Finding

logger = logging.getLogger(__name__)



@dataclass
class LLMOutcome:
    """What the LLM layer hands back to the diagnosis step."""

    #: reviewed findings, or the rules findings unchanged on fallback; ranks 1..n
    findings: list[Finding]
    #: for the ``deepfix.provider`` tag: the LLM model used, or ``"rules"`` on fallback
    provider: str
    notes: list[str] = field(default_factory=list)
    metrics: dict[str, float] = field(default_factory=dict)
    footer: list[str] = field(default_factory=list)
    sections: list[dict] = field(default_factory=list)


@dataclass
class _Sampling:
    samples: list[LLMReview] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    retries: int = 0
    calls: int = 0
    seconds: float = 0.0


def _complete(
    provider: Any, messages: list[dict[str, str]], seed: int, context: ReviewContext
) -> str:
    """Call ``provider.complete``, passing the seed and the answer's JSON schema (for
    providers that constrain their output to it; it holds this artifact's check names)
    when it accepts them."""
    try:
        accepted = inspect.signature(provider.complete).parameters
    except (TypeError, ValueError):
        accepted = {}
    extra: dict[str, Any] = {}
    if "seed" in accepted:
        extra["seed"] = seed
    if "schema" in accepted:
        extra["schema"] = constrained_schema(context)
    return provider.complete(messages, **extra)


def _sample(
    provider: Any,
    messages: list[dict[str, str]],
    context: ReviewContext,
    *,
    n: int,
    seed: int,
) -> _Sampling:
    """``n`` samples, each retried once with its validation error; a provider error
    propagates (the caller falls back)."""
    result = _Sampling()
    started = time.perf_counter()
    for index in range(n):
        sample_seed = seed + index
        conversation = messages
        for attempt in (1, 2):
            # the retry gets its own seed: a sampled answer may then differ beyond the fix
            answer = _complete(
                provider,
                conversation,
                sample_seed if attempt == 1 else seed + n + index,
                context,
            )
            result.calls += 1
            logger.debug(
                "LLM sample %d/%d attempt %d answered: %.2000s", index + 1, n, attempt, answer
            )
            try:
                result.samples.append(parse_review(answer, context))
                break
            except InvalidOutput as error:
                logger.info("LLM sample %d/%d attempt %d invalid: %s", index + 1, n, attempt, error)
                if attempt == 1:
                    result.retries += 1
                    conversation = retry_messages(messages, str(answer or ""), str(error))
                else:
                    result.invalid.append(str(error))
    result.seconds = time.perf_counter() - started
    return result


def _votes_section(
    label: str, merge: MergeResult | None, sampling: _Sampling | None, outcome: str, n: int
) -> dict:
    rows: list[tuple[str, Any]] = [("provider", label), ("outcome", outcome)]
    if sampling is not None:
        rows.append(("valid samples", f"{len(sampling.samples)}/{n}"))
        rows.append(("retries after an invalid answer", sampling.retries))
    if merge is not None:
        rows.append(("overall agreement", f"{merge.agreement:.2f}"))
        for vote in merge.votes:
            origin = "rules + LLM" if vote.in_rules else "LLM only"
            status = "kept" if vote.kept or vote.in_rules else "dropped"
            if vote.in_rules and not vote.kept:
                status = "kept (rules), not confirmed by the LLM"
            rows.append(
                (
                    vote.category,
                    (
                        f"{vote.count}/{vote.total} samples ({vote.share:.2f}); {origin}; "
                        f"{status}; severity {vote.severity or '-'}"
                    ),
                )
            )
    return {"title": "LLM review: agreement across samples", "rows": rows}


def review_with_llm(artifact: ArtifactData, findings: list[Finding], config: Any) -> LLMOutcome:
    """Review the rules engine's ``findings`` with the LLM provider named by
    ``config.provider``; never raises for provider or output failures (the rules
    findings stand and the notes say why)."""
    options = config.llm if config.llm is not None else LLMConfig()
    started = time.perf_counter()
    model = getattr(options, "model", None) or "?"
    label = f"LLM provider {config.provider} (model {model})"
    metrics: dict[str, float] = {"deepfix_cache_hit": 0.0, "deepfix_llm_fallback": 1.0}
    footer: list[str] = []
    cache = ReviewCache(options.cache_dir) if options.cache else None

    def fallback(reason: str, sampling: _Sampling | None = None, merge=None) -> LLMOutcome:
        reason = _mask_secret(reason, options)
        note = f"{label} failed: {reason}; rules engine findings kept"
        logger.warning("deepfix: %s", note)
        metrics["deepfix_llm_seconds"] = round(time.perf_counter() - started, 4)
        if not footer:
            footer.append("LLM cache: disabled" if cache is None else "LLM cache: miss (0/1)")
        footer.append(f"Diagnosis: rules engine ({config.provider} fell back: {reason})")
        return LLMOutcome(
            findings=list(findings),
            provider=RULES,
            notes=[note],
            metrics=dict(metrics),
            footer=list(footer),
            sections=[_votes_section(label, merge, sampling, f"fallback: {reason}", options.n)],
        )

    try:
        validate_llm_options(config.provider, options)
        from deepfix_agents.providers import PROVIDERS

        provider_cls = PROVIDERS.get(config.provider)
        # providers that run a small model in process ask for the compact prompt
        compact = bool(getattr(provider_cls, "compact_prompt", False))
        messages = build_messages(artifact, findings, compact=compact)
        context = ReviewContext.from_artifact(artifact)
    except Exception as error:  # noqa: BLE001 - a broken setup must not cost the diagnosis
        return fallback(f"{type(error).__name__}: {error}")

    try:
        key = cache_key(artifact, messages, config.provider, options, config.seed)
    except Exception as error:  # noqa: BLE001 - e.g. a value JSON cannot encode
        return fallback(f"cache key failed: {type(error).__name__}: {error}")
    cached = cache.get(key) if cache is not None else None
    sampling: _Sampling | None = None
    provider: Any = None
    if cached is not None:
        samples, invalid = cached.samples, cached.invalid
        metrics["deepfix_cache_hit"] = 1.0
        footer.append("LLM cache: hit (1/1)")
        model_name = _model_name(provider_cls, options)
        label = f"LLM provider {config.provider} (model {model_name})"
    else:
        footer.append("LLM cache: disabled" if cache is None else "LLM cache: miss (0/1)")
        try:
            provider = provider_cls(options)
            model_name = _model_name(provider, options)
            label = f"LLM provider {config.provider} (model {model_name})"
            sampling = _sample(provider, messages, context, n=options.n, seed=config.seed)
        except ProviderError as error:
            return fallback(str(error), sampling)
        except Exception as error:  # noqa: BLE001 - third-party providers raise anything
            return fallback(f"{type(error).__name__}: {error}", sampling)
        finally:
            close = getattr(provider, "close", None)
            if callable(close):
                close()
        samples, invalid = sampling.samples, sampling.invalid
        metrics["deepfix_llm_valid_samples"] = float(len(samples))
        metrics["deepfix_llm_seconds_per_sample"] = round(sampling.seconds / max(options.n, 1), 4)
        if cache is not None:
            cache.put(key, samples, model=model_name, invalid=invalid)

    label = f"LLM provider {config.provider} (model {model_name})"
    if not samples:
        last = invalid[-1] if invalid else "no answer"
        origin = ", cached" if cached is not None else ""
        return fallback(
            f"no valid sample ({len(invalid)} of {options.n} invalid after a "
            f"retry{origin}; last error: {last[:300]})",
            sampling,
        )
    try:
        merge = merge_reviews(
            samples, findings, artifact, min_agreement=options.min_agreement, fail_on=config.fail_on
        )
    except Exception as error:  # a merge bug must not cost the diagnosis
        logger.exception("deepfix: merging the LLM samples failed")
        return fallback(f"merging the samples failed: {type(error).__name__}: {error}", sampling)
    metrics["deepfix_llm_agreement"] = merge.agreement
    if merge.agreement < options.min_agreement:
        return fallback(
            f"agreement {merge.agreement:.2f} across {len(samples)} samples is below "
            f"min_agreement={options.min_agreement}",
            sampling,
            merge,
        )
    metrics["deepfix_llm_fallback"] = 0.0
    metrics["deepfix_llm_seconds"] = round(time.perf_counter() - started, 4)
    confirmed = sum(v.kept for v in merge.votes if v.in_rules)
    added = sum(v.kept for v in merge.votes if not v.in_rules)
    source = "cached review" if cached is not None else f"{len(samples)}/{options.n} valid samples"
    note = (
        f"Findings reviewed by {label}: {source}, agreement {merge.agreement:.2f}; "
        f"{confirmed} of {len(findings)} rules findings confirmed, {added} added. "
        "LLM text can be wrong: check it against the evidence."
    )
    logger.info("deepfix: %s", note)
    footer.append(
        f"Diagnosis reviewed by {model_name} ({config.provider}); prompt v{PROMPT_VERSION}"
    )
    return LLMOutcome(
        findings=merge.findings,
        provider=model_name,
        notes=[note],
        metrics=metrics,
        footer=footer,
        sections=[_votes_section(label, merge, sampling, "accepted", options.n)],
    )


def _mask_secret(text: str, options: Any) -> str:
    """``text`` with the value of the API key variable masked, whatever raised it."""
    import os

    env = getattr(options, "api_key_env", None)
    secret = os.environ.get(env) if env else None
    return text.replace(secret, "***") if secret and len(secret) >= 4 else text


def _model_name(provider: Any, options: Any) -> str:
    """The model name for the tag: the provider's ``model_name`` (a property on
    instances; on a class, computed from the options)."""
    if isinstance(provider, type):
        try:
            return str(provider(options).model_name)
        except Exception:  # noqa: BLE001
            return str(getattr(options, "model", None) or provider.id)
    return str(provider.model_name)
