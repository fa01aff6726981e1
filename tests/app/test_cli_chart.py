"""The hand-written SVG timeline chart of ``forge-compact replay``."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_app.chart import Sample, nice_step, render_chart, timeline_svg
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


@pytest.mark.parametrize("name", ["chart.png", "chart.pdf", "chart"])
def test_render_chart_refuses_other_formats(name):
    with pytest.raises(ChartFormatUnsupported, match=r"only \.svg"):
        render_chart(name, SAW, threshold=None, title="t")


def test_render_chart_svg_suffix_any_case():
    assert render_chart("C.SVG", SAW, threshold=None, title="t").startswith("<svg")
