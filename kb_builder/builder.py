"""Build (or refresh) the knowledge base: parse -> chunk -> embed -> upsert.

Rebuilds are idempotent and incremental. Every chunk's point id is derived from a hash
of its content and the model name, so the builder only embeds chunks whose id the
collection does not hold yet, and deletes points whose chunk no longer exists (edited
or removed documents). Rebuilding an unchanged corpus embeds nothing and does not even
load the model.

The embedded store's file lock is held only while reading the existing ids and while
writing, not during the (slow) embedding, so that evaluations running meanwhile can
still open the knowledge base.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from kb_builder.chunking import MAX_WORDS, Chunk, chunk_document
from kb_builder.documents import load_documents
from kb_builder.embedding import DEFAULT_MODEL, embedding_dimension, encode
from kb_builder.errors import CorpusError
from kb_builder.paths import DEFAULT_COLLECTION, default_kb_path
from kb_builder.store import (
    collection_metadata,
    get_metadata,
    import_qdrant,
    open_client,
    scroll_all,
    vector_size,
)

logger = logging.getLogger(__name__)

_UPSERT_BATCH = 128


@dataclass(frozen=True)
class BuildReport:
    """What a build did, for the CLI and the benchmark."""

    location: str
    collection: str
    model: str
    documents: int
    chunks: int
    embedded: int
    unchanged: int
    deleted: int
    recreated: bool
    seconds: float

    def as_dict(self) -> dict:
        return asdict(self)


def collect_chunks(
    sources: Iterable[str | Path] = (), *, include_builtin: bool = True,
    max_words: int = MAX_WORDS,
) -> tuple[int, list[Chunk]]:
    """(number of documents, chunks) of the built-in corpus plus ``sources``."""
    docs = load_documents(sources, include_builtin=include_builtin)
    if not docs:
        raise CorpusError(
            "No document to index: include the built-in corpus or pass --source folders "
            "holding *.md files."
        )
    chunks = [chunk for doc in docs for chunk in chunk_document(doc, max_words=max_words)]
    return len(docs), chunks


def build_kb(
    sources: Iterable[str | Path] = (), *, path: str | None = None, url: str | None = None,
    collection: str = DEFAULT_COLLECTION, include_builtin: bool = True,
    model: str = DEFAULT_MODEL, batch_size: int = 32, progress: bool = True,
    max_words: int = MAX_WORDS,
) -> BuildReport:
    """Index the built-in corpus and every ``*.md`` file under ``sources``.

    Parameters
    ----------
    sources : folders of the user's own Markdown documents (searched recursively).
    path, url : an embedded Qdrant folder (default :func:`default_kb_path`) or a Qdrant
        server; not both.
    collection : the Qdrant collection name.
    include_builtin : index the shipped curated corpus too (default True).
    model : ``sentence-transformers/all-MiniLM-L6-v2`` (bundled) or a local model folder.
    progress : show a tqdm bar while embedding.
    """
    if path and url:
        raise ValueError(f"Give either path or url, not both; got path={path!r}, url={url!r}.")
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}.")
    if not collection or not isinstance(collection, str):
        raise ValueError(f"collection must be a non-empty string, got {collection!r}.")
    start = time.perf_counter()
    if not url:
        path = str(Path(path or default_kb_path()).expanduser())
    location = url or path
    n_docs, chunks = collect_chunks(sources, include_builtin=include_builtin,
                                    max_words=max_words)
    wanted: dict[str, Chunk] = {}
    for chunk in chunks:
        wanted.setdefault(chunk.point_id(model), chunk)

    # 1. what the collection already holds (lock held briefly)
    recreated = False
    existing: set[str] = set()
    with open_client(path, url, create=True) as client:
        if client.collection_exists(collection):
            meta = get_metadata(client, collection)
            if meta.get("model") != model:
                logger.warning(
                    "collection %r was built with model %r; rebuilding it with %r",
                    collection, meta.get("model"), model,
                )
                client.delete_collection(collection)
                recreated = True
            else:
                existing = {str(p.id) for p in scroll_all(
                    client, collection, with_vectors=False, with_payload=False)}
        exists = client.collection_exists(collection)

    # 2. embed only what is new (no lock held)
    todo = [pid for pid in wanted if pid not in existing]
    stale = sorted(existing - set(wanted))
    vectors = None
    if todo:
        logger.info("embedding %d new chunk(s) of %d", len(todo), len(wanted))
        vectors = encode([wanted[pid].embed_text for pid in todo], model=model,
                         batch_size=batch_size, progress=progress)

    # 3. write (lock held briefly)
    if todo or stale or not exists:
        _, models = import_qdrant()
        with open_client(path, url, create=True) as client:
            if not client.collection_exists(collection):
                dim = embedding_dimension(model)
                client.create_collection(
                    collection,
                    vectors_config=models.VectorParams(size=dim, distance=models.Distance.COSINE),
                    metadata=collection_metadata(model, dim),
                )
                if url:  # payload indexes only matter (and only exist) on a server
                    for key in ("categories", "doc_id"):
                        client.create_payload_index(collection, key, models.PayloadSchemaType.KEYWORD)
            elif vectors is not None and vector_size(client, collection) != vectors.shape[1]:
                raise RuntimeError(
                    f"collection {collection!r} holds vectors of size "
                    f"{vector_size(client, collection)} but model {model!r} makes "
                    f"{vectors.shape[1]}; delete the collection or pass another --collection."
                )
            for begin in range(0, len(todo), _UPSERT_BATCH):
                ids = todo[begin:begin + _UPSERT_BATCH]
                client.upsert(collection, points=[
                    models.PointStruct(id=pid, vector=vectors[begin + i].tolist(),
                                       payload=wanted[pid].payload())
                    for i, pid in enumerate(ids)
                ])
            if stale:
                client.delete(collection, points_selector=models.PointIdsList(points=stale))
    report = BuildReport(
        location=str(location), collection=collection, model=model, documents=n_docs,
        chunks=len(wanted), embedded=len(todo), unchanged=len(wanted) - len(todo),
        deleted=len(stale), recreated=recreated, seconds=time.perf_counter() - start,
    )
    logger.info("knowledge base built: %s", report)
    return report
