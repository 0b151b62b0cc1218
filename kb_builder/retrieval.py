"""Retrieval API used by the reasoner to ground findings in best-practice text.

::

    from kb_builder import KnowledgeBase, KnowledgeBaseUnavailable

    try:
        kb = KnowledgeBase.open()                      # default embedded store
    except KnowledgeBaseUnavailable as error:
        ...                                            # evaluate without references
    hits = kb.search("most test rows also occur in training", category="train_test_overlap")
    kb.close()

Opening fails fast and cheaply: the store location and collection are checked (from
Qdrant's ``meta.json``, for an embedded store) before qdrant-client, torch or
sentence-transformers are imported. A missing, corrupt or empty store, or a missing
``[kb]`` extra, raises :class:`KnowledgeBaseUnavailable` with the command that fixes it.

Concurrency: an embedded Qdrant folder admits one open client at a time (a file
lock). :meth:`KnowledgeBase.open` holds it only while copying the points (a few
hundred) into an in-memory Qdrant collection, then releases it; searches run on that
copy. Several processes can therefore evaluate at once; one that opens while another
holds the lock (a build writing, or another open) waits up to ``lock_timeout`` seconds.
A rebuild is seen by knowledge bases opened after it, not by ones already open.
With a Qdrant server (``url=``) the server is queried directly.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kb_builder.embedding import DEFAULT_MODEL, embedding_dimension, encode, missing_extras
from kb_builder.errors import INSTALL_HINT, KnowledgeBaseUnavailable
from kb_builder.lexical import BM25, LEXICAL_WEIGHT
from kb_builder.paths import DEFAULT_COLLECTION, default_kb_path
from kb_builder.store import (
    LOCK_TIMEOUT,
    _build_cmd,
    get_metadata,
    import_qdrant,
    open_client,
    read_local_meta,
    scroll_all,
)

logger = logging.getLogger(__name__)

#: chunks fetched per requested document, so that the best chunk of each of
#: ``top_k`` distinct documents is found even when one document has many good chunks
_OVERFETCH = 8
#: dense candidates re-ranked with the lexical score, at least
_MIN_CANDIDATES = 64
#: above this many chunks a server collection is searched by dense similarity only
_MAX_LEXICAL_POINTS = 50_000


def _passage(payload: dict) -> str:
    """The text a chunk was embedded from (see ``Chunk.embed_text``)."""
    return f"{payload.get('title', '')}: {payload.get('section', '')}.\n{payload.get('text', '')}"


@dataclass(frozen=True)
class Hit:
    """One retrieved passage: the best-matching section of one document.

    ``score`` is the cosine similarity of the query and the passage plus
    ``lexical_weight`` (0.2) times its max-normalised BM25 score: higher is better;
    compare scores within one query only.
    """

    doc_id: str
    title: str
    section: str
    text: str
    score: float
    categories: tuple[str, ...] = ()
    sources: tuple[str, ...] = field(default=(), compare=False)

    def as_reference(self) -> dict:
        """The shape of ``findings.json`` references (``Reference`` in the schemas)."""
        return {"title": self.title, "source": self.doc_id, "section": self.section}


def _check_top_k(top_k: Any) -> int:
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise ValueError(f"top_k must be a positive integer, got {top_k!r}.")
    return top_k


def _check_category(category: Any) -> str | None:
    if category is None:
        return None
    from kb_builder.documents import known_categories

    accepted = known_categories()
    if category not in accepted:
        raise ValueError(
            f"category must be None or one of {', '.join(accepted)}; got {category!r}."
        )
    return category


class KnowledgeBase:
    """A read-only handle on a built knowledge base. Use :meth:`open` to create one."""

    def __init__(self, client: Any, collection: str, model: str, location: str,
                 *, local: bool, points: Sequence[Any] = ()):
        self._client = client
        self._collection = collection
        self._model = model
        self._local = local
        self._lock = threading.Lock()
        self.location = location
        self.n_chunks = len(points)
        #: weight of the lexical (BM25) score added to the cosine similarity; 0 = dense only
        self.lexical_weight = LEXICAL_WEIGHT if points else 0.0
        self._lexical = BM25([_passage(p.payload or {}) for p in points]) if points else None
        self._row = {str(p.id): i for i, p in enumerate(points)}

    # ----------------------------------------------------------------- opening
    @classmethod
    def open(
        cls, path: str | None = None, url: str | None = None,
        collection: str = DEFAULT_COLLECTION, *, lock_timeout: float = LOCK_TIMEOUT,
    ) -> KnowledgeBase:
        """Open the knowledge base at ``path`` (embedded; default
        :func:`default_kb_path`) or ``url`` (Qdrant server).

        Raises :class:`KnowledgeBaseUnavailable` when it is missing, corrupt, empty,
        locked for longer than ``lock_timeout`` seconds, or when the ``[kb]`` extra is
        not installed.
        """
        if path and url:
            raise ValueError(f"Give either path or url, not both; got path={path!r}, url={url!r}.")
        if not isinstance(collection, str) or not collection:
            raise ValueError(f"collection must be a non-empty string, got {collection!r}.")
        hint = _build_cmd(path, url, collection)
        model = DEFAULT_MODEL
        if not url:
            path = str(Path(path or default_kb_path()).expanduser())
            meta = read_local_meta(path, collection)  # no heavy import before this
            model = (meta.get("metadata") or {}).get("model") or DEFAULT_MODEL
        missing = missing_extras()
        if missing:
            raise KnowledgeBaseUnavailable(
                f"The knowledge base needs {', '.join(missing)}, which "
                f"{'is' if len(missing) == 1 else 'are'} not installed: {INSTALL_HINT}"
            )
        if url:
            kb = cls._open_server(url, collection, hint)
        else:
            kb = cls._open_local(path, collection, model, hint, lock_timeout)
        try:
            kb._check_model()
        except BaseException:
            kb.close()
            raise
        return kb

    @classmethod
    def _open_local(cls, path: str, collection: str, model: str, hint: str,
                    lock_timeout: float) -> KnowledgeBase:
        _, models = import_qdrant()
        from qdrant_client import QdrantClient

        try:
            with open_client(path, lock_timeout=lock_timeout) as client:
                if not client.collection_exists(collection):
                    raise KnowledgeBaseUnavailable(
                        f"The knowledge base at {path} has no collection {collection!r}. "
                        f"Build it with `{hint}`."
                    )
                params = client.get_collection(collection).config.params.vectors
                meta = get_metadata(client, collection)
                points = scroll_all(client, collection, with_vectors=True)
        except KnowledgeBaseUnavailable:
            raise
        except Exception as error:
            raise KnowledgeBaseUnavailable(
                f"The knowledge base at {path} is corrupt ({type(error).__name__}: {error}). "
                f"Delete the folder and rebuild it with `{hint}`."
            ) from error
        if not points:
            raise KnowledgeBaseUnavailable(
                f"The knowledge base at {path} (collection {collection!r}) is empty. "
                f"Build it with `{hint}`."
            )
        memory = QdrantClient(location=":memory:")
        memory.create_collection(
            collection,
            vectors_config=models.VectorParams(size=params.size, distance=params.distance),
            metadata=meta or None,
        )
        memory.upsert(collection, points=[
            models.PointStruct(id=p.id, vector=p.vector, payload=p.payload) for p in points
        ])
        logger.debug("knowledge base %s: %d chunks copied into memory", path, len(points))
        return cls(memory, collection, meta.get("model") or model, path, local=True,
                   points=points)

    @classmethod
    def _open_server(cls, url: str, collection: str, hint: str) -> KnowledgeBase:
        import_qdrant()
        from qdrant_client import QdrantClient

        client = QdrantClient(url=url, timeout=10)
        try:
            if not client.collection_exists(collection):
                raise KnowledgeBaseUnavailable(
                    f"The Qdrant server at {url} has no collection {collection!r}. "
                    f"Build it with `{hint}`."
                )
            count = client.count(collection, exact=True).count
            if count == 0:
                raise KnowledgeBaseUnavailable(
                    f"The collection {collection!r} at {url} is empty. Build it with `{hint}`."
                )
            model = get_metadata(client, collection).get("model") or DEFAULT_MODEL
            points = (scroll_all(client, collection, with_vectors=False)
                      if count <= _MAX_LEXICAL_POINTS else [])
        except KnowledgeBaseUnavailable:
            client.close()
            raise
        except Exception as error:
            client.close()
            raise KnowledgeBaseUnavailable(
                f"Cannot reach the knowledge base at {url}: {type(error).__name__}: {error}. "
                "Start the Qdrant server and check the URL and port, or use the embedded "
                "store (--path / kb={'path': ...})."
            ) from error
        return cls(client, collection, model, url, local=False, points=points)

    def _check_model(self) -> None:
        dim = embedding_dimension(self._model)  # loads the model (cached per process)
        size = self._client.get_collection(self._collection).config.params.vectors.size
        if size != dim:
            raise KnowledgeBaseUnavailable(
                f"The knowledge base at {self.location} holds vectors of size {size}, but "
                f"its model {self._model!r} makes {dim}; rebuild it with "
                f"`{_build_cmd(*self._where(), self._collection)}`."
            )

    def _where(self) -> tuple[str | None, str | None]:
        return (self.location, None) if self._local else (None, self.location)

    # ------------------------------------------------------------------ search
    @property
    def model(self) -> str:
        return self._model

    def _filter(self, category: str | None):
        if category is None:
            return None
        _, models = import_qdrant()
        return models.Filter(must=[
            models.FieldCondition(key="categories", match=models.MatchValue(value=category))
        ])

    def _rerank(self, query: str, points: Sequence[Any]) -> list[tuple[float, Any]]:
        """(score, point) best first: cosine plus the weighted lexical score."""
        if not self._lexical or not self.lexical_weight:
            return [(float(p.score), p) for p in points]
        lex = self._lexical.scores(query)
        scored = []
        for p in points:
            row = self._row.get(str(p.id))
            bonus = lex[row] if row is not None else 0.0
            scored.append((float(p.score) + self.lexical_weight * float(bonus), p))
        scored.sort(key=lambda item: item[0], reverse=True)
        return scored

    @staticmethod
    def _to_hits(scored: Sequence[tuple[float, Any]], top_k: int, distinct: bool) -> list[Hit]:
        hits: list[Hit] = []
        seen: set[str] = set()
        for score, point in scored:
            payload = point.payload or {}
            doc_id = payload.get("doc_id", "")
            if distinct and doc_id in seen:
                continue
            seen.add(doc_id)
            hits.append(Hit(
                doc_id=doc_id, title=payload.get("title", doc_id),
                section=payload.get("section", ""), text=payload.get("text", ""),
                score=score, categories=tuple(payload.get("categories") or ()),
                sources=tuple(payload.get("sources") or ()),
            ))
            if len(hits) == top_k:
                break
        return hits

    def _require_open(self) -> Any:
        if self._client is None:
            raise RuntimeError("This KnowledgeBase is closed; open a new one with KnowledgeBase.open().")
        return self._client

    def search(self, query: str, *, category: str | None = None, top_k: int = 3,
               distinct_docs: bool = True) -> list[Hit]:
        """The ``top_k`` passages most similar to ``query``, best first.

        ``category`` restricts the search to documents tagged with that contract
        category id. With ``distinct_docs`` (default) each document appears once, by its
        best-matching section, so that references cite ``top_k`` different documents.
        """
        return self.search_many([(query, category)], top_k=top_k, distinct_docs=distinct_docs)[0]

    def search_many(self, queries: Sequence[tuple[str, str | None]], top_k: int = 3,
                    *, distinct_docs: bool = True) -> list[list[Hit]]:
        """:meth:`search` for many ``(query, category)`` pairs, embedding all queries in
        one batch (the fast path for a diagnosis with many findings)."""
        top_k = _check_top_k(top_k)
        pairs = []
        for item in queries:
            if not (isinstance(item, (tuple, list)) and len(item) == 2):
                raise ValueError(
                    f"queries must be a list of (query, category) pairs, got item {item!r}."
                )
            text, category = item
            if not isinstance(text, str) or not text.strip():
                raise ValueError(f"each query must be a non-empty string, got {text!r}.")
            pairs.append((text, _check_category(category)))
        if not pairs:
            return []
        client = self._require_open()
        vectors = encode([text for text, _ in pairs], model=self._model, single_thread=True)
        limit = max(top_k * _OVERFETCH, _MIN_CANDIDATES) if self._lexical else (
            top_k * _OVERFETCH if distinct_docs else top_k)
        _, models = import_qdrant()
        requests = [
            models.QueryRequest(query=vector.tolist(), filter=self._filter(category),
                                limit=limit, with_payload=True)
            for vector, (_, category) in zip(vectors, pairs)
        ]
        with self._lock:
            responses = client.query_batch_points(self._collection, requests=requests)
        return [self._to_hits(self._rerank(text, r.points), top_k, distinct_docs)
                for (text, _), r in zip(pairs, responses)]

    def info(self) -> dict:
        """Location, model, and per-document chunk counts and categories."""
        client = self._require_open()
        with self._lock:
            points = scroll_all(client, self._collection, with_vectors=False)
        docs: dict[str, dict] = {}
        for point in points:
            p = point.payload or {}
            entry = docs.setdefault(p.get("doc_id", ""), {
                "title": p.get("title", ""), "categories": list(p.get("categories") or []),
                "origin": p.get("origin", ""), "chunks": 0,
            })
            entry["chunks"] += 1
        return {
            "location": self.location, "collection": self._collection, "model": self._model,
            "chunks": len(points), "documents": dict(sorted(docs.items())),
        }

    # ----------------------------------------------------------------- closing
    def close(self) -> None:
        """Release the client (idempotent)."""
        client, self._client = self._client, None
        if client is not None:
            client.close()

    def __enter__(self) -> KnowledgeBase:  # noqa: PYI034
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):  # pragma: no cover - best effort at interpreter shutdown
        try:
            self.close()
        except Exception:  # noqa: BLE001, S110 - nothing useful to do while collecting
            pass
