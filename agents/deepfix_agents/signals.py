"""Signals: what analyzers observe, before the reasoner turns them into findings.

Like cleanlab's issue scores, every signal carries a ``score`` in [0, 1] (how much the
problem matters: its *impact*, which drives severity) and a ``confidence`` in [0, 1]
(how surely the observation points at this category), plus one piece of evidence.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from mlflow_deepfix.schemas import CATEGORY_LAYERS, Evidence


class Signal(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    category: str
    source: str
    score: float = Field(ge=0.0, le=1.0)
    confidence: float = Field(ge=0.0, le=1.0)
    evidence: Evidence
    #: numbers and names a rule uses for its title ("38% of test rows ...")
    facts: dict[str, Any] = Field(default_factory=dict)

    def model_post_init(self, __context: Any) -> None:
        if self.category not in CATEGORY_LAYERS:
            raise ValueError(f"unknown category {self.category!r}")
