"""The hand-written SVG and PNG timeline charts of ``forge-compact replay``."""

from __future__ import annotations

import itertools
import struct
import xml.etree.ElementTree as ET
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_app.cli._chart import (
    ASCENT,
    DESCENT,
    TEXT_SIZE,
    TITLE_SIZE,
    chart_format,
    render_chart,
    text_width,
    timeline_svg,
)
from forge_app.cli._chart_axes import HEIGHT, WIDTH, Box, Sample, fit_lines, nice_step
from forge_app.cli._chart_png import GLYPH_WIDTH, Canvas, png_bytes, timeline_canvas, timeline_png
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


# -- the header: a long title never overprints the count or the legend ---------------------


def _ten(text: str) -> float:
    """A measure of 10 pixels per character, for readable layout cases."""
    return 10.0 * len(text)


@pytest.mark.parametrize(
    ("text", "widths", "expected"),
    [
        ("abc def", [100], ("abc def",)),
        ("  abc \n def  ", [100], ("abc def",)),
        ("abc def ghi", [50, 100], ("abc", "def ghi")),
        ("a bcdefghij", [50, 100], ("a bcd", "efghij")),
        ("abcdefghij", [50, 50], ("abcde", "fghij")),
        ("abcdefghijklmno", [50, 50], ("abcde", "fghi…")),
        ("abc", [5], ("",)),
        ("abc", [5, 100], ("", "abc")),
        ("", [100], ()),
    ],
    ids=[
        "fits",
        "spaces",
        "at-space",
        "short-word",
        "in-word",
        "ellipsis",
        "too-narrow",
        "narrow-first",
        "empty",
    ],
)
def test_fit_lines_wraps_then_cuts(text, widths, expected):
    assert fit_lines(text, widths, _ten) == expected


@given(st.text(max_size=200), st.lists(st.integers(-10, 400), min_size=1, max_size=3))
def test_fit_lines_never_exceeds_a_width(text, widths):
    lines = fit_lines(text, widths, _ten)
    normalised = " ".join(text.split())
    actual = (
        len(lines) <= len(widths),
        [not line or _ten(line) <= width for line, width in zip(lines, widths, strict=False)],
        lines == (normalised,) if normalised and _ten(normalised) <= widths[0] else True,
    )
    assert actual == (True, [True] * len(lines), True)


def _svg_boxes(svg: str) -> list[tuple[str, Box]]:
    """Every unrotated text of an SVG chart, in the box the chart's font metrics give it."""
    boxes = []
    for element in ET.fromstring(svg).iter(f"{{{NS['svg']}}}text"):
        if "transform" in element.attrib:
            continue
        text = "".join(element.itertext())
        size = float(element.get("font-size", TEXT_SIZE))
        width = text_width(text, size)
        x, y = float(element.attrib["x"]), float(element.attrib["y"])
        anchor = element.get("text-anchor", "start")
        left = {"end": x - width, "middle": x - width / 2}.get(anchor, x)
        boxes.append((text, Box(left, y - ASCENT * size, left + width, y + DESCENT * size)))
    return boxes


def _overprints(boxes: list[tuple[str, Box]]) -> list[tuple[str, str]]:
    """Pairs of texts whose boxes overlap, and texts that leave the picture."""
    clashes = [
        (a, b)
        for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2)
        if box_a.overlaps(box_b)
    ]
    outside = [
        (text, "outside the picture")
        for text, box in boxes
        if box.left < 0 or box.top < 0 or box.right > WIDTH or box.bottom > HEIGHT
    ]
    return clashes + outside


def _saw(compactions: int, tokens: int) -> tuple[list[Sample], list[Sample]]:
    samples = [Sample(0, tokens)]
    for turn in range(1, compactions + 1):
        samples += [Sample(turn, tokens), Sample(turn, tokens // 3, compaction=True)]
    return samples, [Sample(s.turn, tokens * 2) for s in samples if not s.compaction]


LONG_NAME = "msa-deepseek-reasoner-sqlfluff-1763-replayed-with-a-long-suffix" * 4 + ".json"
TITLES = [
    f"{LONG_NAME} · agent demo · context size per turn",
    "a " * 300,
    "会话记录" * 80,
    "W" * 500,
    f"{'x' * 70} {'y' * 70} {'z' * 70}",
]


@given(
    st.one_of(st.sampled_from(TITLES), st.text(max_size=400)),
    st.integers(0, 10_000),
    st.integers(1, 10**9),
    st.one_of(st.none(), st.integers(0, 10**9)),
)
def test_svg_texts_never_overprint(title, compactions, tokens, threshold):
    samples, baseline = _saw(min(compactions, 40), tokens)
    if compactions > 40:  # a large count without drawing thousands of marks
        samples += [Sample(41, tokens, compaction=True)] * (compactions - 40)
    svg = timeline_svg(samples, threshold=threshold, title=title, baseline=baseline)
    assert _overprints(_svg_boxes(svg)) == []


@given(
    st.one_of(st.sampled_from(TITLES), st.text(max_size=400)),
    st.integers(0, 40),
    st.integers(1, 10**9),
    st.one_of(st.none(), st.integers(0, 10**9)),
)
def test_png_texts_never_overprint(title, compactions, tokens, threshold):
    samples, baseline = _saw(compactions, tokens)
    canvas = timeline_canvas(samples, threshold=threshold, title=title, baseline=baseline)
    assert _overprints(canvas.texts) == []


@given(st.text(max_size=30))
def test_canvas_text_draws_inside_its_box(text):
    canvas = Canvas(300, 20)
    box = canvas.text(4, 5, text, (0, 0, 0))
    inked = [
        (index // 3 % 300, index // 3 // 300)
        for index in range(0, len(canvas.pixels), 3)
        if canvas.pixels[index : index + 3] != b"\xff\xff\xff"
    ]
    assert [
        (x, y) for x, y in inked if not (box.left <= x < box.right and box.top <= y < box.bottom)
    ] == []


def _title_lines(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    return [
        "".join(t.itertext())
        for t in root.iter(f"{{{NS['svg']}}}text")
        if t.get("font-size") == str(TITLE_SIZE)
    ]


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("demo session · agent demo · context size per turn", 1),
        ("sweagent-marshmallow-1867-fc.json · agent default · context size per turn", 1),
        (f"{LONG_NAME} · agent demo · context size per turn", 2),
    ],
    ids=["demo", "shared-session", "long-name"],
)
def test_svg_title_wraps_and_keeps_it_whole_in_its_title_element(title, expected):
    svg = timeline_svg(SAW, threshold=4000, title=title)
    lines = _title_lines(svg)
    shown = "".join(lines).removesuffix("…")
    actual = {
        "lines": len(lines),
        "shown from the start": title.replace(" ", "").startswith(shown.replace(" ", "")),
        "cut visibly": lines[-1].endswith("…") == (expected == 2),
        "document title": ET.fromstring(svg).find("svg:title", NS).text,
    }
    expected_shape = {
        "lines": expected,
        "shown from the start": True,
        "cut visibly": True,
        "document title": title,
    }
    assert actual == expected_shape


def test_svg_replaces_characters_xml_cannot_hold():
    svg = timeline_svg(SAW, title="bad\udcff\x01name.json")
    actual = ET.fromstring(svg.encode()).find("svg:title", NS).text
    assert actual == "bad\ufffd\ufffdname.json"
