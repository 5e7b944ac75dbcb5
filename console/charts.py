"""Charts as SVG rendered on the server.

No script and no charting library: the dashboard is readable the moment the
page arrives (with scripts off, offline, in a screenshot), and the figures a
chart shows are in the page itself, so tests read them from the HTML. Every
bar carries ``data-label`` and ``data-value`` and a ``<title>`` (the
browser's tooltip); colours come from CSS classes (console/static/console/console.css),
so the admin's light and dark themes both apply.

Each function returns markup with every text escaped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe


@dataclass(frozen=True)
class Bar:
    label: str
    value: int
    tone: str = "primary"  # a CSS class suffix: tone-<name>
    href: str | None = None


def _nice_max(value: int) -> int:
    """The axis maximum: ``value`` rounded up to 1, 2 or 5 times a power of ten."""
    if value <= 0:
        return 1
    power = int(10 ** math.floor(math.log10(value)))
    for step in (1, 2, 5, 10):
        if value <= step * power:
            return step * power
    return 10 * power


def _svg(width: int, height: int, title: str, body: Sequence[str], css_class: str) -> SafeString:
    head = format_html(
        '<svg class="chart {}" role="img" viewBox="0 0 {} {}" width="100%"'
        ' preserveAspectRatio="xMinYMin meet" xmlns="http://www.w3.org/2000/svg" aria-label="{}">'
        "<title>{}</title>",
        css_class,
        width,
        height,
        title,
        title,
    )
    return mark_safe(head + "".join(body) + "</svg>")  # noqa: S308 (built from format_html pieces)


def _bar(
    tone: str, box: tuple[float, float, float, float], label: str, value: object, tip: str
) -> SafeString:
    """One bar: its tone, its ``(x, y, width, height)``, and the ``data-label``,
    ``data-value`` and ``<title>`` (the tooltip) the page and its tests read."""
    x, y, width, height = box
    return format_html(
        '<rect class="bar tone-{}" x="{}" y="{}" width="{}" height="{}"'
        ' data-label="{}" data-value="{}"><title>{}</title></rect>',
        tone,
        x,
        y,
        width,
        height,
        label,
        value,
        tip,
    )


def _column(left: int, slot: float, index: int) -> tuple[float, float]:
    """The ``x`` and width of the ``index``-th column of a chart whose columns are ``slot`` apart."""
    return round(left + index * slot + slot * 0.15, 1), round(slot * 0.7, 1)


def _column_label(x: float, w: float, height: int, label: str) -> SafeString:
    """The label under a column (a day as its month and day: "2026-11-30" -> "11-30")."""
    return format_html(
        '<text class="axis" x="{}" y="{}" text-anchor="middle">{}</text>',
        round(x + w / 2, 1),
        height - 6,
        label[5:] if len(label) == 10 else label,
    )


def column_chart(
    bars: Sequence[Bar], *, title: str, label_every: int = 5, width: int = 720, height: int = 200
) -> SafeString:
    """Vertical bars over a sequence (e.g. days), a label under every
    ``label_every``-th bar and the axis maximum on the left."""
    left, bottom, top = 36, 22, 10
    plot_w, plot_h = width - left - 4, height - bottom - top
    peak = _nice_max(max((b.value for b in bars), default=0))
    slot = plot_w / max(len(bars), 1)
    body = [
        format_html('<text class="axis" x="{}" y="{}" text-anchor="end">{}</text>', left - 6, top + 4, peak),
        format_html('<text class="axis" x="{}" y="{}" text-anchor="end">0</text>', left - 6, top + plot_h),
        format_html('<line class="grid" x1="{}" y1="{}" x2="{}" y2="{}"/>', left, top, left + plot_w, top),
        format_html(
            '<line class="baseline" x1="{}" y1="{}" x2="{}" y2="{}"/>',
            left,
            top + plot_h,
            left + plot_w,
            top + plot_h,
        ),
    ]
    for index, bar in enumerate(bars):
        h = round(plot_h * bar.value / peak, 1)
        x, w = _column(left, slot, index)
        tip = format_html("{}: {}", bar.label, bar.value)
        body.append(_bar(bar.tone, (x, round(top + plot_h - h, 1), w, h), bar.label, bar.value, tip))
        if label_every and index % label_every == 0:
            body.append(_column_label(x, w, height, bar.label))
    return _svg(width, height, title, body, "column-chart")


def bar_list(bars: Sequence[Bar], *, title: str, width: int = 420, row: int = 22) -> SafeString:
    """Horizontal bars, one row each: label on the left, value at the bar's end.
    A bar with ``href`` links its label (e.g. a resource to its page)."""
    label_w = 150
    plot_w = width - label_w - 40
    peak = max((b.value for b in bars), default=0) or 1
    height = max(row * len(bars), row) + 4
    body: list[str] = []
    if not bars:
        body.append(format_html('<text class="empty" x="0" y="{}">Nothing yet.</text>', row - 8))
    for index, bar in enumerate(bars):
        y = index * row + 2
        label = bar.label if len(bar.label) <= 24 else bar.label[:23] + "…"
        text = format_html(
            '<text class="label" x="{}" y="{}" text-anchor="end">{}<title>{}</title></text>',
            label_w - 8,
            round(y + row * 0.65, 1),
            label,
            bar.label,
        )
        if bar.href:
            text = format_html('<a href="{}">{}</a>', bar.href, text)
        w = round(plot_w * bar.value / peak, 1)
        body.append(text)
        tip = format_html("{}: {}", bar.label, bar.value)
        body.append(_bar(bar.tone, (label_w, y + 3, w, row - 8), bar.label, bar.value, tip))
        body.append(
            format_html(
                '<text class="value" x="{}" y="{}">{}</text>',
                round(label_w + w + 6, 1),
                round(y + row * 0.65, 1),
                bar.value,
            )
        )
    return _svg(width, height, title, body, "bar-list")


def diverging_columns(
    days: Sequence[str],
    up: Sequence[int],
    down: Sequence[int],
    *,
    title: str,
    label_every: int = 5,
    width: int = 720,
    height: int = 200,
) -> SafeString:
    """Two series per day around a middle line: ``up`` above, ``down`` below
    (feedback: thumbs up and thumbs down)."""
    left, bottom, top = 36, 22, 10
    plot_w, plot_h = width - left - 4, height - bottom - top
    half = plot_h / 2
    middle = round(top + half, 1)
    peak = _nice_max(max([*up, *down, 0]))
    slot = plot_w / max(len(days), 1)
    body = [
        format_html('<text class="axis" x="{}" y="{}" text-anchor="end">+{}</text>', left - 6, top + 4, peak),
        format_html(
            '<text class="axis" x="{}" y="{}" text-anchor="end">-{}</text>', left - 6, top + plot_h, peak
        ),
        format_html(
            '<line class="baseline" x1="{}" y1="{}" x2="{}" y2="{}"/>', left, middle, left + plot_w, middle
        ),
    ]
    for index, day in enumerate(days):
        x, w = _column(left, slot, index)
        for value, tone, above in ((up[index], "up", True), (down[index], "down", False)):
            h = round(half * value / peak, 1)
            box = (x, round(middle - h if above else middle, 1), w, h)
            tip = format_html("{}: {} {}", day, value, tone)
            body.append(_bar(tone, box, format_html("{} {}", day, tone), value, tip))
        if label_every and index % label_every == 0:
            body.append(_column_label(x, w, height, day))
    return _svg(width, height, title, body, "diverging-chart")


def legend(items: Sequence[tuple[str, str, int]]) -> SafeString:
    """``(label, tone, value)`` swatches under a chart."""
    return mark_safe(  # noqa: S308 (format_html pieces)
        '<ul class="chart-legend">'
        + "".join(
            format_html(
                '<li><span class="swatch tone-{}"></span>{} <strong>{}</strong></li>', tone, label, value
            )
            for label, tone, value in items
        )
        + "</ul>"
    )


def paired_bars(
    rows: Sequence[tuple[str, float | None, float | None]],
    *,
    first: str,
    second: str,
    title: str,
    width: int = 560,
    row: int = 34,
) -> SafeString:
    """Two figures from 0 to 1 per row, side by side (an evaluation run and
    its baseline): ``first`` in tone-primary, ``second`` in tone-muted; a
    figure that is None is drawn as no bar and labelled "n/a"."""
    label_w, plot_w = 170, width - 170 - 50
    body: list[str] = []
    for index, (label, *values) in enumerate(rows):
        y = index * row + 2
        body.append(
            format_html(
                '<text class="label" x="{}" y="{}" text-anchor="end">{}</text>',
                label_w - 8,
                y + row * 0.5,
                label,
            )
        )
        for offset, (series, tone, value) in enumerate(
            zip((first, second), ("primary", "muted"), values, strict=True)
        ):
            shown = "n/a" if value is None else f"{value:.2f}"
            w = round(plot_w * max(0.0, min(1.0, value or 0.0)), 1)
            top = y + 3 + offset * (row - 8) / 2
            box = (label_w, round(top, 1), w, round((row - 10) / 2, 1))
            tip = format_html("{}, {}: {}", label, series, shown)
            figure = "" if value is None else value
            body.append(_bar(tone, box, format_html("{} {}", label, series), figure, tip))
            body.append(
                format_html(
                    '<text class="value" x="{}" y="{}">{}</text>',
                    round(label_w + w + 6, 1),
                    round(top + (row - 10) / 2, 1),
                    shown,
                )
            )
    return _svg(width, max(row * len(rows), row) + 4, title, body, "paired-bars")
