"""Running the corpus in two stages.

**Stage 1** (expensive, cached): build each case and run the real testing step on it
(:func:`mlflow_deepfix.testing.run_testing` on :class:`EvalInputs` made by the real
input validation, :func:`mlflow_deepfix.inputs.build_inputs`: the path
``mlflow.models.evaluate`` takes, minus MLflow's disk and tracking I/O). Each case's
``ArtifactData`` and metadata go to ``<cache>/<key>/<case id>.json``, where ``key``
holds the corpus version and a fingerprint of the testing code, so artifacts made by
older testing code are never reused. Cases run in at most ``workers`` long-lived
processes with a per-case timeout; already cached cases are skipped (resumable).

**Stage 2** (cheap): re-run only the rules diagnosis on the cached artifacts.
"""

from __future__ import annotations

import hashlib
import json
import logging
import multiprocessing as mp
import os
import queue
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlflow_deepfix.bench.corpus.cases import CORPUS_VERSION, CaseSpec

logger = logging.getLogger(__name__)

#: sources whose change invalidates cached artifacts (globs under mlflow_deepfix/): the
#: testing step and what it calls. ``schemas.py`` and ``config.py`` are left out on
#: purpose: new categories or config keys do not change what testing measures, and an
#: artifact that no longer fits the schema fails validation in stage 2 (an error).
TESTING_SOURCES = (
    "testing.py", "testing/**/*.py", "stats.py", "intervals.py", "baselines.py",
    "performance.py", "model_info.py", "crash.py", "inputs.py", "inputs/**/*.py",
    "model_adapter.py",
    "checks/**/*.py",
)
DEFAULT_SAMPLE_SIZE = 1000
DEFAULT_TIMEOUT_S = 240.0
#: extra time for a fresh worker to import MLflow, scikit-learn and Deepchecks
STARTUP_GRACE_S = 180.0


def testing_fingerprint() -> str:
    """A short hash of the testing step's sources (see :data:`TESTING_SOURCES`)."""
    import mlflow_deepfix

    root = Path(mlflow_deepfix.__file__).resolve().parent
    digest = hashlib.sha256()
    files = sorted({p for pattern in TESTING_SOURCES for p in root.glob(pattern)})
    for path in files:
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def default_cache_root() -> Path:
    """``$DEEPFIX_CORPUS_CACHE`` when set, else ``corpus/`` in the user cache folder."""
    env = os.environ.get("DEEPFIX_CORPUS_CACHE")
    if env:
        return Path(env)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("mlflow-deepfix")) / "corpus"


def cache_dir(root: Path | None = None) -> Path:
    """Where this corpus version + testing code's artifacts live."""
    root = Path(root) if root is not None else default_cache_root()
    return root / f"v{CORPUS_VERSION}-{testing_fingerprint()}"


def case_path(directory: Path, case_id: str) -> Path:
    return Path(directory) / f"{case_id}.json"


# --------------------------------------------------------------------------- stage 1


def _evaluation_dataset(test, target: str):
    from mlflow.models.evaluation.base import EvaluationDataset

    return EvaluationDataset(test, targets=target, name="corpus-test")


def evaluation_inputs(spec: CaseSpec, served: Any, *, sample_size: int = DEFAULT_SAMPLE_SIZE):
    """(config, inputs) the testing step gets for a case's served model and frames: one
    place, so that a refresh of one artifact section (``benchmarks/corpus_*_refresh.py``)
    rebuilds exactly what stage 1 tested."""
    from mlflow_deepfix.config import parse_config
    from mlflow_deepfix.inputs import build_inputs

    config = parse_config({
        # no result cache: stage 1 is the cache, and every case must really be tested
        "seed": spec.seed, "sample_size": sample_size, "kb": False, "cache": False,
        "train_data": served.train, **served.config,
    })
    inputs = build_inputs(
        model=served.model,
        dataset=_evaluation_dataset(served.test, served.target),
        model_type=served.model_type,
        config=config,
    )
    return config, inputs


def served_inputs(case_id: str, *, sample_size: int = DEFAULT_SAMPLE_SIZE):
    """(spec, config, inputs) of a case's served model, built without the bug-free refit
    that measures the planted bug's harm (the most expensive part of building a case,
    and not needed to re-measure one artifact section)."""
    from mlflow_deepfix.bench.corpus.cases import _workflow
    from mlflow_deepfix.bench.corpus.workflow import fit_and_serve

    spec = CaseSpec.from_id(case_id)
    served = fit_and_serve(_workflow(spec, with_bugs=True))
    config, inputs = evaluation_inputs(spec, served, sample_size=sample_size)
    return spec, config, inputs


def test_case(spec: CaseSpec, *, sample_size: int = DEFAULT_SAMPLE_SIZE) -> dict[str, Any]:
    """Build one case and run the real testing step on it: the cache record."""
    from mlflow_deepfix.bench.corpus.cases import build_case
    from mlflow_deepfix.testing import run_testing

    started = time.perf_counter()
    record: dict[str, Any] = {"case_id": spec.id, "fingerprint": testing_fingerprint()}
    try:
        built = build_case(spec)
    except Exception as error:
        logger.exception("building %s failed", spec.id)
        record.update(error=f"build: {type(error).__name__}: {error}",
                      seconds=round(time.perf_counter() - started, 3))
        return record
    record["metadata"] = built.metadata
    record["build_seconds"] = round(time.perf_counter() - started, 3)
    served = built.served
    try:
        config, inputs = evaluation_inputs(spec, served, sample_size=sample_size)
        testing_started = time.perf_counter()
        artifact, _ = run_testing(inputs, config, progress=False)
        record["testing_seconds"] = round(time.perf_counter() - testing_started, 3)
        record["artifact"] = artifact.model_dump(mode="json")
    except Exception as error:
        logger.exception("testing %s failed", spec.id)
        record["error"] = f"testing: {type(error).__name__}: {error}"
    record["seconds"] = round(time.perf_counter() - started, 3)
    return record


def _write(directory: Path, record: dict[str, Any]) -> None:
    path = case_path(directory, record["case_id"])
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, default=str), encoding="utf-8")
    tmp.replace(path)


def _worker(tasks: Any, results: Any, directory: str, sample_size: int) -> None:
    """A long-lived worker: imports once, then tests the cases it is handed."""
    import warnings

    from threadpoolctl import threadpool_limits

    warnings.simplefilter("ignore")
    logging.basicConfig(level=logging.ERROR)
    # one BLAS/OpenMP thread per worker: with two workers on two cores, OpenMP spin
    # waits (HistGradientBoosting) otherwise slow a case down tenfold
    threadpool_limits(1)
    import mlflow_deepfix.checks  # noqa: F401 - import Deepchecks before the first case

    results.put(("ready", None, None, 0.0))
    while True:
        case_id = tasks.get()
        if case_id is None:
            return
        results.put(("start", case_id, None, 0.0))
        record = test_case(CaseSpec.from_id(case_id), sample_size=sample_size)
        _write(Path(directory), record)
        results.put(("done", case_id, record.get("error"), record.get("seconds", 0.0)))


@dataclass
class _Slot:
    process: Any
    tasks: Any
    case_id: str | None = None
    since: float = 0.0
    started: bool = False


@dataclass
class Stage1Report:
    directory: Path
    ran: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)
    timeouts: list[str] = field(default_factory=list)
    seconds: float = 0.0


def run_stage1(
    specs: list[CaseSpec],
    *,
    directory: Path | None = None,
    workers: int = 2,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    sample_size: int = DEFAULT_SAMPLE_SIZE,
    progress: bool = True,
    retry_errors: bool = False,
) -> Stage1Report:
    """Test every case not cached yet, in ``workers`` processes (at most 2: the
    testing step itself already uses two threads). ``workers=0`` runs the cases in
    this process, one after the other and without a timeout (tests, debugging)."""
    from tqdm.auto import tqdm

    from mlflow_deepfix._progress import bar_options

    if workers not in (0, 1, 2):
        raise ValueError(f"workers must be 0 (in process), 1 or 2, got {workers!r}")
    if timeout_s <= 0:
        raise ValueError(f"timeout_s must be > 0, got {timeout_s!r}")
    directory = Path(directory) if directory is not None else cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    report = Stage1Report(directory)
    todo: list[str] = []
    for spec in specs:
        path = case_path(directory, spec.id)
        if path.exists():
            if retry_errors and "artifact" not in json.loads(path.read_text()):
                todo.append(spec.id)
                continue
            report.skipped.append(spec.id)
        else:
            todo.append(spec.id)
    started = time.perf_counter()
    if not todo:
        return report
    if workers == 0:
        for case_id in tqdm(todo, desc="corpus stage 1", unit="case", **bar_options(progress)):
            record = test_case(CaseSpec.from_id(case_id), sample_size=sample_size)
            _write(directory, record)
            report.ran.append(case_id)
            if record.get("error"):
                report.errors[case_id] = record["error"]
        report.seconds = time.perf_counter() - started
        return report
    ctx = mp.get_context("spawn")
    results = ctx.Queue()

    def start_slot() -> _Slot:
        tasks = ctx.Queue()
        proc = ctx.Process(target=_worker, args=(tasks, results, str(directory), sample_size),
                           daemon=True)
        proc.start()
        return _Slot(proc, tasks)

    slots = [start_slot() for _ in range(min(workers, len(todo)))]
    pending = list(todo)
    bar = tqdm(total=len(todo), desc="corpus stage 1", unit="case", **bar_options(progress))
    try:
        while pending or any(s.case_id for s in slots):
            for slot in slots:
                if slot.case_id is None and pending:
                    slot.case_id, slot.since = pending.pop(0), time.perf_counter()
                    slot.started = False
                    slot.tasks.put(slot.case_id)
            try:
                kind, case_id, error, _seconds = results.get(timeout=1.0)
            except queue.Empty:
                kind, case_id = None, None
            if kind == "start":
                # the clock starts when the worker takes the case (not while it imports)
                for slot in slots:
                    if slot.case_id == case_id:
                        slot.since, slot.started = time.perf_counter(), True
            elif kind == "done":
                for slot in slots:
                    if slot.case_id == case_id:
                        slot.case_id = None
                report.ran.append(case_id)
                if error:
                    report.errors[case_id] = error
                bar.update(1)
                bar.set_postfix_str(case_id[:60], refresh=False)
            now = time.perf_counter()
            for i, slot in enumerate(slots):
                if slot.case_id and now - slot.since > timeout_s + (
                    STARTUP_GRACE_S if not slot.started else 0.0
                ):
                    logger.warning("%s timed out after %.0fs", slot.case_id, timeout_s)
                    slot.process.kill()
                    slot.process.join(5)
                    _write(directory, {"case_id": slot.case_id, "error": f"timeout after "
                                       f"{timeout_s:.0f}s", "seconds": timeout_s,
                                       "fingerprint": testing_fingerprint()})
                    report.timeouts.append(slot.case_id)
                    report.ran.append(slot.case_id)
                    bar.update(1)
                    slots[i] = start_slot()
                elif slot.case_id and not slot.process.is_alive():
                    _write(directory, {"case_id": slot.case_id, "error": "worker died",
                                       "seconds": now - slot.since,
                                       "fingerprint": testing_fingerprint()})
                    report.errors[slot.case_id] = "worker died"
                    report.ran.append(slot.case_id)
                    bar.update(1)
                    slots[i] = start_slot()
    finally:
        bar.close()
        for slot in slots:
            slot.tasks.put(None)
        for slot in slots:
            slot.process.join(10)
            if slot.process.is_alive():
                slot.process.kill()
    report.seconds = time.perf_counter() - started
    return report


# --------------------------------------------------------------------------- stage 2


@dataclass
class CaseOutcome:
    """The rules' diagnosis of one cached case, in the shape scoring needs."""

    case_id: str
    kind: str
    dataset: str
    model: str
    task: str
    expected: list[str]
    magnitudes: list[str]
    valid: bool
    invalid_reason: str = ""
    error: str | None = None
    #: findings in rank order: dicts with category, severity, confidence + features
    findings: list[dict[str, Any]] = field(default_factory=list)
    harm: dict[str, Any] = field(default_factory=dict)
    testing_seconds: float | None = None
    #: per planted category of a single-bug case, the other categories that name it too
    #: (see :func:`~mlflow_deepfix.bench.corpus.cases.also_named`)
    also_accepted: dict[str, list[str]] = field(default_factory=dict)

    def names(self, category: str) -> tuple[str, ...]:
        """The categories that count as naming planted ``category``: itself first."""
        return (category, *self.also_accepted.get(category, ()))


def finding_features(diagnosis: Any) -> list[dict[str, Any]]:
    """Per finding: what the rules said and the signals behind it (the calibration
    model's inputs, see :func:`deepfix_agents.calibration.finding_row`)."""
    from deepfix_agents.calibration import finding_row

    return [finding_row(f, diagnosis.signals) for f in diagnosis.findings]


def diagnose_cached(record: dict[str, Any]) -> CaseOutcome:
    """Stage 2 for one cache record: the rules diagnosis of its artifact."""
    from deepfix_agents import diagnose_with_rules

    from mlflow_deepfix.schemas import ArtifactData

    spec = CaseSpec.from_id(record["case_id"])
    meta = record.get("metadata") or {}
    from mlflow_deepfix.bench.corpus.datasets import load_dataset

    outcome = CaseOutcome(
        case_id=spec.id, kind=spec.kind, dataset=spec.dataset, model=spec.model,
        task=meta.get("task") or load_dataset(spec.dataset).task,
        expected=list(spec.categories), magnitudes=list(spec.magnitudes),
        valid=bool(meta.get("valid", True)), invalid_reason=meta.get("invalid_reason", ""),
        harm=meta.get("harm") or {}, testing_seconds=record.get("testing_seconds"),
    )
    if spec.kind == "single":
        from mlflow_deepfix.bench.corpus.cases import also_named

        named = {c: list(also_named(c, outcome.harm)) for c in spec.categories}
        outcome.also_accepted = {c: others for c, others in named.items() if others}
    if "artifact" not in record:
        outcome.error = record.get("error", "no artifact")
        return outcome
    try:
        artifact = ArtifactData.model_validate(record["artifact"])
        diagnosis = diagnose_with_rules(artifact)
        outcome.findings = finding_features(diagnosis)
    except Exception as error:  # noqa: BLE001 - e.g. an artifact from older schemas
        outcome.error = f"diagnosis: {type(error).__name__}: {error}"
    return outcome


def run_stage2(specs: list[CaseSpec], *, directory: Path | None = None) -> list[CaseOutcome]:
    """Diagnose every cached case of ``specs`` (missing ones are reported as errors)."""
    directory = Path(directory) if directory is not None else cache_dir()
    outcomes = []
    for spec in specs:
        path = case_path(directory, spec.id)
        if not path.exists():
            outcomes.append(CaseOutcome(
                case_id=spec.id, kind=spec.kind, dataset=spec.dataset, model=spec.model,
                task="", expected=list(spec.categories), magnitudes=list(spec.magnitudes),
                valid=True, error="not in the cache (run stage 1)",
            ))
            continue
        outcomes.append(diagnose_cached(json.loads(path.read_text(encoding="utf-8"))))
    return outcomes
