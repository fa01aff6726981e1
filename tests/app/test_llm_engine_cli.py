"""The ``llm`` engine through the command line, against a loopback summary model."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from tests.app.cli_process import forge
from tests.app.fake_openai_server import FakeOpenAIServer, Reply
from tests.sessions import SESSIONS

pytestmark = pytest.mark.skipif(not SESSIONS.is_dir(), reason="shared sessions not present")

LLM_AGENT = textwrap.dedent(
    """\
    agents:
      - id: l
        model: m
        context_length: 8000
        compact: {engine: llm, token_threshold: 2000}
    """
)


def _summary(body: dict) -> Reply:
    return Reply.text("## Goal\nFix the failing test.\n\n## Progress\nDone: read the code.")


def test_llm_engine_cli_logs_one_context_compacted_per_compaction(tmp_path: Path) -> None:
    agent = tmp_path / "agent.yaml"
    agent.write_text(LLM_AGENT)
    session = SESSIONS / "msa-deepseek-django-15400.json"
    with FakeOpenAIServer(_summary) as server:
        result = forge(
            "-v", "--log-json", "replay", session, "--agent", agent,
            env={"FORGE_SUMMARY_BASE_URL": server.base_url, "FORGE_SUMMARY_API_KEY": "k"},
        )  # fmt: skip
    events = [
        json.loads(line)["event"] for line in result.stderr.splitlines() if line.startswith("{")
    ]
    reported = re.search(r"(\d+) compactions?;", result.stderr)
    compactions = int(reported.group(1)) if reported else -1
    actual = (result.returncode, events.count("context_compacted"), compactions > 0)
    assert actual == (0, compactions, True), result.stderr[-3000:]
