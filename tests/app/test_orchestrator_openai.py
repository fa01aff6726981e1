"""The agent loop end to end: real openai client, real HTTP server on 127.0.0.1, frame engine."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator

import anyio
import pytest

from forge_app.runtime._hookspecs import hookimpl
from forge_app.runtime._model import OpenAIChatModel, request_messages
from forge_app.runtime._orchestrator import Orchestrator, RetryPolicy
from forge_app.runtime._tools import ToolRegistry
from forge_domain import Agent, Compact, Context, ContextMessage, TextMessage, ToolCall, ToolResult
from forge_domain.formats import find_violations
from tests.app.fake_openai_server import FakeOpenAIServer, Json, Reply

AGENT = Agent(
    id="coder",
    model="gpt-test",
    system_prompt="You are a coding agent.",
    context_length=6000,
    max_turns=30,
    compact=Compact(retention_window=4, eviction_window=0.6),
)
"""Threshold: floor(6000 x 0.7) = 4200 tokens."""
THRESHOLD = 4200
TOOL_TURNS = 14
NON_STANDARD = {"droppable", "is_error", "usage"}
MARKER = re.compile(r"task-\d{3}#")


def read(path: str) -> str:
    """Read a file."""
    return f"contents of {path}\n" + "x = 1  # filler line\n" * 60


TOOLS = ToolRegistry([read])


def first_user_text(body: Json) -> str:
    messages = body["messages"]
    assert isinstance(messages, list)
    return next(m["content"] for m in messages if m["role"] == "user")


class ToolSession:
    """Per conversation (keyed by its first user message): read files, then answer."""

    def __init__(self, turns: int = TOOL_TURNS) -> None:
        self.turns = turns
        self.counts: dict[str, int] = {}
        self.lock = threading.Lock()

    def __call__(self, body: Json) -> Reply:
        key = first_user_text(body)
        with self.lock:
            self.counts[key] = self.counts.get(key, 0) + 1
            number = self.counts[key]
        marker = MARKER.search(key)
        tag = marker.group(0) if marker else ""
        if number <= self.turns:
            arguments = json.dumps({"path": f"{tag}src/file_{number}.py"})
            return Reply.calls((f"call_{number}", "read", arguments), content=f"Reading {number}")
        return Reply.text(f"Done with {tag}")


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(ToolSession()) as running:
        yield running


class CompactionSpy:
    """Remembers, for each compaction, what the context became and the request count then."""

    def __init__(self, server: FakeOpenAIServer) -> None:
        self.server = server
        self.starts: list[int] = []
        self.after: list[tuple[int, list[Json]]] = []

    @hookimpl
    def forge_on_compaction_start(self, token_count) -> None:
        self.starts.append(int(token_count))

    @hookimpl
    def forge_on_compaction_end(self, conversation, result) -> None:
        if result.compacted_range is not None:
            sent = len(self.server.requests)
            self.after.append((sent, request_messages(conversation.context)))


def assert_provider_valid(bodies: list[Json]) -> None:
    problems = []
    for number, body in enumerate(bodies):
        messages = body["messages"]
        context = Context.from_openai(messages)
        problems += [(number, str(v)) for v in find_violations(context)]
        problems += [(number, key) for m in messages for key in m if key in NON_STANDARD]
    assert problems == []


@pytest.mark.anyio
async def test_tool_session_compacts_at_the_threshold_and_sends_the_compacted_context(server):
    spy = CompactionSpy(server)
    orchestrator = Orchestrator(
        AGENT,
        OpenAIChatModel(server.client(), AGENT.model),
        tools=TOOLS,
        plugins=[("spy", spy)],
    )

    conversation = await orchestrator.chat("Fix the bug in src/.")

    sent_after, compacted = spy.after[0]
    next_request = server.requests[sent_after]["messages"]
    actual = (
        conversation.context[-1].text,
        conversation.compactions >= 1,
        all(count >= THRESHOLD for count in spy.starts),
        next_request[: len(compacted)] == compacted,
        len(json.dumps(next_request)) < len(json.dumps(server.requests[sent_after - 1])),
    )
    assert actual == ("Done with ", True, True, True, True)
    assert_provider_valid(server.requests)


SMALL = AGENT.model_copy(update={"context_length": 2000})
"""Threshold 1,400 tokens: compacts after about four file reads."""
SMALL_TURNS = 6


@pytest.mark.anyio
async def test_fifty_conversations_run_concurrently_without_cross_talk():
    with FakeOpenAIServer(ToolSession(SMALL_TURNS)) as server:
        orchestrator = Orchestrator(
            SMALL, OpenAIChatModel(server.client(), SMALL.model), tools=TOOLS
        )
        conversations = [orchestrator.open(f"Solve task-{i:03d}#, please.") for i in range(50)]

        async with anyio.create_task_group() as group:
            for conversation in conversations:
                group.start_soon(orchestrator.run, conversation)

    markers_per_request = {frozenset(MARKER.findall(json.dumps(b))) for b in server.requests}
    actual = (
        [c.context[-1].text for c in conversations],
        [c.compactions >= 1 for c in conversations],
        [set(MARKER.findall(json.dumps(c.context.to_openai()))) for c in conversations],
        all(len(markers) == 1 for markers in markers_per_request),
        len(server.requests),
    )
    expected = (
        [f"Done with task-{i:03d}#" for i in range(50)],
        [True] * 50,
        [{f"task-{i:03d}#"} for i in range(50)],
        True,
        50 * (SMALL_TURNS + 1),
    )
    assert actual == expected
    assert_provider_valid(server.requests)


@pytest.mark.anyio
async def test_rate_limit_and_server_errors_are_retried_over_http(server):
    server.script(Reply.error(429, "slow down"), Reply.error(502, "bad gateway"), Reply.text("ok"))
    orchestrator = Orchestrator(
        AGENT,
        OpenAIChatModel(server.client(), AGENT.model),
        retry=RetryPolicy(attempts=3, initial_delay=0.0, max_delay=0.0),
    )

    conversation = await orchestrator.chat("hello")

    assert (conversation.context[-1].text, len(server.requests)) == ("ok", 3)


@pytest.mark.anyio
async def test_context_length_exceeded_over_http_compacts_and_retries_once(server):
    server.script(Reply.context_length_exceeded(), Reply.text("ok"))
    history: list[ContextMessage] = [TextMessage.system("sys"), TextMessage.user("go")]
    for turn in range(12):
        call = ToolCall(id=f"call_{turn}", name="read", arguments=f'{{"path": "f{turn}.py"}}')
        history += [TextMessage.assistant(None, (call,)), ToolResult.of(call.id, read(f"{turn}"))]
    history.append(TextMessage.user("last question"))
    orchestrator = Orchestrator(AGENT, OpenAIChatModel(server.client(), AGENT.model))
    conversation = orchestrator.open(history)

    await orchestrator.run(conversation)

    sizes = [len(body["messages"]) for body in server.requests]
    actual = (
        conversation.context[-1].text,
        sizes[0],
        sizes[1] < sizes[0],
        conversation.compactions,
    )
    assert actual == ("ok", 27, True, 1)
    assert_provider_valid(server.requests)


@pytest.mark.anyio
async def test_for_agent_wires_the_agents_endpoint(server):
    server.script(Reply.text("hello back"))
    agent = AGENT.model_copy(update={"base_url": server.base_url, "api_key_env": "TEST_KEY"})
    orchestrator = Orchestrator.for_agent(agent, environ={"TEST_KEY": "sk-test"})

    conversation = await orchestrator.chat("hello")

    actual = (conversation.context[-1].text, server.requests[0]["model"])
    assert actual == ("hello back", "gpt-test")
