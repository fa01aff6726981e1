"""Layout of the timeline chart, shared by its drawers: the SVG and PNG charts of
``replay --chart`` and the report page's timeline.

:class:`Plot` is the one definition of where things land inside the frame: the
scales (:class:`Axes`), the grid lines and their labels, the turn labels, the points of
each series, the horizontal lines (threshold, window) and the compaction marks. A
drawer only chooses colours, fonts and how to put a line or a text on its medium.

The series is a list of :class:`Sample`: one per turn (its size at the end of the
turn), preceded, for every compaction during the turn, by two samples at the same
turn holding the size before and after it, so the line drops vertically there (a
saw-tooth). The header holds the title (on up to two lines, cut with an ellipsis
beyond) left of the compaction count and the legend, which carries the final sizes.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["Sample"]

WIDTH, HEIGHT = 840, 380
LEFT, RIGHT, TOP, BOTTOM = 72, 24, 60, 48
GAP = 16
"""Least horizontal space between two texts of the header (and between legend items)."""

Measure = Callable[[str], float]
"""The advance width of a text in pixels, in one font at one size."""


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


def tick_label(tokens: float) -> str:
    """``2500`` → ``2.5k``."""
    if tokens >= 1000:
        return f"{tokens / 1000:g}k"
    return f"{tokens:g}"


@dataclass(frozen=True, slots=True)
class Axes:
    """Where turns and token counts land on the picture."""

    first: int
    """The first turn (left edge)."""
    last: int
    """The last turn (right edge)."""
    y_max: float
    """Tokens at the top edge."""
    step: float
    """Tokens between two horizontal grid lines."""

    def x(self, turn: float) -> float:
        """Horizontal pixel position of ``turn``."""
        return LEFT + (turn - self.first) / max(1, self.last - self.first) * (WIDTH - LEFT - RIGHT)

    def y(self, tokens: float) -> float:
        """Vertical pixel position of ``tokens``."""
        plot_h = HEIGHT - TOP - BOTTOM
        return TOP + plot_h - tokens / self.y_max * plot_h

    def y_ticks(self) -> list[float]:
        """Token values of the horizontal grid lines, from 0 to the top."""
        count = round(self.y_max / self.step)
        return [self.step * i for i in range(count + 1)]

    def x_ticks(self) -> range:
        """Turns labelled under the horizontal axis."""
        return range(
            self.first, self.last + 1, max(1, round(nice_step(self.last - self.first, 10)))
        )


def axes_for(samples: Sequence[Sample], baseline: Sequence[Sample], threshold: int | None) -> Axes:
    """Axes that fit every sample and the threshold, with round grid steps."""
    turns = [s.turn for s in (*samples, *baseline)] or [0]
    top_value = max([s.tokens for s in (*samples, *baseline)] + [threshold or 0, 1])
    step = nice_step(top_value * 1.05)
    return Axes(min(turns), max(turns), step * math.ceil(top_value * 1.05 / step), step)


Point = tuple[float, float]
"""A pixel position: (x, y)."""


@dataclass(frozen=True, slots=True)
class Mark:
    """A compaction's mark on the series."""

    at: Point
    """Where it is drawn: the turn and the size right after the compaction."""
    turn: int
    """The turn it happened in."""
    before: int | None
    """The size before it (None when the series starts with it)."""
    after: int
    """The size after it."""


@dataclass(frozen=True, slots=True)
class Plot:
    """Everything inside the chart's frame, in pixels, for every drawer."""

    axes: Axes
    """The scales."""
    grid: tuple[tuple[float, str], ...]
    """The horizontal grid lines from 0 tokens up: their row and their label."""
    turns: tuple[tuple[float, str], ...]
    """The labels under the plot: their column and their turn."""
    series: tuple[Point, ...]
    """The points of the series with compaction."""
    baseline: tuple[Point, ...]
    """The points of the series without compaction."""
    marks: tuple[Mark, ...]
    """One per compaction of the series."""

    @classmethod
    def of(cls, axes: Axes, samples: Sequence[Sample], baseline: Sequence[Sample] = ()) -> Plot:
        """The plot of ``samples`` and ``baseline`` on ``axes``."""

        def points(series: Sequence[Sample]) -> tuple[Point, ...]:
            return tuple((axes.x(s.turn), axes.y(s.tokens)) for s in series)

        marks = tuple(
            Mark(
                (axes.x(after.turn), axes.y(after.tokens)),
                after.turn,
                None if before is None else before.tokens,
                after.tokens,
            )
            for before, after in itertools.pairwise([None, *samples])
            if after is not None and after.compaction
        )
        return cls(
            axes,
            tuple((axes.y(value), tick_label(value)) for value in axes.y_ticks()),
            tuple((axes.x(turn), str(turn)) for turn in axes.x_ticks()),
            points(samples),
            points(baseline),
            marks,
        )

    def level(self, tokens: float) -> tuple[Point, Point]:
        """The ends of a horizontal line across the plot at ``tokens`` (threshold, window)."""
        y = self.axes.y(tokens)
        return (LEFT, y), (WIDTH - RIGHT, y)


def compaction_count(samples: Sequence[Sample]) -> str:
    """``● 3 compactions``: one per compaction sample."""
    count = sum(1 for sample in samples if sample.compaction)
    return f"● {count} compaction{'s' if count != 1 else ''}"


def legend_labels(samples: Sequence[Sample], baseline: Sequence[Sample]) -> tuple[str, str]:
    """The legend's texts for the two series, each with its last size when it has one."""

    def label(name: str, series: Sequence[Sample]) -> str:
        return f"{name} (final {series[-1].tokens:,})" if series else name

    return label("with compaction", samples), label("without compaction", baseline)


@dataclass(frozen=True, slots=True)
class Box:
    """The rectangle a text occupies, in pixels (``right`` and ``bottom`` excluded)."""

    left: float
    top: float
    right: float
    bottom: float

    def overlaps(self, other: Box) -> bool:
        """True when the two rectangles share any area."""
        return (
            self.left < other.right
            and other.left < self.right
            and self.top < other.bottom
            and other.top < self.bottom
        )


def _fitting(text: str, width: float, measure: Measure, suffix: str = "") -> int:
    """How many leading characters of ``text`` fit in ``width`` before ``suffix`` (-1: none)."""
    return (
        bisect.bisect_right(range(len(text) + 1), width, key=lambda n: measure(text[:n] + suffix))
        - 1
    )


def fit_lines(
    text: str, widths: Sequence[float], measure: Measure, ellipsis: str = "…"
) -> tuple[str, ...]:
    """``text`` on at most ``len(widths)`` lines, line ``i`` no wider than ``widths[i]``.

    Runs of white space become one space. A line breaks at its last space when
    that fills at least half of it, else inside a word; what does not fit on the
    last line is cut and ends in ``ellipsis``. Line ``i`` is meant for ``widths[i]``,
    so a line too narrow for anything stays in the result, empty.
    """
    rest = " ".join(text.split())
    lines: list[str] = []
    for index, width in enumerate(widths):
        if not rest:
            break
        if measure(rest) <= width:
            lines.append(rest)
            break
        if index == len(widths) - 1:
            kept = _fitting(rest, width, measure, ellipsis)
            lines.append(rest[:kept].rstrip() + ellipsis if kept >= 0 else "")
            break
        fits = max(0, _fitting(rest, width, measure))
        space = rest.rfind(" ", 0, fits + 1)
        cut = space if space > 0 and measure(rest[:space]) >= width / 2 else fits
        lines.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    return tuple(lines)
