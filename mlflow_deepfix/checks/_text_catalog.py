"""What each Deepchecks NLP check reports once condensed, and how deepfix runs it.

The text counterpart of :mod:`._catalog`: one :class:`~._catalog.CheckSpec` per check of
Deepchecks' three default NLP suites (``deepchecks.nlp.suites``), keyed by
``check.name()``, plus Confusion Matrix Report, which Deepchecks' NLP model evaluation
suite lacks but its tabular one has (the rules read it for degenerate predictions).
The conventions of :mod:`._catalog` hold: ``value`` is one number, **higher is worse**
unless the entry says otherwise; data-integrity checks run on both splits when there
is training data (``value`` the worse of the two, ``train_value`` / ``test_value`` in
``values``, condition names suffixed `` (train)`` / `` (test)``); model-evaluation
single-dataset checks run on the test split. Where a check shares its name (or its
role) with a tabular check, ``value`` means the same thing, so the rules read both
alike.

``<property>`` keys are the names of :data:`mlflow_deepfix.testing.content.text_features.TEXT_PROPERTIES`
(``text_length``, ``n_words``, ...), the per-sample properties deepfix computes and
hands Deepchecks instead of its built-in ones (which need models from the network).

This module imports no Deepchecks code: condensers read plain result values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from mlflow_deepfix.checks._catalog import (
    DATA_INTEGRITY,
    MODEL_EVALUATION,
    TRAIN_TEST_VALIDATION,
    CheckSpec,
)
from mlflow_deepfix.checks._condense import (
    Condensed,
    _clean,
    _confusion_matrix,
    _drift,
    _feature_drift,
    _max,
    _multivariate_drift,
    _num,
    _pps,
    _samples_mix,
    _train_test_performance,
    _weak_segments,
)

#: Inputs a check needs beyond texts and labels (skipped, with a reason, without them):
#: ``properties``, ``embeddings``, ``metadata``, ``tokenizer``.
NEEDS_PROPERTIES, NEEDS_EMBEDDINGS = "properties", "embeddings"
NEEDS_METADATA, NEEDS_TOKENIZER = "metadata", "tokenizer"

_SEGMENTS_VALUES = ("average_score, weakest_score, weakest_segment_fraction (share of rows)")
_SEGMENTS_DETAILS = "metric, weakest_segment (its description)"

_SPECS = (
    # ------------------------------------------------------------------ data integrity
    CheckSpec(
        "Text Property Outliers", DATA_INTEGRITY, "single",
        value="largest share of samples that are outliers (beyond 2 IQR of the 25-75th "
        "percentiles) in one text property (the condition fails above 0.05)",
        values="<property>: that share, for properties where it is > 0",
    ),
    CheckSpec(
        "Unknown Tokens", DATA_INTEGRITY, "single",
        value="share of tokens that the tokenizer (MiniLM's, i.e. BERT's uncased WordPiece "
        "vocabulary) can only map to [UNK] (the condition fails above 0)",
        values="n_unknown_words: distinct words holding an unknown token; "
        "samples_with_unknown: share of samples holding one",
        rows="sample",
    ),
    CheckSpec(
        "Under Annotated Property Segments", DATA_INTEGRITY, "single",
        value="relative drop of the annotation ratio (share of samples with a label) in the "
        "least annotated segment of text properties, (average - weakest) / average (the "
        "condition warns at >= 0.2); skipped by Deepchecks when > 95% of samples are labelled",
        values=_SEGMENTS_VALUES, details=_SEGMENTS_DETAILS,
        rows="sample_size // 2, the 5 most relevant properties",
        cost=3,
    ),
    CheckSpec(
        "Under Annotated Meta Data Segments", DATA_INTEGRITY, "single",
        value="as Under Annotated Property Segments, with segments of the metadata columns",
        values=_SEGMENTS_VALUES, details=_SEGMENTS_DETAILS,
        rows="sample_size // 2, the 5 most relevant columns",
        cost=3,
    ),
    CheckSpec(
        "Property Label Correlation", DATA_INTEGRITY, "single",
        value="largest Predictive Power Score (0..1) of one text property for the label "
        "(the condition fails at >= 0.3)",
        values="<property>: PPS of each property",
        rows="sample_size // 2 (PPS cross-validates a tree per property)",
        cost=2,
    ),
    CheckSpec(
        "Conflicting Labels", DATA_INTEGRITY, "single",
        value="share of samples whose normalised text (lower case, NFKC, no punctuation, no "
        "English stop words) appears with more than one label (the condition fails above 0)",
        values="n_groups: number of such texts",
    ),
    CheckSpec(
        "Text Duplicates", DATA_INTEGRITY, "single",
        value="share of samples that duplicate another once normalised (1 - distinct / all; "
        "normalisation as Conflicting Labels; the condition fails above 0.05)",
        values="n_groups: number of duplicated texts",
    ),
    CheckSpec(
        "Special Characters", DATA_INTEGRITY, "single",
        value="share of samples in which more than 20% of the characters are special, the "
        "quantity the condition tests (fails above 0.05). Special: neither a letter or digit "
        "of any script, nor a space, nor ASCII punctuation -- emoji, symbols, non-ASCII "
        "punctuation (curly quotes, dashes, '。'), tabs and newlines",
        values="any_special_fraction: share of samples holding any special character; "
        "only_special_fraction: share made of special characters only; n_special_chars: "
        "distinct special characters",
        rows="sample",
    ),
    CheckSpec(
        "Frequent Substrings", DATA_INTEGRITY, "single",
        value="share of samples containing a frequent substring (a run of >= 4 words found "
        "in >= 5% of samples, e.g. a signature or template); the condition warns when "
        "there is any",
        values="n_substrings, max_frequency (share of samples of the most frequent one)",
        rows="sample",
        cost=2,
    ),
    # ----------------------------------------------------------- train test validation
    CheckSpec(
        "Property Drift", TRAIN_TEST_VALIDATION, "pair",
        value="largest drift score of one text property (Kolmogorov-Smirnov, 0..1; the "
        "condition fails at >= 0.2)",
        values="<property>: drift score of each property",
        details="method_<property>: drift method",
        rows="up to 100,000 (Deepchecks' default)",
    ),
    CheckSpec(
        "Label Drift", TRAIN_TEST_VALIDATION, "pair",
        value="drift score of the label (Cramer's V; the condition fails at >= 0.15)",
        details="method",
    ),
    CheckSpec(
        "Text Embeddings Drift", TRAIN_TEST_VALIDATION, "pair",
        value="domain-classifier drift score on the MiniLM sentence embeddings (reduced to "
        "10 dimensions by PCA), 2 * AUC - 1 clipped at 0 (0 = splits indistinguishable, "
        "1 = fully separable; the condition fails at >= 0.25)",
        values="domain_classifier_auc",
        rows="sample",
        cost=3,
    ),
    CheckSpec(
        "Train Test Samples Mix", TRAIN_TEST_VALIDATION, "pair",
        value="share of (sampled) test samples whose normalised text also appears in train "
        "(normalisation as Conflicting Labels; labels are not compared; the condition "
        "fails above 0.05)",
        values="n_test_samples: test samples checked",
        rows="test: sample; train: all",
    ),
    # --------------------------------------------------------------- model evaluation
    CheckSpec(
        "Prediction Drift", MODEL_EVALUATION, "pair", needs_model=True,
        value="drift score of the predictions (binary: Kolmogorov-Smirnov on the predicted "
        "probabilities when given; else Cramer's V on the predicted classes; 0..1)",
        details="method",
    ),
    CheckSpec(
        "Train Test Performance", MODEL_EVALUATION, "pair", needs_model=True,
        value="largest relative degradation (train - test) / |train| over metrics and classes",
        values="train_<metric>, test_<metric>: metric per split, averaged over classes "
        "(F1, Precision, Recall)",
    ),
    CheckSpec(
        "Property Segments Performance", MODEL_EVALUATION, "single", needs_model=True,
        needs_proba=True,
        value="relative performance drop of the weakest segment of text properties, "
        "(average - weakest) / |average| (as Weak Segments Performance; the condition "
        "warns at >= 0.2)",
        values=_SEGMENTS_VALUES, details=_SEGMENTS_DETAILS,
        rows="sample_size // 2, the 5 most important properties",
        cost=4,
    ),
    CheckSpec(
        "Metadata Segments Performance", MODEL_EVALUATION, "single", needs_model=True,
        needs_proba=True,
        value="as Property Segments Performance, with segments of the metadata columns",
        values=_SEGMENTS_VALUES, details=_SEGMENTS_DETAILS,
        rows="sample_size // 2, the 5 most important columns",
        cost=4,
    ),
    CheckSpec(
        "Confusion Matrix Report", MODEL_EVALUATION, "single", needs_model=True,
        value="largest share of predictions that go to one class (1.0 = one class predicted "
        "for everything); no condition. Added by deepfix: not in Deepchecks' NLP suite",
        values="accuracy; predicted_share_<class>, recall_<class>",
    ),
)

#: check name -> :class:`CheckSpec`, in Deepchecks' suite order.
TEXT_CHECK_CATALOG: dict[str, CheckSpec] = {spec.name: spec for spec in _SPECS}

#: checks deepfix adds to a Deepchecks suite: name -> suite
TEXT_EXTRA_CHECKS: dict[str, str] = {"Confusion Matrix Report": MODEL_EVALUATION}

#: check name -> what it needs beyond texts and labels (see NEEDS_*)
TEXT_CHECK_NEEDS: dict[str, frozenset[str]] = {
    "Text Property Outliers": frozenset({NEEDS_PROPERTIES}),
    "Unknown Tokens": frozenset({NEEDS_TOKENIZER}),
    "Under Annotated Property Segments": frozenset({NEEDS_PROPERTIES}),
    "Under Annotated Meta Data Segments": frozenset({NEEDS_METADATA}),
    "Property Label Correlation": frozenset({NEEDS_PROPERTIES}),
    "Property Drift": frozenset({NEEDS_PROPERTIES}),
    "Text Embeddings Drift": frozenset({NEEDS_EMBEDDINGS}),
    "Property Segments Performance": frozenset({NEEDS_PROPERTIES}),
    "Metadata Segments Performance": frozenset({NEEDS_METADATA}),
}

#: check name -> the CONTRACT.md section 5 category a naive user would blame when the
#: check does not pass.
TEXT_DEEPCHECKS_CATEGORY: dict[str, str] = {
    "Text Property Outliers": "outliers",
    "Unknown Tokens": "data_type_issues",
    "Under Annotated Property Segments": "missing_values",
    "Under Annotated Meta Data Segments": "missing_values",
    "Property Label Correlation": "target_leakage",
    "Conflicting Labels": "conflicting_labels",
    "Text Duplicates": "duplicate_samples",
    "Special Characters": "data_type_issues",
    "Frequent Substrings": "duplicate_samples",
    "Property Drift": "feature_drift",
    "Label Drift": "label_drift",
    "Text Embeddings Drift": "feature_drift",
    "Train Test Samples Mix": "train_test_overlap",
    "Prediction Drift": "prediction_drift",
    "Train Test Performance": "overfitting",
    "Property Segments Performance": "weak_segment",
    "Metadata Segments Performance": "weak_segment",
    "Confusion Matrix Report": "degenerate_predictions",
}

#: key under which the runner stores the number of samples a check saw, for condensers
#: that report shares but whose Deepchecks value holds only counts
N_SAMPLES_KEY = "_deepfix_n_samples"
#: the checks whose condensers read N_SAMPLES_KEY
COUNTS_SAMPLES = frozenset({"Unknown Tokens", "Frequent Substrings", "Train Test Samples Mix"})


# --------------------------------------------------------------------- condensers


def _property_outliers(v: dict) -> Condensed:
    ratios = _clean({name: info.get("outlier_ratio") for name, info in v.items()
                     if isinstance(info, dict) and (_num(info.get("outlier_ratio")) or 0) > 0})
    return _max(ratios.values()), ratios, {}


def _unknown_tokens(v: dict) -> Condensed:
    details = v.get("unknown_word_details") or {}
    values = {"n_unknown_words": float(len(details))}
    n = _num(v.get(N_SAMPLES_KEY))
    if n:
        samples = {i for info in details.values() for i in info.get("indexes", [])}
        values["samples_with_unknown"] = len(samples) / n
    return _num(v.get("unknown_word_ratio")), values, {}


def _n_groups(frame: Any) -> float:
    if not isinstance(frame, pd.DataFrame) or frame.empty:
        return 0.0
    if "Duplicate" in (frame.index.names or []):
        return float(frame.index.get_level_values("Duplicate").nunique())
    return 0.0


def _conflicting_labels(v: dict) -> Condensed:
    return (_num(v.get("percent_of_conflicting_samples")),
            {"n_groups": _n_groups(v.get("conflicting_samples"))}, {})


def _text_duplicates(v: dict) -> Condensed:
    return _num(v.get("percent_of_duplicates")), {"n_groups": _n_groups(v.get("duplicates"))}, {}


#: Deepchecks' condition: a sample counts when more than this share of it is special
SPECIAL_PER_SAMPLE = 0.2


def _special_characters(v: dict) -> Condensed:
    per_sample = np.asarray(pd.Series(v.get("percent_special_chars_per_sample", []),
                                      dtype=float).dropna())
    if per_sample.size == 0:
        return 0.0, {}, {}
    values = {
        "any_special_fraction": _num(v.get("percent_of_samples_with_special_chars")) or 0.0,
        "only_special_fraction": float(np.mean(per_sample >= 1.0)),
        "n_special_chars": float(len(v.get("samples_per_special_char") or {})),
    }
    return float(np.mean(per_sample > SPECIAL_PER_SAMPLE)), values, {}


def _frequent_substrings(v: dict) -> Condensed:
    if not v or "Text" not in v:
        return 0.0, {"n_substrings": 0.0}, {}
    ids = v.get("Sample IDs") or {}
    frequencies = [f for f in (_num(x) for x in (v.get("Frequency") or {}).values())
                   if f is not None]
    values = {"n_substrings": float(len(v["Text"])), "max_frequency": _max(frequencies)}
    n = _num(v.get(N_SAMPLES_KEY))
    share = None
    if n:
        samples = {i for group in ids.values() for i in (group or [])}
        share = len(samples) / n
    return share, values, {}


def _samples_mix_text(v: dict) -> Condensed:
    value, _, _ = _samples_mix(v)
    n = _num(v.get(N_SAMPLES_KEY))
    return value, ({"n_test_samples": n} if n is not None else {}), {}


TEXT_CONDENSERS: dict[str, Callable[[Any], Condensed]] = {
    "Text Property Outliers": _property_outliers,
    "Unknown Tokens": _unknown_tokens,
    "Under Annotated Property Segments": _weak_segments,
    "Under Annotated Meta Data Segments": _weak_segments,
    "Property Label Correlation": _pps,
    "Conflicting Labels": _conflicting_labels,
    "Text Duplicates": _text_duplicates,
    "Special Characters": _special_characters,
    "Frequent Substrings": _frequent_substrings,
    "Property Drift": _feature_drift,
    "Label Drift": _drift,
    "Text Embeddings Drift": _multivariate_drift,
    "Train Test Samples Mix": _samples_mix_text,
    "Prediction Drift": _drift,
    "Train Test Performance": _train_test_performance,
    "Property Segments Performance": _weak_segments,
    "Metadata Segments Performance": _weak_segments,
    "Confusion Matrix Report": _confusion_matrix,
}
