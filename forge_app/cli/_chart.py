"""A timeline of context size per turn, drawn as a hand-written SVG or PNG (no plotting library).

The series is a list of :class:`Sample` (see :mod:`forge_app.cli._chart_axes`): a saw-tooth
that drops at every compaction. Compactions are marked in red, the compaction
threshold is a dashed line. Text is laid out with the advance widths of DejaVu Sans,
the first font the SVG asks for, so a long title wraps and is cut instead of
running into the compaction count or the legend.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Literal
from xml.sax.saxutils import escape

from forge_app.cli._chart_axes import (
    BOTTOM,
    GAP,
    HEIGHT,
    LEFT,
    RIGHT,
    TOP,
    WIDTH,
    Plot,
    Point,
    Sample,
    axes_for,
    compaction_count,
    fit_lines,
    legend_labels,
)
from forge_app.cli._chart_png import timeline_png
from forge_app.errors import ChartFormatUnsupported

__all__ = ["chart_format", "render_chart", "timeline_svg"]  # svg_points, svg_level: the report

LINE = "#2563eb"
MARK = "#dc2626"
GRID = "#e5e7eb"
INK = "#111827"
BASELINE = "#9ca3af"

FONT_FAMILY = "DejaVu Sans, Verdana, sans-serif"
"""The SVG's fonts: :func:`text_width` measures the first; Verdana's widths are close to it."""
TEXT_SIZE, TITLE_SIZE = 12, 15
"""Font sizes in pixels: every text, and the title."""
HEADER_ROWS = (28, 46)
"""Baselines of the header's two rows: title and count, then title and legend."""
EM = 2048
"""Font units per em of DejaVu Sans."""
ASCENT, DESCENT = 1901 / EM, 483 / EM
"""How far DejaVu Sans reaches above and below the baseline, in em."""
_ASCII_ADVANCES = (
    651, 821, 942, 1716, 1303, 1946, 1597, 563, 799, 799, 1024, 1716, 651, 739, 651, 690,
    1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 690, 690, 1716, 1716, 1716, 1087,
    2048, 1401, 1405, 1430, 1577, 1294, 1178, 1587, 1540, 604, 604, 1343, 1141, 1767, 1532, 1612,
    1235, 1612, 1423, 1300, 1251, 1499, 1401, 2025, 1403, 1251, 1403, 799, 690, 799, 1716, 1024,
    1024, 1255, 1300, 1126, 1300, 1260, 721, 1300, 1298, 569, 569, 1186, 569, 1995, 1298, 1253,
    1300, 1300, 842, 1067, 803, 1298, 1212, 1675, 1212, 1212, 1075, 1303, 690, 1303, 1716,
)  # fmt: skip
_ADVANCES = {
    **{chr(32 + index): advance for index, advance in enumerate(_ASCII_ADVANCES)},
    "·": 651, "…": 2048, "●": 1787, "━": 1233, "┅": 1233, "→": 1716,
}  # fmt: skip
"""DejaVu Sans advance widths (its ``hmtx`` table) of printable ASCII and the chart's symbols."""
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def text_width(text: str, size: float = TEXT_SIZE) -> float:
    """The advance width of ``text`` at ``size`` pixels in DejaVu Sans.

    A character outside its table counts as one em, as wide as the widest
    (CJK ideographs and most symbols are one em in any font).
    """
    return sum(_ADVANCES.get(char, EM) for char in text) * size / EM


def _xml_text(text: str) -> str:
    """``text`` escaped, with characters XML 1.0 cannot hold (such as surrogates) replaced."""
    return escape(_NOT_XML.sub("\ufffd", text))


def _header(title: str, samples: Sequence[Sample], baseline: Sequence[Sample]) -> list[str]:
    """The title left (wrapped, then cut), the count and the legend right-aligned."""
    count = compaction_count(samples)
    parts = [
        f'<text x="{WIDTH - RIGHT}" y="{HEADER_ROWS[0]}" text-anchor="end" fill="{MARK}">'
        f"{count}</text>"
    ]
    with_label, without_label = legend_labels(samples, baseline)
    right: float = WIDTH - RIGHT
    for label, colour in ((f"┅ {without_label}", BASELINE), (f"━ {with_label}", LINE)):
        parts.append(
            f'<text x="{right:.1f}" y="{HEADER_ROWS[1]}" text-anchor="end" fill="{colour}">'
            f"{_xml_text(label)}</text>"
        )
        right -= text_width(label) + GAP
    widths = (WIDTH - RIGHT - text_width(count) - GAP - LEFT, right - LEFT)
    lines = fit_lines(title, widths, lambda text: text_width(text, TITLE_SIZE))
    for line, y in zip(lines, HEADER_ROWS, strict=False):
        if not line:
            continue
        parts.append(
            f'<text x="{LEFT}" y="{y}" font-size="{TITLE_SIZE}" fill="{INK}">'
            f"{_xml_text(line)}</text>"
        )
    return parts


def timeline_svg(
    samples: Sequence[Sample],
    *,
    threshold: int | None = None,
    title: str = "context size",
    baseline: Sequence[Sample] = (),
) -> str:
    """Render ``samples`` as a standalone SVG document.

    ``baseline`` (drawn in grey) is the size the context would have had without compaction.
    """
    plot = Plot.of(axes_for(samples, baseline, threshold), samples, baseline)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="{FONT_FAMILY}" font-size="{TEXT_SIZE}">',
        f"<title>{_xml_text(title)}</title>",
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        *_header(title, samples, baseline),
    ]
    for row, label in plot.grid:
        parts.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{row:.1f}" y2="{row:.1f}" '
            f'stroke="{GRID}"/>'
            f'<text x="{LEFT - 8}" y="{row + 4:.1f}" text-anchor="end" fill="{INK}">'
            f"{label}</text>"
        )
    for column, label in plot.turns:
        parts.append(
            f'<text x="{column:.1f}" y="{HEIGHT - BOTTOM + 18}" text-anchor="middle" '
            f'fill="{INK}">{label}</text>'
        )
    parts.append(
        f'<text x="{LEFT + plot_w / 2:.1f}" y="{HEIGHT - 10}" text-anchor="middle" '
        f'fill="{INK}">turn</text>'
        f'<text transform="translate(16 {TOP + plot_h / 2:.1f}) rotate(-90)" '
        f'text-anchor="middle" fill="{INK}">tokens</text>'
    )
    if threshold is not None:
        start, _ = plot.level(threshold)
        parts.append(
            svg_level(plot, threshold, f'stroke="{MARK}" stroke-dasharray="6 4"')
            + f'<text x="{WIDTH - RIGHT}" y="{start[1] - 6:.1f}" text-anchor="end" '
            f'fill="{MARK}">threshold {threshold:,}</text>'
        )
    if baseline:
        parts.append(
            f'<polyline points="{svg_points(plot.baseline)}" fill="none" stroke="{BASELINE}" '
            'stroke-width="1.5" stroke-dasharray="3 3"><title>without compaction</title></polyline>'
        )
    if samples:
        parts.append(
            f'<polyline points="{svg_points(plot.series)}" fill="none" stroke="{LINE}" '
            'stroke-width="2"/>'
        )
    for mark in plot.marks:
        change = f"{mark.before:,} → " if mark.before is not None else "to "
        parts.append(
            f'<circle cx="{mark.at[0]:.1f}" cy="{mark.at[1]:.1f}" r="4" '
            f'fill="{MARK}"><title>turn {mark.turn}: compacted {change}'
            f"{mark.after:,} tokens</title></circle>"
        )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def svg_points(points: Sequence[Point]) -> str:
    """A ``<polyline>``'s ``points``: ``x,y`` pairs at a tenth of a pixel."""
    return " ".join(f"{x:.1f},{y:.1f}" for x, y in points)


def svg_level(plot: Plot, tokens: float, style: str) -> str:
    """The ``<line>`` across the plot at ``tokens`` (a threshold, a window), with ``style``."""
    (x1, y), (x2, _) = plot.level(tokens)
    return f'<line x1="{x1}" x2="{x2}" y1="{y:.1f}" y2="{y:.1f}" {style}/>'


ChartFormat = Literal["svg", "png"]
"""The picture formats a chart can be written in."""


def chart_format(path: Path | str) -> ChartFormat:
    """The format ``path``'s suffix asks for.

    Raises:
        ChartFormatUnsupported: the suffix is neither ``.svg`` nor ``.png``.
    """
    suffix = Path(path).suffix.lower()
    if suffix == ".svg":
        return "svg"
    if suffix == ".png":
        return "png"
    raise ChartFormatUnsupported(path)


def render_chart(
    path: Path | str,
    samples: Sequence[Sample],
    *,
    threshold: int | None,
    title: str,
    baseline: Sequence[Sample] = (),
) -> bytes:
    """The chart's file content in the format ``path`` asks for (``.svg`` or ``.png``).

    Raises:
        ChartFormatUnsupported: any other suffix.
    """
    if chart_format(path) == "png":
        return timeline_png(samples, threshold=threshold, title=title, baseline=baseline)
    return timeline_svg(samples, threshold=threshold, title=title, baseline=baseline).encode()
