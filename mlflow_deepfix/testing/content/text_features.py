"""Features of raw text that deepfix computes itself, without Deepchecks or the network.

Deepchecks' NLP checks read per-sample *properties* (numbers describing each text),
*embeddings* and a *tokenizer*. Its built-in properties need fasttext's language model
and models from the Hugging Face hub, and its Unknown Tokens check downloads
``bert-base-uncased``; none of that is possible offline. This module provides offline
replacements:

* :func:`text_properties` -- language-free numeric properties (:data:`TEXT_PROPERTIES`),
  computed with C-speed regular expressions (pandas ``.str`` ops) and precomputed
  Unicode character classes, deterministic, NaN for missing texts;
* :func:`normalize_text` / :func:`text_fingerprints` -- a stable hash of the normalised
  text, so "Great movie!" and "great movie" count as the same sample in duplicate,
  conflicting-label and train/test overlap statistics;
* :func:`embed_texts` -- MiniLM sentence embeddings through :mod:`kb_builder.embedding`
  (the ``[kb]`` extra; None without it);
* :func:`load_tokenizer` -- MiniLM's tokenizer, BERT's uncased WordPiece vocabulary, so
  an offline stand-in for the ``bert-base-uncased`` tokenizer Deepchecks would download.

Nothing here imports Deepchecks; torch and transformers are imported only by
:func:`embed_texts` and :func:`load_tokenizer`.
"""

from __future__ import annotations

import hashlib
import logging
import re
import string
import sys
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

logger = logging.getLogger(__name__)

#: Names of the numeric properties :func:`text_properties` computes (its columns, in
#: this order). Fractions are in [0, 1]; lengths count Unicode code points.
TEXT_PROPERTIES: tuple[str, ...] = (
    "text_length",            # characters
    "n_words",                # words: runs of letters/digits, with inner apostrophes
    "avg_word_length",        # mean characters per word (0 when there are no words)
    "max_word_length",        # characters of the longest word (0 when none)
    "n_sentences",            # segments ended by . ! ? … 。！？ + space/end holding a word
    "unique_word_ratio",      # distinct lower-cased words / words (0 when none)
    "uppercase_fraction",     # uppercase letters / letters (0 when no letters)
    "digit_fraction",         # decimal digits / characters
    "punctuation_fraction",   # Unicode punctuation (P*) and ASCII punctuation / characters
    "special_char_fraction",  # not letter/digit, not space, not punctuation (emoji, symbols)
    "non_ascii_fraction",     # code points above U+007F / characters
)

#: One word: letters/digits (``\w`` less the underscore, which is punctuation), with
#: inner apostrophes ("don't" is one word).
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_SENTENCE_END = re.compile(r"[.!?…]+(?=\s|$)|[。！？]+")
_HAS_WORD = re.compile(r"[^\W_]")
_LETTER = re.compile(r"[^\W\d_]")
_DIGIT = re.compile(r"\d")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_WHITESPACE = re.compile(r"\s+")
#: Unicode planes 0-1 hold every uppercase letter and punctuation mark (planes 2+ are
#: ideographs, tags and private use), so scanning them is exact and 5x cheaper.
_SCAN_LIMIT = min(0x20000, sys.maxunicode + 1)


@lru_cache(maxsize=1)
def _char_classes() -> dict[str, re.Pattern[str]]:
    """Regex classes of uppercase letters, punctuation and 'special' characters, built
    once per process from the Unicode database (``re`` has no ``\\p{...}``)."""
    upper, punct = [], set(string.punctuation)
    for code in range(_SCAN_LIMIT):
        char = chr(code)
        if char.isupper():
            upper.append(char)
        if unicodedata.category(char).startswith("P"):
            punct.add(char)
    punct_class = "".join(sorted(re.escape(c) for c in punct))
    return {
        "upper": re.compile(f"[{''.join(re.escape(c) for c in upper)}]"),
        "punct": re.compile(f"[{punct_class}]"),
        # neither a word character (letters, digits, marks of words), nor space, nor
        # punctuation; '_' is punctuation (Pc) though re counts it in \w
        "special": re.compile(f"[^\\w\\s{punct_class}]"),
    }


def _as_text(value: object) -> str | None:
    """None for missing values (None, NaN, pd.NA, NaT); ``str(value)`` otherwise."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    try:
        if pd.isna(value):
            return None
    except (TypeError, ValueError):  # arrays, lists: not a scalar missing marker
        pass
    return str(value)


def _as_series(texts: Sequence[object]) -> pd.Series:
    values = [_as_text(t) for t in texts]
    return pd.Series(values, dtype=object)


def _n_sentences(text: str) -> int:
    return sum(1 for part in _SENTENCE_END.split(text) if _HAS_WORD.search(part))


def _ratio(numerator: pd.Series, denominator: pd.Series) -> pd.Series:
    """numerator / denominator, 0 where the denominator is 0."""
    out = numerator.astype(float) / denominator.where(denominator > 0)
    return out.fillna(0.0)


def text_properties(texts: Sequence[object]) -> pd.DataFrame:
    """One row per text (same order, RangeIndex), one float column per name of
    :data:`TEXT_PROPERTIES`. Missing texts (None, NaN) give a row of NaN; other non-str
    values are converted with ``str()``. Deterministic."""
    series = _as_series(texts)
    present = series.notna().to_numpy()
    text = series[present].astype(str)
    classes = _char_classes()
    out = pd.DataFrame(np.nan, index=pd.RangeIndex(len(series)), columns=list(TEXT_PROPERTIES),
                       dtype=float)
    if not len(text):
        return out
    length = text.str.len().astype(float)
    words = text.str.findall(_WORD)
    n_words = words.str.len().astype(float)
    word_lengths = words.explode().dropna().str.len().astype(float)
    grouped = word_lengths.groupby(level=0)
    letters = text.str.count(_LETTER).astype(float)
    frame = pd.DataFrame({
        "text_length": length,
        "n_words": n_words,
        "avg_word_length": grouped.mean().reindex(text.index).fillna(0.0),
        "max_word_length": grouped.max().reindex(text.index).fillna(0.0),
        "n_sentences": text.map(_n_sentences).astype(float),
        "unique_word_ratio": _ratio(words.map(lambda ws: len({w.lower() for w in ws})), n_words),
        "uppercase_fraction": _ratio(text.str.count(classes["upper"]), letters),
        "digit_fraction": _ratio(text.str.count(_DIGIT), length),
        "punctuation_fraction": _ratio(text.str.count(classes["punct"]), length),
        "special_char_fraction": _ratio(text.str.count(classes["special"]), length),
        "non_ascii_fraction": _ratio(text.str.count(_NON_ASCII), length),
    }, index=text.index)
    out.loc[present, :] = frame[list(TEXT_PROPERTIES)].to_numpy(dtype=float)
    return out


# ---------------------------------------------------------------------- fingerprints


def normalize_text(text: object) -> str:
    """The form under which two texts count as the same sample: Unicode NFKC, lower
    case, punctuation (Unicode P* and ASCII punctuation) removed, runs of whitespace
    collapsed to one space, stripped. Missing values give ``""``."""
    value = _as_text(text)
    if value is None:
        return ""
    value = unicodedata.normalize("NFKC", value).lower()
    value = _char_classes()["punct"].sub("", value)
    return _WHITESPACE.sub(" ", value).strip()


def text_fingerprints(texts: Sequence[object]) -> np.ndarray:
    """A 16-hex-digit BLAKE2b hash of :func:`normalize_text` per text (dtype object),
    stable across processes and platforms; None for missing texts, so that missing
    values are not counted as duplicates of each other."""
    out = np.empty(len(texts), dtype=object)
    for i, value in enumerate(texts):
        if _as_text(value) is None:
            out[i] = None
        else:
            digest = hashlib.blake2b(normalize_text(value).encode("utf-8"), digest_size=8)
            out[i] = digest.hexdigest()
    return out


# ----------------------------------------------------------- embeddings and tokenizer


def _embedding_extras_missing() -> list[str]:
    from kb_builder.embedding import missing_extras

    # the vector store is not needed to embed
    return [m for m in missing_extras() if m != "qdrant-client"]


def embed_texts(texts: Sequence[object], *, progress: bool = False) -> np.ndarray | None:
    """MiniLM (all-MiniLM-L6-v2) sentence embeddings, one L2-normalised float32 row per
    text (missing texts embed as the empty string). None, with the reason logged at
    INFO, when the ``[kb]`` extra (torch, sentence-transformers, the model package) is
    missing or the model cannot be loaded."""
    missing = _embedding_extras_missing()
    if missing:
        logger.info("deepfix text: no text embeddings (the [kb] extra is missing: %s); "
                    "Text Embeddings Drift will be skipped", ", ".join(missing))
        return None
    from kb_builder.embedding import encode
    from kb_builder.errors import KnowledgeBaseUnavailable

    values = [_as_text(t) or "" for t in texts]
    try:
        vectors = encode(values, progress=progress)
    except KnowledgeBaseUnavailable as error:
        logger.info("deepfix text: no text embeddings (%s)", error)
        return None
    return np.asarray(vectors, dtype=np.float32)


@lru_cache(maxsize=1)
def load_tokenizer() -> Any | None:
    """MiniLM's tokenizer (BERT's uncased WordPiece vocabulary), loaded from the local
    model package only; cached. None, with the reason logged at INFO, when transformers
    or the model package is missing or the files cannot be read."""
    try:
        from kb_builder.embedding import _offline, resolve_model_path
        from kb_builder.errors import KnowledgeBaseUnavailable

        path = resolve_model_path()
    except (ImportError, KnowledgeBaseUnavailable) as error:
        logger.info("deepfix text: no tokenizer (%s); Unknown Tokens will be skipped", error)
        return None
    try:
        with _offline():
            from transformers import AutoTokenizer

            return AutoTokenizer.from_pretrained(path, local_files_only=True)
    except Exception as error:  # noqa: BLE001 - any failure only disables one check
        logger.info("deepfix text: no tokenizer (could not load it from %s: %s: %s); Unknown "
                    "Tokens will be skipped", path, type(error).__name__, error)
        return None
