"""``replay``, ``demo``, ``run`` and ``batch`` through the installed console script."""

from __future__ import annotations

import json
import resource
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from forge_app.files._transcripts import read_transcript
from forge_domain.formats import find_violations
from tests.app.cli_process import forge
from tests.app.fake_openai_server import FakeOpenAIServer, Reply
from tests.app.test_cli import ORPHAN, SMALL, needs_sessions

REPO = Path(__file__).resolve().parents[2]
DEMO_SESSION = REPO / "forge_app" / "demo" / "session.json"
DEMO_AGENT = REPO / "forge_app" / "demo" / "agent.yaml"
SVG = "{http://www.w3.org/2000/svg}"


def _child_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def test_cli_demo_runs_offline_in_seconds(tmp_path):
    """CPU time, not wall time: a loaded CI machine must not make the check flaky."""
    started = _child_cpu_seconds()
    result = forge("demo", "-o", tmp_path, fresh=True)  # its CPU is this process's child
    elapsed = _child_cpu_seconds() - started
    chart = ET.parse(tmp_path / "timeline.svg").getroot()
    actual = {
        "status": result.returncode,
        "fast": elapsed < 5 or elapsed,
        "compactions in the chart": len(chart.findall(f"{SVG}circle")) > 0,
        "valid outputs": [
            find_violations(read_transcript(tmp_path / name).context)
            for name in ("compacted.json", "replayed.json")
        ],
        "reports both steps": ("1. compact" in result.stderr, "2. replay" in result.stderr),
    }
    expected = {
        "status": 0,
        "fast": True,
        "compactions in the chart": True,
        "valid outputs": [[], []],
        "reports both steps": (True, True),
    }
    assert actual == expected, result.stderr


def test_cli_replay_marks_every_compaction(tmp_path):
    chart, turns_path, out = tmp_path / "t.svg", tmp_path / "turns.jsonl", tmp_path / "out.json"
    result = forge(
        "replay", DEMO_SESSION, "--agent", DEMO_AGENT, "--chart", chart,
        "--json-metrics", turns_path, "-o", out,
    )  # fmt: skip
    turns = [json.loads(line) for line in turns_path.read_text().splitlines()]
    compactions = sum(len(turn["compactions"]) for turn in turns)
    actual = {
        "status": result.returncode,
        "turns": len(turns),
        "marks in the table": result.stderr.count("●"),
        "marks in the chart": len(ET.parse(chart).getroot().findall(f"{SVG}circle")),
        "final size": (turns[-1]["messages"], find_violations(read_transcript(out).context)),
    }
    expected = {
        "status": 0,
        "turns": 13,
        "marks in the table": compactions,
        "marks in the chart": compactions,
        "final size": (len(read_transcript(out).context), []),
    }
    assert actual == expected, result.stderr
    assert compactions > 0


def test_cli_replay_writes_a_png_chart(tmp_path):
    chart = tmp_path / "t.png"
    result = forge("replay", DEMO_SESSION, "--agent", DEMO_AGENT, "--chart", chart)
    data = chart.read_bytes()
    actual = (result.returncode, data[:8], int.from_bytes(data[16:20]), int.from_bytes(data[20:24]))
    assert actual == (0, b"\x89PNG\r\n\x1a\n", 840, 380), result.stderr


@needs_sessions
def test_cli_replay_default_agent_on_small_session_never_compacts():
    result = forge("replay", SMALL, fresh=True)
    assert (result.returncode, "0 compactions" in result.stderr) == (0, True), result.stderr


AGENT_INVALID = "agents:\n  - id: x\n    compact:\n      eviction_window: 1.5\n"
AGENT_UNKNOWN_KEY = "agents:\n  - id: x\n    compactt: {}\n"


@pytest.mark.parametrize(
    ("files", "args", "message"),
    [
        (
            {"a.yaml": AGENT_INVALID},
            ["replay", DEMO_SESSION, "--agent", "a.yaml"],
            "a.yaml:4: agents[0].compact.eviction_window",
        ),
        (
            {"a.yaml": AGENT_UNKNOWN_KEY},
            ["compact", DEMO_SESSION, "--agent", "a.yaml"],
            "a.yaml:3: agents[0].compactt: unknown key",
        ),
        ({}, ["compact", DEMO_SESSION, "--agent", "none.yaml"], "none.yaml: no such file"),
        (
            {"a.yaml": "agents:\n  - id: x\n"},
            ["compact", DEMO_SESSION, "--agent", "a.yaml", "--agent-id", "y"],
            "no agent 'y' (defined: x)",
        ),
        ({}, ["replay", DEMO_SESSION, "--chart", "t.pdf"], "unsupported chart format '.pdf'"),
        ({"s.json": json.dumps(ORPHAN)}, ["replay", "s.json"], "messages[1]"),
        ({"s.json": "[{]"}, ["replay", "s.json"], "line 1 column 3"),
        ({"a.yaml": "agents:\n  - id: x\n"}, ["run", "a.yaml", "hi"], "no endpoint configured"),
        ({}, ["run", "none.yaml", "hi"], "none.yaml: no such file"),
    ],
    ids=[
        "agent-bad-value",
        "agent-unknown-key",
        "agent-missing",
        "agent-id-unknown",
        "chart-pdf",
        "replay-provider-invalid",
        "replay-bad-json",
        "run-no-endpoint",
        "run-agent-missing",
    ],
)
def test_cli_bad_agent_or_option_exits_2_with_one_line(tmp_path, files, args, message):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    result = forge(*args, cwd=tmp_path)
    lines = result.stderr.strip().splitlines()
    assert (result.returncode, len(lines), message in result.stderr) == (2, 1, True), result.stderr
    assert list(tmp_path.glob("t.*")) == []


def test_cli_run_talks_to_an_openai_compatible_endpoint(tmp_path):
    agent = tmp_path / "agent.yaml"
    agent.write_text("agents:\n  - id: x\n    model: fake-model\n    system_prompt: Be brief.\n")
    with FakeOpenAIServer() as server:
        server.script(Reply.text("forty-two"))
        result = forge(
            "run", agent, "What is the answer?", "-o", tmp_path / "out.json",
            env={"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "test-key"}, fresh=True,
        )  # fmt: skip
        sent = server.requests
    roles = [m["role"] for m in json.loads((tmp_path / "out.json").read_text())]
    actual = (result.returncode, result.stdout.strip(), [b["model"] for b in sent], roles)
    assert actual == (0, "forty-two", ["fake-model"], ["system", "user", "assistant"])


def test_cli_run_provider_error_exits_1_with_one_line(tmp_path):
    agent = tmp_path / "agent.yaml"
    agent.write_text("agents:\n  - id: x\n    model: fake-model\n")
    with FakeOpenAIServer() as server:
        server.script(Reply.error(400, "bad request"))
        result = forge(
            "run", agent, "hi",
            env={"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "k"},
        )  # fmt: skip
    lines = result.stderr.strip().splitlines()
    assert (result.returncode, len(lines), "bad request" in lines[-1]) == (1, 1, True)


@needs_sessions
def test_cli_batch_keeps_going_past_a_bad_file_and_exits_1(tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "good.json").write_text(SMALL.read_text())
    (inputs / "bad.json").write_text("[1,")
    result = forge("batch", inputs, "-o", tmp_path / "out")
    records = [
        json.loads(line) for line in (tmp_path / "out" / "metrics.jsonl").read_text().splitlines()
    ]
    actual = (
        result.returncode,
        sorted(p.name for p in (tmp_path / "out").iterdir()),
        # metrics.jsonl is written as files complete: one record per file, in any order
        sorted((Path(r["input"]).name, sorted(r) == ["error", "input"]) for r in records),
    )
    assert actual == (1, ["good.json", "metrics.jsonl"], [("bad.json", True), ("good.json", False)])


def test_cli_batch_refuses_to_overwrite_its_inputs(tmp_path):
    (tmp_path / "s.json").write_text(DEMO_SESSION.read_text())
    before = (tmp_path / "s.json").read_bytes()
    result = forge("batch", tmp_path, "-o", tmp_path)
    actual = (result.returncode, (tmp_path / "s.json").read_bytes() == before)
    assert actual == (2, True)
    assert "inputs are never overwritten" in result.stderr


def test_cli_batch_recursive_glob_keeps_same_named_files_apart(tmp_path):
    for folder in ("a", "a/b"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / "s.json").write_text(DEMO_SESSION.read_text())
    result = forge("batch", "**/s.json", "-o", "out", "--force", cwd=tmp_path)
    written = sorted(str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*"))
    assert (result.returncode, written) == (0, ["b", "b/s.json", "metrics.jsonl", "s.json"])


def test_cli_counts_one_of_a_thing_in_the_singular(tmp_path):
    session = tmp_path / "one.json"
    session.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    turn = tmp_path / "turn.json"
    turn.write_text(
        json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}])
    )
    validated = forge("validate", session)
    replayed = forge("replay", turn)
    actual = (
        "valid (openai): 1 message," in validated.stderr,
        "1 turn, 0 compactions; final context ~" in replayed.stderr,
        "messages" in replayed.stderr.split("final context", 1)[-1].split(",")[0],
    )
    assert actual == (True, True, True), validated.stderr + replayed.stderr
