"""Command line: ``deepfix kb build|query|info`` (or ``python -m kb_builder ...``).

``mlflow_deepfix.cli`` calls :func:`register` to add the ``kb`` command to its own
parser; the chosen subcommand is run by :func:`run` (also set as ``args.func``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from kb_builder.errors import CorpusError, KnowledgeBaseUnavailable
from kb_builder.paths import DEFAULT_COLLECTION


def _add_location(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--path", help="embedded Qdrant folder (default: the user data "
                       "directory, or $DEEPFIX_KB_PATH)")
    where.add_argument("--url", help="Qdrant server URL, e.g. http://localhost:6333")
    parser.add_argument("--collection", default=DEFAULT_COLLECTION,
                        help=f"collection name (default: {DEFAULT_COLLECTION})")


def add_subcommands(parser: argparse.ArgumentParser) -> None:
    """Add ``build``, ``query`` and ``info`` below ``parser``."""
    sub = parser.add_subparsers(dest="kb_command", metavar="{build,query,info}")
    sub.required = True

    build = sub.add_parser("build", help="index the curated corpus and your own Markdown "
                           "folders (incremental: unchanged chunks are not re-embedded)")
    build.add_argument("--source", action="append", default=[], metavar="DIR",
                       help="folder of your own *.md documents (repeatable)")
    build.add_argument("--no-builtin", action="store_true",
                       help="do not index the shipped curated corpus")
    build.add_argument("--model", default=None,
                       help="embedding model: the bundled all-MiniLM-L6-v2 (default) or a "
                       "local sentence-transformers folder")
    build.add_argument("--quiet", action="store_true", help="no progress bar")
    _add_location(build)

    query = sub.add_parser("query", help="search the knowledge base")
    query.add_argument("text", help="what to look for, e.g. 'test rows also in training'")
    query.add_argument("--category", default=None, help="only documents of this category id")
    query.add_argument("--top-k", type=int, default=3, help="number of documents (default 3)")
    query.add_argument("--json", action="store_true", help="machine-readable output")
    _add_location(query)

    info = sub.add_parser("info", help="where the knowledge base is and what it holds")
    info.add_argument("--json", action="store_true", help="machine-readable output")
    _add_location(info)
    parser.set_defaults(func=run)


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``kb`` command to a parent CLI's ``add_subparsers()`` object."""
    parser = subparsers.add_parser("kb", help="build and query the offline knowledge base",
                                   description="Build and query the offline knowledge base "
                                   "of best practices that findings cite.")
    add_subcommands(parser)
    return parser


def _build(args) -> int:
    from kb_builder.builder import build_kb
    from kb_builder.embedding import DEFAULT_MODEL

    report = build_kb(
        args.source, path=args.path, url=args.url, collection=args.collection,
        include_builtin=not args.no_builtin, model=args.model or DEFAULT_MODEL,
        progress=not args.quiet,
    )
    print(f"knowledge base: {report.location} (collection {report.collection})")
    print(f"  documents {report.documents}, chunks {report.chunks}: embedded "
          f"{report.embedded}, unchanged {report.unchanged}, deleted {report.deleted}"
          f"{', collection recreated' if report.recreated else ''}")
    print(f"  model {report.model}; {report.seconds:.1f} s")
    return 0


def _query(args) -> int:
    from kb_builder.retrieval import KnowledgeBase

    with KnowledgeBase.open(args.path, args.url, args.collection) as kb:
        hits = kb.search(args.text, category=args.category, top_k=args.top_k)
    if args.json:
        print(json.dumps([{**h.as_reference(), "score": round(h.score, 4),
                           "categories": list(h.categories), "text": h.text} for h in hits],
                         indent=2))
        return 0
    if not hits:
        print("no match")
    for rank, hit in enumerate(hits, 1):
        print(f"{rank}. [{hit.score:.3f}] {hit.title} — {hit.section}  ({hit.doc_id}; "
              f"{', '.join(hit.categories) or 'no category'})")
        snippet = " ".join(hit.text.split())
        print(f"   {snippet[:240]}{'...' if len(snippet) > 240 else ''}")
    return 0


def _info(args) -> int:
    from kb_builder.retrieval import KnowledgeBase

    with KnowledgeBase.open(args.path, args.url, args.collection) as kb:
        info = kb.info()
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    print(f"knowledge base: {info['location']} (collection {info['collection']})")
    print(f"  model {info['model']}; {len(info['documents'])} documents, {info['chunks']} chunks")
    for doc_id, doc in info["documents"].items():
        print(f"  - {doc_id}: {doc['title']} [{', '.join(doc['categories']) or '-'}] "
              f"{doc['chunks']} chunks ({doc['origin']})")
    return 0


def run(args: argparse.Namespace) -> int:
    """Run the ``kb`` subcommand held in ``args``; returns the exit status."""
    handlers = {"build": _build, "query": _query, "info": _info}
    try:
        return handlers[args.kb_command](args)
    except (KnowledgeBaseUnavailable, CorpusError, ValueError) as error:
        print(f"error: {' '.join(str(error).split())}", file=sys.stderr)
        return 2
    except Exception as error:
        if getattr(args, "debug", False) or not _is_connection_error(error):
            raise  # the deepfix CLI turns it into one line unless --debug is given
        print(
            f"error: cannot reach the Qdrant server at {args.url or 'the given URL'} "
            f"({' '.join(str(error).split()) or type(error).__name__}). Start it (e.g. "
            "`docker run -p 6333:6333 qdrant/qdrant`) and check the port, or leave out --url "
            "to use the embedded store (--path).",
            file=sys.stderr,
        )
        return 2


def _is_connection_error(error: BaseException | None) -> bool:
    """A refused or failed connection, however qdrant-client/httpx wrapped it."""
    for _ in range(8):
        if error is None:
            return False
        if isinstance(error, ConnectionError) or type(error).__name__ in (
            "ConnectError", "ConnectTimeout", "ResponseHandlingException"
        ):
            return True
        error = error.__cause__ or error.__context__
    return False


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m kb_builder``: the ``kb`` subcommands without the ``deepfix`` prefix."""
    import logging

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    parser = argparse.ArgumentParser(prog="python -m kb_builder",
                                     description="Build and query the deepfix knowledge base.")
    add_subcommands(parser)
    return run(parser.parse_args(argv))
