"""Layout of the timeline chart, shared by the SVG and PNG renderers.

The series is a list of :class:`Sample`: one per turn, plus, at every turn where a
compaction happened, a second sample at the same turn holding the size after it,
so the line drops vertically there (a saw-tooth).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Sample"]

WIDTH, HEIGHT = 840, 380
LEFT, RIGHT, TOP, BOTTOM = 72, 24, 60, 48


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
