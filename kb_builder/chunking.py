"""Heading-aware chunking and the deterministic identity of each chunk.

A chunk is one section of a document (the text under a ``##`` heading, with its
``###`` subsections), split further at paragraph boundaries when it would exceed what
the embedding model reads (MiniLM truncates at 256 word pieces, about 180 words).
Keeping sections whole keeps each retrieved passage self-contained: a "Fixes" chunk
holds the fixes, not half of them and the start of "Pitfalls".

Each chunk's point id is a UUID5 of a hash over everything that is stored or
embedded (model, document id, title, categories, section, text...): a rebuild
recomputes the ids and only embeds those the collection does not hold yet.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from dataclasses import dataclass

from kb_builder.documents import Document

#: namespace of the point ids; changing it re-embeds every existing knowledge base
NAMESPACE = uuid.UUID("2b0c6f49-6a1e-5d7e-9a57-1f0e3f9d6b11")
MAX_WORDS = 170
OVERVIEW = "Overview"

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


@dataclass(frozen=True)
class Chunk:
    doc_id: str
    title: str
    categories: tuple[str, ...]
    sources: tuple[str, ...]
    section: str
    text: str
    index: int
    origin: str = "builtin"

    @property
    def embed_text(self) -> str:
        """What the model embeds: the title and section give the passage its topic."""
        return f"{self.title}: {self.section}.\n{self.text}"

    def payload(self) -> dict:
        return {
            "doc_id": self.doc_id,
            "title": self.title,
            "categories": list(self.categories),
            "sources": list(self.sources),
            "section": self.section,
            "text": self.text,
            "chunk_index": self.index,
            "origin": self.origin,
        }

    def content_hash(self, model: str) -> str:
        blob = json.dumps({"model": model, **self.payload()}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def point_id(self, model: str) -> str:
        return str(uuid.uuid5(NAMESPACE, self.content_hash(model)))


def _split_sections(body: str) -> list[tuple[str, str]]:
    """(section heading, text) pairs; ``#`` titles are dropped, ``###`` stay inline."""
    sections: list[tuple[str, list[str]]] = [(OVERVIEW, [])]
    in_fence = False
    for line in body.splitlines():
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        match = None if in_fence else _HEADING.match(line)
        if match and len(match.group(1)) == 1:
            continue  # the document title; the front matter title is used instead
        if match and len(match.group(1)) == 2:
            sections.append((match.group(2).strip(), []))
            continue
        if match:  # ### and deeper: keep as a bold lead-in inside the section
            sections[-1][1].append(f"{match.group(2).strip()}:")
            continue
        sections[-1][1].append(line)
    out = []
    for heading, lines in sections:
        text = "\n".join(lines).strip()
        if text:
            out.append((heading, text))
    return out


def _paragraphs(text: str) -> list[str]:
    """Paragraphs, with fenced code blocks kept in one piece."""
    paras, current, in_fence = [], [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        if not line.strip() and not in_fence:
            if current:
                paras.append("\n".join(current))
                current = []
            continue
        current.append(line)
    if current:
        paras.append("\n".join(current))
    return paras


def _pack(paragraphs: list[str], max_words: int) -> list[str]:
    pieces, current, words = [], [], 0
    for para in paragraphs:
        n = len(para.split())
        if current and words + n > max_words:
            pieces.append("\n\n".join(current))
            current, words = [], 0
        current.append(para)
        words += n
    if current:
        pieces.append("\n\n".join(current))
    return pieces


def chunk_document(doc: Document, *, max_words: int = MAX_WORDS) -> list[Chunk]:
    """Split ``doc`` into section chunks of at most about ``max_words`` words
    (a single paragraph longer than that stays whole: the model truncates it)."""
    if max_words < 20:
        raise ValueError(f"max_words must be an integer >= 20, got {max_words!r}.")
    chunks: list[Chunk] = []
    for section, text in _split_sections(doc.body):
        pieces = _pack(_paragraphs(text), max_words)
        for part, piece in enumerate(pieces):
            name = section if len(pieces) == 1 else f"{section} ({part + 1}/{len(pieces)})"
            chunks.append(Chunk(
                doc_id=doc.id, title=doc.title, categories=doc.categories,
                sources=doc.sources, section=name, text=piece, index=len(chunks),
                origin=doc.origin,
            ))
    return chunks
