"""The cross-artifact reasoner: signals from every analyzer -> ranked root causes.

1. **Aggregate**: signals are grouped by category; each category's rule turns its
   group into one hypothesis (one finding per root cause, with every piece of
   evidence that supports it, not one finding per failed check).
2. **Explain symptoms by causes**: a rule lists in ``explains`` the categories that
   are symptoms of it (label drift explains a poor score that would otherwise read as
   underfitting; class imbalance explains all-one-class predictions). When a cause is
   found at ``medium`` or above, each symptom it explains is folded into it: the
   symptom's evidence joins the cause's, the cause takes the higher of the two
   severities (the consequence is what the user suffers), and the symptom is no longer
   reported on its own. Causes are processed most urgent first, so chains resolve
   deterministically. A symptom whose rule localises it to named inputs
   (``Rule.subjects``: the column whose small change flips predictions, the features of
   an overconfident slice) is folded only into a cause whose finding names one of the
   same inputs: the measured evidence must link the two, not merely both firing (an
   overfitting gap names no input, so it does not absorb a code column's fragility;
   two independent bugs give two findings). A cause names inputs through
   ``Rule.names`` (its subjects by default; feature drift names the columns that moved
   without being localised itself).
3. **Guard against chance**: a model no better than chance always yields a high
   finding (the underfitting rule's chance signal). When another finding at ``high`` or
   above can explain a poor score (its rule explains ``underfitting``) the chance
   evidence is folded into the most urgent of them (it names the cause); otherwise the
   underfitting finding stands and says whether the labels look unrelated to the
   features.
4. **Rank** with :mod:`deepfix_agents.scoring`, then causes first: a finding at the same
   severity as a downstream symptom it explains (but was too weak to absorb) is put
   ahead of it, unless its own measurement showed it harmless (:func:`causes_first`).
"""

from __future__ import annotations

import logging
from collections import defaultdict

from deepfix_agents.rules import RULES
from deepfix_agents.rules._ladder import at_chance
from deepfix_agents.scoring import LAYER_ORDER, combine_confidence, rank, rank_key
from deepfix_agents.signals import Signal
from mlflow_deepfix.schemas import (
    CATEGORIES,
    CATEGORY_LAYERS,
    ArtifactData,
    Evidence,
    Finding,
    severity_rank,
)

logger = logging.getLogger(__name__)

#: a cause must be at least this severe to absorb its symptoms
MIN_CAUSE_SEVERITY = "medium"
MAX_EVIDENCE = 8


def by_category(signals: list[Signal]) -> dict[str, list[Signal]]:
    """The signals grouped by category, in the order they came."""
    grouped: dict[str, list[Signal]] = defaultdict(list)
    for signal in signals:
        grouped[signal.category].append(signal)
    return grouped


def hypotheses(signals: list[Signal], artifact: ArtifactData) -> list[Finding]:
    """One finding per category that has signals and a registered rule (info dropped)."""
    grouped = by_category(signals)
    findings = []
    for category in sorted(grouped, key=CATEGORIES.index):
        if category not in RULES:
            logger.warning("signals for %s have no rule; ignored", category)
            continue
        rule = RULES.get(category)()
        group = sorted(grouped[category], key=lambda s: (-s.score, -s.confidence, s.source))
        severity = rule.severity(group, artifact)
        if severity == "info":
            continue
        findings.append(
            Finding(
                category=category,
                layer=CATEGORY_LAYERS[category],
                title=rule.title(group, artifact),
                severity=severity,
                confidence=rule.confidence(group),
                evidence=_dedupe([s.evidence for s in group])[:MAX_EVIDENCE],
                explanation=rule.explanation(group, artifact),
                fixes=rule.fix_list(group, artifact),
            )
        )
    return findings


def _inputs_by_category(signals: list[Signal], artifact: ArtifactData,
                        method: str) -> dict[str, tuple[str, ...]]:
    """Per category with signals, the inputs its rule's ``method`` returns (categories
    with none are left out)."""
    named = {}
    for category, group in by_category(signals).items():
        if category not in RULES:
            continue
        inputs = tuple(getattr(RULES.get(category)(), method)(group, artifact))
        if inputs:
            named[category] = inputs
    return named


def subjects(signals: list[Signal], artifact: ArtifactData) -> dict[str, tuple[str, ...]]:
    """Per category with signals, the inputs its finding localises the problem to
    (``Rule.subjects``; categories whose finding is not localised are left out)."""
    return _inputs_by_category(signals, artifact, "subjects")


def cause_names(signals: list[Signal], artifact: ArtifactData) -> dict[str, tuple[str, ...]]:
    """Per category with signals, the inputs its finding names as a cause
    (``Rule.names``: its subjects, or inputs it names without being localised)."""
    return _inputs_by_category(signals, artifact, "names")


def linked(
    cause: str,
    symptom: str,
    named: dict[str, tuple[str, ...]] | None,
    causes: dict[str, tuple[str, ...]] | None = None,
) -> bool:
    """Whether the evidence links ``symptom`` to ``cause``: always for a symptom that is
    not localised; for a localised one, only when the cause names one of its inputs
    (``causes``: what each finding names as a cause, :func:`cause_names`; without it,
    its subjects in ``named``)."""
    if not named or symptom not in named:
        return True
    naming = named if causes is None else causes
    return bool(set(named[symptom]) & set(naming.get(cause, ())))


def explain_symptoms(
    findings: list[Finding],
    artifact: ArtifactData | None = None,
    named: dict[str, tuple[str, ...]] | None = None,
    causes: dict[str, tuple[str, ...]] | None = None,
) -> list[Finding]:
    """Fold symptom findings into the root causes that explain them (``artifact`` lets a
    rule say what it explains on this data, see ``Rule.explains_for``; ``named`` holds
    the inputs each localised finding names, see :func:`subjects` and :func:`linked`;
    ``causes`` what each finding names as a cause, :func:`cause_names`)."""
    by_category = {f.category: f for f in findings}
    absorbed: set[str] = set()
    for cause in sorted(findings, key=rank_key):
        if cause.category in absorbed:
            continue
        if severity_rank(cause.severity) > severity_rank(MIN_CAUSE_SEVERITY):
            continue
        rule = RULES.get(cause.category)
        current = by_category[cause.category]
        explained = rule.explains if artifact is None else rule().explains_for(artifact)
        for symptom_id in explained:
            symptom = by_category.get(symptom_id)
            if symptom is None or symptom_id in absorbed:
                continue
            if not linked(cause.category, symptom_id, named, causes):
                logger.debug(
                    "%s not folded into %s: it names %s, the cause none of them",
                    symptom_id, cause.category, named[symptom_id],
                )
                continue
            absorbed.add(symptom_id)
            current = _fold(current, symptom)
        by_category[cause.category] = current
    return [by_category[f.category] for f in findings if f.category not in absorbed]


def guard_chance(findings: list[Finding], artifact: ArtifactData | None) -> list[Finding]:
    """Fold the no-better-than-chance finding into the most urgent high+ finding, if any
    (see the module docstring, step 3)."""
    chance = next((f for f in findings if f.category == "underfitting"), None)
    if chance is None or artifact is None or at_chance(artifact) is None:
        return findings
    # only a cause that can explain a poor score takes the chance evidence (its rule
    # lists underfitting among its symptoms): rows shared across the splits, say, do
    # not make a model no better than chance
    causes = [
        f
        for f in findings
        if f is not chance
        and severity_rank(f.severity) <= severity_rank("high")
        and "underfitting" in RULES.get(f.category)().explains_for(artifact)
    ]
    if not causes:
        return findings
    cause = min(causes, key=rank_key)
    folded = _fold(cause, chance)
    return [folded if f is cause else f for f in findings if f is not chance]


def _fold(cause: Finding, symptom: Finding) -> Finding:
    severity = min(cause.severity, symptom.severity, key=severity_rank)
    marked = [
        e.model_copy(update={"detail": f"symptom ({symptom.category}): {e.detail}"})
        for e in symptom.evidence
    ]
    evidence = _dedupe(cause.evidence + marked)[:MAX_EVIDENCE]
    confidence = combine_confidence([cause.confidence, 0.25 * symptom.confidence])
    note = f" It also explains a symptom that was observed: {symptom.title[0].lower()}{symptom.title[1:]}."
    return cause.model_copy(
        update={
            "severity": severity,
            "confidence": confidence,
            "evidence": evidence,
            "explanation": cause.explanation + note,
        }
    )


def _dedupe(evidence: list[Evidence]) -> list[Evidence]:
    seen, unique = set(), []
    for item in evidence:
        key = (item.source, item.check, item.detail)
        if key not in seen:
            seen.add(key)
            unique.append(item)
    return unique


def causes_first(
    findings: list[Finding],
    artifact: ArtifactData | None = None,
    named: dict[str, tuple[str, ...]] | None = None,
    harmless: set[str] | None = None,
    causes: dict[str, tuple[str, ...]] | None = None,
) -> list[Finding]:
    """Rank (see :func:`deepfix_agents.scoring.rank`), then put a cause ahead of a
    downstream symptom it explains when both have the same severity (module docstring,
    step 4).

    A cause below ``medium`` does not absorb its symptoms, so both stand (the low cause
    is too weakly measured to swallow a finding); at the same measured harm the order
    should still follow the debugging ladder and name the upstream cause (a test period
    mixed into training) before the model-level consequence it explains (a train/test
    gap), instead of letting the symptom's surer statistic win by a few hundredths of
    confidence. Only when: the cause sits in an earlier layer (data before split before
    model), it explains the symptom one way (feature and prediction drift explain each
    other: no reorder), its own measurement did not show it harmless to this model
    (``harmless``: e.g. outlier rows predicted as well as the rest explain nothing), and a
    localised symptom is :func:`linked` to it.

    The symptom steps down to just behind its cause (rather than the cause jumping up to
    the symptom's place): findings ranked between them, which the cause neither explains
    nor outscored, keep their places ahead of it."""
    order = rank(findings)
    explained = {
        f.category: (RULES.get(f.category).explains if artifact is None
                     else RULES.get(f.category)().explains_for(artifact))
        for f in order
    }

    def ahead(cause: Finding, symptom: Finding) -> bool:
        return (
            cause.severity == symptom.severity
            and LAYER_ORDER[cause.layer] < LAYER_ORDER[symptom.layer]
            and cause.category not in (harmless or ())
            and symptom.category in explained[cause.category]
            and cause.category not in explained[symptom.category]
            and linked(cause.category, symptom.category, named, causes)
        )

    for _ in range(len(order) ** 2):  # bounded; each move is one symptom down past its cause
        move = next(
            ((i, j) for i in range(len(order)) for j in range(i + 1, len(order))
             if ahead(order[j], order[i])),
            None,
        )
        if move is None:
            break
        i, j = move
        order.insert(j, order.pop(i))
    return [f.model_copy(update={"rank": i}) for i, f in enumerate(order, start=1)]


def reason(signals: list[Signal], artifact: ArtifactData) -> list[Finding]:
    """Aggregate, explain and rank: the full reasoner."""
    named, causes = subjects(signals, artifact), cause_names(signals, artifact)
    findings = explain_symptoms(hypotheses(signals, artifact), artifact, named, causes)
    return causes_first(
        guard_chance(findings, artifact), artifact, named, harmless(signals), causes
    )


def harmless(signals: list[Signal]) -> set[str]:
    """The categories whose own measurement showed no harm to this model
    (``Rule.measured_harmless``)."""
    grouped = by_category(signals)
    return {c for c, g in grouped.items() if c in RULES and RULES.get(c)().measured_harmless(g)}
