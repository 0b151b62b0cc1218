"""Grounding: attach knowledge-base references (and fix text) to every finding.

For each finding the KB is queried with a category filter and a query built from the
finding's title and evidence; the top documents become ``references`` and bullet
points from a retrieved "Fixes" section that the rule does not already list are
appended to ``fixes``. When no KB exists, the extra is not installed or Qdrant
fails, findings keep their rule text and a note says why references are missing.
"""

from __future__ import annotations

import logging
import re
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from mlflow_deepfix.schemas import Finding, Reference

logger = logging.getLogger(__name__)

MAX_KB_FIXES = 2
_BULLET = re.compile(r"^\s*(?:[-*]|\d+[.)])\s+(.*\S)\s*$")


def query_for(finding: Finding) -> str:
    details = " ".join(e.detail for e in finding.evidence[:3])
    return f"{finding.category.replace('_', ' ')}: {finding.title}. {details}"[:500]


def _kb_fixes(hits: list[Any], existing: list[str]) -> list[str]:
    known = {f.lower()[:40] for f in existing}
    extra: list[str] = []
    for hit in hits:
        if "fix" not in (hit.section or "").lower():
            continue
        for line in hit.text.splitlines():
            match = _BULLET.match(line)
            if not match:
                continue
            text = match.group(1).strip()
            if len(text) < 25 or text.lower()[:40] in known:
                continue
            known.add(text.lower()[:40])
            extra.append(text)
            if len(extra) >= MAX_KB_FIXES:
                return extra
    return extra


def _open(kb_config: Any) -> Any:
    from kb_builder import KnowledgeBase

    options = kb_config.model_dump() if kb_config is not None else {}
    return KnowledgeBase.open(
        path=options.get("path"),
        url=options.get("url"),
        collection=options.get("collection", "deepfix_kb"),
    )


def prefetch_kb(kb_config: Any) -> Future | None:
    """Open the KB (and load its embedding model) in a background thread.

    Loading sentence-transformers takes seconds; started before the checks run, it
    overlaps with them instead of adding to the evaluation's wall time. Opening fails
    fast, before any heavy import, when no KB exists.
    """
    if kb_config is False:
        return None
    executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="deepfix-kb")
    future = executor.submit(_open, kb_config)
    executor.shutdown(wait=False)
    return future


def ground(
    findings: list[Finding], kb_config: Any, opened: Future | None = None
) -> tuple[list[Finding], str | None]:
    """Return findings with references, and a note when the KB could not be used.

    ``opened`` is the future of :func:`prefetch_kb`, when the caller started one.
    """
    if kb_config is False:
        return findings, "Knowledge base disabled (kb=false): findings carry no references."
    try:
        from kb_builder import KnowledgeBaseUnavailable
    except ImportError as error:  # pragma: no cover - kb_builder ships with the package
        return findings, f"Knowledge base unavailable ({error}); references omitted."
    try:
        kb = opened.result() if opened is not None else _open(kb_config)
    except KnowledgeBaseUnavailable as error:
        return findings, f"No knowledge base used: {error} Findings carry no references."
    except Exception as error:  # noqa: BLE001 - a broken KB must not sink the run
        logger.warning("knowledge base could not be opened: %r", error)
        return findings, f"Knowledge base unavailable ({type(error).__name__}); references omitted."
    if not findings:
        kb.close()
        return findings, None
    options = kb_config.model_dump() if kb_config is not None else {}
    top_k = options.get("top_k", 3)
    try:
        results = kb.search_many([(query_for(f), f.category) for f in findings], top_k=top_k)
    except Exception as error:  # noqa: BLE001 - Qdrant/embedding failures must not sink the run
        logger.warning("knowledge base query failed: %r", error)
        return findings, f"Knowledge base query failed ({type(error).__name__}); references omitted."
    finally:
        kb.close()
    grounded = []
    for finding, hits in zip(findings, results):
        references, seen = [], set()
        for hit in hits:
            if hit.doc_id in seen:
                continue
            seen.add(hit.doc_id)
            references.append(Reference(title=hit.title, source=hit.doc_id, section=hit.section))
        fixes = finding.fixes + _kb_fixes(hits, finding.fixes)
        grounded.append(finding.model_copy(update={"references": references, "fixes": fixes}))
    return grounded, None
