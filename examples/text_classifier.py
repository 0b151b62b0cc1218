"""Text classifier: a sentiment model trained on reviews that two annotators disagreed on.

The bug: every review was labelled by two annotators and both votes were kept as rows,
so a quarter of the training texts appear twice -- once as positive, once as negative.
The model learns from contradictory examples and its scores are capped by label noise.
deepfix should point at the conflicting labels (and the duplicates behind them), with
fixes that fit text: aggregate the votes, write labelling guidelines, de-duplicate.

Reviews are generated from templates (no download). The model is a scikit-learn
TF-IDF + logistic regression pipeline on the ``review`` column. Needs the ``[text]``
extra:  pip install -c constraints.txt -e ".[text]"

Run:  python examples/text_classifier.py   (writes ./deepfix-text-example/)
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import mlflow
from _summary import print_summary
import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline

OUTPUT = Path(os.environ.get("DEEPFIX_EXAMPLE_DIR", "deepfix-text-example")).resolve()

SUBJECTS = ["blender", "kettle", "pair of headphones", "desk lamp", "toaster", "backpack",
            "phone charger", "keyboard", "rain jacket", "coffee maker", "vacuum cleaner",
            "water bottle", "office chair", "camping tent", "hair dryer", "rice cooker"]
GOOD = ["works perfectly", "is excellent", "exceeded my expectations", "is really sturdy",
        "was worth every penny", "is a delight to use", "works great", "feels premium",
        "does exactly what it promises", "is the best I have owned"]
BAD = ["broke after a week", "is disappointing", "stopped working", "feels cheap",
       "was a waste of money", "is noisy and slow", "arrived damaged", "overheats quickly",
       "fell apart", "is the worst I have owned"]
FILLER = ["I bought it {n} weeks ago.", "Shipping took {n} days.", "I paid {p} dollars for it.",
          "I use it {n} times a week.", "It was a gift for my {who}.", "I compared {n} brands.",
          "My {who} uses it too.", "The box said model {code}."]
WHO = ["sister", "father", "roommate", "neighbour", "colleague", "son", "grandmother"]


def review(rng: np.random.Generator, positive: bool) -> str:
    """One templated review; random numbers and names make every text unique."""
    phrases = GOOD if positive else BAD
    sentences = [f"The {rng.choice(SUBJECTS)} {rng.choice(phrases)}."]
    for template in rng.choice(FILLER, size=rng.integers(1, 4), replace=False):
        sentences.append(template.format(n=rng.integers(2, 60), p=rng.integers(9, 400),
                                         who=rng.choice(WHO), code=rng.integers(100, 9999)))
    if rng.random() < 0.15:  # a mixed opinion keeps the task from being trivial
        sentences.append(f"Honestly it {rng.choice(BAD if positive else GOOD)}.")
    rng.shuffle(sentences)
    return " ".join(sentences)


def make_data(seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, size=1400)
    frame = pd.DataFrame({"review": [review(rng, bool(y)) for y in labels], "sentiment": labels})
    train, test = train_test_split(frame, test_size=0.3, stratify=frame["sentiment"],
                                   random_state=seed)
    # the annotation bug: a second, disagreeing vote kept as its own row
    disputed = train.sample(frac=0.25, random_state=seed)
    second_vote = disputed.assign(sentiment=1 - disputed["sentiment"])
    train = pd.concat([train, second_vote]).sample(frac=1.0, random_state=seed)
    return train.reset_index(drop=True), test.reset_index(drop=True)


def main() -> None:
    logging.basicConfig(level=logging.WARNING)
    OUTPUT.mkdir(parents=True, exist_ok=True)
    tracking_uri = f"sqlite:///{OUTPUT / 'mlflow.db'}"
    mlflow.set_tracking_uri(tracking_uri)
    if mlflow.get_experiment_by_name("deepfix-text-example") is None:
        mlflow.create_experiment(
            "deepfix-text-example", artifact_location=(OUTPUT / "artifacts").as_uri()
        )
    mlflow.set_experiment("deepfix-text-example")

    train, test = make_data()
    model = Pipeline(
        [
            ("tfidf", ColumnTransformer([("tfidf", TfidfVectorizer(ngram_range=(1, 2)), "review")])),
            ("model", LogisticRegression(max_iter=2000, random_state=0)),
        ]
    ).fit(train[["review"]], train["sentiment"])

    with mlflow.start_run(run_name="text-classifier") as run:
        info = mlflow.sklearn.log_model(model, name="model", serialization_format="cloudpickle")
        result = mlflow.models.evaluate(
            info.model_uri,
            test,
            targets="sentiment",
            model_type="classifier",
            evaluators=["deepfix"],
            evaluator_config={"deepfix": {"text_col": "review", "train_data": train}},
        )

    print_summary(result, run, tracking_uri)


if __name__ == "__main__":
    main()
