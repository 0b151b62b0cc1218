"""The base class of every rule: one contract category, its documentation and its
detection logic in one module (like ruff's rules).

A rule documents *what it detects*, *why it is bad*, *an example*, *the fixes* and its
*severity policy* as class attributes, and detects its category from one or more
sources through ``detect_<source>`` methods that return :class:`Signal` objects:

``detect_dataset``
    dataset statistics (``artifact.dataset``)
``detect_deepchecks``
    Deepchecks check outcomes (``artifact.checks``)
``detect_model``
    model metadata and performance (``artifact.model``, ``artifact.performance``)
``detect_baseline``
    the baseline ladder (``artifact.baselines``)
``detect_runtime``
    runtime information of crashes (``artifact.runtime_failures``)
``detect_intervention``
    measured harm: counterfactual refits, affected-row scores and the chance level
    (``artifact.interventions``)
``detect_training``
    the model's training history read from its MLflow run (``artifact.training``)

The analyzer of each source calls the matching method of every registered rule, so
adding a category touches one new rule module plus its registration.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import ClassVar

from deepfix_agents.scoring import combine_confidence, severity_for
from deepfix_agents.signals import Signal
from mlflow_deepfix.schemas import (
    CATEGORY_LAYERS,
    ArtifactData,
    CheckOutcome,
    Evidence,
    RuntimeFailure,
)

SOURCES = ("dataset", "deepchecks", "model", "baseline", "runtime", "intervention", "training")
DOC_FIELDS = ("name", "detects", "why", "example", "severity_policy")


class Rule:
    """Base class; subclass it, fill the class attributes and implement detectors."""

    #: contract category id (CONTRACT.md section 5)
    id: ClassVar[str]
    #: short human name, e.g. "Train/test overlap"
    name: ClassVar[str]
    #: what the rule detects, one or two sentences
    detects: ClassVar[str]
    #: why it is bad, in words a non-specialist follows
    why: ClassVar[str]
    #: a concrete example of the bug
    example: ClassVar[str]
    #: concrete fixes, most effective first
    fixes: ClassVar[tuple[str, ...]]
    #: how the score (and so the severity) is computed
    severity_policy: ClassVar[str]
    #: symptom categories this root cause accounts for when both are found
    explains: ClassVar[tuple[str, ...]] = ()
    #: fixes that fit a modality better than the tabular ones (``"text"``, ``"image"``):
    #: e.g. de-duplicating normalised texts, acquisition protocols, augmentation
    modality_fixes: ClassVar[dict[str, tuple[str, ...]]] = {}
    #: Deepchecks checks whose failure corroborates this category
    checks: ClassVar[tuple[str, ...]] = ()
    #: impact score of a failed corroborating check on its own (rules refine it)
    check_score: ClassVar[float] = 0.2
    check_confidence: ClassVar[float] = 0.5

    @property
    def layer(self) -> str:
        return CATEGORY_LAYERS[self.id]

    # ------------------------------------------------------------------ detection
    def detect(self, source: str, artifact: ArtifactData) -> list[Signal]:
        method = getattr(self, f"detect_{source}", None)
        return list(method(artifact) or ()) if method is not None else []

    def detect_deepchecks(self, artifact: ArtifactData) -> Iterable[Signal]:
        """Default: every listed check that did not pass is weak, corroborating evidence."""
        for name in self.checks:
            check = artifact.check(name)
            if check is not None and check.outcome == "not_passed":
                yield self.check_signal(check, score=self.check_score)

    # ------------------------------------------------------------------ helpers
    def signal(
        self,
        source: str,
        *,
        score: float,
        confidence: float,
        detail: str,
        value: float | None = None,
        check: str | None = None,
        **facts,
    ) -> Signal:
        return Signal(
            category=self.id,
            source=source,
            score=round(min(max(score, 0.0), 1.0), 4),
            confidence=round(min(max(confidence, 0.0), 1.0), 4),
            evidence=Evidence(
                source=source,
                check=check,
                detail=detail,
                value=None if value is None else round(float(value), 4),
            ),
            facts=facts,
        )

    def check_signal(
        self, check: CheckOutcome, *, score: float, confidence: float | None = None, **facts
    ) -> Signal:
        failed = [c.details for c in check.conditions if c.status in ("FAIL", "WARN")]
        detail = "; ".join(d for d in failed if d) or f"{check.name} did not pass"
        return self.signal(
            "deepchecks",
            score=score,
            confidence=self.check_confidence if confidence is None else confidence,
            detail=detail[:400],
            value=check.value,
            check=check.name,
            **facts,
        )

    def failed_check_share(
        self, artifact: ArtifactData, name: str, table: Sequence[tuple[float, float]], *,
        confidence: float,
    ) -> Iterable[Signal]:
        """A failed check whose headline ``value`` is a share of rows, scored through
        ``table`` (see :func:`interp`); nothing when it passed or scores 0."""
        check = artifact.check(name)
        if check is None or check.outcome != "not_passed" or not check.value:
            return
        score = interp(check.value, table)
        if score > 0:
            yield self.check_signal(check, score=score, confidence=confidence, share=check.value)

    @staticmethod
    def crashes_on(
        artifact: ArtifactData, counts: str, words: Sequence[str]
    ) -> Iterable[tuple[RuntimeFailure, str, int]]:
        """Crashes whose message mentions one of ``words`` while the input held bad cells
        (``counts`` is ``"nan_counts"`` or ``"inf_counts"``): (failure, worst column, count)."""
        for failure in artifact.runtime_failures:
            per_column = getattr(failure, counts)
            text = f"{failure.exception_type} {failure.message}".lower()
            if per_column and any(word in text for word in words):
                column = max(per_column, key=lambda c: (per_column[c], c))
                yield failure, column, per_column[column]

    # ------------------------------------------------------------------ assessment
    def score(self, signals: Sequence[Signal]) -> float:
        return max(s.score for s in signals)

    def severity(self, signals: Sequence[Signal], artifact: ArtifactData) -> str:
        return severity_for(self.score(signals))

    def measured_harmless(self, signals: Sequence[Signal]) -> bool:
        """Whether a measurement (``intervention`` signals) showed that the pattern does
        not harm this model (rules that cap their score on such a measurement say so)."""
        return False

    def confidence(self, signals: Sequence[Signal]) -> float:
        """Noisy-OR of the best signal per source. A measurement that found no harm is
        no support for the finding as a problem: it is left out (it used to raise the
        confidence of exactly the patterns it showed to be harmless)."""
        harmless = self.measured_harmless(signals)
        best: dict[str, float] = {}
        for s in signals:
            if harmless and s.source == "intervention":
                continue
            best[s.source] = max(best.get(s.source, 0.0), s.confidence)
        return combine_confidence(best[k] for k in sorted(best))

    def title(self, signals: Sequence[Signal], artifact: ArtifactData) -> str:
        return self.name

    def explanation(self, signals: Sequence[Signal], artifact: ArtifactData) -> str:
        return f"{self.detects} {self.why}"

    def explains_for(self, artifact: ArtifactData) -> tuple[str, ...]:
        """The symptoms this cause explains on ``artifact`` (default: ``explains``)."""
        return self.explains

    def subjects(self, signals: Sequence[Signal], artifact: ArtifactData) -> tuple[str, ...]:
        """The inputs this finding localises its problem to (empty: not localised).

        A localised finding names its cause itself (a code column that flips predictions,
        a slice the model is sure and wrong on), so the reasoner folds it into another
        cause only when that cause's finding names one of the same inputs: two findings
        that merely fire together are two bugs (see :func:`deepfix_agents.reasoner.
        explain_symptoms`)."""
        return ()

    def names(self, signals: Sequence[Signal], artifact: ArtifactData) -> tuple[str, ...]:
        """The inputs this finding names *as a cause* (default: its :meth:`subjects`): a
        localised symptom folds into it when it names one of the symptom's inputs. A
        finding may name inputs without being localised itself (feature drift names the
        columns that moved, but any cause that explains drift still absorbs it)."""
        return self.subjects(signals, artifact)

    def fix_list(self, signals: Sequence[Signal], artifact: ArtifactData) -> list[str]:
        """The rule's fixes; a crash's own fix (fact ``crash_fix``) comes first."""
        fixes = list(self.modality_fixes.get(artifact.modality) or self.fixes)
        first = [s.facts["crash_fix"] for s in signals if s.facts.get("crash_fix")]
        return list(dict.fromkeys([*first, *fixes]))

    @staticmethod
    def samples(artifact: ArtifactData) -> str:
        """What one row is, in words: ``rows``, ``texts`` or ``images``."""
        return {"text": "texts", "image": "images"}.get(artifact.modality, "rows")

    @staticmethod
    def strongest(signals: Sequence[Signal]) -> Signal:
        return max(signals, key=lambda s: (s.score, s.confidence))

    @staticmethod
    def fact(signals: Sequence[Signal], key: str, default=None):
        """``key``'s value on the strongest signal that records it."""
        return first_fact(sorted(signals, key=lambda s: (-s.score, -s.confidence)), key, default)


def first_fact(ordered: Sequence[Signal], key: str, default=None):
    """``key``'s value on the first of ``ordered`` that records it (a rule that orders its
    signals otherwise than :meth:`Rule.fact`, strongest first, reads its facts here)."""
    return next((s.facts[key] for s in ordered if key in s.facts), default)


def validate_rule(cls: type) -> None:
    """Registration check: id is a contract category, documentation is complete."""
    from deepfix_agents._registry import RegistrationError

    rule_id = getattr(cls, "id", None)
    if rule_id not in CATEGORY_LAYERS:
        raise RegistrationError(
            f"rule {cls.__name__}: id {rule_id!r} is not a contract category "
            f"(accepted: {', '.join(CATEGORY_LAYERS)})"
        )
    for field in DOC_FIELDS:
        value = getattr(cls, field, None)
        if not isinstance(value, str) or len(value.strip()) < 10:
            raise RegistrationError(f"rule {rule_id!r}: documentation field {field!r} is missing")
    fixes = getattr(cls, "fixes", ())
    if not fixes or not all(isinstance(f, str) and f.strip() for f in fixes):
        raise RegistrationError(f"rule {rule_id!r}: `fixes` must list at least one fix")
    for modality, extra in getattr(cls, "modality_fixes", {}).items():
        if modality not in ("text", "image") or not extra or not all(
            isinstance(f, str) and f.strip() for f in extra
        ):
            raise RegistrationError(
                f"rule {rule_id!r}: modality_fixes[{modality!r}] must be a non-empty tuple of "
                "fixes for 'text' or 'image'"
            )
    unknown = [c for c in getattr(cls, "explains", ()) if c not in CATEGORY_LAYERS]
    if unknown or rule_id in getattr(cls, "explains", ()):
        raise RegistrationError(f"rule {rule_id!r}: invalid `explains` entries {unknown}")
    if not any(callable(getattr(cls, f"detect_{s}", None)) for s in SOURCES):
        raise RegistrationError(f"rule {rule_id!r} has no detect_<source> method")


def pct(value: float) -> str:
    """0.384 -> '38%'; small shares keep one decimal."""
    percent = 100.0 * value
    return f"{percent:.0f}%" if percent >= 10 or percent == 0 else f"{percent:.1f}%"


def interp(x: float, points: Sequence[tuple[float, float]]) -> float:
    """Piecewise-linear map through ``points`` (sorted by x), clamped at both ends.

    Rules use it to turn a measured magnitude (a share, a gap, a ratio) into an impact
    score, so each severity policy reads as a short table of anchor points.
    """
    if x <= points[0][0]:
        return points[0][1]
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        if x <= x1:
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return points[-1][1]


def entropy(shares: Iterable[float]) -> float:
    """Entropy (nats) of a distribution given as its shares: the log loss of stating
    those shares for every row, the floor a model without signal reaches."""
    return -sum(p * math.log(p) for p in shares if p > 0)
