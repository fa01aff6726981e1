"""``forge-compact run`` exits 1 when a compaction failed; the answer and transcript are kept."""

from __future__ import annotations

import re

from forge_app.files._transcripts import read_transcript
from forge_domain.formats import find_violations
from tests.app.cli_process import forge
from tests.app.fake_openai_server import FakeOpenAIServer, Json, Reply

AGENT = """\
agents:
  - id: x
    model: fake-model
    context_length: 4000
    compact:
      engine: llm
      retention_window: 2
"""
"""Threshold 2,800 tokens; the llm engine summarises on the summary endpoint."""
TURNS = 10
NOTE = "I looked at the next file and this is what I found in it. " * 20
"""About 300 tokens of assistant text a turn: only a summary can shrink it."""


def _session(body: Json) -> Reply:
    messages = body["messages"]
    assert isinstance(messages, list)
    number = sum(1 for m in messages if m["role"] == "assistant") + 1
    if number <= TURNS:
        return Reply.calls((f"call_{number}", "read", "{}"), content=NOTE)
    return Reply.text("forty-two")


def _refused(body: Json) -> Reply:
    return Reply.error(401, "invalid api key")


def test_cli_run_exits_1_when_compactions_fail_and_still_prints_the_answer(tmp_path):
    agent = tmp_path / "agent.yaml"
    agent.write_text(AGENT)
    out = tmp_path / "out.json"
    with FakeOpenAIServer(_session) as server, FakeOpenAIServer(_refused) as summary:
        result = forge(
            "run", agent, "Read every file.", "-o", out,
            env={
                "OPENAI_BASE_URL": server.base_url,
                "OPENAI_API_KEY": "k",
                "FORGE_SUMMARY_BASE_URL": summary.base_url,
                "FORGE_SUMMARY_API_KEY": "bad",
            },
        )  # fmt: skip
        summary_calls = len(summary.requests)
    transcript = read_transcript(out).context
    last = result.stderr.strip().splitlines()[-1]
    failed = re.fullmatch(r"forge-compact: error: (\d+) compaction\(s\) could not complete", last)
    actual = {
        "status": result.returncode,
        "answer": result.stdout.strip(),
        "failures reported": failed is not None
        and int(failed.group(1)) == result.stderr.count("compaction_failed") > 0,
        "summary endpoint asked": summary_calls >= 1,
        "transcript": (transcript[-1].text, find_violations(transcript)),
    }
    expected = {
        "status": 1,
        "answer": "forty-two",
        "failures reported": True,
        "summary endpoint asked": True,
        "transcript": ("forty-two", []),
    }
    assert actual == expected, result.stderr
