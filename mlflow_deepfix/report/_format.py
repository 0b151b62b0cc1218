"""Number and text formatting for the HTML report, registered as Jinja2 filters.

Kept apart from the template so that every number in the report is shown the same way
(and tested once): a report that prints ``0.3799999`` next to ``38%`` for the same
quantity reads as sloppy. These helpers return plain ``str``; escaping stays the job of
Jinja2's autoescape, never of this module.
"""

from __future__ import annotations

import json
import math
from typing import Any

#: shown where a value is missing
MISSING = "—"


def fmt_number(value: Any) -> str:
    """A compact, human-readable rendering of a number (``None`` -> an em dash).

    Integers keep their digits (with thousands separators); floats keep four
    significant digits, switching to scientific notation only when very large or small.
    """
    if value is None:
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "∞" if number > 0 else "-∞"
    if number == 0:
        return "0"
    magnitude = abs(number)
    if magnitude >= 1e6 or magnitude < 1e-3:
        return f"{number:.3g}"
    if magnitude >= 100:
        return f"{number:,.1f}".rstrip("0").rstrip(".")
    return f"{number:.4g}"


def fmt_percent(fraction: Any) -> str:
    """A share in [0, 1] as a percentage with precision that suits its size."""
    if fraction is None:
        return MISSING
    try:
        number = float(fraction)
    except (TypeError, ValueError):
        return str(fraction)
    if not math.isfinite(number):
        return fmt_number(number)
    percent = number * 100.0
    magnitude = abs(percent)
    if magnitude == 0:
        return "0%"
    if magnitude < 0.01:
        return "<0.01%" if percent > 0 else ">-0.01%"
    if magnitude < 1:
        return f"{percent:.2f}%"
    if magnitude < 10:
        return f"{percent:.1f}%"
    return f"{percent:.0f}%"


def fmt_seconds(seconds: Any) -> str:
    """A duration: ``0.42 s``, ``12.3 s`` or ``2 min 05 s``."""
    if seconds is None:
        return MISSING
    try:
        number = float(seconds)
    except (TypeError, ValueError):
        return str(seconds)
    if not math.isfinite(number) or number < 0:
        return fmt_number(number)
    if number < 10:
        return f"{number:.2f} s"
    if number < 60:
        return f"{number:.1f} s"
    minutes, rest = divmod(round(number), 60)
    return f"{minutes} min {rest:02d} s"


def fmt_value(value: Any, limit: int = 160) -> str:
    """Any value (e.g. a hyperparameter) as short text; containers become JSON."""
    if value is None:
        return "None"
    if isinstance(value, (bool, int, float)):
        # repr keeps what the user typed: 1.0 stays "1.0", 1e-05 stays "1e-05"
        return repr(value)
    if isinstance(value, str):
        text = value
    elif isinstance(value, (dict, list, tuple)):
        text = json.dumps(value, default=str, sort_keys=True)
    else:
        text = str(value)
    return shorten(text, limit)


def shorten(text: Any, limit: int) -> str:
    """Cut ``text`` to ``limit`` characters, marking the cut with an ellipsis."""
    text = "" if text is None else str(text)
    if limit < 2 or len(text) <= limit:
        return text
    return text[: limit - 1] + "…"


def human_label(identifier: str) -> str:
    """``train_test_validation`` -> ``Train test validation`` (for suites and ids)."""
    text = str(identifier).replace("_", " ").strip()
    return text[:1].upper() + text[1:]


FILTERS = {
    "num": fmt_number,
    "pct": fmt_percent,
    "secs": fmt_seconds,
    "val": fmt_value,
    "shorten": shorten,
    "human": human_label,
}
