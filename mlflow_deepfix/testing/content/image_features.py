"""Images as deepfix sees them: uint8 arrays, a few cheap properties, exact fingerprints.

Why a module of its own: the image modality needs images in one shape (H x W x C uint8,
C in {1, 3}) before anything else can look at them -- the statistics layer, the rules and
the Deepchecks vision checks alike -- and that conversion must not need torch or
Deepchecks (both are heavy, and only the checks layer may import Deepchecks). Everything
here is numpy, plus PIL for files and PIL images.

**Scaling rule** (:func:`pixel_scale`). A column of images is scaled with *one* factor,
so that brightness differences between images (and between splits, when the caller
passes both splits' cells to :func:`pixel_scale`) survive conversion:

1. every cell already uint8 (uint8 arrays, PIL "L"/"RGB" images, image files): kept as is;
2. else, if any value is negative (e.g. mean/std-normalised tensors): the column's
   [min, max] is mapped linearly onto [0, 255];
3. else the column's maximum M decides its full scale R: the smallest of 1, 255 and
   65535 that is >= M, *provided* the data reaches at least a quarter of it (M >= R / 4);
   otherwise R = M, a custom small range such as scikit-learn digits' 0..16. Values become
   ``round(clip(x / R, 0, 1) * 255)``. An all-zero column keeps R = 1 (black stays black).

So floats in [0, 1] are multiplied by 255, 8-bit values stored as int64 or float are kept,
16-bit values are divided by 257, and digits' 0..16 are multiplied by 255 / 16. A single
cell given to :func:`to_image` is scaled by its own range under the same rule.

**Shapes.** H x W (grey) becomes H x W x 1; H x W x 1 and H x W x 3 are kept; H x W x 4 is
RGBA: the alpha channel is dropped (not composited). Anything else -- None, 1-D or 4-D
arrays, two channels, channel-first C x H x W arrays, non-numeric or non-finite values,
unreadable files -- raises :class:`ValueError` naming the row and the problem.
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

logger = logging.getLogger(__name__)

#: Columns of :func:`image_properties`, in order.
IMAGE_PROPERTIES: tuple[str, ...] = (
    "brightness",
    "rms_contrast",
    "mean_red_relative_intensity",
    "mean_green_relative_intensity",
    "mean_blue_relative_intensity",
    "aspect_ratio",
    "area",
    "sharpness",
    "fraction_dark_pixels",
    "fraction_bright_pixels",
)
#: The three colour properties; NaN for grey (one-channel) images.
COLOR_PROPERTIES: tuple[str, ...] = IMAGE_PROPERTIES[2:5]
#: Grey levels (0..255) at or below which a pixel counts as dark, at or above which bright:
#: the bottom and top eighth of the range.
DARK_LEVEL = 31
BRIGHT_LEVEL = 224
#: ITU-R BT.709 luma weights, the ones skimage.color.rgb2gray (used by Deepchecks) applies.
_GREY_WEIGHTS = np.array([0.2125, 0.7154, 0.0721])
_FULL_SCALES = (1.0, 255.0, 65535.0)
#: pixel values (H x W x C) per stacked chunk in :func:`image_properties`
_CHUNK_VALUES = 4_000_000


# --------------------------------------------------------------------------- conversion


def _where(row: int | None) -> str:
    return f"image at row {row}" if row is not None else "image"


def _load_path(path: str | Path, row: int | None) -> Any:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as image:
            image.load()
            return image.copy()
    except (OSError, UnidentifiedImageError, ValueError) as exc:
        raise ValueError(f"{_where(row)}: cannot read the image file {str(path)!r} "
                         f"({type(exc).__name__}: {exc})") from exc


def _from_pil(image: Any) -> np.ndarray:
    """A PIL image as an array: grey modes stay one channel, the rest become RGB."""
    mode = image.mode
    if mode in ("1", "L"):
        return np.asarray(image.convert("L"))
    if mode == "LA":
        return np.asarray(image.convert("L"))
    if mode in ("I", "I;16", "I;16B", "I;16L", "F"):
        # 16/32-bit grey: keep the numbers, the column-wide scaling handles the range
        return np.asarray(image, dtype=np.float64 if mode == "F" else np.int64)
    return np.asarray(image.convert("RGB"))


def _raw_array(cell: object, row: int | None) -> np.ndarray:
    """Any accepted cell as a numeric H x W x C array (C in {1, 3}), not yet scaled."""
    if cell is None:
        raise ValueError(f"{_where(row)}: the cell is empty (None)")
    if isinstance(cell, float) and math.isnan(cell):
        raise ValueError(f"{_where(row)}: the cell is empty (NaN)")
    if isinstance(cell, (str, Path)):
        cell = _load_path(cell, row)
    if type(cell).__module__.startswith("PIL.") and hasattr(cell, "mode"):
        array = _from_pil(cell)
    elif isinstance(cell, (np.ndarray, list, tuple)):
        try:
            array = np.asarray(cell)
        except ValueError as exc:  # ragged nested lists
            raise ValueError(f"{_where(row)}: the nested list is ragged ({exc})") from exc
    else:
        raise ValueError(f"{_where(row)}: expected an H x W or H x W x C array, a nested "
                         f"list, a PIL image or a file path; got {type(cell).__name__}")
    if array.dtype == bool:
        array = array.astype(np.uint8)
    if not (np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)):
        raise ValueError(f"{_where(row)}: pixel values must be numbers; got dtype {array.dtype}")
    if array.ndim == 2:
        array = array[:, :, None]
    elif array.ndim != 3:
        raise ValueError(f"{_where(row)}: expected an H x W or H x W x C array; got "
                         f"{array.ndim} dimension(s), shape {array.shape}")
    if 0 in array.shape:
        raise ValueError(f"{_where(row)}: the image is empty (shape {array.shape})")
    channels = array.shape[2]
    if channels == 4:
        array = array[:, :, :3]  # RGBA: drop alpha
    elif channels not in (1, 3):
        hint = (" (it looks channel-first, C x H x W: transpose it to H x W x C)"
                if array.shape[0] in (1, 3, 4) else "")
        raise ValueError(f"{_where(row)}: expected 1 (grey), 3 (RGB) or 4 (RGBA) channels "
                         f"last; got shape {array.shape}{hint}")
    if np.issubdtype(array.dtype, np.floating) and not np.isfinite(array).all():
        raise ValueError(f"{_where(row)}: contains NaN or infinite pixel values")
    return array


def _scale_of(arrays: Sequence[np.ndarray]) -> tuple[float, float]:
    """(offset, full scale) of the rule in the module docstring."""
    if all(a.dtype == np.uint8 for a in arrays):
        return 0.0, 255.0
    low = min(float(a.min()) for a in arrays)
    high = max(float(a.max()) for a in arrays)
    if low < 0:
        return low, (high - low) or 1.0
    if high <= 0:
        return 0.0, 1.0
    for full in _FULL_SCALES:
        if high <= full:
            return (0.0, full) if high >= full / 4 else (0.0, high)
    return 0.0, high


def _to_uint8(array: np.ndarray, offset: float, scale: float) -> np.ndarray:
    if array.dtype == np.uint8 and offset == 0.0 and scale == 255.0:
        return np.ascontiguousarray(array)
    values = (array.astype(np.float64) - offset) / scale
    return np.rint(np.clip(values, 0.0, 1.0) * 255.0).astype(np.uint8)


def pixel_scale(cells: Sequence[object]) -> tuple[float, float]:
    """The ``(offset, full_scale)`` that the scaling rule picks for these cells: a value x
    becomes ``round(clip((x - offset) / full_scale, 0, 1) * 255)``. Pass both splits'
    cells to get one scale for train and test."""
    return _scale_of([_raw_array(cell, row) for row, cell in enumerate(cells)])


def to_uint8_images(cells: Sequence[object], *,
                    scale: tuple[float, float] | None = None) -> list[np.ndarray]:
    """A column of images (arrays, nested lists, PIL images or file paths) -> a list of
    H x W x C uint8 arrays, C in {1, 3}, scaled with one factor for the whole column
    (or with ``scale``, from :func:`pixel_scale`, e.g. computed over train and test
    together). Raises :class:`ValueError` naming the first bad row."""
    arrays = [_raw_array(cell, row) for row, cell in enumerate(cells)]
    if not arrays:
        return []
    offset, full = scale if scale is not None else _scale_of(arrays)
    if full <= 0:
        raise ValueError(f"scale must have a positive full scale; got {scale!r}")
    return [_to_uint8(a, offset, full) for a in arrays]


def to_image(cell: object, *, row: int | None = None,
             scale: tuple[float, float] | None = None) -> np.ndarray:
    """One cell -> H x W x C uint8 (C in {1, 3}), scaled by its own range (or ``scale``).
    For a column use :func:`to_uint8_images`, which keeps brightness comparable across
    images; ``row`` only names the cell in error messages."""
    array = _raw_array(cell, row)
    offset, full = scale if scale is not None else _scale_of([array])
    return _to_uint8(array, offset, full)


# --------------------------------------------------------------------------- properties


def _grey(stack: np.ndarray) -> np.ndarray:
    """N x H x W x C uint8 -> N x H x W float32 grey levels in 0..255."""
    if stack.shape[3] == 1:
        return stack[..., 0].astype(np.float32)
    return stack.astype(np.float32) @ _GREY_WEIGHTS.astype(np.float32)


def _laplacian_variance(grey: np.ndarray) -> np.ndarray:
    """Variance of the 4-neighbour Laplacian (OpenCV's ``Laplacian`` with ksize=1 and its
    default reflect-101 border), per image of an N x H x W stack."""
    mode = "reflect" if min(grey.shape[1:]) > 1 else "edge"
    padded = np.pad(grey, ((0, 0), (1, 1), (1, 1)), mode=mode)
    laplacian = padded[:, :-2, 1:-1] + padded[:, 2:, 1:-1]
    laplacian += padded[:, 1:-1, :-2]
    laplacian += padded[:, 1:-1, 2:]
    laplacian -= 4.0 * grey
    return laplacian.reshape(len(grey), -1).var(axis=1, dtype=np.float64)


def _properties_of_stack(stack: np.ndarray) -> dict[str, np.ndarray]:
    n, height, width, channels = stack.shape
    grey = _grey(stack)
    flat = grey.reshape(n, -1)
    out = {
        "brightness": flat.mean(axis=1, dtype=np.float64),
        "rms_contrast": flat.std(axis=1, dtype=np.float64),
        "aspect_ratio": np.full(n, height / width),
        "area": np.full(n, float(height * width)),
        "sharpness": _laplacian_variance(grey),
        "fraction_dark_pixels": (flat <= DARK_LEVEL).mean(axis=1),
        "fraction_bright_pixels": (flat >= BRIGHT_LEVEL).mean(axis=1),
    }
    if channels == 3:
        pixels = stack.reshape(n, -1, 3).astype(np.float32)
        total = pixels.sum(axis=2, keepdims=True)
        np.divide(pixels, total, out=pixels, where=total != 0)
        pixels[(total == 0)[..., 0]] = 0.0
        means = pixels.mean(axis=1, dtype=np.float64)
        for i, name in enumerate(COLOR_PROPERTIES):
            out[name] = means[:, i]
    else:
        for name in COLOR_PROPERTIES:
            out[name] = np.full(n, np.nan)
    return out


def image_properties(images: Sequence[np.ndarray]) -> pd.DataFrame:
    """One row per image, the float columns of :data:`IMAGE_PROPERTIES`:

    * ``brightness`` / ``rms_contrast``: mean / standard deviation of the grey image
      (0..255; RGB is made grey with the BT.709 weights, as Deepchecks does);
    * ``mean_{red,green,blue}_relative_intensity``: Deepchecks' definition -- each pixel's
      channel divided by the sum of its three channels (0 for black pixels), averaged over
      the image; **NaN for grey images**, which have no colour (Deepchecks gives None);
    * ``aspect_ratio`` (height / width) and ``area`` (height x width, pixels);
    * ``sharpness``: variance of the grey image's 4-neighbour Laplacian (blur lowers it);
    * ``fraction_dark_pixels`` / ``fraction_bright_pixels``: share of grey pixels
      <= :data:`DARK_LEVEL` / >= :data:`BRIGHT_LEVEL` (under- / over-exposure).

    Images must be H x W x C uint8, C in {1, 3} (see :func:`to_uint8_images`); images of
    one shape are computed together on stacked arrays (float32, in chunks of bounded size;
means and variances are accumulated in float64).
    """
    columns = {name: np.full(len(images), np.nan) for name in IMAGE_PROPERTIES}
    groups: dict[tuple[int, ...], list[int]] = {}
    for i, image in enumerate(images):
        if not isinstance(image, np.ndarray) or image.ndim != 3 or image.shape[2] not in (1, 3):
            raise ValueError(f"image {i}: expected an H x W x C array with C in {{1, 3}}; got "
                             f"{getattr(image, 'shape', type(image).__name__)}")
        groups.setdefault(image.shape, []).append(i)
    for shape, indices in groups.items():
        # chunks of about _CHUNK_VALUES pixel values bound the float32 temporaries
        step = max(1, _CHUNK_VALUES // int(np.prod(shape)))
        for start in range(0, len(indices), step):
            chunk = indices[start:start + step]
            stack = np.stack([images[i] for i in chunk])
            for name, values in _properties_of_stack(stack).items():
                columns[name][chunk] = values
    return pd.DataFrame(columns, columns=list(IMAGE_PROPERTIES))


def image_fingerprints(images: Sequence[np.ndarray]) -> np.ndarray:
    """An exact content hash per image (its shape, dtype and bytes; 32 hex characters):
    equal fingerprints mean identical images, so they count duplicates, conflicting labels
    and train/test overlap. Not robust to any change of a pixel, by design."""
    out = []
    for image in images:
        array = np.ascontiguousarray(image)
        digest = hashlib.blake2b(digest_size=16)
        digest.update(repr((array.shape, array.dtype.str)).encode())
        digest.update(array.tobytes())
        out.append(digest.hexdigest())
    return np.array(out, dtype="<U32")
