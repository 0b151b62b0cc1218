"""What the gate returns: the model it evaluated (:class:`ModelRef`) and its verdict
(:class:`GateResult`), with the plain-text summary the command line prints."""

from __future__ import annotations

from dataclasses import dataclass, field

from mlflow_deepfix.gate.verification import FixVerification
from mlflow_deepfix.schemas import SEVERITY_ORDER, Finding


@dataclass(frozen=True)
class ModelRef:
    """A model URI and, when it names a registered model version, its name/version."""

    uri: str
    name: str | None = None
    version: str | None = None

    @property
    def registered(self) -> bool:
        return self.name is not None and self.version is not None

    @property
    def pinned_uri(self) -> str:
        """``models:/name/<version>``: an alias resolved once, so that moving it while
        the gate runs cannot change which model is evaluated."""
        return f"models:/{self.name}/{self.version}" if self.registered else self.uri

    def describe(self) -> str:
        return f"{self.name} version {self.version}" if self.registered else self.uri


@dataclass
class GateResult:
    """What the gate decided and why.

    ``status`` is the value written to the model version's ``deepfix.status`` tag:
    ``fail`` whenever the gate refused the model, else the evaluation's own status
    (``pass`` or ``warn``, CONTRACT.md section 3).
    """

    passed: bool
    status: str
    run_id: str
    model: ModelRef
    fail_on: str
    metrics: dict[str, float]
    findings: list[Finding]
    blocking_findings: list[Finding]
    #: one line per threshold that was not met (from mlflow.validate_evaluation_results)
    failures: list[str]
    thresholds: dict[str, str]
    promoted_to: str | None = None
    baseline: ModelRef | None = None
    baseline_run_id: str | None = None
    verification: FixVerification | None = None
    duration_seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def top_finding(self) -> str:
        from mlflow_deepfix.mlflow_io import top_finding_tag

        return top_finding_tag(self.findings)

    def summary(self) -> str:
        """Plain-text summary for the command line."""
        verdict = "PASSED" if self.passed else "FAILED"
        plural = "" if len(self.findings) == 1 else "s"
        headline = (
            f"deepfix gate {verdict}: {self.model.describe()} "
            f"(status {self.status}, {len(self.findings)} finding{plural}, run {self.run_id}, "
            f"{self.duration_seconds:.1f}s)"
        )
        lines = [headline]
        if self.blocking_findings:
            lines.append(f"Blocking findings (fail_on={self.fail_on}):")
            for finding in self.blocking_findings:
                lines.append(
                    f"  #{finding.rank} [{finding.severity}] {finding.category}: {finding.title}"
                )
                if finding.fixes:
                    lines.append(f"      first fix: {finding.fixes[0]}")
        # severity-count failures are explained by the blocking findings above
        other = [
            f for f in self.failures if not any(f"deepfix_{s}_count" in f for s in SEVERITY_ORDER)
        ]
        if other:
            lines.append("Thresholds not met:")
            lines.extend(f"  - {line}" for line in other)
        if self.verification is not None and self.baseline is not None:
            v = self.verification
            metric_parts = [
                f"{name} {v.baseline_metrics[name]:.4f} -> {v.candidate_metrics[name]:.4f}"
                for name in v.candidate_metrics
            ]
            lines.append(f"Fix verification against {self.baseline.describe()}:")
            lines.append("  " + ", ".join(metric_parts))
            lines.append(
                f"  repair rate {_pct(v.repair_rate)} ({v.n_repaired}/{v.n_baseline_wrong}), "
                f"negative flip rate {_pct(v.negative_flip_rate)} "
                f"({v.n_broken}/{v.n_baseline_correct})"
            )
            lines.append(
                f"  findings resolved: {', '.join(v.findings_resolved) or 'none'}; "
                f"introduced: {', '.join(v.findings_introduced) or 'none'}"
            )
        if self.promoted_to:
            lines.append(
                f"Alias {self.promoted_to!r} of {self.model.name!r} now points to version "
                f"{self.model.version}."
            )
        lines.extend(f"Note: {note}" for note in self.notes)
        return "\n".join(lines)


def _pct(value: float | None) -> str:
    return "undefined" if value is None else f"{100 * value:.1f}%"
