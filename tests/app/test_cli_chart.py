"""The hand-written SVG timeline chart of ``forge-compact replay``."""

from __future__ import annotations

import struct
import xml.etree.ElementTree as ET
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_app.chart import chart_format, render_chart, timeline_svg
from forge_app.chart_axes import Sample, nice_step
from forge_app.chart_png import GLYPH_WIDTH, Canvas, png_bytes, timeline_png
from forge_app.errors import ChartFormatUnsupported

NS = {"svg": "http://www.w3.org/2000/svg"}
SAW = [
    Sample(1, 1000),
    Sample(2, 2500),
    Sample(3, 4100),
    Sample(3, 1500, compaction=True),
    Sample(4, 2600),
    Sample(5, 4300),
    Sample(5, 1700, compaction=True),
]


def _shape(svg: str) -> dict[str, object]:
    root = ET.fromstring(svg)
    polyline = root.find("svg:polyline", NS)
    return {
        "points": 0 if polyline is None else len(polyline.attrib["points"].split()),
        "marks": len(root.findall("svg:circle", NS)),
        "dashed": len(root.findall("svg:line[@stroke-dasharray]", NS)),
    }


@pytest.mark.parametrize(
    ("samples", "threshold", "expected"),
    [
        (SAW, 4000, {"points": 7, "marks": 2, "dashed": 1}),
        (SAW, None, {"points": 7, "marks": 2, "dashed": 0}),
        ([], None, {"points": 0, "marks": 0, "dashed": 0}),
        ([Sample(0, 0)], 10, {"points": 1, "marks": 0, "dashed": 1}),
    ],
    ids=["saw-tooth", "no-threshold", "empty", "single-zero"],
)
def test_timeline_svg_draws_line_marks_and_threshold(samples, threshold, expected):
    assert _shape(timeline_svg(samples, threshold=threshold, title="t <&>")) == expected


@given(st.lists(st.tuples(st.integers(0, 500), st.integers(0, 10**7), st.booleans()), max_size=60))
def test_timeline_svg_is_always_well_formed_xml(rows):
    samples = [Sample(turn, tokens, flag) for turn, tokens, flag in sorted(rows)]
    assert (
        ET.fromstring(timeline_svg(samples, threshold=1000)).tag
        == "{http://www.w3.org/2000/svg}svg"
    )


@pytest.mark.parametrize(
    ("span", "expected"),
    [(0, 1.0), (9, 2.0), (10, 2.0), (101, 50.0), (4300, 1000.0), (0.3, 0.1)],
)
def test_nice_step_is_one_two_or_five_times_a_power_of_ten(span, expected):
    assert nice_step(span) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("name", "expected"), [("c.svg", "svg"), ("C.SVG", "svg"), ("c.png", "png"), ("C.Png", "png")]
)
def test_chart_format_follows_the_suffix(name, expected):
    assert chart_format(name) == expected


@pytest.mark.parametrize("name", ["chart.pdf", "chart", "chart.svg.gz"])
def test_chart_format_refuses_other_suffixes(name):
    with pytest.raises(ChartFormatUnsupported, match=r"use a \.svg or \.png file name"):
        chart_format(name)


def _decode_png(data: bytes) -> tuple[int, int, bytes]:
    """Width, height and raw scanlines of a one-IDAT PNG (the encoder's own layout)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, at = {}, 8
    while at < len(data):
        length = int.from_bytes(data[at : at + 4])
        tag, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        assert zlib.crc32(tag + body) == int.from_bytes(data[at + 8 + length : at + 12 + length])
        chunks[tag] = body
        at += 12 + length
    width, height = struct.unpack(">II", chunks[b"IHDR"][:8])
    return width, height, zlib.decompress(chunks[b"IDAT"])


def test_png_bytes_round_trips_the_pixels():
    canvas = Canvas(3, 2)
    canvas.dot(1, 1, (1, 2, 3))
    actual = _decode_png(png_bytes(canvas))
    white = b"\xff" * 3
    assert actual == (3, 2, b"\x00" + white * 3 + b"\x00" + white + b"\x01\x02\x03" + white)


def test_timeline_png_draws_on_a_white_canvas():
    width, height, raw = _decode_png(timeline_png(SAW, threshold=4000, title="t"))
    red = raw.count(b"\xdc\x26\x26")
    assert (width, height, len(raw), red > 0) == (840, 380, 380 * (1 + 840 * 3), True)


def test_canvas_text_clips_at_the_edges_and_knows_every_letter():
    canvas = Canvas(40, 12)
    canvas.text(
        -GLYPH_WIDTH, 0, "abcdefghijklmnopqrstuvwxyz0123456789 .,:-_/()%~+=?[]'<>", (0, 0, 0)
    )
    assert len(canvas.pixels) == 40 * 12 * 3


def test_render_chart_svg_and_png():
    svg = render_chart("c.SVG", SAW, threshold=None, title="t")
    png = render_chart("c.png", SAW, threshold=None, title="t")
    assert (svg[:4], png[:4]) == (b"<svg", b"\x89PNG")
