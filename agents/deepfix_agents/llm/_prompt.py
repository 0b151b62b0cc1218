"""What the LLM is shown: condensed artifact data, the rules engine's findings, and the
answer format.

Only artifact data goes out (statistics, check outcomes, model metadata, performance,
baselines), never raw rows: artifact data holds none. Free-text fields that come from
exceptions (a check's error, a crashed ``predict``) may quote a cell value (``could not
convert string to float: 'ACME-4711'``), so quoted literals in them are replaced by
``<value>`` unless they are a known column, class or check name.

The condensed view also keeps the prompt short enough for small local models: columns
are listed only when something about them stands out, long mappings are cut to their
largest entries, and timings are left out, including checks that read a clock (Model
Inference Time): they also must not change the cache key.
Change :data:`PROMPT_VERSION` whenever the text or the condensing changes, so cached
answers to the old prompt are not reused.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mlflow_deepfix.schemas import CATEGORY_LAYERS, ArtifactData, ColumnStats, Finding

PROMPT_VERSION = "1"

MAX_COLUMNS = 12
MAX_MAPPING = 8
MAX_TEXT = 240

#: one line per contract category (CONTRACT.md section 5), shown to the model
CATEGORY_MEANINGS: dict[str, str] = {
    "missing_values": "nulls/NaN or mixed null markers in features or labels",
    "data_type_issues": "mixed types, string mismatches, malformed values",
    "duplicate_samples": "identical rows repeated within a split",
    "conflicting_labels": "identical features with different labels",
    "target_leakage": "a feature that encodes the label",
    "identifier_leakage": "an id, index or date that predicts the label",
    "constant_feature": "a feature with a single value",
    "outliers": "samples far outside the bulk of the data",
    "class_imbalance": "a rare class with no correction",
    "train_test_overlap": "test rows that also appear in training",
    "label_drift": "label distribution differs between splits",
    "feature_drift": "feature distribution shift between splits",
    "prediction_drift": "model output distribution differs between splits",
    "unseen_categories": "categories or labels in test never seen in training",
    "temporal_leakage": "test dates that precede training dates",
    "split_size_mismatch": "a split too small or disproportionate",
    "schema_mismatch": "columns or types differ between splits or from the model",
    "overfitting": "large gap between train and test performance",
    "underfitting": "no better than a simple or trivial baseline",
    "degenerate_predictions": "one class or value predicted for almost everything",
    "poor_calibration": "probabilities do not match observed frequencies",
    "decision_threshold": "default threshold unsuited to the class prevalence",
    "weak_segment": "a subgroup with much worse performance",
    "preprocessing_mismatch": "inference inputs not transformed as in training",
    "wrong_task_type": "model output does not fit the task",
    "unused_features": "features that the model ignores",
}

SYSTEM_PROMPT = """You are DeepFix, an auditor of machine-learning workflows. You receive \
statistics and test results of one workflow (never raw data) and the findings of a \
deterministic rules engine. Review them: confirm, re-rate or dismiss each finding, add \
a root cause the rules missed only when the data supports it, and explain each finding \
in plain language a non-specialist can follow, with concrete fixes.

Answer with ONE JSON object and nothing else, in this form:
{"findings": [{"category": "<category id>", "severity": "critical|high|medium|low|info", \
"title": "<one line>", "explanation": "<why it matters and what causes it>", \
"evidence": [{"source": "deepchecks|dataset|model|baseline|runtime", \
"check": "<exact check name, or null>", "detail": "<the numbers that show it>"}], \
"fixes": ["<concrete step>", "..."]}]}

Rules:
- "category" must be one of these ids (layer: id = meaning):
CATEGORIES
- One finding per root cause; list each category at most once.
- Every finding needs at least one piece of evidence. "check" must be copied exactly \
from the names in "checks" of the input, or null. Never invent checks or numbers.
- If nothing is wrong, answer {"findings": []}."""

#: the system prompt of a compact request: the answer's form is left out, because a
#: provider that asks for the compact prompt writes its answer to the schema itself
SYSTEM_PROMPT_COMPACT = """You are DeepFix, an auditor of machine-learning workflows. You receive statistics and test results of one workflow (never raw data) and the findings of a deterministic rules engine. List the real problems, most harmful first, one finding per root cause, with the category ids below (layer: id = meaning), and explain each in plain language with one concrete fix.
CATEGORIES"""

#: column statistics kept in a compact prompt: the ones that flag a problem
COMPACT_COLUMN_KEYS = frozenset(
    {
        "name", "kind", "missing_fraction", "mixed_types", "string_mismatch_fraction",
        "outlier_fraction", "n_unique", "n_inf", "monotonic", "target_association",
    }
)


#: checks whose result is a clock reading: left out of the prompt and the cache key
#: (no category is about speed, and a timing would make every evaluation a cache miss)
CLOCK_CHECKS = frozenset({"Model Inference Time"})


def is_clock_check(check: Any) -> bool:
    """A check that measures time (by name, or by a ``*seconds*`` value)."""
    return check.name in CLOCK_CHECKS or any("seconds" in key for key in check.values)


_QUOTED = re.compile(r"""(['"])(.{1,200}?)\1""")


def _category_lines() -> str:
    return "\n".join(
        f"  {layer}: {cat} = {CATEGORY_MEANINGS.get(cat, cat.replace('_', ' '))}"
        for cat, layer in CATEGORY_LAYERS.items()
    )


def redact(text: str | None, known: set[str]) -> str | None:
    """Cut ``text`` and replace quoted literals that are not ``known`` names."""
    if text is None:
        return None

    def replace(match: re.Match) -> str:
        inner = match.group(2)
        return match.group(0) if inner in known else f"{match.group(1)}<value>{match.group(1)}"

    text = _QUOTED.sub(replace, str(text))
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 3] + "..."


def _top(mapping: dict[str, Any], n: int = MAX_MAPPING) -> dict[str, Any]:
    """The ``n`` entries of largest absolute value (all when they are not numbers)."""
    if len(mapping) <= n:
        return dict(mapping)
    try:
        keys = sorted(mapping, key=lambda k: (-abs(float(mapping[k])), str(k)))
    except (TypeError, ValueError):
        keys = sorted(mapping, key=str)
    return {k: mapping[k] for k in keys[:n]}


def _round(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, dict):
        return {str(k): _round(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_round(v) for v in value]
    return value


def _notable(column: ColumnStats) -> bool:
    return bool(
        column.missing_fraction > 0
        or column.mixed_types
        or column.string_mismatch_fraction > 0
        or (column.outlier_fraction or 0) > 0.01
        or column.n_unique <= 1
        or column.n_inf > 0
        or column.monotonic
        or (column.target_association or 0) >= 0.5
        or column.unique_fraction >= 0.95
    )


def _column(column: ColumnStats) -> dict[str, Any]:
    keep = column.model_dump(exclude_defaults=True)
    for key in ("q01", "q99", "dtype"):
        keep.pop(key, None)
    return _round(keep)


def _split(split: Any, compact: bool = False) -> dict[str, Any] | None:
    if split is None:
        return None
    max_columns = COMPACT_COLUMNS if compact else MAX_COLUMNS
    columns = [c for c in split.columns if _notable(c)]
    columns.sort(key=lambda c: (-(c.target_association or 0), c.name))
    data = split.model_dump(exclude={"columns"}, exclude_defaults=True)
    data["label_distribution"] = _top(split.label_distribution)
    data["notable_columns"] = [
        {k: v for k, v in _column(c).items() if not compact or k in COMPACT_COLUMN_KEYS}
        for c in columns[:max_columns]
    ]
    if len(columns) > max_columns:
        data["notable_columns_omitted"] = len(columns) - max_columns
    return _round(data)


def known_names(artifact: ArtifactData) -> set[str]:
    """Names that may be quoted verbatim: columns, classes, checks, the target."""
    names = {artifact.dataset.target, *artifact.dataset.feature_names}
    names.update(c.name for c in artifact.checks)
    names.update(artifact.model.classes)
    names.update(artifact.model.signature_inputs)
    for split in (artifact.dataset.train, artifact.dataset.test):
        if split is not None:
            names.update(c.name for c in split.columns)
    return {str(n) for n in names}


#: notable columns per split in a compact prompt
COMPACT_COLUMNS = 3


def condense(
    artifact: ArtifactData, compact: bool = False, cited: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """The artifact data as the LLM sees it: no timings, no per-row values, short.

    ``compact`` (for small local models, whose prompt pass is most of their time):
    only the checks that did not pass or were skipped unless a finding cites them
    (``cited``), their first failed condition only, three columns per split with only
    the statistics that flag a problem, no hyperparameters; :func:`build_messages` also rounds its numbers to two
    significant digits. About 40% of the full prompt's tokens.
    """
    known = known_names(artifact)
    dataset = artifact.dataset
    comparison = None
    if dataset.comparison is not None:
        comparison = dataset.comparison.model_dump(exclude_defaults=True)
        comparison["unseen_category_fraction"] = _top(dataset.comparison.unseen_category_fraction)
        comparison = _round(comparison)
    checks = []
    for check in artifact.checks:
        if is_clock_check(check):
            continue
        if compact and check.outcome in ("passed", "skipped") and check.name not in cited:
            continue
        entry: dict[str, Any] = {"name": check.name, "suite": check.suite, "outcome": check.outcome}
        if check.value is not None:
            entry["value"] = round(check.value, 4)
        if check.values:
            entry["values"] = _round(_top(check.values, 5))
        failed = [c for c in check.conditions if c.status in ("FAIL", "WARN", "ERROR")]
        if failed:
            entry["failed_conditions"] = [
                redact(f"{c.name}: {c.details}".strip(": "), known)[: 120 if compact else None]
                for c in failed[: 1 if compact else 3]
            ]
        if check.reason:
            entry["reason"] = redact(check.reason, known)
        checks.append(entry)
    model = artifact.model.model_dump(
        exclude={"feature_importances", "signature_types", "signature_inputs", "hyperparameters"},
        exclude_defaults=True,
    )
    if artifact.model.hyperparameters and not compact:
        model["hyperparameters"] = {
            str(k): redact(repr(v), known)
            for k, v in sorted(artifact.model.hyperparameters.items())[:25]
        }
    if artifact.model.feature_importances:
        model["top_feature_importances"] = _round(_top(artifact.model.feature_importances))
    if artifact.model.signature_inputs:
        model["n_signature_inputs"] = len(artifact.model.signature_inputs)
    model["classes"] = [str(c) for c in artifact.model.classes[:20]]
    performance = artifact.performance.model_dump(exclude_defaults=True)
    if "prediction_distribution" in performance:
        performance["prediction_distribution"] = _top(artifact.performance.prediction_distribution)
    failures = []
    for failure in artifact.runtime_failures:
        expected, given = set(failure.expected_columns), set(failure.given_columns)
        entry = {
            "stage": failure.stage,
            "exception_type": failure.exception_type,
            "message": redact(failure.message, known),
        }
        if expected and given:
            entry["missing_columns"] = sorted(expected - given)[:20]
            entry["unexpected_columns"] = sorted(given - expected)[:20]
        if failure.nan_counts:
            entry["nan_counts"] = _top(failure.nan_counts)
        if failure.inf_counts:
            entry["inf_counts"] = _top(failure.inf_counts)
        if failure.shape:
            entry["shape"] = failure.shape
        failures.append(entry)
    return {
        "task": artifact.task,
        "modality": artifact.modality,
        "dataset": {
            "target": dataset.target,
            "n_features": len(dataset.feature_names),
            "cat_features": dataset.cat_features[:30],
            "index_col": dataset.index_col,
            "datetime_col": dataset.datetime_col,
            "train": _split(dataset.train, compact),
            "test": _split(dataset.test, compact),
            "comparison": comparison,
        },
        "checks": checks,
        "model": _round(model),
        "performance": _round(performance),
        "baselines": [_round(b.model_dump(exclude_none=True)) for b in artifact.baselines],
        "runtime_failures": failures,
        "notes": [redact(n, known) for n in artifact.notes[:10]],
    }


def _two_digits(value: Any) -> Any:
    """Floats to two significant digits (digits are one token each in small models'
    vocabularies, and 0.96 says what 0.9601 says)."""
    if isinstance(value, float):
        return float(f"{value:.2g}")
    if isinstance(value, dict):
        return {k: _two_digits(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_two_digits(v) for v in value]
    return value


def condense_findings(findings: list[Finding], known: set[str]) -> list[dict[str, Any]]:
    """The rules engine's findings as the LLM sees them (no references, short text)."""
    out = []
    for finding in findings:
        evidence = []
        for item in finding.evidence[:5]:
            entry: dict[str, Any] = {"source": item.source, "detail": redact(item.detail, known)}
            if item.check:
                entry["check"] = item.check
            if item.value is not None:
                entry["value"] = round(item.value, 4)
            evidence.append(entry)
        out.append(
            {
                "category": finding.category,
                "severity": finding.severity,
                "confidence": round(finding.confidence, 3),
                "title": redact(finding.title, known),
                "evidence": evidence,
            }
        )
    return out


def build_messages(
    artifact: ArtifactData, findings: list[Finding], compact: bool = False
) -> list[dict[str, str]]:
    """The chat messages of one review request (``compact``: see :func:`condense`)."""
    system = (SYSTEM_PROMPT_COMPACT if compact else SYSTEM_PROMPT).replace(
        "CATEGORIES", _category_lines()
    )
    cited = frozenset(e.check for f in findings for e in f.evidence if e.check)
    payload = {
        "artifact_data": condense(artifact, compact=compact, cited=cited),
        "rules_engine_findings": condense_findings(findings, known_names(artifact)),
    }
    if compact:
        payload = _two_digits(payload)
    user = (
        "Artifact data and rules engine findings (JSON):\n"
        + json.dumps(payload, separators=(",", ":"), sort_keys=True, default=str)
        + "\n\nReply with the JSON object only."
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def retry_messages(messages: list[dict[str, str]], answer: str, error: str) -> list[dict[str, str]]:
    """The conversation extended with the invalid answer and what was wrong with it."""
    shown = answer if len(answer) <= 4000 else answer[:4000] + " ..."
    return [
        *messages,
        {"role": "assistant", "content": shown},
        {
            "role": "user",
            "content": (
                f"Your answer is invalid: {error}\n"
                "Reply again with the corrected JSON object only, no other text."
            ),
        },
    ]
