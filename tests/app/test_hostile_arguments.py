"""Tool calls whose arguments nest 5,000 deep: compaction treats them as invalid JSON.

``ToolCall.parsed_arguments`` parses with pydantic-core, whose recursion limit turns such
a document into an ``InvalidArguments`` (``json.loads`` raised ``RecursionError``), so
every engine summarises the call like any call with unreadable arguments.
"""

from __future__ import annotations

import pytest

from forge_app.compaction._registry import resolve_engine
from forge_app.compaction.llm._engine import LLMEngine
from forge_domain import Context, InvalidArguments, TextMessage, ToolCall, ToolResult
from forge_domain.formats import find_violations
from tests.app.engine_sessions import BIG, coding_agent
from tests.app.fake_openai_server import FakeOpenAIServer, Reply

DEEP = "[" * 5_000 + "]" * 5_000
"""Valid JSON, nested far beyond any parser's recursion limit."""


def _session() -> Context:
    messages: list = [TextMessage.system("s"), TextMessage.user("Go.")]
    for number in range(6):
        arguments = DEEP if number % 2 else f'{{"command": "make step{number}"}}'
        call = ToolCall(id=f"c{number}", name="shell", arguments=arguments)
        messages += [TextMessage.assistant(None, (call,)), ToolResult.of(f"c{number}", BIG)]
    messages += [TextMessage.assistant("Done."), TextMessage.user("Thanks.")]
    return Context(messages)


def test_deep_arguments_are_invalid_not_a_recursion_error():
    call = ToolCall(id="c", name="shell", arguments=DEEP)

    with pytest.raises(InvalidArguments) as raised:
        _ = call.parsed_arguments

    assert (call.has_valid_arguments(), raised.value.tool_name) == (False, "shell")


@pytest.mark.parametrize("mode", ["automatic", "forced", "manual"])
@pytest.mark.anyio
async def test_frame_engine_compacts_around_deep_arguments(mode):
    engine = resolve_engine(coding_agent("frame"))

    outcome = await engine.compress(_session(), mode=mode)

    actual = (outcome.result.compacted_range is not None, find_violations(outcome.context))
    assert actual == (True, [])


@pytest.mark.parametrize(
    "reply", [Reply.error(500), Reply.text("## Goal\nGo.\n## Progress\nDone.")]
)
@pytest.mark.anyio
async def test_llm_engine_compacts_around_deep_arguments(reply):
    with FakeOpenAIServer() as server:
        server.script(reply)
        async with server.client() as client:
            engine = LLMEngine(coding_agent(), client=client, timeout=5.0)
            outcome = await engine.compress(_session())

    actual = (outcome.result.compacted_range is not None, find_violations(outcome.context))
    assert actual == (True, [])
