"""Text scenarios: a TF-IDF logistic regression on templated product and film reviews,
each workflow with one planted bug in the texts or in how train and test relate.

The frames hold ``review`` (the raw text, declared as ``text_col``), ``topic``
(metadata) and the target; the model is a fitted Pipeline that reads the ``review``
column of the DataFrame. The healthy part -- generator, split sizes (about 1,000
train / 400 test reviews), model -- is the same in every scenario, so the planted
defect is the one thing a diagnosis should point at. Two clean controls (binary
sentiment, three-class topic) count false alarms.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mlflow_deepfix.bench.scenarios._base import ScenarioData, fit, make_data, scenario, split
from mlflow_deepfix.bench.scenarios._text_data import (
    SENTIMENT,
    TEXT_COL,
    TOPIC,
    forum_reviews,
    make_reviews,
    scrape_damage,
    text_model,
)
from mlflow_deepfix.bench.scenarios.split import _copy_train_rows_into_test

#: rows generated per workflow and the size of the test split
N_REVIEWS = 1400
N_TEST = 400
CONFIG = {"text_col": TEXT_COL}


def reviews_split(seed: int, target: str = SENTIMENT) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The healthy split: 1,000 train and 400 test reviews, stratified on ``target``."""
    return split(make_reviews(N_REVIEWS, seed), target, seed=seed, test_size=N_TEST)


def reviews_workflow(
    train: pd.DataFrame, test: pd.DataFrame, seed: int, target: str = SENTIMENT
) -> ScenarioData:
    """The text model fitted on ``train``, with ``text_col`` declared."""
    model = fit(text_model(seed), train, target)
    return make_data(train, test, target, model, "classifier", CONFIG)


def _shuffle(frame: pd.DataFrame, seed: int) -> pd.DataFrame:
    return frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)


# --------------------------------------------------------------------------- clean controls


@scenario(
    "clean.text_reviews_logistic",
    None,
    "TF-IDF and logistic regression on a stratified split of templated product and film "
    "reviews (binary sentiment, about 0.9 accuracy).",
    tags=("reviews", "binary", "text", "clean"),
)
def _clean_reviews(seed: int) -> ScenarioData:
    train, test = reviews_split(seed)
    return reviews_workflow(train, test, seed)


@scenario(
    "clean.text_topics_logistic",
    None,
    "TF-IDF and logistic regression telling electronics, kitchen and film reviews apart on a "
    "stratified split (three classes).",
    tags=("reviews", "multiclass", "text", "clean"),
)
def _clean_topics(seed: int) -> ScenarioData:
    train, test = reviews_split(seed, target=TOPIC)
    return reviews_workflow(train, test, seed, target=TOPIC)


# --------------------------------------------------------------------------- data layer


def _variant(text: str, style: int) -> str:
    """A case or punctuation variant of one review, as a re-scrape produces."""
    if style == 0:
        return text.lower()
    if style == 1:
        return text.rstrip(".") + "!!"
    if style == 2:
        return "  " + text.replace(". ", ".  ")
    return text.upper()


@scenario(
    "duplicate_samples.text_rescraped_reviews",
    "duplicate_samples",
    "A re-run scraper appended 30% of the training reviews a second time, half of the copies "
    "verbatim and half as case or punctuation variants, so about 23% of the training rows "
    "repeat another review.",
    tags=("reviews", "binary", "text", "data"),
)
def _dup_reviews(seed: int) -> ScenarioData:
    rng = np.random.default_rng(seed)
    train, test = reviews_split(seed)
    copies = train.sample(frac=0.3, random_state=seed).copy()
    styles = rng.integers(0, 4, len(copies))
    varied = rng.random(len(copies)) < 0.5
    copies[TEXT_COL] = [
        _variant(text, style) if vary else text
        for text, style, vary in zip(copies[TEXT_COL], styles, varied)
    ]
    train = _shuffle(pd.concat([train, copies], ignore_index=True), seed)
    return reviews_workflow(train, test, seed)


@scenario(
    "conflicting_labels.text_second_annotator",
    "conflicting_labels",
    "12% of the training reviews were labelled again by a second annotator with the opposite "
    "sentiment and both copies kept: about 22% of the training rows share their exact text "
    "with a row of the other label.",
    tags=("reviews", "binary", "text", "data"),
)
def _conflict_reviews(seed: int) -> ScenarioData:
    train, test = reviews_split(seed)
    relabelled = train.sample(frac=0.125, random_state=seed).copy()
    relabelled[SENTIMENT] = 1 - relabelled[SENTIMENT]
    train = _shuffle(pd.concat([train, relabelled], ignore_index=True), seed)
    return reviews_workflow(train, test, seed)


@scenario(
    "data_type_issues.text_html_mojibake",
    "data_type_issues",
    "60% of the test reviews come from a broken scraper: HTML markup and &nbsp; entities, "
    "mojibake ('Â' glued to most words, 'â˜…' for star ratings) and emoji, so many "
    "words become tokens the model never saw; the training reviews are clean.",
    tags=("reviews", "binary", "text", "data"),
)
def _dtype_reviews(seed: int) -> ScenarioData:
    train, test = reviews_split(seed)
    test = test.copy()
    test[TEXT_COL] = scrape_damage(test[TEXT_COL], seed, share=0.6)
    return reviews_workflow(train, test, seed)


# --------------------------------------------------------------------------- split layer


@scenario(
    "train_test_overlap.text_40pct",
    "train_test_overlap",
    "40% of the test reviews are copies of training reviews (the evaluation file was sampled "
    "from the same dump that fed training).",
    tags=("reviews", "binary", "text", "split"),
)
def _overlap_reviews(seed: int) -> ScenarioData:
    train, test = reviews_split(seed)
    test = _copy_train_rows_into_test(train, test, 0.4, seed)
    return reviews_workflow(train, test, seed)


@scenario(
    "label_drift.text_complaints_week",
    "label_drift",
    "The test reviews were collected in a week of delivery problems: about 85% negative, "
    "against a "
    "balanced training set (the texts themselves are written the same way).",
    tags=("reviews", "binary", "text", "split"),
)
def _label_drift_reviews(seed: int) -> ScenarioData:
    train, _ = reviews_split(seed)
    test = make_reviews(N_TEST, seed + 1000, positive_share=0.12)
    return reviews_workflow(train, test, seed)


@scenario(
    "feature_drift.text_forum_posts",
    "feature_drift",
    "The model was trained on short shop reviews (1-4 sentences) but is evaluated on forum "
    "posts about the same products and films: 8-14 rambling sentences, half of them shouted "
    "in capitals with '!!!'.",
    tags=("reviews", "binary", "text", "split"),
)
def _feature_drift_reviews(seed: int) -> ScenarioData:
    train, _ = reviews_split(seed)
    test = forum_reviews(N_TEST, seed + 1000, shouting_share=0.5)
    return reviews_workflow(train, test, seed)
