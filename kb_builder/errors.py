"""Errors of the knowledge base, each saying what is wrong and the command that fixes it.

They are plain Python exceptions (no MLflow import) so that the evaluator can catch
:class:`KnowledgeBaseUnavailable` and carry on without references: a missing knowledge
base must never break an evaluation.
"""

from __future__ import annotations

INSTALL_HINT = 'pip install "mlflow-deepfix[kb]"'
BUILD_HINT = "deepfix kb build"


class KnowledgeBaseUnavailable(RuntimeError):
    """The knowledge base cannot be used: not built, corrupt, empty, locked, or the
    ``[kb]`` extra (sentence-transformers, the bundled model, qdrant-client) is missing."""


class CorpusError(ValueError):
    """A Markdown document of the corpus (built-in or a user folder) is malformed:
    bad front matter, a duplicate id, or a category that the contract does not know."""
