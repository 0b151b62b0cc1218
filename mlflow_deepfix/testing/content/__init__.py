"""Text and image columns made measurable: properties, fingerprints and statistics.

Raw text or pixels cannot be summarised like a numeric column, and artifact data must
not hold them. So each text or image becomes a row of numeric *properties* (length,
word counts, brightness, contrast, colour intensities, ...) plus a *fingerprint* (a hash
of its normalised content). The properties get the same statistics as tabular features
(so drift, outliers and leakage rules read them like columns), and the fingerprints give
content-level duplicates, conflicting labels and train/test overlap, which row hashes of
the properties could not (two different reviews can have the same length).

This module knows nothing about Deepchecks: :mod:`mlflow_deepfix.checks` runs the
modality's suites on the same payloads.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from mlflow_deepfix.errors import DeepfixInputError
from mlflow_deepfix.schemas import DatasetSummary

logger = logging.getLogger(__name__)

#: the column name our fingerprints take in the frames handed to ``stats``
FINGERPRINT = "__deepfix_content__"


@dataclass
class ContentSplit:
    """One split's content: the payload Deepchecks sees, its properties and fingerprints."""

    #: texts (``list[str]``) or images (``list[np.ndarray]``, H x W x C uint8)
    payload: list[Any]
    properties: pd.DataFrame
    fingerprints: np.ndarray


def prepare_contents(
    frames: dict[str, pd.DataFrame], *, modality: str, column: str
) -> dict[str, ContentSplit]:
    """One :class:`ContentSplit` per split. Images of all splits share one pixel scale,
    so that a brighter test split stays brighter once converted to 8 bits."""
    scale = None
    if modality == "image":
        from mlflow_deepfix.testing.content.image_features import pixel_scale

        cells = [cell for frame in frames.values() for cell in frame[column]]
        try:
            scale = pixel_scale(cells)
        except ValueError as error:
            raise DeepfixInputError(
                f"image_col={column!r}: {error}. The image column must hold H x W or H x W x C "
                "arrays (or image file paths), one image per row."
            ) from None
    return {
        name: prepare_content(frame, modality=modality, column=column, split=name, scale=scale)
        for name, frame in frames.items()
    }


def prepare_content(
    frame: pd.DataFrame, *, modality: str, column: str, split: str, scale: Any = None
) -> ContentSplit:
    """Convert ``frame[column]`` into a :class:`ContentSplit`; bad cells raise a
    :class:`DeepfixInputError` naming the split, the row and the fix. ``scale`` is the
    images' pixel scale (:func:`~mlflow_deepfix.testing.content.image_features.pixel_scale`)."""
    cells = frame[column]
    if modality == "text":
        from mlflow_deepfix.testing.content.text_features import text_fingerprints, text_properties

        bad = [i for i, v in enumerate(cells) if not _is_text_cell(v)]
        if bad:
            first = bad[0]
            raise DeepfixInputError(
                f"text_col={column!r}: {len(bad)} value(s) of {split} are not text (first at "
                f"row {first}: {type(cells.iloc[first]).__name__}). The text column must hold "
                "strings (missing values as None/NaN are allowed)."
            )
        texts = ["" if _missing(v) else str(v) for v in cells]
        if not any(t.strip() for t in texts):
            raise DeepfixInputError(
                f"text_col={column!r}: every value of {split} is empty or missing; point "
                "text_col at the column that holds the raw text."
            )
        return ContentSplit(
            payload=texts,
            properties=text_properties(list(cells)).reset_index(drop=True),
            fingerprints=np.asarray(text_fingerprints(list(cells)), dtype=object),
        )
    if modality == "image":
        from mlflow_deepfix.testing.content.image_features import (
            image_fingerprints,
            image_properties,
            to_uint8_images,
        )

        try:
            images = to_uint8_images(list(cells), scale=scale)
        except ValueError as error:
            raise DeepfixInputError(
                f"image_col={column!r} in {split}: {error}. The image column must hold "
                "H x W or H x W x C arrays (or image file paths), one image per row."
            ) from None
        return ContentSplit(
            payload=images,
            properties=image_properties(images).reset_index(drop=True),
            fingerprints=np.asarray(image_fingerprints(images), dtype=object),
        )
    raise ValueError(f"modality={modality!r} has no content; accepted: 'text', 'image'")


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value))


def _is_text_cell(value: Any) -> bool:
    return _missing(value) or isinstance(value, (str, np.str_))


def content_frame(
    frame: pd.DataFrame, content: ContentSplit, *, column: str
) -> pd.DataFrame:
    """``frame`` with its content column replaced by the properties (same row order)."""
    rest = frame.drop(columns=[column]).reset_index(drop=True)
    clashing = [c for c in content.properties.columns if c in rest.columns]
    if clashing:
        raise DeepfixInputError(
            f"column(s) {clashing} clash with deepfix's derived content properties; rename them."
        )
    return pd.concat([content.properties, rest], axis=1)


def summarize_content(
    views: dict[str, pd.DataFrame],
    contents: dict[str, ContentSplit],
    *,
    label: str,
    task: str,
    column: str,
    metadata: list[str],
    cat_features: list[str],
    seed: int,
) -> DatasetSummary:
    """Statistics of the properties and metadata, with duplicates, conflicting labels and
    overlap measured on the content fingerprints instead of the feature rows.

    ``views`` maps ``"test"`` (and ``"train"`` when there is one) to the split with its
    content column replaced by the properties (:func:`content_frame`)."""
    from mlflow_deepfix.testing.stats import compare_splits, split_stats, summarize_dataset

    properties = list(contents["test"].properties.columns)
    # Properties are summarised as non-feature columns (with their target association):
    # the model does not read them, so feature-level rules (constant, unused, identifier)
    # must not judge them, while drift and outlier rules do.
    summary = summarize_dataset(
        views.get("train"),
        views["test"],
        label=label,
        task=task,
        feature_names=metadata,
        cat_features=[c for c in cat_features if c in metadata],
        seed=seed,
    )
    hashed = {
        name: pd.DataFrame({FINGERPRINT: contents[name].fingerprints, label: view[label].to_numpy()})
        for name, view in views.items()
    }
    common = dict(label=label, task=task, feature_names=[FINGERPRINT], cat_features=[], seed=seed)
    update: dict[str, Any] = {"content_column": column, "property_names": properties}
    for name, hashed_frame in hashed.items():
        stats = split_stats(hashed_frame, name=name, target_association=False, **common)
        current = getattr(summary, name)
        update[name] = current.model_copy(
            update={
                "duplicate_fraction": stats.duplicate_fraction,
                "conflicting_label_fraction": stats.conflicting_label_fraction,
                "n_columns": current.n_columns + 1,
            }
        )
    if "train" in hashed and summary.comparison is not None:
        comparison = compare_splits(
            hashed["train"],
            hashed["test"],
            label=label,
            task=task,
            feature_names=[FINGERPRINT],
            cat_features=[],
            datetime_col=None,
        )
        update["comparison"] = summary.comparison.model_copy(
            update={"overlap_fraction": comparison.overlap_fraction}
        )
    return summary.model_copy(update=update)
