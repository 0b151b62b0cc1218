"""data_type_issues: mixed types, string mismatches, special characters, malformed values."""

from __future__ import annotations

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import SOURCES, Rule, interp, pct
from deepfix_agents.rules._runtime import crash_detail, crash_score, crashes_for
from deepfix_agents.rules.prediction_drift import moved_features

#: share of rows holding a case/space/punctuation variant of another value -> score
VARIANT_SCORE = ((0.005, 0.0), (0.02, 0.2), (0.05, 0.35), (0.1, 0.45), (0.2, 0.6), (0.35, 0.7))
#: spelling variants split categories but keep their information: never critical
MAX_VARIANT_SCORE = 0.75
#: numbers and text mixed in one column (a few '?' / 'n/a' markers, mixed exports)
MIXED_SCORE = 0.45
#: a quantity stored as text: a high-cardinality "category" of numbers, so the order
#: and magnitude of the values are lost and most test values are unseen
NUMBERS_AS_TEXT_SCORE = 0.65
#: plain numeric strings that repeat a lot may be codes (zip codes, product numbers)
#: that are rightly categorical: worth a look, not an alarm
NUMERIC_CODES_SCORE = 0.35
#: a text column of a few distinct values that all read as numbers: an ordered scale
#: (ratings, counts, years) read as unordered categories. One-hot encoding keeps each
#: level, so little is lost unless the order matters: worth a look, low
FEW_NUMBERS_AS_TEXT_SCORE = 0.3
#: a text column holds numbers as text when at least this share of its values read as
#: numbers and it has more distinct values than a short code list
NUMERIC_TEXT_SHARE, NUMERIC_TEXT_MIN_UNIQUE, NUMERIC_TEXT_MIN_UNIQUE_SHARE = 0.95, 20, 0.05
#: quantities are mostly distinct; codes repeat
QUANTITY_UNIQUE_SHARE = 0.5
#: added per further affected feature, up to MAX_COLUMN_BONUS
COLUMN_BONUS, MAX_COLUMN_BONUS = 0.05, 0.1
#: columns the model does not read weigh less
NON_FEATURE_FACTOR = 0.5
#: share of test rows holding a number never seen in training in a column of numbers
#: read as categories -> score: each such number is an unknown category to the model,
#: read on the scale unseen_categories reads a share of rows with unknown categories
#: (without its discount for near-unique columns: new values are normal for a quantity,
#: which is why reading one as categories is the bug)
UNSEEN_NUMBERS_SCORE = (
    (0.01, 0.0), (0.03, 0.2), (0.1, 0.45), (0.25, 0.65), (0.5, 0.8), (0.8, 0.9)
)
#: Deepchecks' share of samples holding only special characters -> score
SPECIAL_SCORE = ((0.001, 0.0), (0.01, 0.2), (0.05, 0.35), (0.2, 0.5))
#: text: share of tokens the model's tokenizer maps to [UNK] (Unknown Tokens) -> score;
#: a clean English corpus stays far below 0.5%
UNKNOWN_TOKEN_SCORE = ((0.002, 0.0), (0.01, 0.25), (0.03, 0.45), (0.08, 0.65), (0.2, 0.8))
#: text: share of texts made of more than 20% special characters (mojibake, markup) -> score
SPECIAL_TEXT_SCORE = ((0.01, 0.0), (0.03, 0.25), (0.1, 0.45), (0.25, 0.65), (0.5, 0.8))
_TEXT_KINDS = ("categorical", "text", "other")


def _numbers_as_text(column) -> float | None:
    """Score of a text column that holds numbers, or None.

    Formatted numbers (currency signs, separators: they make the column mix numbers and
    text) or mostly distinct numeric strings are quantities read as categories (0.65);
    plain numeric strings that repeat may be codes (0.35); a few (3 to 19) distinct
    values that all read as numbers are an ordered scale read as categories (0.3). Without the
    ``numeric_string_fraction`` statistic, only a high-cardinality column mixing
    numbers and text is recognised.
    """
    if column.kind not in _TEXT_KINDS:
        return None
    many = (
        column.n_unique >= NUMERIC_TEXT_MIN_UNIQUE
        and column.unique_fraction >= NUMERIC_TEXT_MIN_UNIQUE_SHARE
    )
    if not many:
        if (
            column.numeric_string_fraction is not None
            and column.numeric_string_fraction >= NUMERIC_TEXT_SHARE
            and column.n_unique >= 3
        ):
            return FEW_NUMBERS_AS_TEXT_SCORE
        return None
    if column.numeric_string_fraction is not None:
        if column.numeric_string_fraction < NUMERIC_TEXT_SHARE:
            return None
        if column.mixed_types or column.unique_fraction >= QUANTITY_UNIQUE_SHARE:
            return NUMBERS_AS_TEXT_SCORE
        return NUMERIC_CODES_SCORE
    if column.mixed_types and column.unique_fraction >= 0.3:
        return NUMBERS_AS_TEXT_SCORE
    return None


def _problems(column) -> list[tuple[float, str, str, float | None]]:
    """(score, kind, detail, share) for each type problem of one column."""
    found = []
    as_text = _numbers_as_text(column)
    if as_text is not None:
        found.append(
            (
                as_text,
                "numbers_as_text",
                (
                    f"{column.name!r} holds numbers stored as text ({column.n_unique} distinct values, "
                    f"dtype {column.dtype}, read as {column.kind})"
                ),
                column.numeric_string_fraction,
            )
        )
    elif column.mixed_types:
        found.append(
            (MIXED_SCORE, "mixed", f"{column.name!r} mixes value types (numbers and text)", None)
        )
    if column.string_mismatch_fraction > 0:
        score = interp(column.string_mismatch_fraction, VARIANT_SCORE)
        if score > 0:
            found.append(
                (
                    score,
                    "variants",
                    (
                        f"{pct(column.string_mismatch_fraction)} of {column.name!r} rows are case, "
                        "whitespace or punctuation variants of another value"
                    ),
                    column.string_mismatch_fraction,
                )
            )
    return found


@register_rule
class DataTypeIssues(Rule):
    id = "data_type_issues"
    name = "Malformed values or mixed types"
    detects = (
        "Columns that mix numbers and text, quantities stored as formatted text ('$52,300'), "
        "categories written in several spellings ('Premium', 'premium ', 'PREMIUM'), and "
        "values made of special characters only."
    )
    why = (
        "The model sees each spelling as a different value and each formatted number as an "
        "unordered category: a category's rows are split over several codes, the order and "
        "magnitude of numbers are lost, and values never seen in training appear at "
        "inference. The pipeline runs, but learns from a scrambled version of the data."
    )
    example = (
        "Income arrives as '$52,300', '52,300.00' or '52300'; the pipeline one-hot encodes it, "
        "so every income is its own category and the model cannot use it."
    )
    fixes = (
        (
            "Parse numbers at load time: `df['income'] = pd.to_numeric(df['income'].str.replace("
            "r'[$,%\\s]', '', regex=True), errors='coerce')`, and declare dtypes when reading "
            "(`pd.read_csv(..., dtype={...}, thousands=',')`)."
        ),
        (
            "Normalise categories before encoding: `df[c] = df[c].str.strip().str.lower()`, and "
            "map known aliases to one canonical value."
        ),
        (
            "Convert placeholder strings ('?', '-', 'n/a') to missing values "
            "(`na_values=['?', '-', 'n/a']`) and impute them inside the pipeline."
        ),
        (
            "Validate dtypes and allowed values at the pipeline boundary (e.g. a pandera schema) "
            "so a change in the export format fails loudly."
        ),
    )
    severity_policy = (
        "Per feature: numbers stored as text (>= 95% of values read as numbers once currency "
        "signs and separators are removed, or numbers mixed with formatted text, with >= 20 "
        "distinct values): 0.65 when formatted or mostly distinct (>= 50%), else 0.35 (may be "
        "codes such as zip codes); 3 to 19 distinct values that all read as numbers (an "
        "ordered scale read as categories; one-hot keeps the levels): 0.3; numbers and text mixed: "
        "0.45; case/whitespace variants, share of rows 2% -> 0.2, 5% -> 0.35, 10% -> 0.45, "
        "20% -> 0.6, 35% -> 0.7 (variants keep their information: never above 0.75). +0.05 per "
        "further affected feature (up to +0.1); x0.5 for columns the model does not read. Numbers "
        "stored as text whose test values read as numbers too, by the share of test rows holding "
        "a number never seen in training (each an unknown category once read as categories): "
        "3% -> 0.2, 10% -> 0.45, 25% -> 0.65, 50% -> 0.8 (+ the column bonus); the unseen "
        "categories of such a column are this finding's symptom. Deepchecks' Mixed Data Types / String Mismatch "
        "corroborate (0.3); Special Characters share 1% -> 0.2, 5% -> 0.35, 20% -> 0.5."
    )
    explains = (
        "unseen_categories",
        "feature_drift",
        "overfitting",
        "underfitting",
        "unused_features",
        "weak_segment",
        "prediction_drift",
    )
    modality_fixes = {
        "text": (
            "Clean texts the same way at training and inference: strip markup "
            "(`BeautifulSoup(t, 'html.parser').get_text()`), repair broken encodings "
            "(`ftfy.fix_text`), normalise unicode (NFKC) and whitespace.",
            "Fix the source: decode files with the right encoding (UTF-8 vs cp1252), and make "
            "the scraper or export keep plain text.",
            "If emoji and symbols carry meaning, map them to words (`emoji.demojize`) or use a "
            "tokenizer whose vocabulary covers them, and add such texts to training.",
            "Monitor the share of unknown tokens per batch and alert when it rises.",
        ),
    }
    checks = (
        "Mixed Data Types",
        "String Mismatch",
        "Special Characters",
        "String Mismatch Comparison",
    )
    check_score = 0.3

    def detect_runtime(self, artifact):
        """The model crashed on the types of its input (text where it expects numbers)."""
        for failure in crashes_for(artifact, self.id):
            counts = failure.non_numeric_counts
            column = max(counts, key=lambda c: (counts[c], c)) if counts else None
            yield self.signal(
                "runtime",
                score=crash_score(failure),
                confidence=0.85 if counts else 0.6,
                detail=crash_detail(failure, counts, "non-numeric value(s)"),
                value=sum(counts.values()) or None,
                column=column,
                columns=sorted(counts),
                crashed=True,
                crash_fix=(
                    f"Convert {column!r} to the type the model was trained on before predict "
                    "(pd.to_numeric(df[col], errors='coerce') and an imputer, or an encoder "
                    "step in the pipeline); find where text entered a numeric column."
                    if column else
                    "Cast the evaluation columns to the dtypes of the model signature before "
                    "predict, inside the model's pipeline so serving does the same."
                ),
            )

    def detect_dataset(self, artifact):
        dataset = artifact.dataset
        features = set(dataset.feature_names)
        problems: dict[str, list[tuple[float, str, str, float | None]]] = {}
        for split in (dataset.train, dataset.test):
            if split is None:
                continue
            for column in split.columns:
                if column.name == dataset.target or column.name in problems:
                    continue
                found = _problems(column)
                if found:
                    factor = 1.0 if column.name in features else NON_FEATURE_FACTOR
                    problems[column.name] = [(s * factor, k, d, v) for s, k, d, v in found]
        if not problems:
            return
        affected = sorted(problems)
        bonus = min(COLUMN_BONUS * (len(affected) - 1), MAX_COLUMN_BONUS)
        ranked = sorted(
            ((s, name, k, d, v) for name, found in problems.items() for s, k, d, v in found),
            key=lambda t: (-t[0], t[1], t[2]),
        )
        yield from self._unseen_numbers(artifact, problems, bonus, affected)
        for score, name, kind, detail, share in ranked[:4]:
            total = score + bonus
            if kind == "variants":
                total = min(total, MAX_VARIANT_SCORE)
            yield self.signal(
                "dataset",
                score=total,
                confidence=0.9 if kind != "mixed" else 0.8,
                detail=detail
                + (f"; {len(affected)} columns affected" if len(affected) > 1 else ""),
                value=share,
                column=name,
                problem=kind,
                n_columns=len(affected),
                columns=affected,
            )

    def _unseen_numbers(self, artifact, problems, bonus, affected):
        """The reach of numbers stored as text: the test rows whose number in such a column
        never occurs in training. Read as categories, each new number is an unknown
        category (the rows get a default guess), so the share of test rows hit is the type
        problem's measured harm, and the unseen categories found there are its symptom.
        Only when the test values read as numbers too: a new *text* value in a column of
        numeric codes is a new category (an independent bug), not a new number."""
        dataset = artifact.dataset
        comparison = dataset.comparison
        if comparison is None or dataset.test is None:
            return
        features = set(dataset.feature_names)
        for name in sorted(problems):
            kinds = {kind for _, kind, _, _ in problems[name]}
            if name not in features or "numbers_as_text" not in kinds:
                continue
            test = dataset.test.column(name)
            share = comparison.unseen_category_fraction.get(name) or 0.0
            if test is None or (test.numeric_string_fraction or 0.0) < NUMERIC_TEXT_SHARE:
                continue
            score = interp(share, UNSEEN_NUMBERS_SCORE)
            if score <= 0:
                continue
            yield self.signal(
                "dataset",
                score=score + bonus,
                confidence=0.9,
                detail=(
                    f"{pct(share)} of test rows hold a number in {name!r} never seen in train: "
                    "read as categories, each is unknown to the model"
                    + (f"; {len(affected)} columns affected" if len(affected) > 1 else "")
                ),
                value=share,
                column=name,
                problem="numbers_as_text",
                unseen_share=share,
                n_columns=len(affected),
                columns=affected,
            )

    def detect_deepchecks(self, artifact):
        """Mixed Data Types / String Mismatch (Comparison): ``values`` keyed by column.
        String Mismatch's ``variant_fraction_<column>`` counts every row of a base form
        that has variants, the canonical spelling included (one stray 'Yes' next to 500
        'yes' counts all 501), so it names the column but does not set the score; our
        own ``string_mismatch_fraction`` counts only the minority spellings. Special
        Characters: ``values`` is each column's share of rows made of special characters
        only."""
        features = set(artifact.dataset.feature_names)
        for name in ("Mixed Data Types", "String Mismatch", "String Mismatch Comparison"):
            check = artifact.check(name)
            if check is None or check.outcome != "not_passed":
                continue
            variants = sorted(
                (
                    (k[len("variant_fraction_") :], v)
                    for k, v in check.values.items()
                    if k.startswith("variant_fraction_")
                    and k[len("variant_fraction_") :] in features
                    and v
                ),
                key=lambda kv: (-kv[1], kv[0]),
            )
            columns = [c for c, _ in variants] or sorted(c for c in check.values if c in features)
            yield self.check_signal(
                check,
                score=self.check_score,
                confidence=0.6,
                **({"column": columns[0]} if columns else {}),
            )
        if artifact.modality == "text":
            yield from self._text_signals(artifact)
            return
        check = artifact.check("Special Characters")
        if check is not None and check.outcome == "not_passed":
            known = {
                c.name
                for split in (artifact.dataset.train, artifact.dataset.test)
                if split
                for c in split.columns
            }
            shares = sorted(
                (
                    (c, v)
                    for c, v in check.values.items()
                    if c in known and v is not None and 0 < v <= 1
                ),
                key=lambda kv: (-kv[1], kv[0]),
            )
            if shares:
                column, share = shares[0]
                score = interp(share, SPECIAL_SCORE) * (
                    1.0 if column in features else NON_FEATURE_FACTOR
                )
                if score > 0:
                    yield self.check_signal(
                        check, score=score, confidence=0.6, column=column, special_share=share
                    )
            else:
                yield self.check_signal(check, score=0.2, confidence=0.5)

    def _text_signals(self, artifact):
        """Unknown Tokens (share of [UNK] tokens) and Special Characters (share of texts
        that are more than 20% special characters), from Deepchecks' NLP suite."""
        for name, table, fact in (
            ("Unknown Tokens", UNKNOWN_TOKEN_SCORE, "unknown_share"),
            ("Special Characters", SPECIAL_TEXT_SCORE, "special_text_share"),
        ):
            check = artifact.check(name)
            if check is None or check.outcome != "not_passed" or not check.value:
                continue
            score = interp(check.value, table)
            if score > 0:
                yield self.check_signal(check, score=score, confidence=0.75, **{fact: check.value})

    def explains_for(self, artifact):
        """Malformed texts (markup, mojibake, emoji) move the text properties too: here the
        property drift is their symptom. On tables, mistyped values move the statistics
        *of their own columns*; a column that moved by a large effect without a type
        problem is an independent bug (drift keeps its own finding, and so do the
        outputs it moved)."""
        if artifact.modality == "text":
            return (*self.explains, "feature_drift")
        mistyped = set()
        for source in SOURCES:
            for signal in self.detect(source, artifact):
                mistyped.update(signal.facts.get("columns") or ())
                if signal.facts.get("column"):
                    mistyped.add(signal.facts["column"])
        if any(name not in mistyped for name in moved_features(artifact)):
            return tuple(
                c for c in self.explains if c not in ("feature_drift", "prediction_drift")
            )
        return self.explains

    def title(self, signals, artifact):
        if self.fact(signals, "crashed"):
            column = self.fact(signals, "column")
            where = f" ({column!r} holds text where numbers are expected)" if column else ""
            return f"The model crashes on the types of its input{where}"
        unknown = self.fact(signals, "unknown_share")
        special = self.fact(signals, "special_text_share")
        if unknown is not None or special is not None:
            parts = []
            if unknown is not None:
                parts.append(f"{pct(unknown)} of tokens are unknown to the tokenizer")
            if special is not None:
                parts.append(f"{pct(special)} of texts are mostly special characters")
            return "Malformed text: " + "; ".join(parts)
        strongest = self.strongest(signals)
        column = strongest.facts.get("column") or self.fact(signals, "column")
        problem = strongest.facts.get("problem")
        n = self.fact(signals, "n_columns", 1)
        more = f" (and {n - 1} more column(s) with type problems)" if n > 1 else ""
        if problem == "numbers_as_text":
            unseen = strongest.facts.get("unseen_share")
            reach = (
                f"; {pct(unseen)} of test rows hold a number it never saw" if unseen else ""
            )
            return (
                f"{column!r} holds numbers stored as text, so the model treats them as "
                f"categories{reach}{more}"
            )
        if problem == "variants":
            share = strongest.evidence.value or 0.0
            return (
                f"{pct(share)} of {column!r} values are spelling variants of another category{more}"
            )
        if problem == "mixed":
            return f"{column!r} mixes numbers and text{more}"
        share = self.fact(signals, "special_share")
        if share is not None:
            return f"{pct(share)} of {column!r} values are special characters only"
        if column:
            return f"Deepchecks finds type problems in {column!r}"
        return self.name

    def explanation(self, signals, artifact):
        if artifact.modality == "text":
            return (
                "Part of the text is not ordinary words: markup left by a scraper, broken "
                "encodings (mojibake such as 'Ã©'), emoji or symbols. The tokenizer maps such "
                "pieces to unknown tokens or splits them into meaningless fragments, so the "
                "model reads noise where the training texts had words, and its predictions on "
                "those texts degrade."
            )
        problem = self.strongest(signals).facts.get("problem")
        if problem == "numbers_as_text":
            return (
                "A column that should be a number arrives as text (with currency signs, thousands "
                "separators or mixed formats). The pipeline then treats every distinct amount as "
                "its own category: the model cannot tell that 52,000 is close to 53,000, and new "
                "amounts at prediction time are unknown to it. Parse the column into numbers "
                "before training."
            )
        if problem == "variants":
            return (
                "The same category is written in several ways (different case, extra spaces or "
                "punctuation). The model treats each spelling as a different value, so what it "
                "learns about a category is split across its variants, and new spellings at "
                "prediction time look unknown. Normalise the text before encoding it."
            )
        return (
            "Some columns hold values of different types or malformed entries (numbers mixed with "
            "text, placeholder symbols). Depending on the pipeline they are silently turned into "
            "categories, dropped or misread, so the model learns from a distorted column."
        )
