"""``kill -9`` in the middle of a run: the target is the previous file or the complete new one.

The installed script compacts (or, with no trigger, rewrites) a generated session of
several megabytes and is killed at points spread over its whole run, the write
included. After every kill the target holds either what it held before or the complete
output of a full run, never a truncated file; ``batch`` leaves complete outputs and a
``metrics.jsonl`` of complete lines. The next run removes the temporary files the
killed runs left.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from benchmarks.generator import generate_session
from tests.app.test_cli import _script

MESSAGES = 5_000
"""Size of the generated session (about 5 MB of JSON)."""
KILLS = 8
"""Kill points spread over one full run."""
AGENT = "agents:\n  - id: big\n    context_length: 100000000\n"
"""An agent whose threshold no session reaches: the output is the whole transcript again."""
PREVIOUS = json.dumps([{"role": "user", "content": "an earlier output"}], indent=2) + "\n"


@pytest.fixture(scope="module")
def big_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("kill")
    path = folder / "big.json"
    path.write_text(json.dumps(generate_session(MESSAGES, seed=3)))
    (folder / "agent.yaml").write_text(AGENT)
    return path


def _run(args: list[str], cwd: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    return subprocess.Popen(
        [_script(), *args], cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def _timed(args: list[str], cwd: Path) -> float:
    started = time.monotonic()
    assert _run(args, cwd).wait(timeout=300) == 0
    return time.monotonic() - started


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if ".forge-" in p.name)


@pytest.mark.parametrize("force", [False, True], ids=["rewrite", "compact"])
def test_kill_9_leaves_the_previous_or_the_complete_output(big_session, force):
    folder = big_session.parent
    args = ["compact", big_session.name, "--agent", "agent.yaml", "-o", "out.json"]
    args += ["--force"] if force else []
    seconds = _timed(args, folder)
    complete = (folder / "out.json").read_bytes()
    seen = []
    for kill in range(KILLS):
        (folder / "out.json").write_text(PREVIOUS)
        process = _run(args, folder)
        time.sleep(seconds * (kill + 0.5) / KILLS)
        process.kill()
        process.wait(timeout=60)
        found = (folder / "out.json").read_bytes()
        seen.append("previous" if found == PREVIOUS.encode() else found == complete)
    assert [state for state in seen if state is not True and state != "previous"] == [], seen

    _timed(args, folder)
    assert _leftovers(folder) == []


def test_kill_9_mid_batch_leaves_complete_outputs_and_metrics_lines(big_session, tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    for number in range(3):
        os.link(big_session, inputs / f"s{number}.json")
    args = [
        "batch",
        "in",
        "-o",
        "out",
        "-j",
        "1",
        "--agent",
        str(big_session.parent / "agent.yaml"),
    ]
    seconds = _timed(args, tmp_path)
    complete = (tmp_path / "out" / "s0.json").read_bytes()
    for kill in range(4):
        for path in (tmp_path / "out").glob("*"):
            path.unlink()
        process = _run(args, tmp_path)
        time.sleep(seconds * (kill + 0.5) / 4)
        process.kill()
        process.wait(timeout=60)
        outputs = sorted((tmp_path / "out").glob("s*.json"))
        assert all(path.read_bytes() == complete for path in outputs), kill
        metrics = tmp_path / "out" / "metrics.jsonl"
        lines = metrics.read_text().splitlines() if metrics.exists() else []
        assert [json.loads(line)["output"] for line in lines] == [
            str(p.relative_to(tmp_path)) for p in outputs[: len(lines)]
        ]

    _timed(args, tmp_path)
    assert _leftovers(tmp_path) == []
