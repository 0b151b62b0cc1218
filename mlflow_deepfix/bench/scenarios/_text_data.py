"""Seeded, offline review texts for the text scenarios, and their usual model.

The text scenarios need a corpus that is (a) shipped with the code, because nothing
may be downloaded at run time, (b) identical for the same seed, and (c) realistic
enough that a healthy model is good but not perfect. Templated English reviews do
that: products (electronics, kitchen) and films, a binary ``sentiment`` label and a
three-class ``topic`` label, one to four sentences each. Neutral filler, chatty noise
words, generic subjects ("it", "this one"), negations and mixed reviews (a sentence of
the opposite polarity) keep a TF-IDF logistic regression near 0.9 accuracy rather
than 1.0, and a small share of flipped labels plays the part of annotator noise.

:func:`text_model` is the healthy model every text scenario fits; it reads the
``review`` column of the frame through a ``ColumnTransformer`` so that MLflow can log
the whole Pipeline and feed it the DataFrame. Everything here is module-level so
cloudpickle can serialise it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline

logger = logging.getLogger(__name__)

#: column names of every review frame
TEXT_COL = "review"
SENTIMENT = "sentiment"
TOPIC = "topic"

#: subjects, aspects and nouns per topic ("hotels" only appears in the drift scenario)
DOMAINS: dict[str, dict[str, tuple[str, ...]]] = {
    "electronics": {
        "subjects": (
            "the headphones",
            "this laptop",
            "the charger",
            "the speaker",
            "this phone",
            "the keyboard",
            "the camera",
            "the monitor",
            "the router",
            "this tablet",
        ),
        "aspects": (
            "battery",
            "screen",
            "sound",
            "build quality",
            "setup",
            "software",
            "display",
            "connection",
            "cable",
            "charging speed",
        ),
        "nouns": ("gadget", "device", "purchase", "piece of kit"),
    },
    "kitchen": {
        "subjects": (
            "this blender",
            "the kettle",
            "the frying pan",
            "the toaster",
            "this knife set",
            "the coffee maker",
            "the mixer",
            "the stock pot",
            "the rice cooker",
            "this grater",
        ),
        "aspects": (
            "handle",
            "lid",
            "finish",
            "heating",
            "cleanup",
            "blade",
            "grip",
            "size",
            "coating",
            "timer",
        ),
        "nouns": ("appliance", "kitchen tool", "purchase", "gift"),
    },
    "movies": {
        "subjects": (
            "the film",
            "this movie",
            "the sequel",
            "the documentary",
            "this series",
            "the show",
            "the thriller",
            "the comedy",
            "the remake",
            "this drama",
        ),
        "aspects": (
            "plot",
            "acting",
            "soundtrack",
            "ending",
            "pacing",
            "dialogue",
            "cast",
            "script",
            "cinematography",
            "lead actor",
        ),
        "nouns": ("film", "story", "watch", "evening"),
    },
    "hotels": {
        "subjects": (
            "the hotel",
            "our room",
            "the resort",
            "the hostel",
            "this guesthouse",
            "the lodge",
            "the suite",
            "the apartment",
        ),
        "aspects": (
            "breakfast",
            "reception",
            "pool",
            "bathroom",
            "location",
            "wifi",
            "mattress",
            "view",
            "parking",
            "staff",
        ),
        "nouns": ("stay", "holiday", "trip", "weekend"),
    },
}
#: the three topics of ordinary reviews (the drift scenario adds "hotels")
TOPICS = ("electronics", "kitchen", "movies")

POSITIVE_ADJECTIVES = (
    "great",
    "excellent",
    "wonderful",
    "fantastic",
    "solid",
    "reliable",
    "impressive",
    "lovely",
    "superb",
    "brilliant",
    "delightful",
    "sturdy",
    "charming",
    "smooth",
    "pleasant",
    "outstanding",
)
NEGATIVE_ADJECTIVES = (
    "terrible",
    "awful",
    "disappointing",
    "flimsy",
    "boring",
    "poor",
    "cheap",
    "useless",
    "broken",
    "dreadful",
    "mediocre",
    "frustrating",
    "clumsy",
    "weak",
    "noisy",
    "annoying",
)
POSITIVE_PHRASES = (
    "I would buy it again",
    "highly recommended",
    "worth every penny",
    "it exceeded my expectations",
    "I love it",
    "five stars from me",
    "a real pleasure",
    "I'm very happy with it",
    "I will tell my friends about it",
    "no complaints at all",
)
NEGATIVE_PHRASES = (
    "I want my money back",
    "a complete waste of money",
    "I wouldn't recommend it",
    "it fell apart quickly",
    "I regret this choice",
    "one star is too many",
    "avoid it",
    "I am sending it back",
    "never again",
    "what a letdown",
)
INTENSIFIERS = ("", "really ", "very ", "quite ", "pretty ", "so ", "truly ", "rather ")
GENERIC_SUBJECTS = ("it", "this one", "the thing")
FILLERS = (
    "I got it {when}.",
    "My {who} suggested it.",
    "It arrived {arrival}.",
    "I have had it for {n} weeks now.",
    "I read a few reviews before choosing.",
    "The price was {price} dollars.",
    "I went with my {who}.",
    "Nothing else to add.",
    "We tried it {when}.",
    "This is my {nth} review here.",
)
WHEN = ("last week", "on sale", "for my birthday", "in march", "yesterday", "a month ago")
WHO = ("sister", "brother", "friend", "colleague", "partner", "neighbour", "dad", "mum")
ARRIVAL = ("on time", "a day late", "early", "in a plain box", "well packed")
NTH = ("first", "second", "third", "fifth", "tenth")
NOISE_WORDS = ("honestly", "anyway", "tbh", "well", "so yeah", "btw", "ok", "hmm", "overall")


def _pick(rng: np.random.Generator, items: Sequence[str]) -> str:
    return items[int(rng.integers(len(items)))]


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _subject(rng: np.random.Generator, domain: str) -> str:
    if rng.random() < 0.35:
        return _pick(rng, GENERIC_SUBJECTS)
    return _pick(rng, DOMAINS[domain]["subjects"])


def sentiment_sentence(rng: np.random.Generator, domain: str, positive: bool) -> str:
    """One sentence of the given polarity about an item of ``domain``."""
    adjectives = POSITIVE_ADJECTIVES if positive else NEGATIVE_ADJECTIVES
    opposite = NEGATIVE_ADJECTIVES if positive else POSITIVE_ADJECTIVES
    phrases = POSITIVE_PHRASES if positive else NEGATIVE_PHRASES
    words = DOMAINS[domain]
    adj, intens = _pick(rng, adjectives), _pick(rng, INTENSIFIERS)
    template = int(rng.integers(7))
    if template == 0:
        return f"{_cap(_subject(rng, domain))} is {intens}{adj}."
    if template == 1:
        return f"The {_pick(rng, words['aspects'])} is {intens}{adj}."
    if template == 2:
        return f"I found the {_pick(rng, words['aspects'])} {adj}."
    if template == 3:
        return f"{_cap(_pick(rng, phrases))}, {_subject(rng, domain)} is {adj}."
    if template == 4:
        return f"Overall {_subject(rng, domain)} feels {intens}{adj}."
    if template == 5:  # negation: the opposite adjective, negated
        return f"{_cap(_subject(rng, domain))} is not {_pick(rng, opposite)}."
    return f"What a {adj} {_pick(rng, words['nouns'])}, {_pick(rng, phrases)}."


def filler_sentence(rng: np.random.Generator) -> str:
    """A neutral sentence that carries no sentiment."""
    return _pick(rng, FILLERS).format(
        when=_pick(rng, WHEN),
        who=_pick(rng, WHO),
        arrival=_pick(rng, ARRIVAL),
        n=int(rng.integers(2, 30)),
        price=int(rng.integers(9, 400)),
        nth=_pick(rng, NTH),
    )


def review(
    rng: np.random.Generator,
    domain: str,
    positive: bool,
    *,
    sentences: tuple[int, int] = (1, 4),
    filler_share: float = 0.3,
    mixed_share: float = 0.1,
) -> str:
    """One review: ``sentences`` (inclusive range) sentences, each neutral filler with
    probability ``filler_share``, else a sentiment sentence whose polarity is the
    review's own with probability ``1 - mixed_share``. The first sentence always
    carries the review's own sentiment, so that even one-sentence reviews say
    something."""
    n = int(rng.integers(sentences[0], sentences[1] + 1))
    parts = []
    for i in range(n):
        if i > 0 and rng.random() < filler_share:
            parts.append(filler_sentence(rng))
        else:
            polarity = positive if (i == 0 or rng.random() >= mixed_share) else not positive
            parts.append(sentiment_sentence(rng, domain, polarity))
    if rng.random() < 0.2:
        parts.insert(int(rng.integers(len(parts) + 1)), f"{_cap(_pick(rng, NOISE_WORDS))}.")
    return " ".join(parts)


def make_reviews(
    n: int,
    seed: int,
    *,
    positive_share: float = 0.5,
    topics: Sequence[str] = TOPICS,
    sentences: tuple[int, int] = (1, 4),
    filler_share: float = 0.3,
    mixed_share: float = 0.1,
    label_noise: float = 0.03,
) -> pd.DataFrame:
    """``n`` seeded reviews: columns ``review`` (text), ``topic`` (one of ``topics``)
    and ``sentiment`` (1 = positive, 0 = negative).

    ``label_noise`` of the sentiment labels are flipped after the text is written (an
    annotator's slips); ``positive_share`` sets the class balance.
    """
    if not 0.0 <= positive_share <= 1.0:
        raise ValueError(f"positive_share must be in [0, 1], got {positive_share}")
    unknown = [t for t in topics if t not in DOMAINS]
    if unknown:
        raise ValueError(f"unknown topics {unknown}; choose from {sorted(DOMAINS)}")
    rng = np.random.default_rng(seed)
    positive = rng.random(n) < positive_share
    topic = np.array([_pick(rng, topics) for _ in range(n)], dtype=object)
    texts = [
        review(
            rng,
            str(t),
            bool(p),
            sentences=sentences,
            filler_share=filler_share,
            mixed_share=mixed_share,
        )
        for t, p in zip(topic, positive)
    ]
    labels = positive.astype(int)
    flipped = rng.random(n) < label_noise
    labels[flipped] = 1 - labels[flipped]
    return pd.DataFrame({TEXT_COL: texts, TOPIC: topic, SENTIMENT: labels})


#: what chatty forum posts add between the sentences of a review
RAMBLE = (
    "Let me tell you the whole story.",
    "So anyway where was I.",
    "And then my {who} called about something else entirely.",
    "I know this is long but bear with me.",
    "Long story short, it took ages.",
    "We had been looking for weeks, {when} we finally decided.",
    "Not that anyone asked, but here goes.",
    "Edit: fixed a typo.",
)


def forum_reviews(
    n: int,
    seed: int,
    *,
    positive_share: float = 0.5,
    shouting_share: float = 0.5,
) -> pd.DataFrame:
    """Reviews as posted on a chatty forum rather than the shop: the same topics and
    sentiment, but six to ten sentences plus two to four rambling asides, and
    ``shouting_share`` of them written in capitals with '!!!' -- a style (length,
    case, punctuation) the shop reviews never show."""
    frame = make_reviews(
        n, seed, positive_share=positive_share, sentences=(6, 10), filler_share=0.4
    )
    rng = np.random.default_rng(seed + 1)
    texts = []
    for text in frame[TEXT_COL]:
        sentences = text.split(". ")
        for _ in range(int(rng.integers(2, 5))):
            aside = _pick(rng, RAMBLE).format(who=_pick(rng, WHO), when=_pick(rng, WHEN))
            sentences.insert(int(rng.integers(len(sentences) + 1)), aside.rstrip("."))
        text = ". ".join(s.rstrip(".") for s in sentences) + "."
        if rng.random() < shouting_share:
            text = text.upper().replace(".", "!!!")
        texts.append(text)
    frame[TEXT_COL] = texts
    return frame


#: UTF-8 text decoded as Latin-1 / cp1252: how curly quotes, stars and non-breaking
#: spaces look after a broken export
MOJIBAKE_APOSTROPHE = "\u00e2\u20ac\u2122"  # "’" read as cp1252
MOJIBAKE_NBSP = "\u00c2\u00a0"  # a non-breaking space read as Latin-1
MOJIBAKE_STARS = "\u00e2\u02dc\u2026"  # "★" read as cp1252
EMOJI = ("\U0001f60d", "\U0001f44d", "\U0001f525", "\U0001f621", "\U0001f44e", "\U0001f4af")


def scrape_damage(texts: pd.Series, seed: int, share: float) -> pd.Series:
    """``share`` of ``texts`` as a broken scraper delivers them: wrapped in HTML markup
    with ``<br/>`` and ``&nbsp;`` between sentences, 70% of the spaces turned into a
    mojibake non-breaking space (``"Â"`` glued to the previous word, so the word
    becomes a token no model has seen), apostrophes as ``"â€™"``, a mojibake star
    rating in front and emoji at the end."""
    rng = np.random.default_rng(seed)
    out = texts.astype(object).copy()
    for i in np.flatnonzero(rng.random(len(out)) < share):
        text = str(out.iloc[i]).replace("'", MOJIBAKE_APOSTROPHE)
        text = text.replace(". ", ".<br/>&nbsp;")
        text = "".join(MOJIBAKE_NBSP if (c == " " and rng.random() < 0.7) else c for c in text)
        stars = MOJIBAKE_STARS * int(rng.integers(1, 6))
        emoji = "".join(_pick(rng, EMOJI) for _ in range(int(rng.integers(1, 4))))
        out.iloc[i] = f'<div class="review-body"><p>{stars} {text}</p></div> {emoji}'
    return out


def text_model(seed: int, text_col: str = TEXT_COL, C: float = 20.0) -> Pipeline:
    """The healthy text model: word uni- and bigram TF-IDF on ``text_col`` (other
    columns dropped) and a logistic regression. A single column *name* makes the
    ColumnTransformer pass a 1-D series of strings, as TfidfVectorizer expects.

    ``C`` is weak regularisation on purpose: with the default ``C=1`` (and still at 2)
    the probabilities on these unit-length TF-IDF vectors are far too timid (expected
    calibration error 0.13-0.18 on the clean splits, against 0.04-0.06 at 20, for the
    same accuracy), which a clean control must not show."""
    vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)
    return Pipeline(
        [
            ("tfidf", ColumnTransformer([("tfidf", vectorizer, text_col)])),
            ("model", LogisticRegression(C=C, max_iter=2000, random_state=seed)),
        ]
    )


def normalized(texts: pd.Series) -> pd.Series:
    """Texts lower-cased with punctuation and repeated spaces removed: how duplicate
    detectors (and the tests) compare reviews, so case or punctuation variants of one
    review count as the same text."""
    return (
        texts.astype(str)
        .str.lower()
        .str.replace(r"[^\w\s]", "", regex=True)
        .str.replace(r"\s+", " ", regex=True)
        .str.strip()
    )
