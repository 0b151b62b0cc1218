"""What an LLM must answer, and how its text is turned into a validated review.

Lenient in extraction, strict in validation: the JSON may sit inside a ```json fence or
be surrounded by prose (small models rarely answer with bare JSON), but once found it
must validate against :class:`LLMReview`:

* categories are restricted to the contract ids (``mlflow_deepfix.schemas.CATEGORIES``),
  each at most once per answer (one finding per root cause);
* severities are the contract's;
* every piece of evidence cites a ``source`` the artifact data actually holds
  (``deepchecks``, ``dataset``, ``model``, ``baseline``, ``runtime``, ``training``), and a ``check``,
  when given, must be the exact name of a check in the artifact data. An invented
  check is a hallucination and invalidates the answer.

Unknown extra keys (a model adding ``"rank"`` or ``"confidence"``) are ignored: they
are harmless and the values the pipeline uses are all validated.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from deepfix_agents.llm._errors import InvalidOutput
from mlflow_deepfix.schemas import CATEGORIES, SEVERITY_ORDER, ArtifactData

EVIDENCE_SOURCES: tuple[str, ...] = (
    "deepchecks", "dataset", "model", "baseline", "runtime", "training"
)
MAX_FINDINGS = len(CATEGORIES)
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class ReviewContext:
    """What an answer may cite: the artifact's check names and the sources it holds."""

    checks: frozenset[str]
    sources: frozenset[str]
    _by_lower: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    @classmethod
    def from_artifact(cls, artifact: ArtifactData) -> ReviewContext:
        sources = {"dataset", "model"}
        if artifact.checks:
            sources.add("deepchecks")
        if artifact.baselines:
            sources.add("baseline")
        if artifact.runtime_failures:
            sources.add("runtime")
        if artifact.training is not None:
            sources.add("training")
        names = frozenset(c.name for c in artifact.checks)
        return cls(
            checks=names,
            sources=frozenset(sources),
            _by_lower={n.lower().strip(): n for n in names},
        )

    def canonical_check(self, name: str) -> str | None:
        """The artifact's spelling of ``name`` (case and outer spaces forgiven), or None."""
        return self._by_lower.get(name.lower().strip())


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)


class LLMEvidence(_Lenient):
    source: Literal["deepchecks", "dataset", "model", "baseline", "runtime", "training"]
    check: str | None = None
    detail: str = Field(min_length=1, max_length=600)

    @field_validator("check")
    @classmethod
    def _check_exists(cls, value: str | None, info: ValidationInfo) -> str | None:
        context: ReviewContext | None = (info.context or {}).get("review")
        if value is None or value == "" or context is None:
            return value or None
        canonical = context.canonical_check(value)
        if canonical is None:
            shown = ", ".join(sorted(context.checks)[:40]) or "none"
            raise ValueError(
                f"check {value!r} does not exist in the artifact data; cite one of: {shown}, "
                "or leave 'check' null and cite a source"
            )
        return canonical

    @field_validator("source")
    @classmethod
    def _source_present(cls, value: str, info: ValidationInfo) -> str:
        context: ReviewContext | None = (info.context or {}).get("review")
        if context is not None and value not in context.sources:
            raise ValueError(
                f"source {value!r} holds nothing in this artifact data; cite one of: "
                f"{', '.join(sorted(context.sources))}"
            )
        return value

    @model_validator(mode="after")
    def _deepchecks_names_a_check(self) -> LLMEvidence:
        if self.source == "deepchecks" and not self.check:
            raise ValueError("evidence from source 'deepchecks' must name its 'check'")
        return self


class LLMFinding(_Lenient):
    category: Literal[CATEGORIES]  # type: ignore[valid-type]
    severity: Literal[SEVERITY_ORDER]  # type: ignore[valid-type]
    title: str = Field(min_length=3, max_length=300)
    explanation: str = Field(min_length=10, max_length=3000)
    evidence: list[LLMEvidence] = Field(min_length=1, max_length=10)
    fixes: list[str] = Field(default_factory=list, max_length=10)

    @field_validator("category", "severity", mode="before")
    @classmethod
    def _normalise_id(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("fixes")
    @classmethod
    def _fixes_not_empty(cls, value: list[str]) -> list[str]:
        return [f.strip() for f in value if isinstance(f, str) and f.strip()]


class LLMReview(_Lenient):
    """One sample's answer: the findings the model stands behind."""

    findings: list[LLMFinding] = Field(max_length=MAX_FINDINGS)

    @field_validator("findings")
    @classmethod
    def _one_finding_per_category(cls, value: list[LLMFinding]) -> list[LLMFinding]:
        seen: set[str] = set()
        for finding in value:
            if finding.category in seen:
                raise ValueError(
                    f"category {finding.category!r} is listed twice; merge its evidence "
                    "into one finding"
                )
            seen.add(finding.category)
        return value


def output_schema() -> dict[str, Any]:
    """The JSON schema of :class:`LLMReview` (shown to providers that can enforce it)."""
    return LLMReview.model_json_schema()


def _has_findings(value: Any) -> bool:
    return isinstance(value, dict) and "findings" in value


def extract_json(text: str) -> Any:
    """The review JSON inside ``text``.

    In order: a fenced block, the whole text, any object with a ``"findings"`` key
    embedded in prose; else the first complete JSON object or array. Raises
    :class:`InvalidOutput` naming what is wrong (no JSON at all, or where the JSON
    breaks) so that the retry can tell the model what to correct.
    """
    if not isinstance(text, str) or not text.strip():
        raise InvalidOutput("the answer is empty; reply with one JSON object")
    values: list[Any] = []
    for block in _FENCE.findall(text):
        try:
            values.append(json.loads(block.strip()))
        except json.JSONDecodeError:
            continue
    try:
        values.append(json.loads(text.strip()))
    except json.JSONDecodeError:
        pass
    decoder = json.JSONDecoder()
    first_error: json.JSONDecodeError | None = None
    first_value: Any = None
    for match in re.finditer(r"[{\[]", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError as error:
            if first_value is None and first_error is None:
                first_error = error
            continue
        if first_value is None and first_error is None:
            first_value = value
        if _has_findings(value):
            values.append(value)
            break
    if first_value is not None:
        values.append(first_value)
    for value in values:
        if _has_findings(value):
            return value
    for value in values:
        if isinstance(value, (dict, list)):
            return value
    if first_error is not None:
        near = text[max(first_error.pos - 40, 0) : first_error.pos + 10]
        raise InvalidOutput(
            f"the JSON is malformed: {first_error.msg} (character {first_error.pos}, "
            f"near {near!r}); check brackets, commas and quotes"
        )
    start = " ".join(text.split())[:80]
    raise InvalidOutput(
        f"no JSON object found in the answer (it starts with {start!r}); reply with one "
        'JSON object of the form {"findings": [...]}'
    )


def _explain(error: ValidationError, data: Any) -> str:
    lines = []
    for item in error.errors()[:8]:
        where = ".".join(str(p) for p in item["loc"]) or "answer"
        message = item["msg"]
        if item["type"] == "literal_error" and item["loc"] and item["loc"][-1] == "category":
            message = f"{item.get('input')!r} is not a category id; use one of the listed ids"
        lines.append(f"{where}: {message}")
    more = len(error.errors()) - len(lines)
    if more > 0:
        lines.append(f"... and {more} more errors")
    return "; ".join(lines)


def parse_review(text: str, context: ReviewContext) -> LLMReview:
    """Extract and validate one answer; raises :class:`InvalidOutput` with a message
    that tells the model what to correct."""
    data = extract_json(text)
    if isinstance(data, list):
        data = {"findings": data}
    if not isinstance(data, dict) or "findings" not in data:
        raise InvalidOutput('the JSON must be an object with a "findings" list')
    try:
        return LLMReview.model_validate(data, context={"review": context})
    except ValidationError as error:
        raise InvalidOutput(f"the JSON does not validate: {_explain(error, data)}") from None


#: bounds of a constrained answer: short enough for a small local model to write in
#: seconds, long enough for a title, a reason, one piece of evidence and one fix
CONSTRAINED_LIMITS = {"findings": 3, "title": 48, "explanation": 120, "detail": 64, "fix": 64}


def constrained_schema(context: ReviewContext, max_findings: int | None = None) -> dict[str, Any]:
    """The JSON schema a constrained decoder (:mod:`deepfix_agents.providers._constrained`)
    writes to.

    A strict subset of :class:`LLMReview`, so that every answer written to it validates:
    categories and severities are the contract's enums, each category at most once;
    evidence cites a source this artifact holds, and evidence from ``deepchecks`` names
    one of its checks (the ``anyOf`` picks the variant from the source chosen first);
    strings are bounded by :data:`CONSTRAINED_LIMITS`.
    """
    limits = CONSTRAINED_LIMITS
    detail = {"type": "string", "minLength": 1, "maxLength": limits["detail"]}
    others = sorted(s for s in context.sources if s != "deepchecks")
    variants: list[dict[str, Any]] = []
    if "deepchecks" in context.sources and context.checks:
        variants.append(
            {
                "type": "object",
                "properties": {
                    "source": {"const": "deepchecks"},
                    "check": {"enum": sorted(context.checks)},
                    "detail": detail,
                },
            }
        )
    variants.append(
        {
            "type": "object",
            "properties": {
                "source": {"enum": others},
                "check": {"enum": [None]},
                "detail": detail,
            },
        }
    )
    finding = {
        "type": "object",
        "properties": {
            "category": {"enum": list(CATEGORIES)},
            "severity": {"enum": list(SEVERITY_ORDER)},
            "title": {"type": "string", "minLength": 3, "maxLength": limits["title"]},
            "explanation": {"type": "string", "minLength": 10, "maxLength": limits["explanation"]},
            "evidence": {
                "type": "array",
                "items": {"anyOf": variants},
                "minItems": 1,
                "maxItems": 1,
            },
            "fixes": {
                "type": "array",
                "items": {"type": "string", "minLength": 3, "maxLength": limits["fix"]},
                "minItems": 1,
                "maxItems": 1,
            },
        },
    }
    return {
        "type": "object",
        "properties": {
            "findings": {
                "type": "array",
                "items": finding,
                "minItems": 1,
                "maxItems": max(1, min(max_findings or limits["findings"], MAX_FINDINGS)),
                "x-distinct": "category",
            }
        },
    }
