"""The text (NLP) checks layer: deepfix's own text features, and real Deepchecks NLP runs
on small seeded templated corpora with planted problems.

No network: the tests assert that neither ``nltk.download`` nor any socket connection is
attempted while the checks run (Deepchecks 0.19.1 would otherwise download nltk data
per sample and ``bert-base-uncased`` from the Hugging Face hub).
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import socket
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from mlflow_deepfix.checks._text import TextCheckInputs, run_text_checks
from mlflow_deepfix.checks._text_catalog import (
    TEXT_CHECK_CATALOG,
    TEXT_CONDENSERS,
    TEXT_DEEPCHECKS_CATEGORY,
)
from mlflow_deepfix.errors import DeepfixInputError
from mlflow_deepfix.schemas import CATEGORIES
from mlflow_deepfix.testing.content.text_features import (
    TEXT_PROPERTIES,
    load_tokenizer,
    normalize_text,
    text_fingerprints,
    text_properties,
)

ALL_SUITES = ["data_integrity", "train_test_validation", "model_evaluation"]

# --------------------------------------------------------------------------- corpora

_GOOD = ["great", "wonderful", "excellent", "brilliant", "delightful", "superb", "charming"]
_BAD = ["terrible", "awful", "boring", "dreadful", "clumsy", "tedious", "painful"]
_NOUNS = ["movie", "film", "plot", "acting", "story", "soundtrack", "script", "ending",
          "cast", "pacing", "dialogue", "camera"]
_NAMES = ["Anna", "Boris", "Chen", "Dara", "Emil", "Farah", "Goran", "Hana", "Ivo", "Jana",
          "Kofi", "Lena", "Mateo", "Nina", "Omar", "Priya"]
_EXTRA = ["the popcorn was cold", "my friends laughed a lot", "the cinema was crowded",
          "it rained outside", "we arrived late", "the seats were comfy"]


def _review(rng: np.random.Generator, positive: bool, i: int, long: bool = False) -> str:
    word = rng.choice(_GOOD if positive else _BAD)
    text = (f"{rng.choice(_NAMES)} thought the {rng.choice(_NOUNS)} was {word}, and the "
            f"{rng.choice(_NOUNS)} felt {rng.choice(_GOOD + _BAD)}. Seen on day {i}.")
    if long:
        text += " " + " ".join(f"Also {rng.choice(_EXTRA)} and the {rng.choice(_NOUNS)} was "
                               f"{rng.choice(_GOOD + _BAD)} on visit {i * 7 + k}."
                               for k in range(3))
    return text


def corpus(n: int, seed: int, *, positive_share: float = 0.5, long: bool = False,
           offset: int = 0) -> tuple[list[str], np.ndarray]:
    """``n`` distinct reviews (a day number makes each unique); label = sentiment word."""
    rng = np.random.default_rng(seed)
    labels = rng.uniform(size=n) < positive_share
    texts = [_review(rng, bool(p), offset + i, long) for i, p in enumerate(labels)]
    return texts, np.where(labels, "pos", "neg")


def _inputs(train, test, **kwargs) -> TextCheckInputs:
    train_texts, train_labels = train if train is not None else (None, None)
    test_texts, test_labels = test
    properties = {"test": text_properties(test_texts)}
    if train_texts is not None:
        properties["train"] = text_properties(train_texts)
    return TextCheckInputs(train_texts=train_texts, test_texts=test_texts,
                           train_labels=train_labels, test_labels=test_labels,
                           task=kwargs.pop("task", "binary_classification"),
                           properties=kwargs.pop("properties", properties), **kwargs)


def by_name(outcomes):
    return {o.name: o for o in outcomes}


class _Network:
    """Records (and refuses) every nltk.download call and socket connection."""

    def __init__(self, monkeypatch):
        import nltk

        self.calls: list[str] = []

        def refuse(what):
            def blocked(*args, **kwargs):
                self.calls.append(f"{what}{args[1:2] if what == 'connect' else args[:1]}")
                raise OSError(f"network access attempted: {what}")
            return blocked

        monkeypatch.setattr(nltk, "download", refuse("nltk.download"))
        monkeypatch.setattr(socket.socket, "connect", refuse("connect"))
        monkeypatch.setattr(socket.socket, "connect_ex", refuse("connect"))


@pytest.fixture
def no_network(monkeypatch):
    return _Network(monkeypatch)


@pytest.fixture(scope="module")
def tokenizer():
    tok = load_tokenizer()
    if tok is None:
        pytest.skip("the MiniLM tokenizer ([kb] extra) is not installed")
    return tok


# ---------------------------------------------------------------------- text features


def test_text_properties_on_hand_checked_strings():
    frame = text_properties(["Hello World. How are you?", "don't STOP 123!! 😀😀", "",
                             "你好世界。再见"])
    assert list(frame.columns) == list(TEXT_PROPERTIES)
    assert frame.dtypes.map(lambda d: d.kind == "f").all()
    hello, shout, empty, cjk = (frame.iloc[i] for i in range(4))
    assert hello["text_length"] == 25 and hello["n_words"] == 5
    assert hello["n_sentences"] == 2 and hello["avg_word_length"] == pytest.approx(19 / 5)
    assert hello["max_word_length"] == 5
    assert hello["uppercase_fraction"] == pytest.approx(3 / 19)  # H, W, H of 19 letters
    assert hello["punctuation_fraction"] == pytest.approx(2 / 25)
    # "don't" is one word; 😀 is a special character, not punctuation
    assert shout["n_words"] == 3 and shout["text_length"] == 19
    assert shout["uppercase_fraction"] == pytest.approx(4 / 8)
    assert shout["digit_fraction"] == pytest.approx(3 / 19)
    assert shout["punctuation_fraction"] == pytest.approx(3 / 19)
    assert shout["special_char_fraction"] == pytest.approx(2 / 19)
    assert shout["non_ascii_fraction"] == pytest.approx(2 / 19)
    assert (empty == 0).all()
    assert cjk["non_ascii_fraction"] == 1.0 and cjk["n_sentences"] == 2
    repeated = text_properties(["the cat and the dog"]).iloc[0]
    assert repeated["unique_word_ratio"] == pytest.approx(4 / 5)


def test_text_properties_missing_and_non_str_values():
    frame = text_properties([None, np.nan, 42, "ok"])
    assert frame.iloc[0].isna().all() and frame.iloc[1].isna().all()
    assert frame.iloc[2]["text_length"] == 2 and frame.iloc[2]["digit_fraction"] == 1.0
    assert frame.iloc[3]["n_words"] == 1
    assert frame.equals(text_properties([None, np.nan, 42, "ok"]))


def test_fingerprints_collide_after_normalisation():
    assert normalize_text("  Great   MOVIE!! ") == "great movie"
    assert normalize_text("ｇｒｅａｔ movie…") == "great movie"  # NFKC: full-width letters
    prints = text_fingerprints(["Great movie!", "great movie", "Great movies", None,
                                "great, movie"])
    assert prints.dtype == object
    assert prints[0] == prints[1] == prints[4]
    assert prints[2] != prints[0]
    assert prints[3] is None
    assert len(prints[0]) == 16 and int(prints[0], 16) >= 0
    assert text_fingerprints(["Great movie!"])[0] == prints[0]  # stable across calls


def test_deepchecks_text_normalisation_runs_offline(no_network):
    import nltk

    from mlflow_deepfix.checks import _compat_text
    from mlflow_deepfix.checks._compat import STATE

    _compat_text.apply()
    _compat_text.apply()  # idempotent
    from deepchecks.nlp.utils import text

    assert text.remove_stopwords is _compat_text.offline_remove_stopwords
    assert text.normalize_text("The movie was GREAT, wasn't it?") == "movie great wasnt"
    assert "nlp_offline_stopwords" in STATE.edited
    assert not [u for u in STATE.unmatched if u.startswith("nlp_")]
    assert no_network.calls == []
    with pytest.raises(OSError):  # the guard the other tests rely on does intercept
        nltk.download("stopwords")
    assert no_network.calls == ["nltk.download('stopwords',)"]


# ---------------------------------------------------------------- catalog consistency


def test_catalog_covers_every_check_with_a_category_and_a_condenser():
    from mlflow_deepfix.checks import _compat_text

    _compat_text.apply()
    from deepchecks.nlp.suites import data_integrity, model_evaluation, train_test_validation

    from mlflow_deepfix.checks._text import _NoTokenizer

    names = {suite: [c.name() for c in factory(tokenizer=_NoTokenizer()).checks.values()]
             for suite, factory in (("data_integrity", data_integrity),
                                    ("train_test_validation", train_test_validation),
                                    ("model_evaluation", model_evaluation))}
    for suite, checks in names.items():
        for name in checks:
            assert TEXT_CHECK_CATALOG[name].suite == suite
    assert set(TEXT_CHECK_CATALOG) == set(TEXT_CONDENSERS) == set(TEXT_DEEPCHECKS_CATEGORY)
    assert set(TEXT_DEEPCHECKS_CATEGORY.values()) <= set(CATEGORIES)


def test_text_modules_do_not_import_deepchecks_nlp_or_torch():
    code = ("import sys, mlflow_deepfix.testing.content.text_features, mlflow_deepfix.checks._text, "
            "mlflow_deepfix.checks._text_catalog; "
            "print(sorted(m for m in ('torch', 'deepchecks.nlp', 'transformers') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.strip() == "[]"


# ------------------------------------------------------------------ data integrity


def test_planted_duplicates_and_conflicting_labels(no_network, tokenizer):
    texts, labels = corpus(360, seed=1)
    # 40 duplicates that differ only in case and punctuation, same label
    dup_texts = [t.upper().replace(".", "!!") for t in texts[:40]]
    # 20 copies of other texts with the opposite label
    flip_texts = [t.lower() for t in texts[40:60]]
    flip_labels = np.where(labels[40:60] == "pos", "neg", "pos")
    train = (texts + dup_texts + flip_texts,
             np.concatenate([labels, labels[:40], flip_labels]))
    test = corpus(200, seed=2, offset=10_000)
    outcomes = by_name(run_text_checks(_inputs(train, test, tokenizer=tokenizer),
                                       ["data_integrity"], sample_size=None, seed=0))
    assert list(outcomes) == [n for n, s in TEXT_CHECK_CATALOG.items()
                              if s.suite == "data_integrity"]
    duplicates = outcomes["Text Duplicates"]
    assert duplicates.outcome == "not_passed"
    assert duplicates.values["train_value"] == pytest.approx(60 / 420)  # 40 + 20 copies
    assert duplicates.value == pytest.approx(60 / 420)
    assert duplicates.values["test_value"] == 0.0
    assert duplicates.values["n_groups"] == 60
    conflicting = outcomes["Conflicting Labels"]
    assert conflicting.outcome == "not_passed"
    assert conflicting.value == pytest.approx(40 / 420)  # both members of 20 pairs
    assert conflicting.values["n_groups"] == 20
    assert any(c.name.endswith("(train)") and c.status == "FAIL" for c in conflicting.conditions)
    # clean, fully labelled English text: no unknown tokens, no special characters
    assert outcomes["Unknown Tokens"].outcome == "passed"
    assert outcomes["Special Characters"].value == 0.0
    assert outcomes["Under Annotated Property Segments"].outcome == "skipped"
    assert "no metadata" in outcomes["Under Annotated Meta Data Segments"].reason or \
        "metadata" in outcomes["Under Annotated Meta Data Segments"].reason
    plc = outcomes["Property Label Correlation"]
    assert plc.outcome in ("passed", "not_passed") and set(plc.values) >= {"text_length"}
    assert not any(o.outcome == "errored" for o in outcomes.values())
    assert no_network.calls == []


def test_unknown_tokens_and_special_characters_with_emoji_and_cjk(no_network, tokenizer):
    texts, labels = corpus(200, seed=3)
    odd = ["🤖🎬🍿 😀😀 ⚽☃", "电影很好看 🎉", "ᚠᛇᚻ ᛒᛟ 🤖"]
    texts = [odd[i % 3] if i % 4 == 0 else t for i, t in enumerate(texts)]  # 50 of 200
    outcomes = by_name(run_text_checks(_inputs(None, (texts, labels), tokenizer=tokenizer),
                                       ["data_integrity"], sample_size=None, seed=0))
    unknown = outcomes["Unknown Tokens"]
    assert unknown.outcome == "not_passed"
    assert 0.01 < unknown.value < 0.5
    assert unknown.values["samples_with_unknown"] == pytest.approx(50 / 200)
    assert unknown.values["n_unknown_words"] >= 3
    special = outcomes["Special Characters"]
    # > 5% of samples are > 20% special: only the emoji string (17 of 200); CJK and runes
    # are letters, and one emoji in 7 characters is below 20%
    assert special.outcome == "not_passed"
    assert special.value == pytest.approx(17 / 200)
    assert special.values["any_special_fraction"] >= special.value
    # a test-only run: data integrity on test, nothing suffixed
    assert "train_value" not in unknown.values
    assert no_network.calls == []


def test_unknown_tokens_skipped_without_tokenizer():
    outcomes = by_name(run_text_checks(_inputs(None, corpus(120, seed=4)), ["data_integrity"],
                                       sample_size=None, seed=0))
    unknown = outcomes["Unknown Tokens"]
    assert unknown.outcome == "skipped" and "tokenizer" in unknown.reason


# ------------------------------------------------------------ train test validation


@pytest.fixture(scope="module")
def split_scenario():
    """Train: 400 balanced reviews. Test: 200 reviews 3x longer, 85% positive, of which
    30 are copies of train texts (case/punctuation changed); embeddings shifted."""
    train = corpus(400, seed=5)
    test_texts, test_labels = corpus(200, seed=6, positive_share=0.85, long=True,
                                     offset=50_000)
    copies = [t.lower().replace(",", "") for t in train[0][:30]]
    test_texts = copies + test_texts[30:]
    test_labels = np.concatenate([train[1][:30], test_labels[30:]])
    rng = np.random.default_rng(7)
    embeddings = {"train": rng.normal(size=(400, 32)),
                  "test": rng.normal(size=(200, 32)) + np.r_[np.full(4, 1.5), np.zeros(28)]}
    return train, (test_texts, test_labels), embeddings


def test_split_checks_find_overlap_label_drift_and_longer_texts(split_scenario, no_network):
    train, test, embeddings = split_scenario
    outcomes = run_text_checks(_inputs(train, test, embeddings=embeddings),
                               ["train_test_validation"], sample_size=None, seed=0)
    assert [o.name for o in outcomes] == ["Property Drift", "Label Drift",
                                          "Text Embeddings Drift", "Train Test Samples Mix"]
    checks = by_name(outcomes)
    mix = checks["Train Test Samples Mix"]
    assert mix.outcome == "not_passed"
    assert mix.value == pytest.approx(30 / 200)
    assert mix.values["n_test_samples"] == 200
    label = checks["Label Drift"]
    assert label.outcome == "not_passed" and label.value > 0.15
    assert label.details["method"] == "Cramer's V"
    drift = checks["Property Drift"]
    assert drift.outcome == "not_passed"
    # 85% of test texts are 3x longer (the copies are not): the length properties drift
    # by 0.85 (Kolmogorov-Smirnov); a property nothing changed does not
    assert drift.values["text_length"] == pytest.approx(0.85)
    assert drift.values["n_words"] == pytest.approx(0.85)
    assert drift.values["non_ascii_fraction"] == 0.0
    assert drift.details["method_text_length"] == "Kolmogorov-Smirnov"
    assert set(drift.values) <= set(TEXT_PROPERTIES)
    embedding = checks["Text Embeddings Drift"]
    assert embedding.outcome == "not_passed" and embedding.value > 0.25
    assert 0.5 < embedding.values["domain_classifier_auc"] <= 1
    assert no_network.calls == []


def test_a_raising_check_is_errored_and_the_others_still_run(split_scenario):
    train, test, embeddings = split_scenario
    broken = {"train": embeddings["train"].copy(), "test": embeddings["test"]}
    broken["train"][::3, 0] = np.nan  # PCA / the domain classifier reject NaN
    outcomes = by_name(run_text_checks(_inputs(train, test, embeddings=broken),
                                       ["train_test_validation"], sample_size=None, seed=0))
    errored = outcomes["Text Embeddings Drift"]
    assert errored.outcome == "errored"
    assert errored.reason.startswith("ValueError") and "NaN" in errored.reason
    assert {o.outcome for n, o in outcomes.items() if n != "Text Embeddings Drift"} == {
        "not_passed"}


def test_pair_checks_skipped_without_train_and_embeddings_optional():
    outcomes = run_text_checks(_inputs(None, corpus(150, seed=8)), ALL_SUITES,
                               sample_size=None, seed=0)
    checks = by_name(outcomes)
    for name in ("Property Drift", "Label Drift", "Text Embeddings Drift",
                 "Train Test Samples Mix", "Prediction Drift", "Train Test Performance"):
        assert checks[name].outcome == "skipped" and checks[name].reason == "no training data"
    assert checks["Confusion Matrix Report"].reason == "no predictions were given"
    two = run_text_checks(_inputs(corpus(150, seed=9), corpus(100, seed=8)),
                          ["train_test_validation"], sample_size=None, seed=0)
    assert "embeddings" in by_name(two)["Text Embeddings Drift"].reason


# ------------------------------------------------------------------ model evaluation


def _probabilities(labels: np.ndarray, accuracy: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    right = rng.uniform(size=len(labels)) < accuracy
    p_pos = np.where((labels == "pos") == right, rng.uniform(0.6, 0.95, len(labels)),
                     rng.uniform(0.05, 0.4, len(labels)))
    return np.c_[1 - p_pos, p_pos]  # columns in `classes` order: neg, pos


def test_model_checks_see_overfitting_and_degenerate_predictions(no_network):
    train, test = corpus(300, seed=10), corpus(200, seed=11, offset=9_000)
    inputs = _inputs(train, test, classes=["neg", "pos"],
                     probabilities={"train": _probabilities(train[1], 1.0, 1),
                                    "test": _probabilities(test[1], 0.6, 2)})
    outcomes = run_text_checks(inputs, ["model_evaluation"], sample_size=None, seed=0)
    assert [o.name for o in outcomes] == ["Prediction Drift", "Train Test Performance",
                                          "Property Segments Performance",
                                          "Metadata Segments Performance",
                                          "Confusion Matrix Report"]
    checks = by_name(outcomes)
    perf = checks["Train Test Performance"]
    assert perf.outcome == "not_passed" and perf.value > 0.2
    assert perf.values["train_F1"] == pytest.approx(1.0)
    assert perf.values["test_F1"] == pytest.approx(0.6, abs=0.1)
    segments = checks["Property Segments Performance"]
    assert segments.outcome in ("passed", "not_passed")
    assert {"average_score", "weakest_score"} <= set(segments.values)
    assert segments.details["weakest_segment"].split(" in ")[0] in TEXT_PROPERTIES
    assert checks["Metadata Segments Performance"].outcome == "skipped"
    assert checks["Prediction Drift"].outcome in ("passed", "not_passed")
    assert 0.3 < checks["Confusion Matrix Report"].values["accuracy"] < 0.9

    # everything predicted positive; labels 0/1 (test: floats, every 10th missing),
    # predictions only
    labels01 = {"train": (train[1] == "pos").astype(int),
                "test": np.where(np.arange(200) % 10 == 0, np.nan, (test[1] == "pos") * 1.0)}
    degenerate = TextCheckInputs(
        train_texts=train[0], test_texts=test[0], train_labels=labels01["train"],
        test_labels=labels01["test"], task="binary_classification",
        properties={"train": text_properties(train[0]), "test": text_properties(test[0])},
        predictions={"train": np.ones(300), "test": np.ones(200)})
    checks = by_name(run_text_checks(degenerate, ["model_evaluation"], sample_size=None,
                                     seed=0))
    matrix = checks["Confusion Matrix Report"]  # on the 180 labelled test samples
    assert matrix.value == 1.0 and matrix.values["predicted_share_1"] == 1.0
    assert matrix.values["accuracy"] == pytest.approx(
        np.nanmean(labels01["test"]), abs=1e-9)
    assert "probabilities" in checks["Property Segments Performance"].reason
    assert no_network.calls == []


def test_model_skip_reason_is_reported():
    inputs = _inputs(corpus(120, seed=12), corpus(100, seed=13),
                     model_skip_reason="the model's predict failed: ValueError: boom")
    checks = by_name(run_text_checks(inputs, ["model_evaluation"], sample_size=None, seed=0))
    assert {o.reason for o in checks.values() if o.name != "Metadata Segments Performance"} == {
        "the model's predict failed: ValueError: boom"}


def test_same_inputs_and_seed_give_the_same_outcomes(split_scenario, tokenizer):
    train, test, embeddings = split_scenario
    inputs = _inputs(train, test, embeddings=embeddings, tokenizer=tokenizer,
                     classes=["neg", "pos"],
                     probabilities={"train": _probabilities(train[1], 0.9, 3),
                                    "test": _probabilities(test[1], 0.7, 4)},
                     metadata={"train": pd.DataFrame({"stars": np.arange(400) % 5,
                                                      "site": np.arange(400) % 3}),
                               "test": pd.DataFrame({"stars": np.arange(200) % 5,
                                                     "site": np.arange(200) % 3})})
    state = np.random.get_state()[1].copy()
    runs = [run_text_checks(inputs, ALL_SUITES, sample_size=150, seed=3) for _ in range(2)]
    assert np.array_equal(np.random.get_state()[1], state)  # the caller's RNG is untouched
    dumps = [[o.model_dump(exclude={"duration_seconds"}) for o in run] for run in runs]
    assert dumps[0] == dumps[1]
    assert len(runs[0]) == len(TEXT_CHECK_CATALOG)
    checks = by_name(runs[0])
    assert checks["Metadata Segments Performance"].outcome in ("passed", "not_passed")
    assert checks["Text Embeddings Drift"].outcome == "not_passed"
    assert checks["Train Test Samples Mix"].values["n_test_samples"] == 150  # sampled
    assert not [o.name for o in runs[0] if o.outcome == "errored"]
    # another seed samples other rows
    other = run_text_checks(inputs, ["train_test_validation"], sample_size=150, seed=4)
    assert by_name(other)["Train Test Samples Mix"].value != \
        checks["Train Test Samples Mix"].value


def test_invalid_arguments_are_rejected():
    inputs = _inputs(None, corpus(120, seed=14))
    with pytest.raises(DeepfixInputError, match="suites"):
        run_text_checks(inputs, "data_integrity", sample_size=None, seed=0)
    with pytest.raises(DeepfixInputError, match="sample_size"):
        run_text_checks(inputs, ["data_integrity"], sample_size=10, seed=0)
    inputs.task = "regression"
    with pytest.raises(DeepfixInputError, match="classification"):
        run_text_checks(inputs, ["data_integrity"], sample_size=None, seed=0)
    bad = _inputs(None, corpus(120, seed=14))
    bad.test_labels = bad.test_labels[:10]
    with pytest.raises(DeepfixInputError, match="one label per text"):
        run_text_checks(bad, ["data_integrity"], sample_size=None, seed=0)
    wrong = _inputs(None, corpus(120, seed=14),
                    metadata={"test": pd.DataFrame({"tags": [["a", "b"]] * 120,
                                                    "stars": np.arange(120) % 5})})
    with pytest.raises(DeepfixInputError, match="Deepchecks cannot use the text data"):
        run_text_checks(wrong, ["data_integrity"], sample_size=None, seed=0)
