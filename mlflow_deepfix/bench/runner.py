"""``deepfix bench``: score a diagnosis engine on the scenario library.

Each scenario (see :mod:`mlflow_deepfix.bench.scenarios`) is built, its model logged to an
MLflow run, and evaluated with ``evaluators=["deepfix"]`` exactly as a user would; the
run's ``deepfix/findings.json`` then says where the planted bug's category landed in
the ranking. Because the whole loop goes through MLflow, the same command scores the
offline rules engine or any LLM provider (``--provider``).

With ``--baseline deepchecks`` the same run's ``deepfix/artifact_data.json`` is read
back and the raw Deepchecks failures, in suite order, are turned into a ranking of
categories: what a user would get from Deepchecks alone, scored on the same metrics.

Ranks are positions in the list of *distinct* categories (1 = first), for the engine
and the baseline alike, so that the two are compared on equal terms.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mlflow_deepfix.bench.scenarios import Scenario, ScenarioData, all_scenarios, select

logger = logging.getLogger(__name__)

BASELINES = ("deepchecks",)
SUITE_ORDER = ("data_integrity", "train_test_validation", "model_evaluation")
MEDIUM_OR_WORSE = ("critical", "high", "medium")
EXPERIMENT_NAME = "deepfix-bench"


def deepchecks_mapping(modality: str = "tabular") -> dict[str, str]:
    """Check name -> the category a Deepchecks-only user would blame when that check
    fails, for the checks of ``modality``'s suites (``DEEPCHECKS_CATEGORY`` and its text
    and image twins; checks absent from it, such as Model Inference Time, point at no
    category)."""
    from mlflow_deepfix.checks import DEEPCHECKS_CATEGORY_BY_MODALITY

    return dict(DEEPCHECKS_CATEGORY_BY_MODALITY[modality])


# --------------------------------------------------------------------------- results


@dataclass
class ScenarioResult:
    """How one scenario went. Ranks are 1-based positions among distinct categories;
    ``None`` when the expected category is absent (or the scenario is a clean control)."""

    scenario_id: str
    expected: str | None
    rank: int | None = None
    top1: str | None = None
    categories: list[str] = field(default_factory=list)
    n_medium_or_worse: int = 0
    status: str | None = None
    seconds: float = 0.0
    build_seconds: float = 0.0
    baseline_rank: int | None = None
    baseline_top1: str | None = None
    baseline_categories: list[str] = field(default_factory=list)
    run_id: str | None = None
    #: the exception (type: message) when building, logging or evaluating failed
    error: str | None = None


@dataclass
class Summary:
    """Scores over a set of results. Accuracy and MRR are over buggy scenarios only;
    a clean control counts as a false alarm when it gets any finding of medium
    severity or worse (for the baseline: any failed check with a category)."""

    n_buggy: int = 0
    n_clean: int = 0
    top1_accuracy: float = 0.0
    top3_accuracy: float = 0.0
    mrr: float = 0.0
    clean_false_alarms: int = 0
    errors: int = 0
    total_seconds: float = 0.0
    mean_seconds: float = 0.0


@dataclass
class BenchReport:
    results: list[ScenarioResult]
    deepfix: Summary
    baseline: Summary | None = None
    baseline_name: str | None = None
    seed: int = 0
    provider: str = "rules"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), indent=2), encoding="utf-8")
        return path


def _rank(categories: list[str], expected: str | None) -> int | None:
    if expected is None or expected not in categories:
        return None
    return categories.index(expected) + 1


def _distinct(items: list[str | None]) -> list[str]:
    return [c for c in dict.fromkeys(items) if c]


def summarize(results: list[ScenarioResult], which: str = "deepfix") -> Summary:
    """Top-1/top-3 accuracy, MRR and clean false alarms for ``which`` ("deepfix" or
    "baseline")."""
    if which not in ("deepfix", "baseline"):
        raise ValueError(f"which must be 'deepfix' or 'baseline', got {which!r}")
    buggy = [r for r in results if r.expected is not None]
    clean = [r for r in results if r.expected is None]
    ranks = [(r.rank if which == "deepfix" else r.baseline_rank) for r in buggy]
    if which == "deepfix":
        alarms = sum(1 for r in clean if r.n_medium_or_worse > 0)
    else:
        alarms = sum(1 for r in clean if r.baseline_categories)
    n = len(buggy)
    total = sum(r.seconds for r in results)
    return Summary(
        n_buggy=n,
        n_clean=len(clean),
        top1_accuracy=sum(1 for k in ranks if k == 1) / n if n else 0.0,
        top3_accuracy=sum(1 for k in ranks if k is not None and k <= 3) / n if n else 0.0,
        mrr=sum(1.0 / k for k in ranks if k) / n if n else 0.0,
        clean_false_alarms=alarms,
        errors=sum(1 for r in results if r.error),
        total_seconds=total,
        mean_seconds=total / len(results) if results else 0.0,
    )


def baseline_categories(artifact_data: dict[str, Any], mapping: dict[str, str]) -> list[str]:
    """Categories of the raw Deepchecks failures, in suite order then check order,
    without repeats: the ranking a Deepchecks-only user would read top to bottom."""
    checks = artifact_data.get("checks") or []
    order = {suite: i for i, suite in enumerate(SUITE_ORDER)}
    failed = [
        (order.get(c.get("suite"), len(order)), i, c.get("name"))
        for i, c in enumerate(checks)
        if c.get("outcome") == "not_passed"
    ]
    return _distinct([mapping.get(name) for _, _, name in sorted(failed)])


def findings_categories(findings: dict[str, Any]) -> tuple[list[str], int]:
    """Distinct categories of ``findings.json`` in rank order, and how many findings
    are medium severity or worse."""
    items = sorted(findings.get("findings") or [], key=lambda f: f.get("rank", 0))
    severe = sum(1 for f in items if f.get("severity") in MEDIUM_OR_WORSE)
    return _distinct([f.get("category") for f in items]), severe


# --------------------------------------------------------------------------- running


def _signature(data: ScenarioData) -> Any:
    """The model's signature from the training features it was fitted on: the evaluator
    then feeds the model those columns only (dates and declared ids stay out)."""
    from mlflow.models import infer_signature

    features = data.train[data.feature_names]
    try:
        return infer_signature(features, data.model.predict(features.head(20)))
    except Exception as error:  # noqa: BLE001 - an input-only signature still helps
        logger.warning("could not infer the output signature: %s", error)
        return infer_signature(features)


def _experiment_id(client: Any, artifact_root: Path | None) -> str:
    existing = client.get_experiment_by_name(EXPERIMENT_NAME)
    if existing is not None:
        return existing.experiment_id
    location = artifact_root.as_uri() if artifact_root is not None else None
    return client.create_experiment(EXPERIMENT_NAME, artifact_location=location)


def run_scenario(
    scenario: Scenario,
    *,
    seed: int,
    experiment_id: str,
    evaluator_config: dict | None,
    mapping: dict[str, str] | None,
) -> ScenarioResult:
    """Build, log, evaluate and score one scenario in its own MLflow run.

    Any exception is recorded in ``error`` (the scenario then scores as a miss) so that
    one broken scenario does not end the benchmark.
    """
    import mlflow

    result = ScenarioResult(scenario_id=scenario.id, expected=scenario.expected)
    started = time.perf_counter()
    try:
        data = scenario.build(seed)
        result.build_seconds = time.perf_counter() - started
        # cache off: the benchmark times real work (a caller may still pass cache=True)
        config = {"seed": seed, "cache": False, **data.config, **(evaluator_config or {}),
                  "train_data": data.train}
        with mlflow.start_run(experiment_id=experiment_id, run_name=scenario.id) as run:
            result.run_id = run.info.run_id
            mlflow.set_tags(
                {
                    "deepfix.bench.scenario": scenario.id,
                    "deepfix.bench.expected": scenario.expected or "none",
                }
            )
            if data.log_model is not None:  # its own flavour (mlflow.pytorch, a pyfunc)
                info = data.log_model()
            else:
                info = mlflow.sklearn.log_model(
                    data.model,
                    name="model",
                    serialization_format="cloudpickle",
                    signature=_signature(data),
                )
            evaluated = time.perf_counter()
            mlflow.models.evaluate(
                info.model_uri,
                data.test,
                targets=data.target,
                model_type=data.model_type,
                evaluators=["deepfix"],
                evaluator_config={"deepfix": config},
            )
            result.seconds = time.perf_counter() - evaluated
        findings = mlflow.artifacts.load_dict(f"runs:/{result.run_id}/deepfix/findings.json")
        result.categories, result.n_medium_or_worse = findings_categories(findings)
        result.status = findings.get("status")
        result.top1 = result.categories[0] if result.categories else None
        result.rank = _rank(result.categories, scenario.expected)
        if mapping is not None:
            artifact = mlflow.artifacts.load_dict(
                f"runs:/{result.run_id}/deepfix/artifact_data.json"
            )
            modality = artifact.get("modality", "tabular")
            checks_mapping = mapping if modality == "tabular" else deepchecks_mapping(modality)
            result.baseline_categories = baseline_categories(artifact, checks_mapping)
            result.baseline_top1 = (
                result.baseline_categories[0] if result.baseline_categories else None
            )
            result.baseline_rank = _rank(result.baseline_categories, scenario.expected)
    except Exception as error:
        logger.exception("scenario %s failed", scenario.id)
        result.error = f"{type(error).__name__}: {error}"
        if not result.seconds:
            result.seconds = time.perf_counter() - started
    return result


def run_bench(
    scenarios: list[Scenario] | None = None,
    *,
    seed: int = 0,
    tracking_uri: str | None = None,
    baseline: str | None = None,
    evaluator_config: dict | None = None,
    progress: bool = True,
) -> BenchReport:
    """Evaluate every scenario (all of them by default) through ``mlflow.models.evaluate``
    and score the rankings.

    ``tracking_uri`` defaults to a SQLite store in a temporary folder that is removed
    afterwards; pass one to keep the runs (one per scenario, experiment
    ``deepfix-bench``). ``baseline="deepchecks"`` also scores raw Deepchecks failures.
    ``evaluator_config`` holds extra ``evaluator_config["deepfix"]`` keys for every
    scenario (e.g. ``{"provider": "openai"}``); ``train_data`` is set by the runner.
    """
    import mlflow
    from mlflow.tracking import MlflowClient
    from tqdm.auto import tqdm

    from mlflow_deepfix._progress import bar_options

    if baseline is not None and baseline not in BASELINES:
        raise ValueError(f"baseline must be None or one of {BASELINES}, got {baseline!r}")
    if evaluator_config is not None and not isinstance(evaluator_config, dict):
        raise TypeError(
            f"evaluator_config must be a dict or None, got {type(evaluator_config).__name__}"
        )
    if evaluator_config and "train_data" in evaluator_config:
        raise ValueError(
            "evaluator_config must not hold 'train_data': each scenario supplies its own"
        )
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError(f"seed must be an int, got {seed!r}")
    scenarios = all_scenarios() if scenarios is None else list(scenarios)
    if not scenarios:
        raise ValueError("scenarios is empty; pass None to run the whole library")

    workdir = Path(tempfile.mkdtemp(prefix="deepfix-bench-")) if tracking_uri is None else None
    uri = tracking_uri or f"sqlite:///{(workdir / 'mlflow.db').as_posix()}"
    previous = mlflow.get_tracking_uri()
    mapping = deepchecks_mapping() if baseline == "deepchecks" else None
    results: list[ScenarioResult] = []
    try:
        mlflow.set_tracking_uri(uri)
        experiment_id = _experiment_id(
            MlflowClient(uri), workdir / "artifacts" if workdir else None
        )
        bar = tqdm(scenarios, desc="deepfix bench", unit="scenario", **bar_options(progress))
        for scenario in bar:
            bar.set_postfix_str(scenario.id, refresh=False)
            result = run_scenario(
                scenario,
                seed=seed,
                experiment_id=experiment_id,
                evaluator_config=evaluator_config,
                mapping=mapping,
            )
            logger.info(
                "%s: expected=%s rank=%s top1=%s (%.1fs)",
                scenario.id,
                scenario.expected,
                result.rank,
                result.top1,
                result.seconds,
            )
            results.append(result)
    finally:
        mlflow.set_tracking_uri(previous)
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)
    return BenchReport(
        results=results,
        deepfix=summarize(results, "deepfix"),
        baseline=summarize(results, "baseline") if mapping is not None else None,
        baseline_name=baseline,
        seed=seed,
        provider=str((evaluator_config or {}).get("provider", "rules")),
    )


# --------------------------------------------------------------------------- output


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    return str(value)


def format_table(report: BenchReport) -> str:
    """A plain-text table, one row per scenario, then the summary side by side."""
    with_baseline = report.baseline is not None
    header = ["scenario", "expected", "rank", "top-1"]
    if with_baseline:
        header += [f"{report.baseline_name} rank", f"{report.baseline_name} top-1"]
    header += ["seconds"]
    rows = []
    for r in report.results:
        row = [r.scenario_id, r.expected or "(clean)", _cell(r.rank), _cell(r.top1)]
        if r.expected is None:
            row[2] = f"{r.n_medium_or_worse} >=med"
        if r.error:
            row[3] = "ERROR " + r.error.split(":")[0]
        if with_baseline:
            b_rank = _cell(r.baseline_rank) if r.expected else f"{len(r.baseline_categories)} cats"
            row += [b_rank, _cell(r.baseline_top1)]
        row.append(f"{r.seconds:.1f}")
        rows.append(row)
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    line = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths))
    out = [line(header), line(["-" * w for w in widths])]
    out += [line(row) for row in rows]

    def metrics(s: Summary) -> list[str]:
        return [
            f"{s.top1_accuracy:.3f}",
            f"{s.top3_accuracy:.3f}",
            f"{s.mrr:.3f}",
            f"{s.clean_false_alarms}/{s.n_clean}",
            str(s.errors),
        ]

    names = ["top-1 accuracy", "top-3 accuracy", "MRR", "clean false alarms", "errors"]
    columns = [f"deepfix ({report.provider})"] + (
        [report.baseline_name or "baseline"] if with_baseline else []
    )
    values = [metrics(report.deepfix)] + (
        [metrics(report.baseline)] if with_baseline and report.baseline else []
    )
    out += [
        "",
        f"{report.deepfix.n_buggy} buggy scenarios, {report.deepfix.n_clean} clean controls, seed {report.seed}",
    ]
    w0 = max(len(n) for n in names)
    out.append("  ".join([" " * w0, *(c.ljust(18) for c in columns)]).rstrip())
    for i, name in enumerate(names):
        out.append("  ".join([name.ljust(w0), *(v[i].ljust(18) for v in values)]).rstrip())
    out.append(
        f"{'time'.ljust(w0)}  total {report.deepfix.total_seconds:.1f}s, "
        f"mean {report.deepfix.mean_seconds:.1f}s per scenario (evaluate only)"
    )
    return "\n".join(out)


# --------------------------------------------------------------------------- CLI


def add_bench_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``deepfix bench`` on an argparse ``subparsers`` object."""
    parser = subparsers.add_parser(
        "bench",
        help="score the diagnosis on the built-in scenario library",
        description="Evaluate planted-bug scenarios through mlflow.models.evaluate and report "
        "how often the planted category is ranked first (top-1), in the top 3, and the MRR.",
    )
    parser.add_argument(
        "--scenario",
        action="append",
        dest="scenarios",
        metavar="SUBSTR",
        default=None,
        help="run only scenarios whose id contains SUBSTR (repeatable)",
    )
    parser.add_argument(
        "--baseline", choices=BASELINES, default=None, help="also score raw Deepchecks failures"
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed for every scenario and the evaluator (default 0)"
    )
    parser.add_argument(
        "--json",
        dest="json_path",
        metavar="PATH",
        default=None,
        help="write the full report as JSON",
    )
    parser.add_argument(
        "--provider", default=None, help="diagnosis engine: 'rules' (default) or an LLM provider"
    )
    parser.add_argument(
        "--tracking-uri",
        default=None,
        help="MLflow tracking URI to keep the runs in (default: a temporary SQLite store)",
    )
    parser.add_argument(
        "--no-kb", action="store_true", help="evaluate without the knowledge base (faster)"
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument("--list", action="store_true", help="list the scenarios and exit")
    # --- fault-injection corpus (issue 12): `deepfix bench --corpus [--full]`
    from mlflow_deepfix.bench.corpus.report import add_corpus_arguments

    add_corpus_arguments(parser)
    # --- end corpus
    parser.set_defaults(func=run_bench_cli)
    return parser


def run_bench_cli(args: argparse.Namespace) -> int:
    """Entry point of ``deepfix bench``: prints the table, optionally writes JSON."""
    import sys

    if getattr(args, "corpus", False):  # fault-injection corpus (issue 12)
        from mlflow_deepfix.bench.corpus.report import run_corpus_cli

        return run_corpus_cli(args)
    try:
        scenarios = select(getattr(args, "scenarios", None))
    except ValueError as error:
        sys.stderr.write(f"deepfix bench: error: {' '.join(str(error).split())}\n")
        return 2
    if getattr(args, "list", False):
        width = max(len(s.id) for s in scenarios)
        for s in scenarios:
            sys.stdout.write(f"{s.id.ljust(width)}  {s.expected or '(clean)'}\n")
        return 0
    config: dict[str, Any] = {}
    if getattr(args, "provider", None):
        config["provider"] = args.provider
    if getattr(args, "no_kb", False):
        config["kb"] = False
    problem = _cli_problem(args, config)
    if problem:  # refused before minutes of scenarios run
        sys.stderr.write(f"deepfix bench: error: {problem}\n")
        return 2
    report = run_bench(
        scenarios,
        seed=args.seed,
        tracking_uri=getattr(args, "tracking_uri", None),
        baseline=getattr(args, "baseline", None),
        evaluator_config=config or None,
        progress=not getattr(args, "no_progress", False),
    )
    sys.stdout.write(format_table(report) + "\n")
    if getattr(args, "json_path", None):
        path = report.to_json(args.json_path)
        sys.stdout.write(f"report written to {path}\n")
    return 0


def _cli_problem(args: argparse.Namespace, config: dict[str, Any]) -> str | None:
    """What is wrong with the ``deepfix bench`` arguments, in one line, or None."""
    from pathlib import Path

    from mlflow_deepfix.config import parse_config
    from mlflow_deepfix.errors import DeepfixError

    try:
        parse_config(config)
    except DeepfixError as error:
        return " ".join(error.message.split()) + " (check --provider)"
    json_path = getattr(args, "json_path", None)
    if json_path and not Path(json_path).expanduser().resolve().parent.is_dir():
        return (
            f"--json {json_path!r}: the folder {str(Path(json_path).parent)!r} does not exist; "
            "create it or choose another path."
        )
    return None
