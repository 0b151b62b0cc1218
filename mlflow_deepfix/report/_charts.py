"""Geometry of the report's small inline SVG charts.

The report must stay self-contained and small (no plotly.js, no scripts), so charts are
plain ``<rect>``/``<text>`` elements. This module computes every coordinate in Python
and hands the template plain numbers and *unescaped* strings: the template draws them
with autoescape on, so a column called ``<script>`` in a chart label stays text.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from mlflow_deepfix.report._format import fmt_number, shorten

#: horizontal layout of a bar chart, in SVG user units (px at 100% zoom)
#: label column bounds; the width follows the longest label so short labels waste no room
LABEL_MIN_WIDTH = 30
LABEL_MAX_WIDTH = 170
#: approximate width of one character of the 11.5px label font
CHAR_WIDTH = 6.4
BAR_AREA = 300
VALUE_WIDTH = 56
BAR_HEIGHT = 14
BAR_GAP = 3
ROW_GAP = 9
LEGEND_HEIGHT = 22
LABEL_CHARS = 26


@dataclass
class Bar:
    x: float
    y: float
    width: float
    height: float
    css_class: str
    text: str
    text_x: float
    text_y: float
    tooltip: str


@dataclass
class RowLabel:
    text: str
    tooltip: str
    y: float


@dataclass
class LegendItem:
    name: str
    css_class: str
    x: float


@dataclass
class BarChart:
    """A horizontal bar chart ready to draw: one row per label, one bar per series."""

    aria_label: str
    width: float
    height: float
    label_width: float
    zero_x: float
    bars: list[Bar] = field(default_factory=list)
    labels: list[RowLabel] = field(default_factory=list)
    legend: list[LegendItem] = field(default_factory=list)
    draw_zero_line: bool = False


@dataclass
class Segment:
    x: float
    width: float
    css_class: str
    tooltip: str


@dataclass
class StackedBar:
    """One horizontal bar split into segments (e.g. findings per severity)."""

    aria_label: str
    width: float
    height: float
    segments: list[Segment] = field(default_factory=list)


def bar_chart(
    aria_label: str,
    rows: list[tuple[str, list[float | None]]],
    series: list[tuple[str, str]],
    *,
    value_text=fmt_number,
    highlight: dict[int, str] | None = None,
) -> BarChart | None:
    """Lay out a grouped horizontal bar chart.

    Parameters
    ----------
    aria_label : str
        What the chart shows, read by screen readers.
    rows : list of (label, values)
        ``values`` holds one number (or ``None`` for "not available") per series.
    series : list of (name, css_class)
        The legend; drawn only when there is more than one series.
    value_text : callable
        Turns a value into the text printed after its bar.
    highlight : dict, optional
        Row index -> CSS class that replaces the series class for that row (used to
        set the user's model apart in the baseline ladder).

    Returns ``None`` when there is nothing to draw (no finite value).
    """
    finite = [v for _, values in rows for v in values if v is not None and math.isfinite(v)]
    if not rows or not finite:
        return None
    low = min(0.0, min(finite))
    high = max(0.0, max(finite))
    span = (high - low) or 1.0
    scale = BAR_AREA / span
    longest = max(len(shorten(label, LABEL_CHARS)) for label, _ in rows)
    label_width = min(LABEL_MAX_WIDTH, max(LABEL_MIN_WIDTH, round(longest * CHAR_WIDTH + 12)))
    zero_x = label_width + (0.0 - low) * scale
    top = LEGEND_HEIGHT if len(series) > 1 else 4
    n_series = len(series)
    row_height = n_series * BAR_HEIGHT + (n_series - 1) * BAR_GAP
    highlight = highlight or {}

    chart = BarChart(
        aria_label=aria_label,
        width=label_width + BAR_AREA + VALUE_WIDTH,
        height=top + len(rows) * (row_height + ROW_GAP),
        label_width=label_width,
        zero_x=round(zero_x, 1),
        draw_zero_line=low < 0,
    )
    if n_series > 1:
        chart.legend = [
            LegendItem(name=name, css_class=css, x=label_width + i * 90)
            for i, (name, css) in enumerate(series)
        ]
    for row_index, (label, values) in enumerate(rows):
        y0 = top + row_index * (row_height + ROW_GAP)
        chart.labels.append(
            RowLabel(
                text=shorten(label, LABEL_CHARS),
                tooltip=str(label),
                y=round(y0 + row_height / 2 + 4, 1),
            )
        )
        for series_index, value in enumerate(values):
            name, css = series[series_index]
            y = y0 + series_index * (BAR_HEIGHT + BAR_GAP)
            usable = value is not None and math.isfinite(value)
            length = abs(value) * scale if usable else 0.0
            x = zero_x - length if usable and value < 0 else zero_x
            text = value_text(value) if value is not None else "n/a"
            chart.bars.append(
                Bar(
                    x=round(x, 1),
                    y=round(y, 1),
                    width=round(max(length, 1.0 if usable else 0.0), 1),
                    height=BAR_HEIGHT,
                    css_class=highlight.get(row_index, css),
                    text=text,
                    text_x=round(max(zero_x, x + length) + 4, 1),
                    text_y=round(y + BAR_HEIGHT - 3, 1),
                    tooltip=f"{label} ({name}): {text}" if n_series > 1 else f"{label}: {text}",
                )
            )
    return chart


def stacked_bar(
    aria_label: str, parts: list[tuple[str, int, str]], *, width: float = 240, height: float = 10
) -> StackedBar | None:
    """Lay out one bar split proportionally into ``(name, count, css_class)`` parts."""
    total = sum(count for _, count, _ in parts if count > 0)
    if total <= 0:
        return None
    bar = StackedBar(aria_label=aria_label, width=width, height=height)
    x = 0.0
    for name, count, css in parts:
        if count <= 0:
            continue
        segment_width = width * count / total
        bar.segments.append(
            Segment(
                x=round(x, 1),
                width=round(segment_width, 1),
                css_class=css,
                tooltip=f"{count} {name}",
            )
        )
        x += segment_width
    return bar
