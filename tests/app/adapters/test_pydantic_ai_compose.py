"""ForgeHistoryProcessor composes as pydantic-ai's own tests expect of any history processor:
after other processors, inside capabilities (with ``ReinjectSystemPrompt``), on streamed and
``iter`` runs, with blockbuster on (``conftest.py``)."""

from __future__ import annotations

import pytest
from pydantic_ai import Agent, capture_run_messages
from pydantic_ai.capabilities import ProcessHistory, ReinjectSystemPrompt
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from forge_app.adapters import ForgeHistoryProcessor
from forge_app.summary import SUMMARY_MARKER
from forge_domain import Compact
from forge_domain.formats import find_violations
from tests.app.adapters.test_pydantic_ai_history import as_context, history

pytestmark = pytest.mark.anyio

SETTINGS = Compact(token_threshold=3_000, retention_window=4)


def capturing_model(received: list[list[ModelMessage]]) -> FunctionModel:
    def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        received.append(list(messages))
        return ModelResponse(parts=[TextPart("done")])

    async def stream(messages: list[ModelMessage], info: AgentInfo):
        received.append(list(messages))
        yield "done"

    return FunctionModel(reply, stream_function=stream)


def mark_prompts(messages: list[ModelMessage]) -> list[ModelMessage]:
    """Another processor: prefixes every user prompt, as pydantic-ai's own tests do."""
    return [
        ModelRequest(
            parts=[
                UserPromptPart(f"[FIRST] {part.content}")
                if isinstance(part, UserPromptPart)
                else part
                for part in message.parts
            ]
        )
        if isinstance(message, ModelRequest)
        else message
        for message in messages
    ]


def sent_summary(request: list[ModelMessage]) -> bool:
    return any(
        isinstance(part, UserPromptPart) and str(part.content).startswith(SUMMARY_MARKER)
        for message in request
        if isinstance(message, ModelRequest)
        for part in message.parts
    )


async def test_processor_after_another_processor_compacts_what_that_one_returned():
    received: list[list[ModelMessage]] = []
    processor = ForgeHistoryProcessor(SETTINGS)
    agent = Agent(
        capturing_model(received),
        capabilities=[ProcessHistory(mark_prompts), processor.capability()],
    )

    result = await agent.run("Next step", message_history=history(8))

    sent = received[-1]
    prompts = [
        part.content
        for message in sent
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart) and not str(part.content).startswith(SUMMARY_MARKER)
    ]
    assert (len(processor.compactions), sent_summary(sent)) == (1, True)
    assert prompts[-1] == "[FIRST] Next step"
    assert find_violations(as_context(sent)) == []
    assert result.new_messages()[-1].parts == [TextPart("done")]


async def test_processor_before_another_processor_hands_it_the_compacted_history():
    received: list[list[ModelMessage]] = []
    seen: list[int] = []

    def count(messages: list[ModelMessage]) -> list[ModelMessage]:
        seen.append(len(messages))
        return messages

    processor = ForgeHistoryProcessor(SETTINGS)
    agent = Agent(
        capturing_model(received),
        capabilities=[processor.capability(), ProcessHistory(count)],
    )
    full = history(8)

    await agent.run("Next step", message_history=full)

    assert (seen[-1] < len(full) + 1, sent_summary(received[-1])) == (True, True)


async def test_processor_inside_capabilities_with_reinject_system_prompt():
    received: list[list[ModelMessage]] = []
    processor = ForgeHistoryProcessor(SETTINGS)
    agent = Agent(
        capturing_model(received),
        system_prompt="You are a careful coder.",
        capabilities=[processor.capability(), ReinjectSystemPrompt()],
    )

    with capture_run_messages() as captured:
        result = await agent.run("Next step", message_history=history(8))

    first = received[-1][0]
    assert isinstance(first, ModelRequest)
    system = [part.content for part in first.parts if isinstance(part, SystemPromptPart)]
    assert (system, len(processor.compactions), sent_summary(received[-1])) == (
        ["You are a careful coder."],
        1,
        True,
    )
    assert captured == result.all_messages()


async def test_processor_on_a_streamed_run_compacts_before_the_request():
    received: list[list[ModelMessage]] = []
    processor = ForgeHistoryProcessor(SETTINGS)
    agent = Agent(capturing_model(received), capabilities=[processor.capability()])

    async with agent.run_stream("Next step", message_history=history(8)) as run:
        output = await run.get_output()

    assert (output, sent_summary(received[-1]), len(processor.compactions)) == ("done", True, 1)


async def test_processor_in_an_iter_run_keeps_new_messages_to_this_run():
    received: list[list[ModelMessage]] = []
    processor = ForgeHistoryProcessor(SETTINGS)
    agent = Agent(capturing_model(received), capabilities=[processor.capability()])

    async with agent.iter("Next step", message_history=history(8)) as run:
        async for _ in run:
            pass

    assert run.result is not None
    new = run.result.new_messages()
    prompts = [
        part.content
        for message in new
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart)
    ]
    assert (prompts, new[-1].parts, sent_summary(received[-1])) == (
        ["Next step"],
        [TextPart("done")],
        True,
    )
