"""The replay chart shows exactly the numbers the replay table prints, for the same replay.

Each case runs the console script, parses the table and the summary line it prints
on stderr, rebuilds the series from them alone, and compares it with the SVG (and
the PNG, byte for byte) the same run wrote.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

from forge_app.cli._chart import timeline_svg
from forge_app.cli._chart_axes import Sample, axes_for
from forge_app.cli._chart_png import timeline_png
from forge_app.compaction import is_summary_message
from forge_app.files import read_transcript
from tests.app.cli_process import forge
from tests.app.test_cli import needs_sessions
from tests.sessions import SESSIONS

REPO = Path(__file__).resolve().parents[2]
DEMO_AGENT = REPO / "forge_app" / "demo" / "agent.yaml"
SVG = "{http://www.w3.org/2000/svg}"
REPLAYED = ["openhands-llama4-ponyc-4593", "msa-deepseek-django-15400"]

_ROW = re.compile(r"^│ +(\d+) │ +(\d+) │ +~?([\d,]+) │ +~([\d,]+) │ [█·│┃]+ +│ (.*?) *│$")
_EVENT = re.compile(r"● (?:pruned )?\d+\.\.\d+ ([\d,]+)→([\d,]+)")
_THRESHOLD = re.compile(r"┃ │ = ([\d,]+) +┃")
_SUMMARY = re.compile(
    r"(\d+) turns?, (\d+) compactions?; final context ~?([\d,]+) tokens in \d+ messages?, "
    r"against ~([\d,]+) tokens"
)


def _number(text: str) -> int:
    return int(text.replace(",", ""))


@dataclass(frozen=True)
class Printed:
    """What the table and the summary line say about a replay."""

    threshold: int
    rows: list[tuple[int, int, int, list[tuple[int, int]]]]
    """turn, tokens, uncompacted, and (before, after) of each compaction."""
    summary: tuple[int, int, int, int]
    """turns, compactions, final tokens, final tokens without compaction."""


def _printed(stderr: str) -> Printed:
    rows = [
        (
            int(m[1]),
            _number(m[3]),
            _number(m[4]),
            [(_number(b), _number(a)) for b, a in _EVENT.findall(m[5])],
        )
        for line in stderr.splitlines()
        if (m := _ROW.match(line))
    ]
    threshold = _THRESHOLD.search(stderr)
    summary = _SUMMARY.search(stderr)
    assert threshold is not None, stderr
    assert summary is not None, stderr
    return Printed(
        _number(threshold[1]),
        rows,
        (int(summary[1]), int(summary[2]), _number(summary[3]), _number(summary[4])),
    )


def _series(printed: Printed) -> tuple[list[Sample], list[Sample]]:
    """The chart's series as the table describes it: per row, each compaction, then the size."""
    samples: list[Sample] = []
    for turn, tokens, _, events in printed.rows:
        for before, after in events:
            samples += [Sample(turn, before), Sample(turn, after, compaction=True)]
        samples.append(Sample(turn, tokens))
    return samples, [Sample(turn, without) for turn, _, without, _ in printed.rows]


def _points(series: list[Sample], samples: list[Sample], baseline: list[Sample], threshold: int):
    axes = axes_for(samples, baseline, threshold)
    return " ".join(f"{axes.x(s.turn):.1f},{axes.y(s.tokens):.1f}" for s in series)


def _drawn(svg: Path) -> dict[str, object]:
    """The numbers the SVG shows: its two lines, marks, count, legend and threshold."""
    root = ET.parse(svg).getroot()
    texts = ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]
    lines = {
        "baseline" if line.find(f"{SVG}title") is not None else "line": line.attrib["points"]
        for line in root.iter(f"{SVG}polyline")
    }
    return {
        "line": lines["line"],
        "baseline": lines["baseline"],
        "marks": ["".join(c.itertext()) for c in root.iter(f"{SVG}circle")],
        "count": [t for t in texts if t.startswith("●")],
        "legend": [t for t in texts if t[:1] in "━┅"],
        "threshold": [t for t in texts if t.startswith("threshold")],
    }


def _expected(printed: Printed) -> dict[str, object]:
    samples, baseline = _series(printed)
    events = [(turn, b, a) for turn, _, _, evs in printed.rows for b, a in evs]
    count, final, final_without = printed.summary[1:]
    return {
        "line": _points(samples, samples, baseline, printed.threshold),
        "baseline": _points(baseline, samples, baseline, printed.threshold),
        "marks": [f"turn {t}: compacted {b:,} → {a:,} tokens" for t, b, a in events],
        "count": [f"● {count} compaction{'s' if count != 1 else ''}"],
        "legend": [
            f"┅ without compaction (final {final_without:,})",
            f"━ with compaction (final {final:,})",
        ],
        "threshold": [f"threshold {printed.threshold:,}"],
    }


def _consistent(printed: Printed) -> dict[str, object]:
    """The summary line against the table: turns, compactions and the last row's sizes."""
    last = printed.rows[-1]
    return {
        "turns": len(printed.rows) == printed.summary[0],
        "compactions": sum(len(r[3]) for r in printed.rows) == printed.summary[1],
        "final": (last[1], last[2]) == printed.summary[2:],
    }


@needs_sessions
@pytest.mark.parametrize("name", REPLAYED, ids=REPLAYED)
def test_replay_chart_shows_the_numbers_of_the_table(tmp_path, name):
    session = SESSIONS / f"{name}.json"
    svg, png = tmp_path / "t.svg", tmp_path / "t.png"
    result = forge("replay", session, "--agent", DEMO_AGENT, "--chart", svg)
    forge("replay", session, "--agent", DEMO_AGENT, "--chart", png)
    printed = _printed(result.stderr)
    samples, baseline = _series(printed)
    title = f"{session.name} · agent demo · context size per turn"
    actual = {
        "status": result.returncode,
        "compacted": printed.summary[1] > 0,
        "summary": _consistent(printed),
        "svg": _drawn(svg),
        "svg document": svg.read_text(),
        "png": png.read_bytes(),
    }
    expected = {
        "status": 0,
        "compacted": True,
        "summary": {"turns": True, "compactions": True, "final": True},
        "svg": _expected(printed),
        "svg document": timeline_svg(
            samples, threshold=printed.threshold, title=title, baseline=baseline
        ),
        "png": timeline_png(samples, threshold=printed.threshold, title=title, baseline=baseline),
    }
    assert actual == expected, result.stderr


def test_demo_chart_shows_the_numbers_of_the_table(tmp_path):
    result = forge("demo", "-o", tmp_path)
    printed = _printed(result.stderr)
    actual = (result.returncode, _consistent(printed), _drawn(tmp_path / "timeline.svg"))
    expected = (0, {"turns": True, "compactions": True, "final": True}, _expected(printed))
    assert actual == expected, result.stderr


def test_demo_shows_the_summary_its_manual_compaction_writes(tmp_path):
    result = forge("demo", "-o", tmp_path)
    compacted = read_transcript(tmp_path / "compacted.json").context
    summaries = [message.text for message in compacted if is_summary_message(message)]
    start = result.stderr.split("The summary message starts:", 1)[-1]
    engine = re.search(r"engine (\w+)", result.stderr)
    actual = {
        "status": result.returncode,
        "engine": engine.group(1) if engine else None,
        "one summary written": len(summaries),
        "its first line printed": summaries[:1] and summaries[0].split(" condensed")[0] in start,
        "its heading printed": "## Summary" in start,
        "messages": re.search(r"│ messages │ +(\d+) │ +(\d+) │", result.stderr).groups(),
    }
    expected = {
        "status": 0,
        "engine": "frame",
        "one summary written": 1,
        "its first line printed": True,
        "its heading printed": True,
        "messages": ("28", str(len(compacted))),
    }
    assert actual == expected, result.stderr
    assert len(compacted) < 28
