"""Turn a :class:`Diagnosis` and its :class:`ArtifactData` into one self-contained page.

Why a separate view model: the template should only lay out markup. Everything that
takes a decision (what to group, sort, truncate, which chart to draw) lives here, in
plain Python that tests can reach, and the template receives ready-to-print values.

Safety rules this module and the template keep (the page is shown inside the MLflow UI,
and column or check names come from user data):

* the page is rendered by Jinja2 with autoescape on; no value from the data is ever
  marked safe, and none is ever put into an ``href``/``src`` attribute;
* nothing is fetched: no external script, stylesheet, font or image; charts are
  inline SVG; the only script is a few inline lines that make in-page links scroll
  (MLflow shows the report in a sandboxed ``blob:`` iframe, where following ``#id``
  is refused) and open collapsed sections before printing; the page reads the same
  without it.
"""

from __future__ import annotations

import functools
import logging
import math
from collections import Counter
from pathlib import Path
from typing import Any

import jinja2

from mlflow_deepfix.report import _charts
from mlflow_deepfix.report._behaviour import behaviour_view
from mlflow_deepfix.report._format import FILTERS, fmt_percent, human_label
from mlflow_deepfix.schemas import (
    SEVERITY_ORDER,
    ArtifactData,
    CheckOutcome,
    Diagnosis,
    SplitStats,
)

logger = logging.getLogger(__name__)

TEMPLATE_DIR = Path(__file__).resolve().parent / "templates"
TEMPLATE_NAME = "report.html.j2"
#: the file the report is rendered from (exposed so that tests can check it is used)
TEMPLATE_PATH = TEMPLATE_DIR / TEMPLATE_NAME

#: suites in the order Deepchecks runs them; others follow alphabetically
SUITE_ORDER = ("data_integrity", "train_test_validation", "model_evaluation")
#: outcomes listed first are the ones a reader needs to see first
OUTCOME_ORDER = ("not_passed", "errored", "skipped", "passed")
#: keys of ``context`` this renderer understands
CONTEXT_KEYS = ("footer", "sections", "title")

#: caps that keep a report of a very wide data set readable and well under 200 KB;
#: ``artifact_data.json`` always holds the full statistics
MAX_COLUMNS_PER_SPLIT = 60
MAX_CLASSES = 20
TOP_N = 10


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATE_DIR)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(FILTERS)
    return env


def render_report(
    diagnosis: Diagnosis, artifact_data: ArtifactData, *, context: dict | None = None
) -> str:
    """Render the deepfix HTML report (``deepfix/report.html``) as one string.

    Parameters
    ----------
    diagnosis : Diagnosis
        The ranked findings, status and timings (the content of ``findings.json``).
    artifact_data : ArtifactData
        What the diagnosis saw: dataset statistics, check outcomes, model metadata.
    context : dict, optional
        Extras added by other components. Understood keys: ``"footer"`` (list of str,
        printed in the footer), ``"sections"`` (list of ``{"title": str, "rows":
        list[tuple[str, Any]]}``, each drawn as a key/value table before the footer)
        and ``"title"`` (str, the page title). Unknown keys are ignored with a warning.

    Returns
    -------
    str
        A complete HTML document that fetches nothing and needs no script.
    """
    if not isinstance(diagnosis, Diagnosis):
        raise TypeError(
            f"diagnosis must be a mlflow_deepfix.schemas.Diagnosis, got {type(diagnosis).__name__}."
        )
    if not isinstance(artifact_data, ArtifactData):
        raise TypeError(
            f"artifact_data must be a mlflow_deepfix.schemas.ArtifactData, got "
            f"{type(artifact_data).__name__}."
        )
    extras = _validate_context(context)
    view = build_view(diagnosis, artifact_data, extras)
    html = _environment().get_template(TEMPLATE_NAME).render(**view)
    logger.debug("rendered deepfix report: %d characters", len(html))
    return html


# --------------------------------------------------------------------------- context


def _validate_context(context: dict | None) -> dict[str, Any]:
    """Check ``context`` and normalise it to ``{"footer", "sections", "title"}``."""
    if context is None:
        context = {}
    if not isinstance(context, dict):
        raise TypeError(f"context must be a dict or None, got {type(context).__name__}.")
    unknown = sorted(str(k) for k in context if k not in CONTEXT_KEYS)
    if unknown:
        logger.warning(
            "render_report ignores unknown context keys %s; understood keys: %s",
            unknown,
            ", ".join(CONTEXT_KEYS),
        )

    footer = context.get("footer") or []
    if isinstance(footer, str) or not isinstance(footer, (list, tuple)):
        raise TypeError(f"context['footer'] must be a list of str, got {type(footer).__name__}.")
    footer = [str(line) for line in footer]

    sections_in = context.get("sections") or []
    if not isinstance(sections_in, (list, tuple)):
        raise TypeError(
            f"context['sections'] must be a list of {{'title': str, 'rows': list}} dicts, "
            f"got {type(sections_in).__name__}."
        )
    sections = []
    for index, section in enumerate(sections_in):
        if not isinstance(section, dict) or "title" not in section or "rows" not in section:
            raise ValueError(
                f"context['sections'][{index}] must be a dict with keys 'title' and "
                f"'rows', got {section!r:.200}."
            )
        rows = []
        for row_index, row in enumerate(section["rows"]):
            if isinstance(row, (str, bytes)) or not hasattr(row, "__len__") or len(row) != 2:
                raise ValueError(
                    f"context['sections'][{index}]['rows'][{row_index}] must be a "
                    f"(key, value) pair, got {row!r:.200}."
                )
            rows.append((str(row[0]), row[1]))
        sections.append({"title": str(section["title"]), "rows": rows})

    title = context.get("title")
    return {"footer": footer, "sections": sections, "title": None if title is None else str(title)}


# --------------------------------------------------------------------------- view model


def build_view(
    diagnosis: Diagnosis, artifact_data: ArtifactData, extras: dict[str, Any]
) -> dict[str, Any]:
    """Everything the template prints, already grouped, sorted and truncated."""
    findings = sorted(diagnosis.findings, key=lambda f: f.rank)
    severity_counts = Counter(f.severity for f in findings)
    counts = [(sev, severity_counts.get(sev, 0)) for sev in SEVERITY_ORDER]
    deepfix_version = artifact_data.deepfix_version or _package_version()
    return {
        "title": extras["title"]
        or f"deepfix report: {diagnosis.status} ({human_label(diagnosis.task).lower()})",
        "diagnosis": diagnosis,
        "data": artifact_data,
        "deepfix_version": deepfix_version,
        "findings": [{"finding": f, "paragraphs": _paragraphs(f.explanation)} for f in findings],
        "severity_counts": counts,
        "severity_bar": _charts.stacked_bar(
            "findings per severity",
            [(sev, n, f"sev-{sev}") for sev, n in counts],
        ),
        "notes": _notes(diagnosis, artifact_data),
        "checks": _checks_view(diagnosis, artifact_data),
        "dataset": _dataset_view(artifact_data),
        "model": _model_view(artifact_data),
        "behaviour": behaviour_view(artifact_data),
        "sections": extras["sections"],
        "footer": extras["footer"],
    }


def _package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mlflow-deepfix")
    except PackageNotFoundError:  # not installed (e.g. run from a source tree)
        return "unknown"


def _paragraphs(text: str) -> list[str]:
    """Split an explanation on blank lines so that each part gets its own ``<p>``."""
    parts = [part.strip() for part in str(text).replace("\r\n", "\n").split("\n\n")]
    return [part for part in parts if part]


def _notes(diagnosis: Diagnosis, artifact_data: ArtifactData) -> dict[str, Any]:
    """Notes of both steps, without repeats, plus analyzer errors and runtime failures."""
    seen: set[str] = set()
    lines = []
    for note in [*artifact_data.notes, *diagnosis.notes]:
        key = note.strip()
        if key and key not in seen:
            seen.add(key)
            lines.append(key)
    failures = []
    for failure in artifact_data.runtime_failures:
        expected, given = failure.expected_columns, failure.given_columns
        failures.append(
            {
                "failure": failure,
                "missing": [c for c in expected if c not in given] if given else [],
                "extra": [c for c in given if c not in expected] if expected else [],
                "nan": sorted(failure.nan_counts.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_N],
                "inf": sorted(failure.inf_counts.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_N],
            }
        )
    return {
        "lines": lines,
        "analyzer_errors": sorted(diagnosis.analyzer_errors.items()),
        "runtime_failures": failures,
    }


def _checks_view(diagnosis: Diagnosis, artifact_data: ArtifactData) -> dict[str, Any]:
    """Checks grouped by suite (known suites first), problems first within a suite.

    ``artifact_data.checks`` carries reasons and conditions; a check only present in
    ``diagnosis.checks`` (the summary) is shown with what the summary has.
    """
    checks: list[CheckOutcome] = list(artifact_data.checks)
    known = {(c.suite, c.name) for c in checks}
    for summary in diagnosis.checks:
        if (summary.suite, summary.name) not in known:
            checks.append(
                CheckOutcome(
                    name=summary.name,
                    suite=summary.suite,
                    outcome=summary.outcome,
                    value=summary.value,
                )
            )
    suites: dict[str, list[CheckOutcome]] = {}
    for check in checks:
        suites.setdefault(check.suite, []).append(check)

    def suite_key(name: str) -> tuple[int, str]:
        return (SUITE_ORDER.index(name) if name in SUITE_ORDER else len(SUITE_ORDER), name)

    groups = []
    for suite in sorted(suites, key=suite_key):
        members = sorted(suites[suite], key=lambda c: OUTCOME_ORDER.index(c.outcome))
        outcome_counts = Counter(c.outcome for c in members)
        groups.append(
            {
                "suite": suite,
                "checks": members,
                "counts": [(o, outcome_counts[o]) for o in OUTCOME_ORDER if outcome_counts[o]],
            }
        )
    totals = Counter(c.outcome for c in checks)
    return {
        "groups": groups,
        "total": len(checks),
        # one count everywhere: "run" is the metric deepfix_checks_run (outcome not
        # skipped); skipped checks are the ones that do not apply to this data and model
        "run": sum(n for outcome, n in totals.items() if outcome != "skipped"),
        "skipped": totals.get("skipped", 0),
        "errored": totals.get("errored", 0),
        "counts": [(o, totals.get(o, 0)) for o in OUTCOME_ORDER],
    }


def _dataset_view(artifact_data: ArtifactData) -> dict[str, Any]:
    dataset = artifact_data.dataset
    splits = [s for s in (dataset.train, dataset.test) if s is not None]
    is_classification = artifact_data.task != "regression"

    label_chart = None
    label_rows: list[tuple[str, list[float | None]]] = []
    classes_shown = 0
    classes_total = 0
    if is_classification:
        classes = sorted(
            {label for s in splits for label in s.label_distribution},
            key=lambda c: (-max(s.label_distribution.get(c, 0.0) for s in splits), c),
        )
        classes_total = len(classes)
        classes = classes[:MAX_CLASSES]
        classes_shown = len(classes)
        label_rows = [
            (label, [s.label_distribution.get(label, 0.0) for s in splits]) for label in classes
        ]
        label_chart = _charts.bar_chart(
            "label distribution per split",
            label_rows,
            [(s.name, f"split-{s.name}") for s in splits],
            value_text=fmt_percent,
        )
    stat_names = sorted({k for s in splits for k in s.label_stats}, key=_stat_key)

    comparison = dataset.comparison
    unseen = []
    if comparison is not None:
        unseen = sorted(comparison.unseen_category_fraction.items(), key=lambda kv: (-kv[1], kv[0]))
    return {
        "summary": dataset,
        "splits": splits,
        "is_classification": is_classification,
        "label_chart": label_chart,
        "label_rows": label_rows,
        "classes_shown": classes_shown,
        "classes_total": classes_total,
        "label_stat_names": stat_names,
        "comparison": comparison,
        "unseen": unseen,
        "column_tables": [_column_table(s) for s in splits],
        "drift_chart": _drift_chart(artifact_data.checks),
    }


def _stat_key(name: str) -> tuple[int, str]:
    order = ("mean", "std", "min", "q50", "max")
    return (order.index(name) if name in order else len(order), name)


def _column_table(split: SplitStats) -> dict[str, Any]:
    return {
        "split": split.name,
        "columns": split.columns[:MAX_COLUMNS_PER_SPLIT],
        "total": len(split.columns),
        "truncated": len(split.columns) > MAX_COLUMNS_PER_SPLIT,
    }


def _drift_chart(checks: list[CheckOutcome]) -> dict[str, Any] | None:
    """Top feature drift scores from the feature drift check's per-column values."""
    check = next((c for c in checks if "feature drift" in c.name.lower() and c.values), None)
    if check is None:
        return None
    scores = sorted(
        ((name, value) for name, value in check.values.items() if math.isfinite(value)),
        key=lambda kv: (-kv[1], kv[0]),
    )[:TOP_N]
    chart = _charts.bar_chart(
        f"{check.name}: highest drift scores per feature",
        [(name, [value]) for name, value in scores],
        [("drift score", "bar-drift")],
    )
    if chart is None:
        return None
    return {"check": check.name, "chart": chart, "total": len(check.values)}


def _model_view(artifact_data: ArtifactData) -> dict[str, Any]:
    model = artifact_data.model
    performance = artifact_data.performance
    importances = sorted(model.feature_importances.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_N]
    importance_chart = _charts.bar_chart(
        "native feature importances, top 10",
        [(name, [value]) for name, value in importances],
        [("importance", "bar-importance")],
    )

    split_names = sorted(performance.scores, key=lambda s: ({"train": 0, "test": 1}.get(s, 2), s))
    metric_names = sorted({m for scores in performance.scores.values() for m in scores})
    score_rows = [
        (metric, [performance.scores[s].get(metric) for s in split_names])
        for metric in metric_names
    ]

    ladder_rows: list[tuple[str, list[float | None]]] = [
        (b.name, [b.test_score]) for b in artifact_data.baselines
    ]
    highlight: dict[int, str] = {}
    metrics = {b.metric for b in artifact_data.baselines}
    if ladder_rows and performance.test_score is not None and metrics <= {performance.metric}:
        highlight[len(ladder_rows)] = "bar-model"
        ladder_rows.append(("your model", [performance.test_score]))
    ladder_metric = ", ".join(sorted(metrics))
    ladder_chart = _charts.bar_chart(
        f"baseline ladder: test {ladder_metric}",
        ladder_rows,
        [(f"test {ladder_metric}", "bar-baseline")],
        highlight=highlight,
    )
    prediction_distribution = sorted(
        performance.prediction_distribution.items(), key=lambda kv: (-kv[1], kv[0])
    )[:MAX_CLASSES]

    hyperparameters = sorted(model.hyperparameters.items())
    has_info = bool(
        model.flavor
        or model.model_class
        or model.pipeline_steps
        or hyperparameters
        or importances
        or performance.scores
        or artifact_data.baselines
        or performance.test_score is not None
    )
    return {
        "info": model,
        "has_info": has_info,
        "hyperparameters": hyperparameters,
        "importances": importances,
        "importance_chart": importance_chart,
        "importance_total": len(model.feature_importances),
        "performance": performance,
        "split_names": split_names,
        "score_rows": score_rows,
        "baselines": artifact_data.baselines,
        "ladder_chart": ladder_chart,
        "prediction_distribution": prediction_distribution,
    }
