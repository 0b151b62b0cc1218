"""Column labels of any type: turned into text once, here, at the boundary.

pandas accepts any hashable as a column label (``0``, ``1.5``, ``True``, tuples), but
everything downstream (statistics, Deepchecks, the report, JSON artifacts) names
columns by text. The frames the evaluation works on get ``str(label)`` labels, the
original labels are kept (:class:`ColumnLabels`) so that the model is called with the
columns exactly as the user gave them and messages can name both, and two labels that
read the same once turned into text (``1`` and ``"1"``) are refused clearly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from mlflow_deepfix.errors import DeepfixInputError


@dataclass
class ColumnLabels:
    """Text label -> the user's original label, for the columns that were not text."""

    originals: dict[str, Any] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.originals)

    def restore(self, frame: pd.DataFrame) -> pd.DataFrame:
        """``frame`` with the user's own labels again (what the model was trained on)."""
        if not self.originals:
            return frame
        restored = frame.copy(deep=False)
        restored.columns = [self.originals.get(c, c) for c in frame.columns]
        return restored

    def note(self) -> str | None:
        if not self.originals:
            return None
        shown = ", ".join(f"{v!r} -> {k!r}" for k, v in list(self.originals.items())[:6])
        more = f" and {len(self.originals) - 6} more" if len(self.originals) > 6 else ""
        return (
            f"Column labels that were not text are reported as text: {shown}{more}; the "
            "model received the original labels."
        )


def stringify_labels(
    frames: Mapping[str, pd.DataFrame | None],
) -> tuple[dict[str, pd.DataFrame | None], ColumnLabels]:
    """Every frame with ``str`` column labels, and the mapping back to the originals.

    Raises :class:`DeepfixInputError` when two labels of one frame read the same as text,
    or when one text label stands for different originals in two frames.
    """
    labels = ColumnLabels()
    out: dict[str, pd.DataFrame | None] = {}
    first_seen: dict[str, tuple[str, Any]] = {}  # text -> (frame name, original label)
    for name, frame in frames.items():
        if frame is None or frame.columns.duplicated().any():
            out[name] = frame  # duplicated labels: the frame check refuses them by name
            continue
        texts = [str(c) for c in frame.columns]
        seen: dict[str, Any] = {}
        for text, original in zip(texts, frame.columns):
            if text in seen:
                raise DeepfixInputError(
                    f"{name}: the column labels {seen[text]!r} ({type(seen[text]).__name__}) "
                    f"and {original!r} ({type(original).__name__}) both read {text!r} as text, "
                    "and deepfix names columns by text. Rename one of them, e.g. "
                    "df.columns = [f'f{i}' for i in range(df.shape[1])]."
                )
            seen[text] = original
            other_frame, known = first_seen.setdefault(text, (name, original))
            if isinstance(known, str) != isinstance(original, str) or known != original:
                raise DeepfixInputError(
                    f"{name}: the column label {original!r} ({type(original).__name__}) is "
                    f"{known!r} ({type(known).__name__}) in {other_frame}; use the same column "
                    "labels in every frame."
                )
            if type(original) is not str:
                labels.originals[text] = original
        if all(type(c) is str for c in frame.columns):
            out[name] = frame
            continue
        renamed = frame.copy(deep=False)
        renamed.columns = texts
        out[name] = renamed
    return out, labels
