"""Privacy levels: what of the user's data may end up in artifacts, tags, metrics and logs.

The testing step keeps aggregates, never rows, but two paths used to carry single
values out anyway: exception messages (``could not convert string to float:
'ZQ-CUSTOMER-00512'``) were copied verbatim, and exact extremes of a column are the
value of one row. This module is the one place that decides what is kept, applied to
:class:`ArtifactData` before the diagnosis sees it (so findings built from it are clean
by construction), to the :class:`Diagnosis` afterwards, and to log records while an
evaluation runs.

``default``
    exception text is kept but scrubbed of quoted literals and of any value that matches
    a cell of the evaluated frames; numeric summaries are rounded to 3 significant
    digits (the extremes themselves are robust quantiles, p0.5/p99.5, see
    ``testing.stats.columns``).
``strict``
    exception text, extremes (min/max/q01/q99, and the outlier gap read off the extreme
    values), the text details of checks and the category values of segments are dropped;
    counts, shares, dtypes and column names stay.
"""

from __future__ import annotations

import logging
import math
import re
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from mlflow_deepfix.schemas import ArtifactData, Diagnosis

PRIVACY_LEVELS: tuple[str, ...] = ("default", "strict")

#: what replaces a scrubbed value in text
REDACTED = "<redacted>"
#: what strict mode leaves of a category value or an exception message
HIDDEN = "(hidden: privacy=strict)"
SIGNIFICANT_DIGITS = 3
#: distinct cell values remembered per frame; beyond this the rarest are not needed
#: (a value seen many times identifies nobody), the unique ones are all kept first
_MAX_CELLS = 200_000
#: integers this small are counts and shapes far more often than identifying values
_SMALL_INTEGER = 10_000
#: cells shorter than this are common words ("no", "red"), not identifying values
_MIN_CELL_LENGTH = 3
#: a text value held by at least this many rows is a category level shared by a group
#: ("partner", "north"), not one row's value: it stays readable (segments and slices are
#: named by it); rarer values (ids, names, free text) are scrubbed
_GROUP_SIZE = 5
#: a number written with at most this many significant digits is as coarse as the
#: summaries we store (see SIGNIFICANT_DIGITS) and identifies no row; longer ones
#: (987654.000123) may be one row's exact value and are scrubbed when they match a cell
_COARSE_DIGITS = 3
#: rows per column chunk when looking numbers up in the frames
_LOOKUP_CHUNK = 262_144

#: a quoted literal: the quote is not an apostrophe inside a word ("model's")
_QUOTED = re.compile(r"""(?<!\w)(?P<q>['"])(?P<body>(?:(?!(?P=q)).){1,200}?)(?P=q)(?!\w)""")
_TOKEN = re.compile(r"[\w.\-+@/#]+")
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")

#: ``outlier_gap`` is the ratio (in decades) of two single rows' values, the edges of an
#: empty interval among the extreme values: dropped with the extremes themselves
_EXTREMES = ("min", "max", "q01", "q99", "outlier_gap")
_ROUNDED = ("mean", "std", "min", "max", "q01", "q50", "q99", "outlier_gap")


def round_significant(value: float | None, digits: int = SIGNIFICANT_DIGITS) -> float | None:
    """``value`` rounded to ``digits`` significant digits (None, 0, inf and NaN unchanged)."""
    if value is None or not math.isfinite(value) or value == 0:
        return value
    return float(f"{value:.{digits - 1}e}")


class Scrubber:
    """Removes values of the evaluated frames from free text.

    Built once per evaluation; column names are never scrubbed (they are schema, and the
    diagnosis needs them). String cells are indexed up front (their counts decide what
    is a group's category level). Numeric cells are *not*: sorting every distinct number
    of a 1M-row frame cost seconds and hundreds of MB on every evaluation, while only the
    few long numbers that actually appear in stored text need checking. Those are looked
    up lazily against the frames, all pending ones in one chunked scan
    (:meth:`learn` collects the numbers of a whole artifact first), and remembered.
    """

    def __init__(self, frames: Iterable[pd.DataFrame | None], *, keep: Iterable[str] = ()):
        self.keep = {str(k) for k in keep}
        self.strings: set[str] = set()
        self.phrases: list[str] = []
        #: numbers written in string cells (bounded by _MAX_CELLS per column)
        self._text_numbers: set[float] = set()
        #: (frame, positions of its numeric columns): read in chunks at lookup time
        self._numeric: list[tuple[pd.DataFrame, list[int]]] = []
        #: number -> whether some cell holds it, for every number looked up so far
        self._known: dict[float, bool] = {}
        self._lock = threading.Lock()
        for frame in frames:
            if frame is None:
                continue
            self.keep.update(str(c) for c in frame.columns)
            numeric = []
            for index, dtype in enumerate(frame.dtypes):
                if _is_plain_number(dtype):
                    numeric.append(index)
                elif not (ptypes.is_bool_dtype(dtype) or ptypes.is_datetime64_any_dtype(dtype)):
                    self._remember(frame.iloc[:, index])
            if numeric:
                self._numeric.append((frame, numeric))
        self.strings -= self.keep
        # values with characters outside a token are found by substring search instead
        self.phrases = sorted(
            {s for s in self.strings if _TOKEN.fullmatch(s) is None}, key=len, reverse=True
        )

    def _remember(self, column: pd.Series) -> None:
        for text, count in _rarest_texts(column):
            text = text.strip()
            if len(text) >= _MIN_CELL_LENGTH and count < _GROUP_SIZE:
                self.strings.add(text)
            number = _as_number(text)
            if number is not None and not _is_small_integer(number):
                self._text_numbers.add(number)

    # ------------------------------------------------------------------ numbers
    def learn(self, texts: Iterable[str | None]) -> None:
        """Look up, in one scan of the frames, every long number written in ``texts``
        (the texts about to be scrubbed), so that scrubbing them scans nothing."""
        pending: set[float] = set()
        for text in texts:
            if text:
                pending.update(_long_numbers(text))
        self._lookup(pending)

    def _is_cell_number(self, number: float) -> bool:
        if number not in self._known:
            self._lookup({number})
        return self._known[number]

    def _lookup(self, numbers: set[float]) -> None:
        with self._lock:
            todo = np.array(sorted(n for n in numbers if n not in self._known), dtype=float)
            if todo.size == 0:
                return
            found = np.array([n in self._text_numbers for n in todo.tolist()], dtype=bool)
            for chunk in self._numeric_chunks():
                at = np.minimum(np.searchsorted(todo, chunk), todo.size - 1)
                found[at[todo[at] == chunk]] = True
            self._known.update(zip(todo.tolist(), found.tolist()))

    def _numeric_chunks(self) -> Iterator[np.ndarray]:
        """Every numeric cell as float, one column chunk at a time (bounded memory)."""
        for frame, positions in self._numeric:
            for position in positions:
                column = frame.iloc[:, position]
                for start in range(0, len(column), _LOOKUP_CHUNK):
                    part = column.iloc[start : start + _LOOKUP_CHUNK]
                    yield part.to_numpy(dtype=float, na_value=np.nan)

    # ------------------------------------------------------------------ text
    def scrub(self, text: str | None, *, exception: bool = False) -> str | None:
        """``text`` without cell values; ``exception=True`` also drops every quoted
        literal that is not a column name (exception messages quote the bad value)."""
        if not text:
            return text
        if exception:
            text = _QUOTED.sub(self._quoted, text)
        for phrase in self.phrases:
            if phrase in text:
                text = text.replace(phrase, REDACTED)
        return _TOKEN.sub(self._token, text)

    def _quoted(self, match: re.Match) -> str:
        body = match.group("body")
        if body in self.keep or body == REDACTED:
            return match.group(0)
        return f"{match.group('q')}{REDACTED}{match.group('q')}"

    def _token(self, match: re.Match) -> str:
        token = match.group(0)
        if token in self.keep or token == REDACTED:
            return token
        bare = token.strip(".-+/#@")
        if token in self.strings or bare in self.strings:
            return REDACTED
        if any(self._is_cell_number(n) for n in _token_numbers(token)):
            return REDACTED
        return token


def _is_plain_number(dtype: Any) -> bool:
    return ptypes.is_float_dtype(dtype) or (
        ptypes.is_integer_dtype(dtype) and not isinstance(dtype, pd.CategoricalDtype)
    )


def _is_small_integer(number: float) -> bool:
    """Integers this small are counts and shapes far more often than identifying values."""
    return number == round(number) and abs(number) < _SMALL_INTEGER


def _long_number(bare: str) -> float | None:
    """``bare`` as a number when it could be one row's exact value: written with more
    than _COARSE_DIGITS significant digits and not a small integer; else None."""
    number = _as_number(bare)
    if number is None or _significant_digits(bare) <= _COARSE_DIGITS:
        return None
    return None if _is_small_integer(number) else number


def _token_numbers(token: str) -> list[float]:
    """The long numbers a token may stand for: as written without its punctuation, and
    negated when a minus sign leads it (``-135.2558`` may be a cell of -135.2558)."""
    number = _long_number(token.strip(".-+/#@"))
    if number is None:
        return []
    return [number, -number] if token.lstrip(".+/#@").startswith("-") else [number]


def _long_numbers(text: str) -> Iterator[float]:
    for match in _TOKEN.finditer(text):
        yield from _token_numbers(match.group(0))


def _rarest_texts(column: pd.Series) -> Iterator[tuple[str, int]]:
    """(value as text, rows holding it), rarest first, at most _MAX_CELLS of them.
    Counted on the raw values first (hashing a million objects is cheap, turning each
    into a string is not), then merged by their text ("1" and 1 read the same)."""
    try:
        raw = column.value_counts(dropna=True, sort=False)
        raw = raw[raw > 0]  # a categorical's unused levels
        counts = raw.groupby(raw.index.astype(str), sort=False).sum()
    except (TypeError, ValueError):  # unhashable cells: as text, one by one
        counts = column.dropna().astype(str).value_counts()
    counts = counts.sort_values(kind="stable")
    yield from counts.iloc[:_MAX_CELLS].items()


def _significant_digits(text: str) -> int:
    """Significant digits of a number as written: ``6.7`` -> 2, ``987654.000123`` -> 12."""
    mantissa = re.split(r"[eE]", text, maxsplit=1)[0]
    return len(re.sub(r"\D", "", mantissa).strip("0")) or 1


def _as_number(text: str) -> float | None:
    """``text`` as a finite float when it is written as a number, else None."""
    if not _NUMBER.match(text):
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


# --------------------------------------------------------------------------- artifacts


def protect_artifact(artifact: ArtifactData, scrubber: Scrubber, level: str) -> ArtifactData:
    """``artifact`` as the privacy ``level`` allows it to be stored and diagnosed."""
    _check_level(level)
    strict = level == "strict"
    data = artifact.model_dump()
    scrubber.learn(_texts(data))
    for failure in data["runtime_failures"]:
        failure["message"] = HIDDEN if strict else scrubber.scrub(failure["message"], exception=True)
    for check in data["checks"]:
        if check["reason"]:
            check["reason"] = _reason(check["reason"], check["outcome"], scrubber, strict)
        check["details"] = {} if strict else {
            k: scrubber.scrub(v) for k, v in check["details"].items()
        }
        for condition in check["conditions"]:
            condition["details"] = "" if strict else scrubber.scrub(condition["details"])
    data["notes"] = [_note(n, artifact, scrubber, strict) for n in data["notes"]]
    dataset = data["dataset"]
    for split in ("train", "test"):
        stats = dataset.get(split)
        if not stats:
            continue
        for column in stats["columns"]:
            _numbers(column, strict)
        _numbers(stats["label_stats"], strict)
        stats["label_stats"] = {k: v for k, v in stats["label_stats"].items() if v is not None}
    for segment in data["performance"]["segments"]:
        segment["value"] = HIDDEN if strict else scrubber.scrub(segment["value"])
    return ArtifactData.model_validate(data)


def protect_diagnosis(diagnosis: Diagnosis, scrubber: Scrubber, level: str) -> Diagnosis:
    """The diagnosis with every free text scrubbed (rules only quote the scrubbed artifact,
    an LLM provider may echo anything)."""
    _check_level(level)
    data = diagnosis.model_dump()
    scrubber.learn(_texts(data))
    for finding in data["findings"]:
        finding["title"] = scrubber.scrub(finding["title"])
        finding["explanation"] = scrubber.scrub(finding["explanation"])
        finding["fixes"] = [scrubber.scrub(f) for f in finding["fixes"]]
        for evidence in finding["evidence"]:
            evidence["detail"] = scrubber.scrub(evidence["detail"])
    data["notes"] = [scrubber.scrub(n, exception=level == "strict") for n in data["notes"]]
    data["analyzer_errors"] = {
        k: scrubber.scrub(v, exception=True) for k, v in data["analyzer_errors"].items()
    }
    return Diagnosis.model_validate(data)


def _texts(value: Any) -> Iterator[str]:
    """Every string inside a dumped model (what may be scrubbed next)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _texts(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _texts(item)


def _check_level(level: str) -> None:
    if level not in PRIVACY_LEVELS:
        raise ValueError(f"privacy must be one of {list(PRIVACY_LEVELS)}, got {level!r}")


def _reason(reason: str, outcome: str, scrubber: Scrubber, strict: bool) -> str:
    """An errored check's reason is an exception text ("TypeError: ..."), a skipped
    check's reason is ours and only mentions columns."""
    if outcome != "errored":
        return scrubber.scrub(reason)
    if strict:
        kind = reason.split(":", 1)[0].strip()
        return kind if kind.isidentifier() else HIDDEN
    return scrubber.scrub(reason, exception=True)


def _note(note: str, artifact: ArtifactData, scrubber: Scrubber, strict: bool) -> str:
    """Notes quote the model's exception message: replace it by its stored form."""
    for failure in artifact.runtime_failures:
        if failure.message and failure.message in note:
            kept = HIDDEN if strict else scrubber.scrub(failure.message, exception=True)
            note = note.replace(failure.message, kept)
    return scrubber.scrub(note)


def _numbers(values: dict[str, Any], strict: bool) -> None:
    for key in _ROUNDED:
        if values.get(key) is None:
            continue
        values[key] = None if strict and key in _EXTREMES else round_significant(values[key])


# --------------------------------------------------------------------------- logs


class _ScrubFilter(logging.Filter):
    def __init__(self, scrubber: Scrubber):
        super().__init__("deepfix-privacy")
        self.scrubber = scrubber

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "_deepfix_scrubbed", False):
            return True
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a malformed record is logging's problem
            return True
        record.msg, record.args = self.scrubber.scrub(message, exception=True), ()
        if record.exc_info and record.exc_info[1] is not None:
            # the traceback would print the exception's raw text: keep its type only
            record.exc_text = f"{type(record.exc_info[1]).__name__} (message scrubbed)"
            record.exc_info = None
        record._deepfix_scrubbed = True
        return True


@contextmanager
def scrubbed_logs(scrubber: Scrubber) -> Iterator[None]:
    """While the block runs, every log record passing any configured handler is scrubbed
    before it is written (Deepchecks and model errors are logged with their messages)."""
    handlers: set[logging.Handler] = set(logging.getLogger().handlers)
    if logging.lastResort is not None:  # used when nothing is configured
        handlers.add(logging.lastResort)
    for logger in list(logging.Logger.manager.loggerDict.values()):
        handlers.update(getattr(logger, "handlers", ()))
    log_filter = _ScrubFilter(scrubber)
    for handler in handlers:
        handler.addFilter(log_filter)
    try:
        yield
    finally:
        for handler in handlers:
            handler.removeFilter(log_filter)
