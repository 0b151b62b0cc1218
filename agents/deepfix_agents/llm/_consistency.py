"""Self-consistency: several sampled reviews merged into one stable diagnosis.

The paper's answer to hallucination risk is to sample several reasoning paths and keep
their consensus. Here, with ``k`` valid samples:

* **Categories** by majority: a category the LLM raises is kept when it appears in at
  least ``min_agreement`` of the samples. The rules engine's findings are never
  dropped (their evidence is measured, not generated); a rules finding the majority
  did not confirm keeps its text and severity and loses confidence (below).
* **Severity**: the median over the samples that name the category (the more urgent
  of the two middle values when ``k`` is even). For a rules finding it moves at most
  one band away from the rules severity (the LLM refines, it does not overturn a
  measurement) and never across the user's ``fail_on`` line; a finding only the LLM
  raised is capped at ``medium`` and below ``fail_on``. So the pass/fail verdict that
  CI gates read stays the deterministic rules engine's: the LLM cannot fail a build,
  nor let one through.
* **Confidence** is calibrated: ``0.5 * rules confidence + 0.5 * agreement share``
  (the share of samples naming the category; the rules confidence is 0 for an
  LLM-only finding, which therefore never exceeds 0.5).
* **Text** (explanation, extra fixes, the title of LLM-only findings) comes from the
  sample whose severity is closest to the median, the earliest on ties. A rules
  finding keeps its own explanation first (it quotes measurements) and the reviewer's
  text follows under ``LLM review:``: a small local model's prose is often vaguer
  than the rules' and must never replace the measured account.
* **Evidence**: the rules engine's evidence stays; checks the LLM cited in addition
  are appended with the value read from the artifact data, never the LLM's number.
* **Agreement** of the whole review: the mean Jaccard similarity between each
  sample's category set and the merged (majority) set; 1.0 when every sample names
  the same categories. Below ``min_agreement`` the caller falls back to the rules.
* **Rank**: :func:`deepfix_agents.scoring.rank`, the same as the rules engine.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from deepfix_agents.llm._schema import LLMFinding, LLMReview
from deepfix_agents.scoring import rank
from mlflow_deepfix.schemas import (
    CATEGORIES,
    CATEGORY_LAYERS,
    SEVERITY_ORDER,
    ArtifactData,
    Evidence,
    Finding,
    severity_rank,
)

RULES_WEIGHT = 0.5
LLM_ONLY_MAX_SEVERITY = "medium"
MAX_SEVERITY_SHIFT = 1
MAX_EXTRA_FIXES = 3
MAX_EVIDENCE = 10


@dataclass
class CategoryVote:
    """How the samples voted on one category."""

    category: str
    count: int
    total: int
    in_rules: bool
    kept: bool
    severity: str | None = None

    @property
    def share(self) -> float:
        return self.count / self.total if self.total else 0.0


@dataclass
class MergeResult:
    findings: list[Finding]
    agreement: float
    votes: list[CategoryVote] = field(default_factory=list)


def _jaccard(a: set[str], b: set[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def _median_severity(items: list[LLMFinding]) -> str:
    ranks = sorted(severity_rank(i.severity) for i in items)
    return SEVERITY_ORDER[statistics.median_low(ranks)]


REVIEW_LABEL = "LLM review: "


def _with_review(rules_text: str, review_text: str) -> str:
    """The rules' explanation, then the reviewer's (when it says something else)."""
    if not rules_text or rules_text.strip() == review_text.strip():
        return review_text
    return f"{rules_text}\n\n{REVIEW_LABEL}{review_text}"


def _representative(items: list[LLMFinding], severity: str) -> LLMFinding:
    target = severity_rank(severity)
    return min(
        enumerate(items), key=lambda pair: (abs(severity_rank(pair[1].severity) - target), pair[0])
    )[1]


def reviewed_severity(proposed: str, rules: str, fail_on: str) -> str:
    """``proposed`` moved at most one band from ``rules``, on the same side of ``fail_on``."""
    centre, line = severity_rank(rules), severity_rank(fail_on)
    index = min(
        max(severity_rank(proposed), centre - MAX_SEVERITY_SHIFT), centre + MAX_SEVERITY_SHIFT
    )
    index = min(index, line) if centre <= line else max(index, line + 1)
    return SEVERITY_ORDER[index]


def llm_only_severity(proposed: str, fail_on: str) -> str:
    """``proposed`` capped at ``medium`` and one band below ``fail_on``."""
    floor = max(severity_rank(LLM_ONLY_MAX_SEVERITY), severity_rank(fail_on) + 1)
    return SEVERITY_ORDER[min(max(severity_rank(proposed), floor), len(SEVERITY_ORDER) - 1)]


def _blend(rules_confidence: float, share: float) -> float:
    return round(RULES_WEIGHT * rules_confidence + (1 - RULES_WEIGHT) * share, 4)


def _extra_evidence(
    items: list[LLMFinding], existing: list[Evidence], artifact: ArtifactData
) -> list[Evidence]:
    """LLM-cited evidence not already present, with values read from the artifact."""
    seen = {(e.source, e.check) for e in existing}
    out: list[Evidence] = []
    for item in items:
        for cited in item.evidence:
            key = (cited.source, cited.check)
            if key in seen:
                continue
            seen.add(key)
            check = artifact.check(cited.check) if cited.check else None
            out.append(
                Evidence(
                    source=cited.source,
                    check=cited.check,
                    detail=f"(LLM) {cited.detail}"[:600],
                    value=check.value if check is not None else None,
                )
            )
    return out


def _merge_fixes(first: list[str], extra: list[str]) -> list[str]:
    known = {f.lower()[:60] for f in first}
    out = list(first)
    for fix in extra:
        if fix.lower()[:60] not in known and len(out) < len(first) + MAX_EXTRA_FIXES:
            known.add(fix.lower()[:60])
            out.append(fix)
    return out


def merge_reviews(
    samples: list[LLMReview],
    rules_findings: list[Finding],
    artifact: ArtifactData,
    *,
    min_agreement: float,
    fail_on: str = "critical",
) -> MergeResult:
    """Merge valid samples with the rules engine's findings (see the module docstring)."""
    if not samples:
        raise ValueError("merge_reviews needs at least one valid sample")
    total = len(samples)
    by_category: dict[str, list[LLMFinding]] = {}
    for sample in samples:
        for item in sample.findings:
            by_category.setdefault(item.category, []).append(item)
    kept = {c for c, items in by_category.items() if len(items) / total >= min_agreement}
    agreement = round(
        statistics.fmean(_jaccard({i.category for i in s.findings}, kept) for s in samples), 4
    )

    rules_by_category = {f.category: f for f in rules_findings}
    merged: list[Finding] = []
    votes: list[CategoryVote] = []
    for finding in rules_findings:
        items = by_category.get(finding.category, [])
        vote = CategoryVote(finding.category, len(items), total, True, finding.category in kept)
        update: dict = {"confidence": _blend(finding.confidence, vote.share)}
        if vote.kept:
            severity = reviewed_severity(_median_severity(items), finding.severity, fail_on)
            chosen = _representative(items, severity)
            evidence = finding.evidence + _extra_evidence(items, finding.evidence, artifact)
            update.update(
                severity=severity,
                explanation=_with_review(finding.explanation, chosen.explanation),
                fixes=_merge_fixes(finding.fixes, chosen.fixes),
                evidence=evidence[:MAX_EVIDENCE],
            )
        vote.severity = update.get("severity", finding.severity)
        merged.append(finding.model_copy(update=update))
        votes.append(vote)

    for category in sorted(kept - set(rules_by_category), key=CATEGORIES.index):
        items = by_category[category]
        vote = CategoryVote(category, len(items), total, False, True)
        severity = llm_only_severity(_median_severity(items), fail_on)
        chosen = _representative(items, severity)
        vote.severity = severity
        votes.append(vote)
        merged.append(
            Finding(
                category=category,
                layer=CATEGORY_LAYERS[category],
                title=chosen.title,
                severity=severity,
                confidence=_blend(0.0, vote.share),
                evidence=_extra_evidence(items, [], artifact)[:MAX_EVIDENCE],
                explanation=chosen.explanation,
                fixes=chosen.fixes[: MAX_EXTRA_FIXES + 2],
            )
        )
    for category in sorted(set(by_category) - kept - set(rules_by_category), key=CATEGORIES.index):
        votes.append(CategoryVote(category, len(by_category[category]), total, False, False))
    return MergeResult(findings=rank(merged), agreement=agreement, votes=votes)
