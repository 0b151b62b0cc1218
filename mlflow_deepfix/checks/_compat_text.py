"""Make ``deepchecks.nlp`` (0.19.1) import and run offline on today's stack.

Loaded only when a text evaluation runs (the tabular path never imports it, so it stays
free of torch). :func:`apply` reuses the machinery of :mod:`._compat` (feature-detected
:class:`~._compat.Patch` objects, line-preserving :class:`~._compat.SourceEdit`\\ s made
by an import hook, bookkeeping in :data:`._compat.STATE`) and fixes what stops the NLP
checks, measured on numpy 2.4 / pandas 3 / scikit-learn 1.9 without network access:

* **umap-learn and numba are optional** -- ``deepchecks.nlp.checks`` imports
  ``utils/multivariate_embeddings_drift_utils.py``, which imports ``numba`` and ``umap``
  at module level, so without them *no* NLP check imports. Text Embeddings Drift uses
  UMAP only for its plots or when asked (``dimension_reduction_method='umap'``); we run
  it without display, where ``'auto'`` reduces with PCA. When either is missing, the
  edit binds ``UMAP = None`` and the numba warning class to ``DeprecationWarning``
  (``dimension_reduction_method='umap'`` then fails; deepfix never asks for it).
* **no nltk.download per sample** -- ``utils/text.py::remove_stopwords`` (used by Text
  Duplicates, Conflicting Labels and Train Test Samples Mix to normalise every sample)
  calls ``nltk.download('stopwords')`` and ``nltk.download('punkt')`` once per sample:
  36-93 s per check on 900 texts with network, a failed connection per sample without.
  We rebind the module global (``normalize_text`` looks it up at call time) to
  :func:`offline_remove_stopwords`: scikit-learn's ``ENGLISH_STOP_WORDS`` (318 words;
  nltk's English list has 198, so a few more function words such as "amount", "back",
  "call", "thus" are dropped, making near-duplicates slightly more likely to match) and
  a regex word split instead of nltk's punkt tokenizer (words are runs of letters and
  digits; every other non-space character is a token of its own, as punkt would split
  it once punctuation is removed, which the checks do first).
* **no nltk resource downloads elsewhere** -- ``check_nltk_resource`` downloads a
  missing resource; it is bound by name in the text-properties modules (which we never
  run: deepfix passes its own properties) and in Unknown Tokens (only for tokenizers
  without a fast implementation). We rebind it to a lookup that never downloads.

Not patched here, but avoided by :mod:`._text`: Unknown Tokens loads
``bert-base-uncased`` from the hub when given no tokenizer (we always pass one, or skip
the check), and Deepchecks' built-in properties need fasttext's language model and hub
models (we always pass our own properties, ``categorical_properties=[]``).
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import re
import sys
from functools import lru_cache

from mlflow_deepfix.checks import _compat
from mlflow_deepfix.checks._compat import Patch, SourceEdit

logger = logging.getLogger(__name__)

_EMBEDDINGS_DRIFT = "deepchecks.nlp.utils.multivariate_embeddings_drift_utils"
_TEXT_UTILS = "deepchecks.nlp.utils.text"
#: modules that bind ``check_nltk_resource`` by name (``from ... import``)
_NLTK_RESOURCE_USERS = (
    "deepchecks.nlp.utils.text_properties_models",
    "deepchecks.nlp.utils.text_properties",
    "deepchecks.nlp.checks.data_integrity.unknown_tokens",
)
_WORD = re.compile(r"\w+|[^\w\s]", re.UNICODE)


@lru_cache(maxsize=1)
def _stop_words() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


def offline_remove_stopwords(text: str) -> str:
    """``text`` without English stop words (scikit-learn's list), words re-joined by one
    space; never touches the network. Stand-in for Deepchecks' ``remove_stopwords``."""
    stop = _stop_words()
    return " ".join(word for word in _WORD.findall(text) if word.lower() not in stop)


def offline_check_nltk_resource(resource_name: str, resource_path: str | None = None) -> bool:
    """Whether an nltk resource is installed locally; unlike Deepchecks' version it never
    downloads a missing one."""
    import nltk

    path = resource_path or f"tokenizers/{resource_name}"
    try:
        nltk.data.find(path)
    except LookupError:
        return False
    return True


def _umap_or_numba_missing() -> bool:
    return any(importlib.util.find_spec(m) is None for m in ("umap", "numba"))


def _rebind_remove_stopwords() -> None:
    module = sys.modules[_TEXT_UTILS]
    module.remove_stopwords = offline_remove_stopwords  # type: ignore[attr-defined]


def _rebind_check_nltk_resource() -> None:
    for name in _NLTK_RESOURCE_USERS:
        module = importlib.import_module(name)
        module.check_nltk_resource = offline_check_nltk_resource  # type: ignore[attr-defined]


TEXT_PATCHES: tuple[Patch, ...] = (
    Patch(
        name="nlp_optional_umap",
        answers="deepchecks.nlp imports numba and umap-learn at module level (Text Embeddings "
        "Drift), though it uses UMAP only for displays or when asked; without them no NLP "
        "check imports",
        needed=_umap_or_numba_missing,
        edits=(
            SourceEdit(_EMBEDDINGS_DRIFT, r"from numba import NumbaDeprecationWarning",
                       "NumbaDeprecationWarning = DeprecationWarning"),
            SourceEdit(_EMBEDDINGS_DRIFT, r"from umap import UMAP", "UMAP = None"),
        ),
    ),
    Patch(
        name="nlp_offline_stopwords",
        answers="remove_stopwords calls nltk.download('stopwords') and nltk.download('punkt') "
        "once per sample (Text Duplicates, Conflicting Labels, Train Test Samples Mix): tens "
        "of seconds per check online, a failed connection per sample offline",
        needed=lambda: True,
        after_import=_rebind_remove_stopwords,
    ),
    Patch(
        name="nlp_offline_nltk_resources",
        answers="check_nltk_resource downloads missing nltk resources (punkt_tab, cmudict, "
        "taggers) on first use",
        needed=lambda: True,
        after_import=_rebind_check_nltk_resource,
    ),
)

_MODULES = (
    "deepchecks.nlp",
    "deepchecks.nlp.checks",
    "deepchecks.nlp.suites",
    _TEXT_UTILS,
    *_NLTK_RESOURCE_USERS,
)

_applied = False


def apply() -> None:
    """Apply :data:`TEXT_PATCHES` and import ``deepchecks.nlp``. Idempotent.

    Applies the tabular :func:`._compat.apply` first (the NLP package imports the tabular
    one). Must run before anything else imports ``deepchecks.nlp``; otherwise the source
    edits cannot take effect and a warning says so.
    """
    global _applied
    if _applied:
        return
    _compat.apply()
    needed = _compat.install(
        TEXT_PATCHES, _MODULES, log=logger,
        preloaded_warning="deepchecks nlp compat: %s already imported; import mlflow_deepfix."
        "checks._compat_text first so that Deepchecks can be patched",
    )
    _applied = True
    logger.debug("deepchecks nlp compat: applied %s", [p.name for p in needed])
