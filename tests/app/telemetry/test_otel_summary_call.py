"""The llm engine's summary call as a child span: a good summary, a failing server, prompts."""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry.trace import StatusCode

from forge_app.compaction import resolve_engine
from forge_app.files import default_agent, read_transcript
from forge_app.runtime import Replay, disable_telemetry, enable_telemetry
from forge_domain import Agent, Context, Telemetry, ToolResult
from tests.app.engine_sessions import SECRET
from tests.app.fake_openai_server import FakeOpenAIServer, Reply

pytestmark = pytest.mark.anyio

SESSION = Path("/work/shared/data/sessions/msa-deepseek-django-13964.json")
GOOD = """## Goal
Fix the failing test.
## Progress
Done: read the code and ran the tests.
## Relevant files
- django/db/models/query.py"""


def llm_agent(**telemetry: bool) -> Agent:
    agent = default_agent()
    compact = agent.compact.model_copy(update={"engine": "llm", "model": "cheap-model"})
    return agent.model_copy(update={"compact": compact, "telemetry": Telemetry(**telemetry)})


@pytest.fixture
def server():
    with FakeOpenAIServer() as running:
        yield running


@pytest.fixture
async def client(server):
    async with server.client() as opened:
        yield opened


async def replay_with(client, agent: Agent, transcript: Context | None = None) -> Replay:
    session = Replay(
        transcript if transcript is not None else read_transcript(SESSION).context,
        agent,
        engine=lambda a: resolve_engine(a, client=client),
    )
    _ = [turn async for turn in session.turns()]
    return session


async def test_otel_summary_call_is_a_chat_span_inside_its_compaction(telemetry, server, client):
    server.responder = lambda body: Reply.text(GOOD, prompt_tokens=900, completion_tokens=60)
    await replay_with(client, llm_agent())
    compactions = {s.context.span_id: s for s in telemetry.spans("forge_compact.compaction")}
    calls = telemetry.spans("chat cheap-model")

    actual = [
        (
            compactions[call.parent.span_id].attributes["forge_compact.engine"],
            dict(call.attributes),
            call.status.status_code,
        )
        for call in calls
    ]
    expected = [
        (
            "llm",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "openai",
                "gen_ai.request.model": "cheap-model",
                "gen_ai.usage.input_tokens": 900,
                "gen_ai.usage.output_tokens": 60,
                "forge_compact.summary.outcome": "ok",
            },
            StatusCode.UNSET,
        )
    ] * len(server.requests)
    assert (len(calls) > 0, actual) == (True, expected)


async def test_otel_failing_summary_server_records_the_error_and_the_fallback(
    telemetry, server, client
):
    server.responder = lambda body: Reply.error(503)
    await replay_with(client, llm_agent())
    compactions = telemetry.spans("forge_compact.compaction")
    failed = telemetry.spans("chat cheap-model")[0]
    parent = next(s for s in compactions if s.context.span_id == failed.parent.span_id)
    fallback_reasons = [
        e.attributes["forge_compact.reason"]
        for s in compactions
        for e in s.events
        if e.name == "forge_compact.fallback" and "forge_compact.engine" in e.attributes
    ]
    failures = telemetry.metrics()["forge_compact.summary_call.failures"]

    actual = (
        len(telemetry.spans("chat cheap-model")),
        failed.status.status_code,
        failed.status.description,
        dict(failed.attributes)["error.type"],
        parent.attributes["forge_compact.engine"],
        fallback_reasons[0],
        set(fallback_reasons[1:]),
        failures,
    )
    expected = (
        1,  # then the engine cools down: no call, the frame
        StatusCode.ERROR,
        "HTTP 503",
        "summary_unavailable",
        "frame",
        "HTTP 503",
        {"cooling down"},
        [({"gen_ai.request.model": "cheap-model", "error.type": "summary_unavailable"}, 1)],
    )
    assert actual == expected


async def test_otel_refused_credentials_fail_the_compaction_span(telemetry, server, client):
    server.responder = lambda body: Reply.error(401)
    await replay_with(client, llm_agent(), read_transcript(SESSION).context[:170])
    failed = [
        s
        for s in telemetry.spans("forge_compact.compaction")
        if s.status.status_code.name == "ERROR"
    ]

    actual = {
        (s.status.description.split(":")[0], s.attributes["error.type"], s.events[-1].name)
        for s in failed
    }
    assert (len(failed) > 0, actual) == (
        True,
        {("SummaryAuthFailed", "SummaryAuthFailed", "exception")},
    )


def session_with_a_secret() -> Context:
    """The shared session, with an API key in each of its first tool outputs."""
    messages = list(read_transcript(SESSION).context)
    for index, message in enumerate(messages[:60]):
        if isinstance(message, ToolResult):
            content = f"env OPENAI_API_KEY={SECRET}\n{message.text}"
            messages[index] = message.model_copy(update={"content": content})
    return Context(messages)


async def test_otel_prompts_are_recorded_only_when_asked_and_redacted(server, client, telemetry):
    server.responder = lambda body: Reply.text(GOOD)
    disable_telemetry()
    enable_telemetry(telemetry.tracer_provider, include_prompts=True)
    await replay_with(client, llm_agent(), session_with_a_secret())
    recorded = [dict(s.attributes).get("gen_ai.input.messages", "") for s in telemetry.spans()]
    prompts = [p for p in recorded if p]
    sent = [str(body["messages"]) for body in server.requests]

    actual = (
        len(prompts),
        any(SECRET in p for p in prompts),
        all("## Constraints and preferences" in p for p in prompts),
    )
    assert (len(sent) > 0, actual) == (True, (len(sent), False, True))
