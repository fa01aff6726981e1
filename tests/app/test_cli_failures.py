"""Failures during a job end the command with one line that names what failed, and exit 1.

A plugin engine that raises, a summary model without a key, a model whose final answer has
no content: each is the job failing (exit 1), named for what the user can fix.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.app.cli_process import forge
from tests.app.fake_openai_server import FakeOpenAIServer, Reply
from tests.sessions import SESSIONS

pytestmark = pytest.mark.skipif(not SESSIONS.is_dir(), reason="shared sessions not present")

RAISING_ENGINE = """
from forge_domain import BaseContextEngine


class RaisingEngine(BaseContextEngine):
    name = "raising"

    async def compress(self, context, *, focus=None, mode="automatic"):
        raise RuntimeError("the plugin's own bug")
"""


@pytest.fixture
def raising_plugin(tmp_path: Path) -> dict[str, str]:
    """The environment of a command that can load a ``forge.engines`` plugin that raises."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "forge_raising_engine.py").write_text(RAISING_ENGINE)
    dist = site / "forge_raising_engine-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: forge-raising-engine\nVersion: 1.0\n"
    )
    (dist / "entry_points.txt").write_text(
        "[forge.engines]\nraising = forge_raising_engine:RaisingEngine\n"
    )
    return {"PYTHONPATH": str(site)}


def _agent(tmp_path: Path, engine: str) -> Path:
    agent = tmp_path / "agent.yaml"
    agent.write_text(
        textwrap.dedent(
            f"""\
            agents:
              - id: a
                model: m
                context_length: 8000
                compact: {{engine: {engine}, token_threshold: 2000}}
            """
        )
    )
    return agent


def _ending(result) -> tuple[int, int, str]:
    lines = [line for line in result.stderr.strip().splitlines() if "forge-compact:" in line]
    return result.returncode, len(lines), lines[-1] if lines else result.stderr[-300:]


@pytest.mark.parametrize("command", ["compact", "replay"])
def test_cli_failures_a_raising_plugin_engine_is_one_line_naming_it(
    tmp_path: Path, raising_plugin: dict[str, str], command: str
) -> None:
    session = SESSIONS / "sweagent-marshmallow-1867-fc.json"
    agent = _agent(tmp_path, "raising")
    result = forge(
        command, session, "--agent", agent, "-o", tmp_path / "o.json", env=raising_plugin
    )
    status, count, line = _ending(result)
    actual = (status, count, len(result.stderr.strip().splitlines()), line)
    expected = (
        1,
        1,
        1,
        "forge-compact: error: engine 'raising' failed: RuntimeError: the plugin's own bug",
    )
    assert actual == expected, result.stderr[-2000:]


def test_cli_failures_replay_without_a_summary_key_ends_with_the_provider_error(
    tmp_path: Path,
) -> None:
    session = SESSIONS / "msa-deepseek-django-15400.json"
    agent = _agent(tmp_path, "llm")
    result = forge("replay", session, "--agent", agent)
    status, count, line = _ending(result)
    actual = (status, count, line.startswith("forge-compact: error: call to model 'm' failed"))
    assert actual == (1, 1, True), result.stderr[-2000:]


def test_cli_failures_run_final_answer_without_content_exits_1(tmp_path: Path) -> None:
    agent = tmp_path / "agent.yaml"
    agent.write_text("agents:\n  - id: x\n    model: fake-model\n")
    with FakeOpenAIServer() as server:
        server.script(Reply(content=None))
        result = forge(
            "run", agent, "hi", "-o", tmp_path / "out.json",
            env={"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "k"},
        )  # fmt: skip
    status, count, line = _ending(result)
    actual = (status, count, result.stdout, "no answer" in line, (tmp_path / "out.json").exists())
    assert actual == (1, 1, "", True, True), result.stderr


def test_cli_failures_a_misspelt_plugin_name_is_bad_input(tmp_path: Path) -> None:
    agent = tmp_path / "agent.yaml"
    agent.write_text("agents:\n  - id: a\n    plugins: {disable: [loging]}\n")
    session = SESSIONS / "sweagent-gpt4o-testrepo.json"
    result = forge("replay", session, "--agent", agent)
    status, count, line = _ending(result)
    actual = (status, count, "plugins.disable names no plugin: 'loging'" in line)
    assert actual == (2, 1, True), result.stderr[-2000:]


def test_cli_failures_output_through_a_symlink_keeps_the_link(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("[]")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    session = SESSIONS / "sweagent-gpt4o-testrepo.json"
    result = forge("compact", session, "-o", link)
    actual = (result.returncode, link.is_symlink(), json.loads(real.read_text()) != [])
    assert actual == (0, True, True), result.stderr
