"""A content-addressed cache of the testing step's result (:class:`ArtifactData`).

Testing (predictions, Deepchecks suites, baseline ladder, statistics) is where nearly
all of an evaluation's time goes, and its output is a pure function of its inputs. A
repeated evaluation of identical inputs (the same model on the same data, e.g. when a
CI job or a notebook cell is re-run) therefore reuses the stored ArtifactData and only
reruns diagnosis and output, which take well under a second.

The key (sha256) covers everything that can change the result and nothing that cannot:

* **data**: a fingerprint of every frame the testing step reads (test and training
  splits): shape, column names and dtypes, and ``pandas.util.hash_pandas_object`` of
  each column, hashed in chunks so that memory does not grow with the row count;
* **model**: its MLflow identity (model uuid, run id, artifact path, flavors) and a
  sha256 of the raw model's pickled bytes (streamed into the hash, never held whole);
  a model that cannot be pickled makes the evaluation uncacheable (a miss, not an error);
* **Spark tables** (Spark input): the driver samples are fingerprinted as frames above,
  and each full Spark table by one aggregation counted together with its rows
  (:func:`mlflow_deepfix.inputs.spark.count_and_fingerprint`: an order-independent
  hash of every row), so a row changed outside the sample is a miss; the stored result
  then includes the full-table statistics and test performance;
* **call**: target, task, modality, feature list, where the training data came from,
  and the parsed config without the frames (they are in the data part);
* **code**: deepfix's version plus a digest of its own source files (so an edited
  checkout never reuses a stale entry), and the versions of Deepchecks, scikit-learn,
  pandas, numpy and MLflow.

Entries are JSON files ``<cache dir>/results/<key[:2]>/<key>.json`` written
atomically; an unreadable or mismatching entry is a miss. The cache dir is
``platformdirs.user_cache_dir("mlflow-deepfix")``, or ``$DEEPFIX_CACHE_DIR`` when set;
it is bounded by size (oldest entries go first). ``deepfix cache info|clear`` inspects
and empties it; ``evaluator_config={"deepfix": {"cache": False}}`` bypasses it.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import logging
import os
import pickle
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mlflow_deepfix import __version__
from mlflow_deepfix.schemas import ArtifactData

logger = logging.getLogger(__name__)

CACHE_FORMAT = "1"
ENV_DIR = "DEEPFIX_CACHE_DIR"
RESULTS_DIR = "results"
#: the results cache is pruned (oldest first) above this many bytes
MAX_BYTES = 512 * 1024 * 1024
#: rows per hashed chunk: bounds the temporary uint64 arrays to ~1 MB per column
CHUNK_ROWS = 131_072
#: config keys that hold frames (fingerprinted as data) or only switch the cache itself
_CONFIG_NOT_KEYED = ("train_data", "eval_data", "cache")
_VERSIONED = ("deepchecks", "scikit-learn", "pandas", "numpy", "mlflow")


def cache_root() -> Path:
    """``$DEEPFIX_CACHE_DIR`` or ``platformdirs.user_cache_dir("mlflow-deepfix")``."""
    override = os.environ.get(ENV_DIR)
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("mlflow-deepfix", appauthor=False))


# ----------------------------------------------------------------------- fingerprints


class _HashWriter:
    """A file-like sink that feeds ``pickle.dump`` output straight into a hash."""

    def __init__(self, digest: Any):
        self.digest = digest
        self.size = 0

    def write(self, data: Any) -> int:
        # Protocol 5 hands large arrays (a fitted forest's node tables, past ~100k rows)
        # over as PickleBuffer objects, which have no len(): hash their bytes
        view = memoryview(data)
        if not view.c_contiguous:
            view = memoryview(view.tobytes())
        view = view.cast("B")
        self.digest.update(view)
        self.size += view.nbytes
        return view.nbytes


def _cell_bytes(value: Any) -> bytes:
    """Bytes for a cell ``hash_pandas_object`` refuses (arrays, lists, dicts...)."""
    if isinstance(value, np.ndarray):
        return f"{value.dtype}{value.shape}".encode() + np.ascontiguousarray(value).tobytes()
    try:
        return pickle.dumps(value, protocol=5)
    except Exception:  # noqa: BLE001 - last resort: repr (lossy only for exotic objects)
        return repr(value).encode("utf-8", "replace")


def _hash_column(digest: Any, column: pd.Series) -> None:
    for start in range(0, len(column), CHUNK_ROWS):
        chunk = column.iloc[start : start + CHUNK_ROWS]
        try:
            hashed = pd.util.hash_pandas_object(chunk, index=False)
            digest.update(np.ascontiguousarray(hashed.to_numpy(dtype=np.uint64)).tobytes())
        except TypeError:  # unhashable cells (images as arrays, lists)
            for value in chunk:
                payload = _cell_bytes(value)
                digest.update(len(payload).to_bytes(8, "little"))
                digest.update(payload)


def frame_fingerprint(frame: pd.DataFrame | None) -> str | None:
    """sha256 of a frame's shape, column names, dtypes and values (index ignored).

    Memory stays flat in the row count: each column is hashed in chunks of
    :data:`CHUNK_ROWS` rows.
    """
    if frame is None:
        return None
    digest = hashlib.sha256()
    header = [list(map(str, frame.columns)), [str(t) for t in frame.dtypes], list(frame.shape)]
    digest.update(json.dumps(header).encode())
    for position in range(frame.shape[1]):
        _hash_column(digest, frame.iloc[:, position])
    return digest.hexdigest()


def _raw_model(model: Any) -> Any:
    getter = getattr(model, "get_raw_model", None)
    if getter is not None:
        try:
            return getter()
        except Exception as error:  # noqa: BLE001 - flavors without a raw model raise anything
            logger.debug("deepfix cache: no raw model (%s); hashing the pyfunc", error)
    impl = getattr(model, "_model_impl", None)
    python_model = getattr(impl, "python_model", None)
    return python_model if python_model is not None else model


def model_fingerprint(model: Any) -> str | None:
    """sha256 of the model's MLflow identity and its pickled bytes; None when the model
    cannot be pickled (then the evaluation is not cached)."""
    digest = hashlib.sha256()
    metadata = getattr(model, "metadata", None)
    identity = {
        name: str(getattr(metadata, name, None))
        for name in ("model_uuid", "run_id", "artifact_path", "model_id")
    }
    flavors = getattr(metadata, "flavors", None)
    identity["flavors"] = json.dumps(flavors, sort_keys=True, default=str)
    identity["type"] = f"{type(model).__module__}.{type(model).__qualname__}"
    digest.update(json.dumps(identity, sort_keys=True).encode())
    raw = _raw_model(model)
    try:
        import cloudpickle

        cloudpickle.dump(raw, _HashWriter(digest), protocol=5)
    except Exception as error:  # noqa: BLE001 - an unpicklable model is only uncacheable
        logger.info("deepfix cache: the model cannot be fingerprinted (%s): not cached", error)
        return None
    return digest.hexdigest()


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """deepfix's version, a digest of its source files, and the versions of the
    libraries whose behaviour shapes the check outcomes."""
    digest = hashlib.sha256(__version__.encode())
    roots = [Path(__file__).resolve().parent]
    try:
        import deepfix_agents  # the rules engine is not cached, but its package ships with us

        roots.append(Path(deepfix_agents.__file__).resolve().parent)
    except ImportError:  # pragma: no cover - installed together
        pass
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    for name in _VERSIONED:
        try:
            version = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            version = "absent"
        digest.update(f"{name}={version}".encode())
    return digest.hexdigest()


def _config_part(config: Any) -> dict[str, Any]:
    return config.model_dump(mode="json", exclude=set(_CONFIG_NOT_KEYED))


def result_key(inputs: Any, config: Any, full_tables: Any = None) -> str | None:
    """The cache key of one evaluation (see the module docstring), or None when some
    part cannot be fingerprinted. ``full_tables`` (Spark input): the fingerprints of the
    full Spark tables join the key, since the cached result then holds their
    full-table statistics and test performance, not only figures of the driver
    samples in ``inputs``."""
    model = model_fingerprint(inputs.model)
    if model is None:
        return None
    frames = {"test": inputs.test, "train": inputs.train}
    frames.update(getattr(inputs, "extra_frames", None) or {})
    payload = {
        "format": CACHE_FORMAT,
        "code": code_fingerprint(),
        "model": model,
        "data": {name: frame_fingerprint(frame) for name, frame in sorted(frames.items())},
        "call": {
            "target": inputs.target,
            "task": inputs.task,
            "modality": inputs.modality,
            "feature_names": list(inputs.feature_names),
            "cat_features": inputs.cat_features,
            "index_col": inputs.index_col,
            "datetime_col": inputs.datetime_col,
            "content_column": inputs.content_column,
            "train_source": inputs.train_source,
            "notes": list(inputs.notes),
        },
        "config": _config_part(config),
    }
    if full_tables is not None:
        payload["spark_tables"] = {
            "fingerprints": dict(sorted(full_tables.fingerprints.items())),
            "model_uri": full_tables.model_uri,
        }
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


# ----------------------------------------------------------------------------- store


@dataclass
class CachedResult:
    artifact: ArtifactData
    created: float
    #: seconds the testing step took when the entry was computed
    compute_seconds: float


class ResultCache:
    """ArtifactData by key, one JSON file each under ``<root>/results``."""

    def __init__(self, root: str | os.PathLike | None = None, *, max_bytes: int = MAX_BYTES):
        self.directory = Path(root or cache_root()) / RESULTS_DIR
        self.max_bytes = max_bytes

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> CachedResult | None:
        path = self._path(key)
        if not path.is_file():
            return None
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
            if entry.get("format") != CACHE_FORMAT or entry.get("key") != key:
                return None
            result = CachedResult(
                artifact=ArtifactData.model_validate(entry["artifact"]),
                created=float(entry["created"]),
                compute_seconds=float(entry["compute_seconds"]),
            )
        except Exception as error:  # noqa: BLE001 - a broken entry is only a miss
            logger.warning("deepfix cache: ignoring unreadable entry %s: %s", path, error)
            return None
        _touch(path)  # pruning drops the least recently *used* entries first
        return result

    def put(self, key: str, artifact: ArtifactData) -> None:
        path = self._path(key)
        entry = {
            "format": CACHE_FORMAT,
            "key": key,
            "created": time.time(),
            "compute_seconds": artifact.checks_seconds,
            "artifact": artifact.model_dump(mode="json"),
        }
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(entry, handle, separators=(",", ":"))
            os.replace(tmp, path)
            _touch(path)
        except OSError as error:
            logger.warning("deepfix cache: could not write %s: %s", path, error)
            return
        self.prune()

    def entries(self) -> list[Path]:
        if not self.directory.is_dir():
            return []
        return sorted(self.directory.glob("*/*.json"))

    def prune(self) -> int:
        """Delete least recently used entries until the cache fits ``max_bytes``."""
        files = [(p.stat().st_mtime_ns, p.stat().st_size, p) for p in self.entries()]
        total = sum(size for _, size, _ in files)
        removed = 0
        for _, size, path in sorted(files):
            if total <= self.max_bytes:
                break
            path.unlink(missing_ok=True)
            total -= size
            removed += 1
        return removed


# ---------------------------------------------------------------------- for the CLI


def _usage(paths: Iterable[Path]) -> tuple[int, int]:
    files = [p for p in paths if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def cache_info(root: str | os.PathLike | None = None) -> dict[str, Any]:
    """Entry counts and sizes of the results cache and the LLM review cache."""
    base = Path(root or cache_root())
    info: dict[str, Any] = {"directory": str(base)}
    for name, folder in (("results", base / RESULTS_DIR), ("llm", base / "llm")):
        count, size = _usage(folder.glob("*/*.json")) if folder.is_dir() else (0, 0)
        info[name] = {"directory": str(folder), "entries": count, "bytes": size}
    return info


def clear_cache(root: str | os.PathLike | None = None, *, which: str = "all") -> int:
    """Delete the entries of the results cache, the LLM cache or both; returns how many."""
    if which not in ("all", "results", "llm"):
        raise ValueError(f"which must be 'all', 'results' or 'llm', got {which!r}")
    base = Path(root or cache_root())
    folders = {"results": [base / RESULTS_DIR], "llm": [base / "llm"]}.get(
        which, [base / RESULTS_DIR, base / "llm"]
    )
    removed = 0
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in folder.glob("*/*"):
            if path.suffix in (".json", ".tmp") and path.is_file():
                path.unlink(missing_ok=True)
                removed += path.suffix == ".json"
        for sub in folder.iterdir():
            if sub.is_dir() and not any(sub.iterdir()):
                sub.rmdir()
    return removed


def add_cache_parser(subparsers: Any) -> None:
    """``deepfix cache info`` / ``deepfix cache clear [--only results|llm]``."""
    parser = subparsers.add_parser(
        "cache", help="inspect or empty deepfix's result and LLM caches"
    )
    actions = parser.add_subparsers(dest="cache_action", metavar="ACTION", required=True)
    info = actions.add_parser("info", help="where the caches are, entries and size")
    info.add_argument("--json", action="store_true", help="print JSON")
    info.set_defaults(func=_cli_info)
    clear = actions.add_parser("clear", help="delete cached results (and LLM reviews)")
    clear.add_argument(
        "--only", choices=("results", "llm"), default=None,
        help="clear only the results cache or only the LLM review cache",
    )
    clear.set_defaults(func=_cli_clear)


def _cli_info(args: Any) -> int:
    info = cache_info()
    if getattr(args, "json", False):
        print(json.dumps(info, indent=2))
        return 0
    print(f"deepfix cache: {info['directory']}")
    for name in ("results", "llm"):
        part = info[name]
        print(f"  {name:8s} {part['entries']:6d} entries  {part['bytes'] / 1e6:9.2f} MB  "
              f"{part['directory']}")
    return 0


def _cli_clear(args: Any) -> int:
    removed = clear_cache(which=args.only or "all")
    print(f"deepfix cache: removed {removed} entries from {cache_root()}")
    return 0


# --------------------------------------------------------------- the testing step, cached


@dataclass
class CacheOutcome:
    """What the cache did for one evaluation (metric, report footer line)."""

    status: str  # "hit", "miss", "disabled" or "uncacheable"
    seconds: float = 0.0
    detail: str = ""

    @property
    def hit(self) -> bool:
        return self.status == "hit"

    @property
    def footer(self) -> str:
        return f"Results cache: {self.status}" + (f" ({self.detail})" if self.detail else "")


def run_testing_cached(
    inputs: Any, config: Any, *, before_testing: Any = None, full_tables: Any = None
) -> tuple[ArtifactData, CacheOutcome]:
    """The testing step's ArtifactData, from the cache when an identical evaluation was
    stored, else computed (and stored). Deepchecks is imported only on a miss;
    ``before_testing`` (if given) is called right after that import, before the checks
    run. ``full_tables`` (Spark input): on a miss the artifact is completed with the
    full-table statistics and test performance computed in Spark before it is stored
    (so a hit skips that Spark work too); a completion that failed is not stored."""
    from importlib import import_module

    started = time.perf_counter()
    cache = ResultCache() if config.cache else None
    key = None
    if cache is not None:
        try:
            key = result_key(inputs, config, full_tables)
        except Exception as error:  # noqa: BLE001 - the cache must never cost the evaluation
            logger.warning("deepfix cache: could not compute the key (%s): not cached", error)
        if key is not None:
            found = cache.get(key)
            if found is not None:
                seconds = time.perf_counter() - started
                artifact = found.artifact.model_copy(update={"checks_seconds": round(seconds, 3)})
                when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(found.created))
                detail = f"computed {when} in {found.compute_seconds:.1f} s, key {key[:12]}"
                logger.info("deepfix cache: hit (%s), %.2fs", detail, seconds)
                return artifact, CacheOutcome("hit", seconds, detail)
    import_module("mlflow_deepfix.checks")
    if before_testing is not None:
        before_testing()
    from mlflow_deepfix.testing import run_testing

    artifact, _ = run_testing(inputs, config)
    if full_tables is not None:
        from mlflow_deepfix.testing.spark_stats import complete_with_full_tables

        artifact = complete_with_full_tables(artifact, inputs, full_tables)
    if cache is None:
        return artifact, CacheOutcome("disabled", detail="cache: false")
    if key is None:
        return artifact, CacheOutcome("uncacheable", detail="the model could not be fingerprinted")
    if full_tables is not None and full_tables.errors:
        return artifact, CacheOutcome(
            "uncacheable", detail="a full-table computation in Spark failed"
        )
    cache.put(key, artifact)
    return artifact, CacheOutcome("miss", detail=f"stored as {key[:12]}")


def _touch(path: Path) -> None:
    """Stamp ``path`` with the current time at full clock resolution. The kernel stamps
    writes with a coarse clock (a few ms), so two entries written or read in quick
    succession would tie and the least-recently-used order would be arbitrary."""
    now = time.time_ns()
    os.utime(path, ns=(now, now))
