"""The timeline chart as a PNG, rasterised by hand (stdlib ``zlib`` only, no imaging library).

Lines, dashes, dots and filled rectangles on an RGB canvas, text in a built-in
3x5 pixel font drawn at twice its size (upper case only, every character the same
width), and a minimal PNG encoder (one IDAT chunk, filter 0 on every row).
"""

from __future__ import annotations

import itertools
import math
import struct
import zlib
from collections.abc import Sequence

from forge_app.cli._chart_axes import (
    BOTTOM,
    GAP,
    HEIGHT,
    LEFT,
    RIGHT,
    TOP,
    WIDTH,
    Box,
    Plot,
    Point,
    Sample,
    axes_for,
    compaction_count,
    fit_lines,
    legend_labels,
)

__all__ = ["timeline_png"]

Rgb = tuple[int, int, int]
WHITE: Rgb = (255, 255, 255)
INK: Rgb = (17, 24, 39)
GRID: Rgb = (229, 231, 235)
LINE: Rgb = (37, 99, 235)
MARK: Rgb = (220, 38, 38)
BASELINE: Rgb = (156, 163, 175)
SCALE = 2
"""Pixels per font dot."""

_GLYPHS: dict[str, str] = {
    "0": "### #.# #.# #.# ###", "1": ".#. ##. .#. .#. ###", "2": "### ..# ### #.. ###",
    "3": "### ..# ### ..# ###", "4": "#.# #.# ### ..# ..#", "5": "### #.. ### ..# ###",
    "6": "### #.. ### #.# ###", "7": "### ..# ..# .#. .#.", "8": "### #.# ### #.# ###",
    "9": "### #.# ### ..# ###", "A": ".#. #.# ### #.# #.#", "B": "##. #.# ##. #.# ##.",
    "C": ".## #.. #.. #.. .##", "D": "##. #.# #.# #.# ##.", "E": "### #.. ##. #.. ###",
    "F": "### #.. ##. #.. #..", "G": ".## #.. #.# #.# .##", "H": "#.# #.# ### #.# #.#",
    "I": "### .#. .#. .#. ###", "J": "..# ..# ..# #.# .#.", "K": "#.# #.# ##. #.# #.#",
    "L": "#.. #.. #.. #.. ###", "M": "#.# ### ### #.# #.#", "N": "##. #.# #.# #.# #.#",
    "O": ".#. #.# #.# #.# .#.", "P": "##. #.# ##. #.. #..", "Q": ".#. #.# #.# ##. .##",
    "R": "##. #.# ##. #.# #.#", "S": ".## #.. .#. ..# ##.", "T": "### .#. .#. .#. .#.",
    "U": "#.# #.# #.# #.# ###", "V": "#.# #.# #.# #.# .#.", "W": "#.# #.# ### ### #.#",
    "X": "#.# #.# .#. #.# #.#", "Y": "#.# #.# .#. .#. .#.", "Z": "### ..# .#. #.. ###",
    " ": "... ... ... ... ...", ".": "... ... ... ... .#.", ",": "... ... ... .#. #..",
    ":": "... .#. ... .#. ...", "-": "... ... ### ... ...", "_": "... ... ... ... ###",
    "/": "..# ..# .#. #.. #..", "(": ".#. #.. #.. #.. .#.", ")": ".#. ..# ..# ..# .#.",
    "%": "#.# ..# .#. #.. #.#", "~": "... .## ##. ... ...", "·": "... ... .#. ... ...",
    "+": "... .#. ### .#. ...", "=": "... ### ... ### ...", "?": "##. ..# .#. ... .#.",
    "[": "##. #.. #.. #.. ##.", "]": ".## ..# ..# ..# .##", "'": ".#. .#. ... ... ...",
    "<": "..# .#. #.. .#. ..#", ">": "#.. .#. ..# .#. #..", "●": "... ### ### ### ...",
}  # fmt: skip
GLYPH_WIDTH = 4 * SCALE
"""Horizontal advance of one character, spacing included."""
GLYPH_HEIGHT = 5 * SCALE
"""Height of every character."""
HEADER_ROWS = (16, 36)
"""Tops of the header's two rows: title and count, then title and legend."""
SYMBOL = 16
"""Length of a legend's line sample; its text starts 6 pixels after it."""


def text_width(text: str) -> int:
    """The width ``text`` takes on the canvas (it is drawn in upper case)."""
    return len(text.upper()) * GLYPH_WIDTH


class Canvas:
    """An RGB pixel buffer with the few drawing operations the chart needs."""

    def __init__(self, width: int, height: int, background: Rgb = WHITE) -> None:
        """A ``width`` x ``height`` canvas filled with ``background``."""
        self.width = width
        self.height = height
        self.pixels = bytearray(bytes(background) * (width * height))
        self.texts: list[tuple[str, Box]] = []
        """Every text drawn, with the rectangle its glyphs may cover."""

    def dot(self, x: int, y: int, color: Rgb, size: int = 1) -> None:
        """A ``size`` x ``size`` square at (x, y), clipped to the canvas."""
        for dy, dx in itertools.product(range(size), range(size)):
            px, py = x + dx, y + dy
            if 0 <= px < self.width and 0 <= py < self.height:
                at = (py * self.width + px) * 3
                self.pixels[at : at + 3] = bytes(color)

    def line(
        self, start: tuple[float, float], end: tuple[float, float], color: Rgb, *,
        width: int = 1, dash: tuple[int, int] | None = None,
    ) -> None:  # fmt: skip
        """A straight line, optionally dashed as (on, off) pixels."""
        (x0, y0), (x1, y1) = start, end
        steps = max(1, math.ceil(max(abs(x1 - x0), abs(y1 - y0))))
        for step in range(steps + 1):
            if dash is not None and step % (dash[0] + dash[1]) >= dash[0]:
                continue
            t = step / steps
            self.dot(round(x0 + (x1 - x0) * t), round(y0 + (y1 - y0) * t), color, width)

    def disk(self, cx: float, cy: float, radius: int, color: Rgb) -> None:
        """A filled circle."""
        for dy, dx in itertools.product(range(-radius, radius + 1), repeat=2):
            if dx * dx + dy * dy <= radius * radius:
                self.dot(round(cx) + dx, round(cy) + dy, color)

    def text(self, x: float, y: float, text: str, color: Rgb, *, anchor: str = "start") -> Box:
        """Upper-case ``text`` with its top-left corner at (x, y) (``end``: right edge at x).

        Returns (and records in :attr:`texts`) the rectangle it covers.
        """
        chars = text.upper()
        width = text_width(text)
        left = round(x - width) if anchor == "end" else round(x)
        if anchor == "middle":
            left = round(x - width / 2)
        box = Box(left, round(y), left + width, round(y) + GLYPH_HEIGHT)
        self.texts.append((text, box))
        for index, char in enumerate(chars):
            rows = _GLYPHS.get(char, _GLYPHS["?"]).split()
            for row, col in itertools.product(range(5), range(3)):
                if rows[row][col] == "#":
                    self.dot(left + index * GLYPH_WIDTH + col * SCALE, round(y) + row * SCALE,
                             color, SCALE)  # fmt: skip
        return box


def png_bytes(canvas: Canvas) -> bytes:
    """Encode ``canvas`` as an 8-bit RGB PNG."""
    row = canvas.width * 3
    raw = b"".join(
        b"\x00" + bytes(canvas.pixels[y * row : (y + 1) * row]) for y in range(canvas.height)
    )

    def chunk(tag: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(tag + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", canvas.width, canvas.height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def _polyline(
    canvas: Canvas,
    points: Sequence[Point],
    color: Rgb,
    *,
    width: int = 1,
    dash: tuple[int, int] | None = None,
) -> None:
    for start, end in itertools.pairwise(points):
        canvas.line(start, end, color, width=width, dash=dash)


def _header(
    canvas: Canvas, title: str, samples: Sequence[Sample], baseline: Sequence[Sample]
) -> None:
    """The title left (wrapped, then cut), the count and the legend right-aligned."""
    count = canvas.text(WIDTH - RIGHT, HEADER_ROWS[0], compaction_count(samples), MARK,
                        anchor="end")  # fmt: skip
    with_label, without_label = legend_labels(samples, baseline)
    right: float = WIDTH - RIGHT
    row = HEADER_ROWS[1]
    for label, color, width, dash in (
        (without_label, BASELINE, 1, (3, 3)),
        (with_label, LINE, 2, None),
    ):
        text = canvas.text(right, row, label, color, anchor="end")
        middle = row + GLYPH_HEIGHT / 2
        canvas.line((text.left - 6 - SYMBOL, middle), (text.left - 6, middle), color, width=width,
                    dash=dash)  # fmt: skip
        right = text.left - 6 - SYMBOL - GAP
    widths = (count.left - GAP - LEFT, right - LEFT)
    for line, top in zip(fit_lines(title, widths, text_width, "..."), HEADER_ROWS, strict=False):
        if line:
            canvas.text(LEFT, top, line, INK)


def timeline_canvas(
    samples: Sequence[Sample],
    *,
    threshold: int | None = None,
    title: str = "context size",
    baseline: Sequence[Sample] = (),
) -> Canvas:
    """The chart of :func:`~forge_app.cli._chart.timeline_svg`, drawn on a canvas."""
    plot = Plot.of(axes_for(samples, baseline, threshold), samples, baseline)
    canvas = Canvas(WIDTH, HEIGHT)
    _header(canvas, title, samples, baseline)
    for row, label in plot.grid:
        canvas.line((LEFT, row), (WIDTH - RIGHT, row), GRID)
        canvas.text(LEFT - 8, row - 5, label, INK, anchor="end")
    for column, label in plot.turns:
        canvas.text(column, HEIGHT - BOTTOM + 10, label, INK, anchor="middle")
    canvas.text(LEFT + (WIDTH - LEFT - RIGHT) / 2, HEIGHT - 18, "turn", INK, anchor="middle")
    canvas.text(8, TOP - 22, "tokens", INK)
    if threshold is not None:
        start, end = plot.level(threshold)
        canvas.line(start, end, MARK, dash=(6, 4))
        canvas.text(WIDTH - RIGHT, start[1] - 14, f"threshold {threshold:,}", MARK, anchor="end")
    _polyline(canvas, plot.baseline, BASELINE, dash=(3, 3))
    _polyline(canvas, plot.series, LINE, width=2)
    for mark in plot.marks:
        canvas.disk(*mark.at, 4, MARK)
    return canvas


def timeline_png(
    samples: Sequence[Sample],
    *,
    threshold: int | None = None,
    title: str = "context size",
    baseline: Sequence[Sample] = (),
) -> bytes:
    """The same chart as :func:`~forge_app.cli._chart.timeline_svg`, as PNG bytes."""
    return png_bytes(timeline_canvas(samples, threshold=threshold, title=title, baseline=baseline))
