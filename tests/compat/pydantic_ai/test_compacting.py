"""The scenarios of pydantic-ai's history-processor tests, with a history long enough for
ForgeHistoryProcessor to compact (``test_history_processor.py`` gives it histories of a few
words, which it hands back as they are).

Each checks what pydantic-ai's tests check of any processor, whatever it returns: the model
receives the processed history, ``capture_run_messages`` and ``all_messages()`` hold it,
``new_messages()`` holds this run's messages and nothing before them; and what its tests of
tool runs check: every tool call is answered in the next request. Blockbuster is on
(``tests/compat/conftest.py``).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from dirty_equals import IsDatetime
from pydantic_ai import Agent, capture_run_messages
from pydantic_ai.capabilities import ProcessHistory, ReinjectSystemPrompt
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponsePart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import RunContext

from forge_app.adapters import ForgeHistoryProcessor
from forge_app.summary import SUMMARY_MARKER
from forge_domain import Compact
from tests.app.adapters.test_pydantic_ai_history import history, turn

pytestmark = pytest.mark.anyio

SETTINGS = Compact(token_threshold=3_000, retention_window=4)


class Recording(ForgeHistoryProcessor):
    """Ours, remembering each history it returned."""

    def __init__(self) -> None:
        super().__init__(SETTINGS)
        self.returned: list[list[ModelMessage]] = []

    async def __call__(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        processed = await super().__call__(messages)
        self.returned.append(list(processed))
        return processed


def sent_model(received: list[list[ModelMessage]], *, tool_calls: int = 0) -> FunctionModel:
    """Records each request; calls ``my_tool`` ``tool_calls`` times, then answers."""

    def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        received.append(list(messages))
        step = len(received)
        parts: list[ModelResponsePart] = (
            [ToolCallPart("my_tool", {}, f"call_{step}")]
            if step <= tool_calls
            else [TextPart("Provider response")]
        )
        return ModelResponse(parts=parts)

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        received.append(list(messages))
        yield "hello"

    return FunctionModel(reply, stream_function=stream)


def content(messages: list[ModelMessage]) -> list[tuple[str, object]]:
    """The parts a model reads, in order (requests merged or not)."""
    return [
        (type(part).__name__, getattr(part, "content", None) or getattr(part, "tool_call_id", None))
        for message in messages
        for part in message.parts
        if isinstance(part, UserPromptPart | ToolReturnPart | TextPart | ToolCallPart)
    ]


def summarised(messages: list[ModelMessage]) -> bool:
    return any(
        isinstance(part, UserPromptPart) and str(part.content).startswith(SUMMARY_MARKER)
        for message in messages
        for part in message.parts
    )


def answered(messages: list[ModelMessage]) -> bool:
    """Every tool call is answered in the next message (pydantic-ai's tool loop order)."""
    for message, following in itertools.pairwise(messages):
        calls = [p.tool_call_id for p in message.parts if isinstance(p, ToolCallPart)]
        returns = [p.tool_call_id for p in following.parts if isinstance(p, ToolReturnPart)]
        if calls and calls != returns:
            return False
    return True


def tool_agent(received: list[list[ModelMessage]], processors: list[Any], calls: int) -> Agent:
    agent = Agent(sent_model(received, tool_calls=calls), capabilities=processors)

    @agent.tool
    async def my_tool(ctx: RunContext) -> str:
        return "tool executed"

    return agent


async def test_run_sends_and_keeps_the_compacted_history():
    """test_history_processor_run_replaces_message_history, compacting."""
    received: list[list[ModelMessage]] = []
    ours = Recording()
    agent = Agent(sent_model(received), capabilities=[ProcessHistory(ours)])

    with capture_run_messages() as captured:
        result = await agent.run("Question 3", message_history=history(8))

    processed = ours.returned[-1]
    assert (len(ours.compactions), summarised(processed)) == (1, True)
    assert content(received[-1]) == content(processed)
    assert captured == result.all_messages()
    assert result.all_messages()[:-1] == processed
    assert content(result.new_messages()) == content(
        [ModelRequest(parts=[UserPromptPart("Question 3")]), result.all_messages()[-1]]
    )


async def test_run_stream_sends_and_keeps_the_compacted_history():
    """test_history_processor_streaming_replaces_message_history, compacting."""
    received: list[list[ModelMessage]] = []
    ours = Recording()
    agent = Agent(sent_model(received), capabilities=[ProcessHistory(ours)])

    with capture_run_messages() as captured:
        async with agent.run_stream("Question 3", message_history=history(8)) as result:
            async for _ in result.stream_text():
                pass

    processed = ours.returned[-1]
    assert (len(ours.compactions), summarised(processed)) == (1, True)
    assert content(received[-1]) == content(processed)
    assert captured == result.all_messages()
    assert result.all_messages()[:-1] == processed
    assert content(result.new_messages()) == [
        ("UserPromptPart", "Question 3"),
        ("TextPart", "hello"),
    ]


async def test_iter_with_streamed_model_requests():
    """test_history_processor_on_streamed_run, compacting."""
    received: list[list[ModelMessage]] = []
    ours = Recording()
    agent = Agent(sent_model(received), capabilities=[ProcessHistory(ours)])

    with capture_run_messages() as captured:
        async with agent.iter("Question 2", message_history=history(8)) as run:
            async for node in run:
                if agent.is_model_request_node(node):
                    async with node.stream(run.ctx) as stream:
                        async for _ in stream.stream_response(debounce_by=None):
                            ...

    result = run.result
    assert result is not None
    processed = ours.returned[-1]
    assert (len(ours.compactions), summarised(processed)) == (1, True)
    assert content(received[-1]) == content(processed)
    assert captured == result.all_messages()
    assert result.new_messages() == result.all_messages()[-2:]


async def test_before_a_context_processor():
    """test_history_processor_mixed_signatures: ours first, a RunContext processor after."""
    received: list[list[ModelMessage]] = []

    def context_processor(ctx: RunContext[str], messages: list[ModelMessage]) -> list[ModelMessage]:
        return [
            ModelRequest(
                parts=[
                    UserPromptPart(f"{ctx.deps}: {part.content}")
                    if isinstance(part, UserPromptPart)
                    else part
                    for part in message.parts
                ]
            )
            if isinstance(message, ModelRequest)
            else message
            for message in messages
        ]

    ours = Recording()
    agent = Agent(
        sent_model(received),
        capabilities=[ProcessHistory(ours), ProcessHistory(context_processor)],
        deps_type=str,
    )

    with capture_run_messages() as captured:
        result = await agent.run("Question 2", message_history=history(8), deps="TEST")

    prompts = [c for kind, c in content(received[-1]) if kind == "UserPromptPart"]
    assert (len(ours.compactions), summarised(ours.returned[-1])) == (1, True)
    assert all(str(prompt).startswith("TEST: ") for prompt in prompts)
    assert prompts[-1] == "TEST: Question 2"
    assert captured == result.all_messages()
    assert result.new_messages() == result.all_messages()[-2:]


async def test_after_a_context_processor():
    """test_history_processor_with_context_async: a RunContext processor first, ours after."""
    received: list[list[ModelMessage]] = []
    seen_deps: list[str] = []

    async def context_processor(
        ctx: RunContext[str], messages: list[ModelMessage]
    ) -> list[ModelMessage]:
        seen_deps.append(ctx.deps)
        return messages

    ours = Recording()
    agent = Agent(
        sent_model(received),
        capabilities=[ProcessHistory(context_processor), ProcessHistory(ours)],
        deps_type=str,
    )

    with capture_run_messages() as captured:
        result = await agent.run("Question 3", message_history=history(8), deps="PREFIX")

    processed = ours.returned[-1]
    assert (seen_deps, len(ours.compactions), summarised(processed)) == (["PREFIX"], 1, True)
    assert content(received[-1]) == content(processed)
    assert captured == result.all_messages()
    assert result.new_messages() == result.all_messages()[-2:]


async def test_tool_loop_in_iter_keeps_this_runs_messages():
    """test_new_messages_index_during_iter_with_pruning_and_history, compacting."""
    received: list[list[ModelMessage]] = []
    ours = Recording()
    agent = tool_agent(received, [ProcessHistory(ours)], calls=2)

    with capture_run_messages() as captured:
        async with agent.iter("start", message_history=history(8)) as run:
            async for _ in run:
                pass

    result = run.result
    assert result is not None
    assert len(received) == 3
    assert len(ours.compactions) >= 1
    assert all(answered(request) for request in received)
    assert captured == result.all_messages()
    assert content(result.new_messages()) == [
        ("UserPromptPart", "start"),
        ("ToolCallPart", "call_1"),
        ("ToolReturnPart", "tool executed"),
        ("ToolCallPart", "call_2"),
        ("ToolReturnPart", "tool executed"),
        ("TextPart", "Provider response"),
    ]


async def test_resumed_tool_loop_keeps_this_runs_messages():
    """test_history_processor_truncation_during_resumed_tool_loop_keeps_run_messages,
    compacting: resumed without a new prompt, the resumed request is not new."""
    received: list[list[ModelMessage]] = []
    ours = Recording()
    agent = tool_agent(received, [ProcessHistory(ours)], calls=2)
    resumed = [*history(8), ModelRequest(parts=[UserPromptPart("Original prompt")])]

    with capture_run_messages() as captured:
        result = await agent.run(message_history=resumed)

    assert len(ours.compactions) >= 1
    assert all(answered(request) for request in received)
    assert captured == result.all_messages()
    assert content(result.new_messages()) == [
        ("ToolCallPart", "call_1"),
        ("ToolReturnPart", "tool executed"),
        ("ToolCallPart", "call_2"),
        ("ToolReturnPart", "tool executed"),
        ("TextPart", "Provider response"),
    ]


async def test_second_run_on_the_first_runs_messages_compacts_again():
    """Multiple runs: the next run's history is the last run's ``all_messages()``."""
    received: list[list[ModelMessage]] = []
    ours = Recording()
    agent = Agent(sent_model(received), capabilities=[ProcessHistory(ours)])

    first = await agent.run("Question 1", message_history=history(8))
    later_turns = [message for t in range(8, 16) for message in turn(t)]
    go_on = ModelRequest(parts=[UserPromptPart("Go on")])
    messages = [*first.all_messages(), go_on, *later_turns]
    second = await agent.run("Question 2", message_history=messages)

    assert len(ours.compactions) == 2
    assert content(received[-1]) == content(ours.returned[-1])
    assert second.new_messages() == second.all_messages()[-2:]


async def test_with_reinject_system_prompt_in_a_resumed_tool_loop():
    """test_reinject_system_prompt_resumed_tool_loop_excludes_resumed_request, with ours
    compacting in the same capabilities: every request opens with the agent's system prompt,
    and the resumed request is not new."""
    received: list[list[ModelMessage]] = []
    ours = Recording()
    agent = Agent(
        sent_model(received, tool_calls=2),
        system_prompt="Server prompt",
        capabilities=[ProcessHistory(ours), ReinjectSystemPrompt(replace_existing=True)],
    )

    @agent.tool
    async def my_tool(ctx: RunContext) -> str:
        return "tool executed"

    resumed = [*history(8), ModelRequest(parts=[UserPromptPart("Original prompt")])]

    with capture_run_messages() as captured:
        result = await agent.run(message_history=resumed)

    first_parts = [request[0].parts[0] for request in received]
    assert len(ours.compactions) >= 1
    assert all(summarised(request) for request in received)
    assert first_parts == [SystemPromptPart("Server prompt", timestamp=IsDatetime())] * 3
    assert all(answered(request) for request in received)
    assert captured == result.all_messages()
    assert content(result.new_messages()) == [
        ("ToolCallPart", "call_1"),
        ("ToolReturnPart", "tool executed"),
        ("ToolCallPart", "call_2"),
        ("ToolReturnPart", "tool executed"),
        ("TextPart", "Provider response"),
    ]


@pytest.fixture
def thread_loop() -> Iterator[None]:
    """The loop ``run_sync`` uses, closed afterwards (pydantic-ai's suite does the same, for the
    session: ``run_sync`` leaves the loop it made open, for the collector to report later)."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    yield
    asyncio.set_event_loop(None)
    loop.close()


@pytest.mark.usefixtures("thread_loop")
def test_run_sync_compacts():
    """``run_sync`` runs the async processor on pydantic-ai's own loop."""
    received: list[list[ModelMessage]] = []
    ours = Recording()
    agent = Agent(sent_model(received), capabilities=[ProcessHistory(ours)])

    result = agent.run_sync("Question 3", message_history=history(8))

    assert (len(ours.compactions), summarised(received[-1])) == (1, True)
    assert content(received[-1]) == content(ours.returned[-1])
    assert result.new_messages() == result.all_messages()[-2:]
