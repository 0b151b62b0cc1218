"""Access to the Qdrant store: an embedded local folder or a Qdrant server.

Embedded (local) mode keeps everything in a folder (``meta.json`` plus one SQLite file
per collection) and takes an exclusive file lock for as long as a client is open:
a second client on the same folder, in this or another process, is refused. Every
client opened here is therefore short-lived (build: while reading ids and while
writing; retrieval: while copying the points into memory), and opening retries for
a few seconds when another process holds the lock. For many concurrent writers, use a
Qdrant server (``url=``).

The cheap checks (folder exists, ``meta.json`` readable, collection listed, vector
size) read ``meta.json`` directly, without importing qdrant-client or torch.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kb_builder.errors import BUILD_HINT, INSTALL_HINT, KnowledgeBaseUnavailable

logger = logging.getLogger(__name__)

#: how long opening a local store waits for another process's lock (seconds)
LOCK_TIMEOUT = 10.0
_METADATA_VERSION = 1


def _build_cmd(path: str | None, url: str | None, collection: str) -> str:
    cmd = BUILD_HINT
    if url:
        cmd += f" --url {url}"
    elif path:
        cmd += f" --path {path}"
    if collection != "deepfix_kb":
        cmd += f" --collection {collection}"
    return cmd


def read_local_meta(path: str, collection: str) -> dict:
    """The collection's config from ``<path>/meta.json``; raises
    :class:`KnowledgeBaseUnavailable` when missing, corrupt or without the collection."""
    folder = Path(path).expanduser()
    hint = _build_cmd(str(folder), None, collection)
    if not folder.exists():
        raise KnowledgeBaseUnavailable(
            f"No knowledge base at {folder}: the folder does not exist. Build it with "
            f"`{hint}`, or set kb=False to evaluate without references."
        )
    meta_file = folder / "meta.json"
    if not folder.is_dir() or not meta_file.is_file():
        raise KnowledgeBaseUnavailable(
            f"{folder} is not a knowledge base (no Qdrant meta.json in it). Build one "
            f"with `{hint}`."
        )
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
        collections = meta["collections"]
        if not isinstance(collections, dict):
            raise TypeError("'collections' is not a mapping")
    except (ValueError, KeyError, TypeError, OSError, UnicodeDecodeError) as error:
        raise KnowledgeBaseUnavailable(
            f"The knowledge base at {folder} is corrupt ({meta_file.name}: {error}). "
            f"Delete the folder and rebuild it with `{hint}`."
        ) from None
    if collection not in collections:
        found = ", ".join(sorted(collections)) or "none"
        raise KnowledgeBaseUnavailable(
            f"The knowledge base at {folder} has no collection {collection!r} "
            f"(collections found: {found}). Build it with `{hint}`."
        )
    storage = folder / "collection" / collection / "storage.sqlite"
    if not storage.is_file():
        raise KnowledgeBaseUnavailable(
            f"The knowledge base at {folder} is corrupt: collection {collection!r} has "
            f"no storage file. Delete the folder and rebuild it with `{hint}`."
        )
    return collections[collection] or {}


def import_qdrant():
    try:
        import qdrant_client
        from qdrant_client import models
    except ImportError:
        raise KnowledgeBaseUnavailable(
            f"The knowledge base needs qdrant-client, which is not installed: {INSTALL_HINT}"
        ) from None
    return qdrant_client, models


@contextlib.contextmanager
def open_client(
    path: str | None = None, url: str | None = None, *, create: bool = False,
    lock_timeout: float = LOCK_TIMEOUT,
) -> Iterator[Any]:
    """A Qdrant client, closed on exit. Local folders are created only when
    ``create``; a lock held by another process is waited for up to ``lock_timeout``."""
    if path and url:
        raise ValueError(f"Give either path or url, not both; got path={path!r}, url={url!r}.")
    qdrant_client, _ = import_qdrant()
    if url:
        try:
            client = qdrant_client.QdrantClient(url=url, timeout=10)
        except Exception as error:
            raise KnowledgeBaseUnavailable(f"Cannot connect to Qdrant at {url}: {error}") from error
    else:
        folder = Path(path).expanduser()
        if create:
            folder.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + lock_timeout
        delay = 0.05
        while True:
            try:
                client = qdrant_client.QdrantClient(path=str(folder))
                break
            except RuntimeError as error:
                if "already accessed" not in str(error):
                    raise KnowledgeBaseUnavailable(
                        f"Cannot open the knowledge base at {folder}: {error}"
                    ) from error
                if time.monotonic() >= deadline:
                    raise KnowledgeBaseUnavailable(
                        f"The knowledge base at {folder} is locked by another process "
                        f"(waited {lock_timeout:.0f} s). Embedded Qdrant allows one open "
                        "client at a time; retry, or serve it with a Qdrant server (url=)."
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.5)
            except Exception as error:
                raise KnowledgeBaseUnavailable(
                    f"The knowledge base at {folder} is corrupt ({type(error).__name__}: "
                    f"{error}). Delete the folder and rebuild it with "
                    f"`{_build_cmd(str(folder), None, 'deepfix_kb')}`."
                ) from error
    try:
        yield client
    finally:
        client.close()


def collection_metadata(model: str, dim: int) -> dict:
    return {"model": model, "dim": dim, "kb_builder_metadata": _METADATA_VERSION}


def get_metadata(client: Any, collection: str) -> dict:
    """Collection metadata written by the builder ({} for foreign or old collections)."""
    info = client.get_collection(collection)
    return dict(getattr(info.config, "metadata", None) or {})


def vector_size(client: Any, collection: str) -> int | None:
    params = client.get_collection(collection).config.params.vectors
    return getattr(params, "size", None)


def scroll_all(client: Any, collection: str, *, with_vectors: bool, with_payload=True,
               batch: int = 256) -> list[Any]:
    """Every point of the collection (the corpus is small: hundreds of chunks)."""
    points, offset = [], None
    while True:
        page, offset = client.scroll(
            collection, limit=batch, offset=offset, with_payload=with_payload,
            with_vectors=with_vectors,
        )
        points.extend(page)
        if offset is None:
            return points
