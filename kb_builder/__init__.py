"""deepfix knowledge base: curated best-practice documents, embedded and searchable
offline, so that every finding can cite the text it rests on.

``kb_builder`` imports nothing heavy: qdrant-client, torch and sentence-transformers
are imported only when a knowledge base is built or opened (the ``[kb]`` extra).
"""

from __future__ import annotations

from kb_builder.builder import BuildReport, build_kb
from kb_builder.errors import CorpusError, KnowledgeBaseUnavailable
from kb_builder.paths import DEFAULT_COLLECTION, builtin_corpus_dir, default_kb_path
from kb_builder.retrieval import Hit, KnowledgeBase

__all__ = [
    "DEFAULT_COLLECTION",
    "BuildReport",
    "CorpusError",
    "Hit",
    "KnowledgeBase",
    "KnowledgeBaseUnavailable",
    "build_kb",
    "builtin_corpus_dir",
    "default_kb_path",
]
