"""A small BM25 index over the chunks, used to re-rank dense search results.

The MiniLM embedding misses some exact-term matches that users type ("customer
number", "one-hot encoder", "permutation importance"); adding a lexical score of
weight :data:`LEXICAL_WEIGHT` to the cosine similarity raised the unfiltered top-3 hit
rate of the quality questions (see ``kb_builder.quality``; the weight was chosen on the
development set). The corpus is a few hundred chunks, so the index is built in memory
when a knowledge base is opened, in milliseconds, and needs no dependency.
"""

from __future__ import annotations

import math
import re
from collections import Counter

import numpy as np

#: weight of the max-normalised BM25 score added to the cosine similarity
LEXICAL_WEIGHT = 0.2

_STOP = frozenset(
    ["a", "an", "the", "and", "or", "of", "to", "in", "on", "for", "is", "are", "was", "were", "be", "been", "it", "its", "this", "that", "with", "as", "at", "by", "from", "my", "i", "we", "our", "you", "your", "me", "do", "does", "did", "not", "no", "so", "but", "if", "then", "than", "into", "out", "over", "after", "before", "all", "any", "some", "can", "how", "what", "when", "which", "who", "why", "very", "too", "much", "many", "most", "more"]
)


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s", "ly"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def tokenize(text: str) -> list[str]:
    """Lower-cased alphanumeric words without stop words, crudely stemmed."""
    return [_stem(w) for w in re.findall(r"[a-z0-9]+", text.lower())
            if w not in _STOP and len(w) > 1]


class BM25:
    """Okapi BM25 (k1=1.2, b=0.75) over a fixed list of texts."""

    def __init__(self, texts: list[str], k1: float = 1.2, b: float = 0.75):
        docs = [tokenize(t) for t in texts]
        self._n = len(docs)
        avg = (sum(map(len, docs)) / self._n) if self._n else 1.0
        df = Counter(w for d in docs for w in set(d))
        self._idf = {w: math.log(1 + (self._n - f + 0.5) / (f + 0.5)) for w, f in df.items()}
        # term -> (doc indices, precomputed term weights)
        postings: dict[str, tuple[list[int], list[float]]] = {}
        for i, doc in enumerate(docs):
            norm = k1 * (1 - b + b * len(doc) / (avg or 1.0))
            for word, tf in Counter(doc).items():
                idx, weights = postings.setdefault(word, ([], []))
                idx.append(i)
                weights.append(tf * (k1 + 1) / (tf + norm))
        self._postings = {w: (np.array(i), np.array(v)) for w, (i, v) in postings.items()}

    def __len__(self) -> int:
        return self._n

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every text for ``query``, divided by the best one (0..1)."""
        out = np.zeros(self._n)
        for word in set(tokenize(query)):
            hit = self._postings.get(word)
            if hit is not None:
                out[hit[0]] += self._idf[word] * hit[1]
        best = out.max() if self._n else 0.0
        return out / best if best > 0 else out
