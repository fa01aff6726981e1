"""A timeline of context size per turn, drawn as a hand-written SVG or PNG (no plotting library).

The series is a list of :class:`Sample`: one per turn, plus, at every turn where a
compaction happened, a second sample at the same turn holding the size after it,
so the line drops vertically there (a saw-tooth). Compactions are marked in red,
the compaction threshold is a dashed line.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Literal
from xml.sax.saxutils import escape

from forge_app.chart_axes import (
    BOTTOM,
    HEIGHT,
    LEFT,
    RIGHT,
    TOP,
    WIDTH,
    Sample,
    axes_for,
    tick_label,
)
from forge_app.chart_png import timeline_png
from forge_app.errors import ChartFormatUnsupported

__all__ = ["chart_format", "render_chart", "timeline_svg"]

LINE = "#2563eb"
MARK = "#dc2626"
GRID = "#e5e7eb"
INK = "#111827"
BASELINE = "#9ca3af"


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
    axes = axes_for(samples, baseline, threshold)
    x, y = axes.x, axes.y
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{LEFT}" y="28" font-size="15" fill="{INK}">{escape(title)}</text>',
    ]
    for value in axes.y_ticks():
        parts.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(value):.1f}" y2="{y(value):.1f}" '
            f'stroke="{GRID}"/>'
            f'<text x="{LEFT - 8}" y="{y(value) + 4:.1f}" text-anchor="end" fill="{INK}">'
            f"{tick_label(value)}</text>"
        )
    for turn in axes.x_ticks():
        parts.append(
            f'<text x="{x(turn):.1f}" y="{HEIGHT - BOTTOM + 18}" text-anchor="middle" '
            f'fill="{INK}">{turn}</text>'
        )
    parts.append(
        f'<text x="{LEFT + plot_w / 2:.1f}" y="{HEIGHT - 10}" text-anchor="middle" '
        f'fill="{INK}">turn</text>'
        f'<text transform="translate(16 {TOP + plot_h / 2:.1f}) rotate(-90)" '
        f'text-anchor="middle" fill="{INK}">tokens</text>'
    )
    if threshold is not None:
        parts.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(threshold):.1f}" '
            f'y2="{y(threshold):.1f}" stroke="{MARK}" stroke-dasharray="6 4"/>'
            f'<text x="{WIDTH - RIGHT}" y="{y(threshold) - 6:.1f}" text-anchor="end" '
            f'fill="{MARK}">threshold {threshold:,}</text>'
        )
    if baseline:
        points = " ".join(f"{x(s.turn):.1f},{y(s.tokens):.1f}" for s in baseline)
        parts.append(
            f'<polyline points="{points}" fill="none" stroke="{BASELINE}" stroke-width="1.5" '
            'stroke-dasharray="3 3"><title>without compaction</title></polyline>'
        )
    if samples:
        points = " ".join(f"{x(s.turn):.1f},{y(s.tokens):.1f}" for s in samples)
        parts.append(f'<polyline points="{points}" fill="none" stroke="{LINE}" stroke-width="2"/>')
    for before, after in itertools.pairwise(samples):
        if after.compaction:
            parts.append(
                f'<circle cx="{x(after.turn):.1f}" cy="{y(after.tokens):.1f}" r="4" '
                f'fill="{MARK}"><title>turn {after.turn}: compacted {before.tokens:,} → '
                f"{after.tokens:,} tokens</title></circle>"
            )
    compactions = sum(1 for s in samples if s.compaction)
    parts.append(
        f'<text x="{WIDTH - RIGHT}" y="28" text-anchor="end" fill="{MARK}">'
        f"● {compactions} compaction{'s' if compactions != 1 else ''}</text>"
        f'<text x="{WIDTH - RIGHT}" y="46" text-anchor="end">'
        f'<tspan fill="{LINE}">━ with compaction</tspan>   '
        f'<tspan fill="{BASELINE}">┅ without compaction</tspan></text>'
    )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


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
