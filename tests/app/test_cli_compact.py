"""``compact`` in process: what a manual /compact keeps, the agent's engine, exit statuses."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from forge_app.cli.app import app, main
from forge_app.files._agents import default_agent
from forge_app.summary._frame import is_summary_text
from forge_domain import Context
from forge_domain.formats import find_violations
from tests.app.engine_sessions import coding_session
from tests.app.fake_openai_server import FakeOpenAIServer, Reply
from tests.app.test_cli import needs_sessions
from tests.app.test_llm_engine import GOOD
from tests.sessions import SESSIONS

RETENTION = default_agent().compact.retention_window
FORCED = [
    "msa-deepseek-astroid-1333",  # 83,441 tokens: over the default threshold of 22,400
    "msa-deepseek-django-13964",  # 66,066 tokens: over the threshold
    "openhands-llama4-ponyc-4593",  # under it, and the window starts inside a call's results
    "sweagent-marshmallow-1867-fc",  # under it
]


def _kept(messages: list[dict[str, object]]) -> tuple[int, int]:
    """Head (messages before the first assistant one) and tail the forced strategy keeps.

    The tail is the retention window, moved back to the tool call when it would start
    with that call's results.
    """
    head = next(i for i, m in enumerate(messages) if m["role"] == "assistant")
    start = len(messages) - RETENTION
    while messages[start]["role"] == "tool":
        start -= 1
    return head, len(messages) - start


def _shape(messages: list[dict[str, object]]) -> list[tuple[object, object]]:
    """Role and content: the first kept assistant message may gain the span's reasoning."""
    return [(m["role"], m.get("content")) for m in messages]


@needs_sessions
@pytest.mark.parametrize("name", FORCED, ids=FORCED)
def test_compact_force_keeps_head_summary_and_retention_window(tmp_path, name):
    source, out, metrics = SESSIONS / f"{name}.json", tmp_path / "out.json", tmp_path / "m.json"
    messages = json.loads(source.read_text())
    head, tail = _kept(messages)
    result = CliRunner().invoke(
        app, ["compact", str(source), "--force", "-o", str(out), "--json-metrics", str(metrics)]
    )
    compacted = json.loads(out.read_text())
    actual = {
        "status": result.exit_code,
        "trigger": json.loads(metrics.read_text())["trigger"],
        "head": compacted[:head],
        "summary": is_summary_text(str(compacted[head]["content"])),
        "tail": _shape(compacted[head + 1 :]),
    }
    expected = {
        "status": 0,
        "trigger": "forced",
        "head": messages[:head],
        "summary": True,
        "tail": _shape(messages[-tail:]),
    }
    assert actual == expected, result.output


@needs_sessions
def test_compact_without_force_over_threshold_keeps_more_than_the_window(tmp_path):
    """The automatic strategy keeps the larger of the eviction and retention windows."""
    source, out = SESSIONS / f"{FORCED[1]}.json", tmp_path / "out.json"
    result = CliRunner().invoke(app, ["compact", str(source), "-o", str(out)])
    actual = (result.exit_code, len(json.loads(out.read_text())) > 2 + 1 + RETENTION)
    assert actual == (0, True), result.output


OVER_THRESHOLD = [
    "msa-deepseek-astroid-1333",
    "msa-deepseek-django-13964",
    "msa-deepseek-django-15400",
    "msa-deepseek-reasoner-sqlfluff-1763",
    "msa-deepseek-sqlfluff-1733",
]


@needs_sessions
@pytest.mark.parametrize("name", OVER_THRESHOLD, ids=OVER_THRESHOLD)
def test_compact_over_threshold_writes_a_transcript_within_the_agent_target(tmp_path, name):
    """One automatic compaction leaves room to work: at most the target, under the window."""
    source, out, metrics = SESSIONS / f"{name}.json", tmp_path / "out.json", tmp_path / "m.json"
    agent = default_agent()
    target = agent.compact.target_tokens(agent.compaction_threshold())
    result = CliRunner().invoke(
        app, ["compact", str(source), "-o", str(out), "--json-metrics", str(metrics)]
    )
    figures = json.loads(metrics.read_text())
    written = Context.from_openai(json.loads(out.read_text()))
    actual = (
        result.exit_code,
        figures["trigger"],
        figures["tokens_after"] <= target,
        written.token_count_approx() <= target,
        find_violations(written),
    )
    assert actual == (0, "threshold", True, True, []), result.output


def _engine_case(tmp_path, engine: str, *, base_url: str = "http://127.0.0.1:9/v1"):
    """A coding session and an agent file whose ``compact.engine`` is ``engine``."""
    session, agent = tmp_path / "s.json", tmp_path / "agent.yaml"
    session.write_text(json.dumps(coding_session().to_openai()))
    agent.write_text(
        f"agents:\n  - id: coder\n    model: main-model\n    context_length: 4000\n"
        f"    base_url: {base_url}\n    api_key_env: SUMMARY_KEY\n"
        f"    compact: {{engine: {engine}, model: cheap-model}}\n"
    )
    return session, agent


def test_compact_runs_the_agents_engine(tmp_path, monkeypatch):
    monkeypatch.setenv("SUMMARY_KEY", "k")
    metrics = tmp_path / "m.json"
    with FakeOpenAIServer() as server:
        server.script(Reply.text(GOOD))
        session, agent = _engine_case(tmp_path, "llm", base_url=server.base_url)
        args = ["compact", str(session), "-a", str(agent), "--force", "-o", str(tmp_path / "o")]
        result = CliRunner().invoke(app, [*args, "--json-metrics", str(metrics)])
        models = [request["model"] for request in server.requests]

    reported = json.loads(metrics.read_text())
    actual = (result.exit_code, reported["engine"], reported["trigger"], models)
    assert actual == (0, "llm", "forced", ["cheap-model"]), result.output


@pytest.mark.parametrize(
    ("engine", "status", "message"),
    [("nope", 2, "unknown context engine 'nope'"), ("llm", 1, "no API key")],
    ids=["unknown engine: bad input", "summary model without a key: the job failed"],
)
def test_compact_exits_with_the_status_the_error_carries(
    tmp_path, monkeypatch, capsys, engine, status, message
):
    for name in ("SUMMARY_KEY", "OPENAI_API_KEY", "FORGE_SUMMARY_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    session, agent = _engine_case(tmp_path, engine)

    with pytest.raises(SystemExit) as exited:
        main(["compact", str(session), "-a", str(agent), "--force", "-o", str(tmp_path / "o")])

    stderr = capsys.readouterr().err
    actual = (exited.value.code, message in stderr, (tmp_path / "o").exists())
    assert actual == (status, True, False), stderr


@needs_sessions
@pytest.mark.parametrize("name", FORCED, ids=FORCED)
def test_compact_force_summary_stays_within_the_summary_budget(tmp_path, name):
    """A manual /compact is bounded like every compaction: 20% of the safety threshold."""
    source, out = SESSIONS / f"{name}.json", tmp_path / "out.json"
    agent = default_agent()
    budget = agent.compact.summary_budget(agent.compaction_threshold())
    result = CliRunner().invoke(app, ["compact", str(source), "--force", "-o", str(out)])
    written = Context.from_openai(json.loads(out.read_text()))
    summaries = [m.approx_tokens for m in written if is_summary_text(m.text)]
    assert (result.exit_code, len(summaries), max(summaries) <= budget) == (0, 1, True)
