"""Retrieval quality check: held-out questions phrased as a user would describe a symptom.

For every contract category there are two questions written without reusing the
documents' wording. A question is a hit when the document whose id is the category id
is among the top-k results of an unfiltered search (the category filter off), i.e. the
knowledge base finds the right best-practice text from a plain description alone.
Users who add or edit documents can re-run it: ``python -m kb_builder`` has no
command for it, but the benchmark (``benchmarks/bench_kb.py``) and the tests do.
"""

from __future__ import annotations

from dataclasses import dataclass

#: (category id, question). Two per category: a symptom and a "what do I do" phrasing.
#: This "development" set was used while the documents were written and revised: a few
#: symptom lines were added to documents after seeing which of these questions missed,
#: so its hit rate is optimistic. :data:`HELD_OUT` is the honest measure.
PARAPHRASES: tuple[tuple[str, str], ...] = (
    ("missing_values", "lots of cells in my spreadsheet are blank and logistic regression refuses to fit"),
    ("missing_values", "some patients never had the blood test done, how should I fill those gaps?"),
    ("data_type_issues", "the price column was read as text because some entries contain dollar signs and commas"),
    ("data_type_issues", "the city field has 'paris', 'Paris ' and 'PARIS' as separate values"),
    ("duplicate_samples", "after joining two tables my dataset contains many repeated identical records"),
    ("duplicate_samples", "the same transaction was exported twice so it appears several times in training"),
    ("conflicting_labels", "the exact same input record has outcome yes in one row and outcome no in another"),
    ("conflicting_labels", "annotators disagreed and identical examples ended up with different classes"),
    ("target_leakage", "one column alone predicts the outcome almost perfectly and it is filled in after the event happens"),
    ("target_leakage", "validation AUC is 0.995 on a hard problem, I suspect a column gives away the answer"),
    ("identifier_leakage", "the customer number turned out to be the most important variable in my model"),
    ("identifier_leakage", "my file is sorted so all positive rows come first and the row number predicts the class"),
    ("constant_feature", "one of my input columns holds exactly the same value in every single row"),
    ("constant_feature", "a variable that used to vary is now flat after the last data refresh"),
    ("outliers", "a handful of records have absurd values like a height of 900 cm that wreck my regression"),
    ("outliers", "some sensor readings are orders of magnitude larger than everything else"),
    ("class_imbalance", "only 2 percent of my examples are fraud and the classifier never flags any"),
    ("class_imbalance", "my dataset has very few positive cases compared to negatives, how do I train on it?"),
    ("train_test_overlap", "many records in my holdout set are exact copies of records the model was fit on"),
    ("train_test_overlap", "I accidentally scored the model on the same data I trained it with"),
    ("label_drift", "the share of positive outcomes in my test set is very different from the training set"),
    ("label_drift", "after splitting, the training part is mostly class A while the test part is dominated by class B"),
    ("feature_drift", "the input values in the new data come from a different range than the data I trained on"),
    ("feature_drift", "photos in the test set were taken with another camera and are much darker"),
    ("prediction_drift", "this week the model flags three times as many cases as positive compared to its usual output"),
    ("prediction_drift", "the histogram of output scores moved up although nobody changed the model"),
    ("unseen_categories", "the encoder throws an error because the evaluation data contains a country code never seen when fitting"),
    ("unseen_categories", "new product ids keep appearing in production that were not in the training data"),
    ("temporal_leakage", "I shuffled time-stamped records before splitting, so the model learnt from events after the ones it is tested on"),
    ("temporal_leakage", "my forecasting model looks great in random cross-validation but fails on next month"),
    ("split_size_mismatch", "my evaluation set only has 40 rows so the score jumps around every time I re-split"),
    ("split_size_mismatch", "the test partition ended up larger than the training partition"),
    ("schema_mismatch", "the new batch has a renamed column and an extra one, and the model complains the feature names differ"),
    ("schema_mismatch", "a column that was numeric during training arrives as strings in the scoring data"),
    ("overfitting", "training accuracy is 99 percent but on held-out data it only reaches 70 percent"),
    ("overfitting", "my deep decision tree memorises the training set and generalises badly"),
    ("underfitting", "my model scores no higher than always guessing the most common answer"),
    ("underfitting", "both training and validation scores are poor and the R squared is close to zero"),
    ("degenerate_predictions", "every single prediction my classifier makes is the same label"),
    ("degenerate_predictions", "the regressor outputs nearly the same number for every input"),
    ("poor_calibration", "when the model says 90 percent chance the event actually happens only about half the time"),
    ("poor_calibration", "can I trust the predicted scores as real probabilities for risk estimates?"),
    ("decision_threshold", "ranking quality is good but with the standard 0.5 cutoff we catch almost none of the rare positives"),
    ("decision_threshold", "how do I choose the probability cut-off when a missed case costs ten times more than a false alarm?"),
    ("weak_segment", "overall performance is fine but customers from one region get far worse predictions"),
    ("weak_segment", "error rate is much higher for young users than for everyone else"),
    ("preprocessing_mismatch", "the model worked in my notebook but the deployed version receives raw unscaled inputs and outputs garbage"),
    ("preprocessing_mismatch", "the serving code re-implements feature engineering differently from training"),
    ("wrong_task_type", "I used linear regression for a yes/no target and now get outputs like 0.37 and 1.4 instead of classes"),
    ("wrong_task_type", "my classifier treats every distinct house price as its own class"),
    ("unused_features", "shuffling most of my input columns does not change the model's predictions at all"),
    ("unused_features", "half of the variables have zero importance, should I keep collecting them?"),
    ("training_divergence", "my network's loss went up and then became nan after a few epochs"),
    ("training_divergence", "the training loss jumps around and never goes down with a big learning rate"),
    ("training_stalled", "the loss stays at exactly the same value every epoch, nothing is learning"),
    ("training_stalled", "training loss barely decreases at all over many epochs with a tiny learning rate"),
)


#: Written after the last document edit and never used to change a document: one
#: question per category, in a user's words.
HELD_OUT: tuple[tuple[str, str], ...] = (
    ("missing_values", "about a third of the age field is empty, what should I do before training?"),
    ("data_type_issues", "dates in my file come in two formats and some numbers are stored with a comma as decimal separator"),
    ("duplicate_samples", "the same order appears five times in my data because the export job ran repeatedly"),
    ("conflicting_labels", "two rows with identical attributes are labelled spam and not spam"),
    ("target_leakage", "the model relies on a field that is only recorded once the loan has already defaulted"),
    ("identifier_leakage", "the image file name, which contains the class folder, is driving the predictions"),
    ("constant_feature", "the 'country' column is 'DE' for every row because I filtered on Germany"),
    ("outliers", "a few salaries were typed in cents instead of euros and are huge compared to the rest"),
    ("class_imbalance", "positives are 1 in 500 rows and recall for them is zero"),
    ("train_test_overlap", "the same patients appear in both my training and my test data"),
    ("label_drift", "the test split has 60 percent churners while the training split has 10 percent"),
    ("feature_drift", "customers in the new data are much older and richer than those I trained on"),
    ("prediction_drift", "the average predicted risk score rose from 0.1 to 0.3 over the last month"),
    ("unseen_categories", "the test data has store codes that the one-hot encoder never saw"),
    ("temporal_leakage", "my training data includes records from 2024 but I evaluate on records from 2023"),
    ("split_size_mismatch", "I only kept 25 rows for testing, is the accuracy reliable?"),
    ("schema_mismatch", "the scoring table is missing two columns the model was trained with"),
    ("overfitting", "the boosting model keeps improving on training data while validation loss gets worse"),
    ("underfitting", "even on training data the model makes many errors, it seems too simple"),
    ("degenerate_predictions", "the classifier answers 'no' for every customer"),
    ("poor_calibration", "the predicted probabilities are all close to 0 or 1 but the model is often wrong"),
    ("decision_threshold", "what cut-off should I use to turn scores into yes/no decisions when positives are rare?"),
    ("weak_segment", "the model performs badly on older patients although overall accuracy is high"),
    ("preprocessing_mismatch", "at prediction time the features are not standardised the way they were during training"),
    ("wrong_task_type", "my evaluation treats a classifier as a regressor and reports mean squared error for labels"),
    ("unused_features", "permutation importance says most of my features contribute nothing"),
)


@dataclass(frozen=True)
class QualityResult:
    hits: int
    total: int
    misses: tuple[tuple[str, str, tuple[str, ...]], ...]  # (category, question, returned ids)

    @property
    def hit_rate(self) -> float:
        return self.hits / self.total if self.total else 0.0


def paraphrase_hit_rate(kb, top_k: int = 3, questions=PARAPHRASES) -> QualityResult:
    """Share of questions whose category document is in the unfiltered top ``top_k``."""
    results = kb.search_many([(q, None) for _, q in questions], top_k=top_k)
    misses = []
    for (category, question), hits in zip(questions, results):
        ids = tuple(h.doc_id for h in hits)
        if category not in ids:
            misses.append((category, question, ids))
    return QualityResult(hits=len(questions) - len(misses), total=len(questions),
                         misses=tuple(misses))
