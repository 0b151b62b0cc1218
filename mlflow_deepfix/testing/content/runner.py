"""The testing step for text and image data: the modality's Deepchecks suites, our
property statistics and a baseline ladder on the properties.

Deepchecks' NLP and vision suites see a seeded sample of at most ``sample_size`` rows
per split (by default 2,000 texts -- each needs a MiniLM embedding, about 5 ms of CPU --
or 10,000 images), with the predictions and probabilities already computed once for the
whole split; our statistics (properties, content duplicates, overlap) use every row. The baseline ladder is fitted on the properties and numeric metadata: a
text or image model that does no better than one reading only lengths or brightness has
learnt little from the content.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from mlflow_deepfix.testing.content import ContentSplit, content_frame, summarize_content
from mlflow_deepfix.testing.stats import sample_index

if TYPE_CHECKING:
    from mlflow_deepfix.config import DeepfixConfig
    from mlflow_deepfix.inputs import EvalInputs
    from mlflow_deepfix.testing.predictions import Predictions

logger = logging.getLogger(__name__)

#: rows per split the modality's Deepchecks suites see when ``sample_size`` is None
DEFAULT_SAMPLE_SIZE = {"text": 2_000, "image": 10_000}


def _take(values: Any, rows: np.ndarray) -> Any:
    if values is None:
        return None
    if isinstance(values, list):
        return [values[i] for i in rows]
    return np.asarray(values)[rows]


def run_content_tests(
    inputs: EvalInputs,
    config: DeepfixConfig,
    test: pd.DataFrame,
    train: pd.DataFrame | None,
    contents: dict[str, ContentSplit],
    predictions: Predictions,
    cat_features: list[str],
    *,
    model_skip_reason: str | None,
    notes: list[str],
    progress: bool,
):
    """(checks, baselines, dataset summary, segment frame, segment features) for a text
    or image evaluation; ``contents`` are the splits' :func:`prepare_contents`."""
    from concurrent.futures import ThreadPoolExecutor

    from mlflow_deepfix.testing.baselines import baseline_ladder

    column, target, modality = inputs.content_column, inputs.target, inputs.modality
    frames = {"test": test} if train is None else {"train": train, "test": test}
    metadata = [c for c in inputs.feature_names if c != column and c in test.columns]
    if train is not None:
        metadata = [c for c in metadata if c in train.columns]
    views = {name: content_frame(frames[name], contents[name], column=column) for name in frames}
    ladder_features = [
        *contents["test"].properties.columns,
        *(c for c in metadata if pd.api.types.is_numeric_dtype(views["test"][c])),
    ]

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="deepfix-baselines") as pool:
        baselines_future = None
        if train is not None and len(train) >= 20:
            baselines_future = pool.submit(
                baseline_ladder,
                views["train"],
                views["test"],
                label=target,
                task=inputs.task,
                feature_names=ladder_features,
                cat_features=[],
                seed=config.seed,
            )
        checks = _run_checks(
            inputs, config, frames, contents, predictions, metadata,
            model_skip_reason=model_skip_reason, notes=notes, progress=progress,
        )
        baselines = baselines_future.result() if baselines_future is not None else []
    logger.info("deepfix %s checks done in %.1fs", modality, time.perf_counter() - started)

    dataset = summarize_content(
        views,
        contents,
        label=target,
        task=inputs.task,
        column=column,
        metadata=metadata,
        cat_features=cat_features,
        seed=config.seed,
    )
    segment_features = [c for c in cat_features if c in metadata]
    return checks, baselines, dataset, views["test"], segment_features


def _run_checks(
    inputs: EvalInputs,
    config: DeepfixConfig,
    frames: dict[str, pd.DataFrame],
    contents: dict[str, ContentSplit],
    predictions: Predictions,
    metadata: list[str],
    *,
    model_skip_reason: str | None,
    notes: list[str],
    progress: bool,
):
    size = config.sample_size or DEFAULT_SAMPLE_SIZE[inputs.modality]
    rows = {
        name: sample_index(len(frame), size, config.seed + offset)
        for offset, (name, frame) in enumerate(sorted(frames.items()))
    }
    sampled = [name for name, frame in frames.items() if len(rows[name]) < len(frame)]
    if sampled:
        notes.append(
            f"Deepchecks' {inputs.modality} checks ran on a seeded sample of {size} rows of "
            f"{' and '.join(sampled)} (sample_size); deepfix's own statistics use every row."
        )
    labels = {name: frame[inputs.target].to_numpy()[rows[name]] for name, frame in frames.items()}
    predicted = {
        name: _take(getattr(predictions, name), rows[name])
        for name in frames
        if getattr(predictions, name) is not None
    }
    proba = {
        name: _take(getattr(predictions, f"proba_{name}"), rows[name])
        for name in frames
        if getattr(predictions, f"proba_{name}") is not None
    }
    adapter = inputs.adapter
    classes = list(adapter.classes_) if adapter is not None and adapter.classes_ is not None else None
    if classes is None:
        classes = sorted(pd.unique(np.concatenate(list(labels.values()))).tolist(), key=str)
        proba = {}
    common = dict(sample_size=None, seed=config.seed, progress=progress)
    if inputs.modality == "text":
        from mlflow_deepfix.checks import TextCheckInputs, run_text_checks
        from mlflow_deepfix.testing.content.text_features import embed_texts, load_tokenizer

        texts = {name: _take(contents[name].payload, rows[name]) for name in frames}
        embeddings = _embeddings(texts, embed_texts, notes)
        tokenizer = load_tokenizer()
        if tokenizer is None:
            notes.append("Unknown Tokens skipped: the MiniLM tokenizer (the [text] extra) is "
                         "not installed.")
        check_inputs = TextCheckInputs(
            train_texts=texts.get("train"),
            test_texts=texts["test"],
            train_labels=labels.get("train"),
            test_labels=labels["test"],
            task=inputs.task,
            properties={
                name: contents[name].properties.iloc[rows[name]].reset_index(drop=True)
                for name in frames
            },
            embeddings=embeddings,
            predictions=predicted or None,
            probabilities=proba or None,
            classes=classes,
            metadata={
                name: frames[name][metadata].iloc[rows[name]].reset_index(drop=True)
                for name in frames
            } if metadata else None,
            tokenizer=tokenizer,
            model_skip_reason=model_skip_reason,
        )
        return run_text_checks(check_inputs, config.suites, **common)

    from mlflow_deepfix.checks import ImageCheckInputs, run_image_checks

    check_inputs = ImageCheckInputs(
        train_images=_take(contents["train"].payload, rows["train"]) if "train" in frames else None,
        test_images=_take(contents["test"].payload, rows["test"]),
        train_labels=labels.get("train"),
        test_labels=labels["test"],
        classes=classes,
        probabilities=proba or None,
        model_skip_reason=model_skip_reason,
    )
    return run_image_checks(check_inputs, config.suites, **common)


def _embeddings(texts: dict[str, list[str]], embed, notes: list[str]):
    """MiniLM embeddings per split, or None (with a note) when the model is unavailable."""
    found = {}
    for name, split_texts in texts.items():
        vectors = embed(split_texts)
        if vectors is None:
            notes.append(
                "Embedding-based text checks skipped: the MiniLM model (the [text] extra) is "
                "not installed."
            )
            return None
        found[name] = vectors
    return found
