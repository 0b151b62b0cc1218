"""Small offline images for the image scenarios, and their usual model.

The image scenarios need pictures that ship with the code (nothing may be downloaded)
and a model that trains in a second on two cores: scikit-learn's bundled handwritten
digits (1,797 grey-scale 8x8 scans, values 0..16) do both. Each image is kept as a 2-D
float array in an object column ``image`` -- one array per row, the shape MLflow's
pyfunc passes through untouched and the evaluator's ``image_col`` expects -- with the
label in ``digit``. They stay at their native 8x8 by default: :func:`digits` can
upsample them (nearest neighbour, ``np.kron``), but at 16x16 the logistic regression
took about five times longer to fit (1.35 s against 0.22 s on a loaded 2-core
machine), and the scenario tests build every model twice.

:func:`image_model` is the healthy model: :func:`flatten_images` (module level, so
cloudpickle can serialise the Pipeline) turns the column into an N x (H*W) matrix,
then a min-max scaler and a logistic regression.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable

import numpy as np
import pandas as pd
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, MinMaxScaler

logger = logging.getLogger(__name__)

IMAGE_COL = "image"
LABEL = "digit"
#: the value of a fully inked pixel in ``load_digits``
MAX_VALUE = 16.0


def image_column(images: Iterable[np.ndarray]) -> np.ndarray:
    """A 1-D object array holding one 2-D float array per element (a plain
    ``np.array(list_of_arrays)`` would make one 3-D block instead)."""
    items = [np.asarray(image, dtype=float) for image in images]
    column = np.empty(len(items), dtype=object)
    for i, image in enumerate(items):
        column[i] = image
    return column


def digits(upsample: int = 1) -> pd.DataFrame:
    """The 1,797 bundled digit scans as a frame: ``image`` (``8*upsample`` square float
    arrays in 0..16) and ``digit`` (0..9)."""
    if upsample < 1:
        raise ValueError(f"upsample must be a positive integer, got {upsample}")
    bunch = load_digits()
    block = np.ones((upsample, upsample))
    images = (np.kron(image, block) for image in bunch.images)
    return pd.DataFrame({IMAGE_COL: image_column(images), LABEL: bunch.target.astype(int)})


def stack(images: pd.Series | Iterable[np.ndarray]) -> np.ndarray:
    """The images as one N x H x W float array (nested lists are accepted too, as a
    pyfunc signature may hand them over)."""
    return np.stack([np.asarray(image, dtype=float) for image in images])


def flatten_images(frame: pd.DataFrame) -> np.ndarray:
    """The ``image`` column of ``frame`` as an N x (H*W) matrix (the model's features)."""
    if IMAGE_COL not in frame:
        raise KeyError(f"expected an {IMAGE_COL!r} column of 2-D arrays, got {list(frame.columns)}")
    images = stack(frame[IMAGE_COL])
    return images.reshape(len(images), -1)


def image_model(seed: int, C: float = 1.0) -> Pipeline:
    """The healthy image model: flattened pixels, each scaled to 0..1 over the training
    images, into a multinomial logistic regression (about 0.97 accuracy).

    Min-max rather than standard scaling, as image pipelines usually normalise: the
    border pixels are almost always 0 in training, and standardising them turns a small
    change of background into huge z-scores that swamp every prediction.
    """
    return Pipeline(
        [
            ("flatten", FunctionTransformer(flatten_images)),
            ("scale", MinMaxScaler()),
            ("model", LogisticRegression(C=C, max_iter=3000, random_state=seed)),
        ]
    )


def map_images(frame: pd.DataFrame, rows: np.ndarray, func) -> pd.DataFrame:
    """A copy of ``frame`` whose images at positions ``rows`` are replaced by
    ``func(image)`` (the other rows and columns unchanged)."""
    out = frame.copy()
    column = out[IMAGE_COL].to_numpy(dtype=object).copy()
    positions = np.flatnonzero(rows) if rows.dtype == bool else np.asarray(rows)
    for i in positions:
        column[i] = np.asarray(func(column[i]), dtype=float)
    out[IMAGE_COL] = column
    return out


def brightness(images: pd.Series) -> np.ndarray:
    """Mean pixel value per image, in 0..16."""
    return stack(images).mean(axis=(1, 2))


def contrast(images: pd.Series) -> np.ndarray:
    """Pixel standard deviation per image (RMS contrast), in 0..16 units."""
    return stack(images).std(axis=(1, 2))


def image_keys(images: pd.Series) -> pd.Series:
    """One key per image (a digest of its shape and pixels), to count copies across rows.

    Hex strings rather than raw bytes: pandas' hash tables mishandle bytes holding NUL
    characters (``isin`` misses most matches), and pixel buffers are full of them.
    """
    keys = []
    for image in images:
        pixels = np.ascontiguousarray(image, dtype=float)
        keys.append(hashlib.sha1(str(pixels.shape).encode() + pixels.tobytes()).hexdigest())
    return pd.Series(keys, dtype=object)
