"""Optional learned calibration of the rules' findings.

A logistic regression over per-finding signals (category, the rule's severity and
confidence, the strongest signal's impact score, how many signals and independent
sources agree, ...) predicts whether a finding is a true root cause. It was fitted on
the fault-injection corpus (``mlflow_deepfix.bench.corpus``) and ships as plain JSON
coefficients (``calibration_v<N>.json``), never a pickle.

What it changes: each finding's ``confidence`` (the predicted probability), its
``severity`` (demoted to ``low`` below the fitted ``medium_threshold``) and the order
(by severity, then probability). What it never changes: evidence, titles,
explanations and fixes stay the rules'.

It is **on by default** (``evaluator_config["deepfix"]["calibration"] = False`` leaves
the rules' own confidence, severity and order): on datasets it never saw it ranks the
planted cause first more often and warns on far fewer healthy workflows than the rules
alone (README, "Fault-injection corpus"). Its coefficients describe the rules as they
were when it was fitted, so it is refitted whenever a rule changes
(``deepfix bench --corpus --full --write-calibration ...``).

One thing it never overrides: the no-better-than-chance guard (issue 12 B). A finding
that carries the ``chance_level`` measurement stays at the rules' severity (``high`` or
above), whatever the model's probability: a model no better than chance must warn.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from mlflow_deepfix.schemas import CATEGORIES, SEVERITY_ORDER, Finding

CALIBRATION_VERSION = 1
#: the numeric features, in the order of the coefficients that follow the categories
NUMERIC_FEATURES: tuple[str, ...] = (
    "severity_level", "confidence", "max_score", "mean_score", "n_signals", "n_sources",
    "n_evidence", "inverse_rank", "folded_symptoms", "max_signal_confidence",
)


#: the evidence check of the no-better-than-chance guard (rules.underfitting): a finding
#: carrying it is never demoted
CHANCE_CHECK = "chance_level"


#: the diagnosis sources whose behaviour the coefficients describe: a change to any of
#: them calls for a refit (pinned by the test suite through :func:`rules_fingerprint`)
RULES_SOURCES: tuple[str, ...] = (
    "rules/*.py", "analyzers/*.py", "reasoner.py", "scoring.py", "signals.py",
)


def rules_fingerprint() -> str:
    """A short hash of the diagnosis rules' sources (:data:`RULES_SOURCES`), written
    into the calibration file when it is fitted: a file whose fingerprint differs from
    the installed rules' describes other rules."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    files = sorted({p for pattern in RULES_SOURCES for p in root.glob(pattern)})
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes().replace(b"\r\n", b"\n"))
    return digest.hexdigest()[:12]


def severity_level(severity: str) -> int:
    """critical 4 ... info 0."""
    return len(SEVERITY_ORDER) - 1 - SEVERITY_ORDER.index(severity)


def _numeric(row: dict[str, Any]) -> dict[str, float]:
    """Every known numeric feature of one finding row (:func:`finding_row`), by name."""
    return {
        "severity_level": float(severity_level(row["severity"])),
        "confidence": float(row["confidence"]),
        "max_score": float(row["max_score"]), "mean_score": float(row["mean_score"]),
        "n_signals": math.log1p(float(row["n_signals"])), "n_sources": float(row["n_sources"]),
        "n_evidence": math.log1p(float(row["n_evidence"])),
        "inverse_rank": 1.0 / max(1, int(row["rank"])),
        "folded_symptoms": float(row["folded_symptoms"]),
        "max_signal_confidence": float(row["max_signal_confidence"]),
    }


def feature_vector(
    row: dict[str, Any], categories: tuple[str, ...] = CATEGORIES,
    numeric_features: tuple[str, ...] = NUMERIC_FEATURES,
) -> list[float]:
    """The model's inputs for one finding (``row`` as made by
    :func:`finding_row`): category one-hot over ``categories`` (the list the model was
    fitted on: a category added later gets no category term), then ``numeric_features``
    by name, in the order the model was fitted on (a file fitted before a feature was
    added reads its own features only, so it keeps loading and scoring as it did)."""
    onehot = [1.0 if row["category"] == c else 0.0 for c in categories]
    numeric = _numeric(row)
    return onehot + [numeric[name] for name in numeric_features]


def finding_row(finding: Finding, signals: list[Any]) -> dict[str, Any]:
    """The per-finding signals the model reads (``signals``: the diagnosis' signals)."""
    own = [s for s in signals if s.category == finding.category]
    return {
        "category": finding.category,
        "severity": finding.severity,
        "confidence": float(finding.confidence),
        "rank": finding.rank,
        "n_evidence": len(finding.evidence),
        "n_sources": len({e.source for e in finding.evidence}),
        "n_signals": len(own),
        "max_score": max((s.score for s in own), default=0.0),
        "mean_score": (sum(s.score for s in own) / len(own)) if own else 0.0,
        "max_signal_confidence": max((s.confidence for s in own), default=0.0),
        "folded_symptoms": sum(1 for e in finding.evidence if e.detail.startswith("symptom (")),
        "guarded": any(e.check == CHANCE_CHECK for e in finding.evidence),
        "serving_only": bool(own) and all(s.facts.get("served_by_raw_model") for s in own),
    }


@dataclass(frozen=True)
class Calibration:
    """Coefficients of the logistic model plus the severity threshold."""

    version: int
    categories: tuple[str, ...]
    numeric_features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    medium_threshold: float
    fitted_on: str = ""
    #: :func:`rules_fingerprint` of the rules the coefficients were fitted on
    rules_fingerprint: str = ""

    def probability(self, row: dict[str, Any]) -> float:
        x = feature_vector(row, self.categories, self.numeric_features)
        z = self.intercept
        for xi, m, s, w in zip(x, self.mean, self.scale, self.coef):
            z += w * (xi - m) / s
        return 1.0 / (1.0 + math.exp(-max(-35.0, min(35.0, z))))

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version, "categories": list(self.categories),
            "numeric_features": list(self.numeric_features), "mean": list(self.mean),
            "scale": list(self.scale), "coef": list(self.coef), "intercept": self.intercept,
            "medium_threshold": self.medium_threshold, "fitted_on": self.fitted_on,
            "rules_fingerprint": self.rules_fingerprint,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Calibration:
        if data.get("version") != CALIBRATION_VERSION:
            raise ValueError(
                f"calibration file version {data.get('version')!r} is not supported; "
                f"expected {CALIBRATION_VERSION}"
            )
        unknown = sorted(set(data["categories"]) - set(CATEGORIES))
        if unknown:
            raise ValueError(f"calibration file names unknown categories {unknown}")
        unknown = sorted(set(data["numeric_features"]) - set(NUMERIC_FEATURES))
        if unknown:
            raise ValueError(f"calibration file names unknown features {unknown}")
        n = len(data["categories"]) + len(data["numeric_features"])
        for key in ("mean", "scale", "coef"):
            if len(data[key]) != n:
                raise ValueError(f"calibration file: {key} has {len(data[key])} values, "
                                 f"expected {n}")
        # one-hot terms follow the file's own category list: a category added after the
        # fit gets no category term (see feature_vector)
        return cls(
            version=data["version"], categories=tuple(data["categories"]),
            numeric_features=tuple(data["numeric_features"]),
            mean=tuple(data["mean"]), scale=tuple(data["scale"]),
            coef=tuple(data["coef"]), intercept=float(data["intercept"]),
            medium_threshold=float(data["medium_threshold"]),
            fitted_on=str(data.get("fitted_on", "")),
            rules_fingerprint=str(data.get("rules_fingerprint", "")),
        )


@lru_cache(maxsize=1)
def shipped_calibration() -> Calibration:
    """The calibration file shipped with the package."""
    text = (resources.files(__package__) / f"calibration_v{CALIBRATION_VERSION}.json").read_text(
        encoding="utf-8")
    return Calibration.from_json(json.loads(text))


def calibrated_severity(
    rules_severity: str, probability: float, threshold: float, *, guarded: bool = False
) -> str:
    """The rules' severity, demoted to ``low`` when the model gives the finding less
    than ``threshold``: a finding unlikely to be a real root cause does not warn.
    A ``guarded`` finding (the chance guard's) keeps the rules' severity."""
    if guarded:
        return rules_severity
    if probability < threshold and severity_level(rules_severity) > severity_level("low"):
        return "low"
    return rules_severity


def apply_calibration(rows: list[dict[str, Any]], calibration: Calibration) -> list[dict[str, Any]]:
    """Calibrated copies of finding rows, re-ranked by severity (after demotion), then
    probability, then the rules' rank. Severity is measured harm and stays the first
    key: the probability says how likely a finding is a root cause, which orders
    findings of equal harm (ordering by probability alone let a corpus-wide category
    prior put a medium finding above a critical one). A signature refusal the raw model
    got round (``serving_only``) keeps the rules' severity, ranks after the findings of
    equal severity about the model and data, and does not push them down the order the
    coefficients read."""
    serving = sorted(r["rank"] for r in rows if r.get("serving_only"))
    out = []
    for row in rows:
        if not row.get("serving_only"):
            # the rank among the findings about the model and data: a signature
            # refusal the raw model got round (``serving_only``) sits outside the
            # order the coefficients were fitted on (the corpus never has one)
            row = {**row, "rank": row["rank"] - sum(1 for r in serving if r < row["rank"])}
        p = calibration.probability(row)
        out.append({**row, "probability": p,
                    "severity": calibrated_severity(
                        row["severity"], p, calibration.medium_threshold,
                        guarded=bool(row.get("guarded") or row.get("serving_only"))),
                    "confidence": round(p, 4)})
    out.sort(key=lambda r: (-severity_level(r["severity"]), bool(r.get("serving_only")),
                            -r["probability"], r["rank"]))
    return [{**r, "rank": i} for i, r in enumerate(out, start=1)]


def calibrate_findings(findings: list[Finding], signals: list[Any],
                       calibration: Calibration | None = None) -> list[Finding]:
    """The reasoner's hook: set confidence, severity and order of ``findings``."""
    if not findings:
        return findings
    calibration = calibration or shipped_calibration()
    rows = [finding_row(f, signals) for f in findings]
    by_category = {f.category: f for f in findings}
    calibrated = apply_calibration(rows, calibration)
    return [
        by_category[r["category"]].model_copy(
            update={"severity": r["severity"], "confidence": r["confidence"], "rank": r["rank"]}
        )
        for r in calibrated
    ]
