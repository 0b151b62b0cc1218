"""Markdown documents of the knowledge base and their front matter.

A document is a Markdown file that may start with a front matter block::

    ---
    id: class_imbalance
    title: Class imbalance
    categories: [class_imbalance, decision_threshold]
    sources:
      - "scikit-learn User Guide: class_weight"
    ---

``categories`` must be ids of the contract's category table (CONTRACT.md section 5),
so that a finding of that category can filter on them. Files without front matter are
accepted (users' own notes): their id comes from the file path, their title from the
first ``#`` heading, and they carry no category, so they are found by meaning only.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from kb_builder.errors import CorpusError
from kb_builder.paths import builtin_corpus_dir

logger = logging.getLogger(__name__)

_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_ID = re.compile(r"^[a-z0-9][a-z0-9_.\-/]*$")
_KNOWN_KEYS = {"id", "title", "categories", "sources"}


@dataclass(frozen=True)
class Document:
    """One parsed Markdown file."""

    id: str
    title: str
    categories: tuple[str, ...]
    sources: tuple[str, ...]
    body: str
    #: ``builtin`` for the shipped corpus, ``user`` for ``--source`` folders
    origin: str = "builtin"
    path: str = field(default="", compare=False)


def known_categories() -> tuple[str, ...]:
    """The contract's category ids (imported lazily: only validation needs them)."""
    from mlflow_deepfix.schemas import CATEGORIES

    return tuple(CATEGORIES)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9_.\-/]+", "_", text.lower()).strip("_") or "doc"


def _first_heading(body: str) -> str | None:
    for line in body.splitlines():
        match = re.match(r"^#\s+(.+?)\s*#*\s*$", line)
        if match:
            return match.group(1)
    return None


def _as_str_list(value, key: str, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, (str, int, float)) for v in value):
        raise CorpusError(
            f"{where}: front matter key {key!r} must be a list of strings, got {value!r}."
        )
    return tuple(str(v).strip() for v in value if str(v).strip())


def parse_document(
    text: str, *, path: str | Path = "<string>", default_id: str | None = None,
    origin: str = "builtin", categories: Iterable[str] | None = None,
) -> Document:
    """Parse one Markdown text into a :class:`Document`, validating its front matter.

    ``categories`` are the accepted category ids (default: the contract's); a value
    outside them is refused, because a misspelt category would make the document
    silently unreachable by the category filter.
    """
    import yaml  # PyYAML ships with MLflow

    where = str(path)
    meta: dict = {}
    body = text
    match = _FRONT_MATTER.match(text)
    if match:
        try:
            loaded = yaml.safe_load(match.group(1))
        except yaml.YAMLError as error:
            raise CorpusError(f"{where}: front matter is not valid YAML ({error}).") from None
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, dict):
            raise CorpusError(
                f"{where}: front matter must be a mapping of keys {sorted(_KNOWN_KEYS)}, "
                f"got {type(loaded).__name__}."
            )
        meta = loaded
        body = text[match.end():]
    unknown = set(meta) - _KNOWN_KEYS
    if unknown:
        raise CorpusError(
            f"{where}: unknown front matter key(s) {sorted(unknown)}; "
            f"accepted: {sorted(_KNOWN_KEYS)}."
        )
    doc_id = str(meta.get("id") or default_id or _slug(Path(where).stem)).strip()
    if not _ID.match(doc_id):
        raise CorpusError(
            f"{where}: front matter 'id' must be lower-case letters, digits, '_', '-', "
            f"'.' or '/', starting with a letter or digit; got {doc_id!r}."
        )
    title = str(meta.get("title") or _first_heading(body) or Path(where).stem).strip()
    cats = _as_str_list(meta.get("categories"), "categories", where)
    accepted = tuple(categories) if categories is not None else known_categories()
    bad = [c for c in cats if c not in accepted]
    if bad:
        raise CorpusError(
            f"{where}: unknown categor{'y' if len(bad) == 1 else 'ies'} {bad} in front "
            f"matter 'categories'; accepted: {', '.join(accepted)}."
        )
    sources = _as_str_list(meta.get("sources"), "sources", where)
    if not body.strip():
        raise CorpusError(f"{where}: the document has no text after its front matter.")
    return Document(
        id=doc_id, title=title, categories=tuple(dict.fromkeys(cats)), sources=sources,
        body=body.strip() + "\n", origin=origin, path=where,
    )


def _read_folder(folder: Path, origin: str, prefix: str) -> list[Document]:
    if not folder.is_dir():
        raise CorpusError(
            f"source folder {str(folder)!r} does not exist or is not a directory; "
            "pass a folder of Markdown (*.md) files."
        )
    docs = []
    for file in sorted(folder.rglob("*.md")):
        rel = file.relative_to(folder).with_suffix("").as_posix()
        docs.append(parse_document(
            file.read_text(encoding="utf-8"), path=file,
            default_id=_slug(prefix + rel), origin=origin,
        ))
    if not docs:
        logger.warning("source folder %s holds no *.md file", folder)
    return docs


def load_documents(
    sources: Iterable[str | Path] = (), *, include_builtin: bool = True
) -> list[Document]:
    """The built-in corpus plus every ``*.md`` under each user folder (recursively).

    Raises :class:`CorpusError` when a file is malformed or two files share an id: a
    silent override would make rebuilds depend on folder order.
    """
    docs: list[Document] = []
    if include_builtin:
        docs += _read_folder(builtin_corpus_dir(), "builtin", "")
    for source in sources:
        folder = Path(source).expanduser().resolve()
        docs += _read_folder(folder, "user", f"user/{_slug(folder.name)}/")
    seen: dict[str, str] = {}
    for doc in docs:
        if doc.id in seen:
            raise CorpusError(
                f"document id {doc.id!r} is used by both {seen[doc.id]} and {doc.path}; "
                "ids must be unique across the built-in corpus and every --source folder."
            )
        seen[doc.id] = doc.path
    return docs
