"""The report's timeline: an inline SVG whose points and marks carry their figures.

The series are ``replay --chart``'s (:func:`~forge_app.cli.replay.chart_samples`) on
its layout (:class:`~forge_app.cli._chart_axes.Plot`: scales, grid, points, lines); the
page adds the window and, per turn, a hover target whose ``<title>`` gives the turn's
figures, and per compaction a red mark linking to its card (``#compaction-N``) whose
``<title>`` names its engine and tier.
No script: a browser shows a ``<title>`` on hover by itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from forge_app.cli._chart import svg_level, svg_points
from forge_app.cli._chart_axes import BOTTOM, HEIGHT, LEFT, RIGHT, TOP, WIDTH, Plot, axes_for
from forge_app.cli._report_data import CompactionView
from forge_app.cli.replay import chart_samples
from forge_app.runtime import TurnRecord

__all__ = ["timeline_svg"]

LINE, BASE, MARK, WINDOW, GRID = "#2563eb", "#9ca3af", "#dc2626", "#7c3aed", "#e5e7eb"
WINDOW_REACH = 1.6
"""The window is drawn when it is at most this many times the largest size or the
threshold; above, the chart would be flat, and the window is named above it instead.
The recording without compaction is clipped at the top the same way."""


def _hline(plot: Plot, tokens: int, colour: str, label: str, dash: str) -> str:
    """A dashed line across the plot, labelled at its left end (the series end right)."""
    (left, y), _ = plot.level(tokens)
    return (
        svg_level(plot, tokens, f'stroke="{colour}" stroke-dasharray="{dash}"')
        + f'<text x="{left + 6}" y="{y - 5:.1f}" fill="{colour}">{escape(label)}</text>'
    )


def _turn_title(turn: TurnRecord, window: int) -> str:
    share = int(turn.tokens) / window if window else 0.0
    return (
        f"turn {turn.turn}: {int(turn.tokens):,} tokens ({share:.0%} of the window), "
        f"{turn.messages:,} messages; uncompacted {turn.recorded_tokens:,}"
    )


def _compaction_title(view: CompactionView) -> str:
    r = view.result
    return (
        f"compaction {view.number} at turn {view.turn}: engine {r.engine}, tier {view.tier}; "
        f"{r.original_tokens:,} → {r.compacted_tokens:,} tokens, "
        f"{r.original_messages:,} → {r.compacted_messages:,} messages"
    )


def timeline_svg(
    turns: Sequence[TurnRecord],
    compactions: Sequence[CompactionView],
    *,
    window: int,
    threshold: int,
) -> str:
    """The timeline of ``turns`` as an ``<svg>`` element to inline in the page."""
    samples, baseline = chart_samples(turns)
    top = max([threshold, *(s.tokens for s in samples)])
    axes = axes_for(samples, [], window if window <= top * WINDOW_REACH else threshold)
    plot = Plot.of(axes, samples, baseline)
    x, y = axes.x, axes.y
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" id="timeline" viewBox="0 0 {WIDTH} {HEIGHT}" '
        'role="img" aria-labelledby="timeline-title" font-size="12">',
        '<title id="timeline-title">context tokens per turn, against the window and the '
        "threshold; red marks are compactions</title>",
    ]
    for row, label in plot.grid:
        parts.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{row:.1f}" y2="{row:.1f}" '
            f'stroke="{GRID}"/><text x="{LEFT - 6}" y="{row + 4:.1f}" '
            f'text-anchor="end">{label}</text>'
        )
    for column, label in plot.turns:
        parts.append(
            f'<text x="{column:.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle">{label}</text>'
        )
    parts.append(
        f'<text x="{LEFT + (WIDTH - LEFT - RIGHT) / 2:.1f}" y="{HEIGHT - 12}" '
        'text-anchor="middle">turn</text>'
    )
    parts.append(_hline(plot, threshold, MARK, f"threshold {threshold:,}", "6 4"))
    if window <= axes.y_max:
        parts.append(_hline(plot, window, WINDOW, f"window {window:,}", "2 2"))
    else:
        parts.append(
            f'<text x="{WIDTH - RIGHT}" y="{TOP - 8}" text-anchor="end" fill="{WINDOW}">'
            f"window {window:,} (above the chart)</text>"
        )
    if baseline:
        size = f'width="{WIDTH - LEFT - RIGHT}" height="{HEIGHT - TOP - BOTTOM}"'
        clip = f'x="{LEFT}" y="{TOP}" {size}'
        parts.append(
            f'<clipPath id="plot"><rect {clip}/></clipPath><polyline clip-path="url(#plot)" '
            f'points="{svg_points(plot.baseline)}" fill="none" stroke="{BASE}" '
            'stroke-dasharray="3 3">'
            f"<title>without compaction: {baseline[-1].tokens:,} tokens at the end</title>"
            "</polyline>"
        )
    if samples:
        parts.append(
            f'<polyline points="{svg_points(plot.series)}" fill="none" stroke="{LINE}" '
            'stroke-width="2"/>'
        )
    for turn in turns:
        parts.append(
            f'<circle class="turn-point" cx="{x(turn.turn):.1f}" cy="{y(int(turn.tokens)):.1f}" '
            f'r="3" fill="{LINE}" fill-opacity="0.35"><title>{escape(_turn_title(turn, window))}'
            "</title></circle>"
        )
    for view in compactions:
        cx, cy = x(view.turn), y(view.result.compacted_tokens)
        parts.append(
            f'<a href="#compaction-{view.number}"><circle class="compaction-mark" '
            f'data-compaction="{view.number}" cx="{cx:.1f}" cy="{cy:.1f}" r="5" fill="{MARK}">'
            f"<title>{escape(_compaction_title(view))}</title></circle></a>"
        )
    parts.append("</svg>")
    return "\n".join(parts)
