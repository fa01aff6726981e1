"""A timeline of context size per turn, drawn as a hand-written SVG (no plotting dependency).

The series is a list of :class:`Sample`: one per turn, plus, at every turn where a
compaction happened, a second sample at the same turn holding the size after it,
so the line drops vertically there (a saw-tooth). Compactions are marked in red,
the compaction threshold is a dashed line.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from forge_app.errors import ChartFormatUnsupported

__all__ = ["Sample", "ensure_svg", "render_chart", "timeline_svg"]

WIDTH, HEIGHT = 840, 380
LEFT, RIGHT, TOP, BOTTOM = 72, 24, 48, 48
LINE = "#2563eb"
MARK = "#dc2626"
GRID = "#e5e7eb"
INK = "#111827"
BASELINE = "#9ca3af"


@dataclass(frozen=True, slots=True)
class Sample:
    """The context size at one point of the timeline."""

    turn: int
    """The turn (provider response) this sample belongs to."""
    tokens: int
    """Context size in tokens."""
    compaction: bool = False
    """True for the size right after a compaction at this turn."""


def nice_step(span: float, ticks: int = 5) -> float:
    """A round tick step (1, 2 or 5 times a power of ten) covering ``span`` in ``ticks`` steps."""
    if span <= 0:
        return 1.0
    raw = span / ticks
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if raw <= factor * power:
            return float(factor * power)
    return float(10 * power)


def _label(tokens: float) -> str:
    if tokens >= 1000:
        return f"{tokens / 1000:g}k"
    return f"{tokens:g}"


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
    turns = [s.turn for s in (*samples, *baseline)] or [0]
    first, last = min(turns), max(turns)
    top_value = max([s.tokens for s in (*samples, *baseline)] + [threshold or 0, 1])
    step = nice_step(top_value * 1.05)
    y_max = step * math.ceil(top_value * 1.05 / step)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(turn: float) -> float:
        return LEFT + (turn - first) / max(1, last - first) * plot_w

    def y(tokens: float) -> float:
        return TOP + plot_h - tokens / y_max * plot_h

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{LEFT}" y="28" font-size="15" fill="{INK}">{escape(title)}</text>',
    ]
    value = 0.0
    while value <= y_max + 1e-9:
        parts.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(value):.1f}" y2="{y(value):.1f}" '
            f'stroke="{GRID}"/>'
            f'<text x="{LEFT - 8}" y="{y(value) + 4:.1f}" text-anchor="end" fill="{INK}">'
            f"{_label(value)}</text>"
        )
        value += step
    turn_step = max(1, round(nice_step(last - first, 10)))
    for turn in range(first, last + 1, turn_step):
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
    )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def render_chart(
    path: Path | str,
    samples: Sequence[Sample],
    *,
    threshold: int | None,
    title: str,
    baseline: Sequence[Sample] = (),
) -> str:
    """The chart's file content for ``path`` (only ``.svg``).

    Raises:
        ChartFormatUnsupported: the suffix is not ``.svg``.
    """
    ensure_svg(path)
    return timeline_svg(samples, threshold=threshold, title=title, baseline=baseline)


def ensure_svg(path: Path | str) -> None:
    """Raise :class:`ChartFormatUnsupported` unless ``path`` ends in ``.svg``."""
    if Path(path).suffix.lower() != ".svg":
        raise ChartFormatUnsupported(path)
