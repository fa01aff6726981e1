"""One run through each framework adapter: its compactions are spans in the run's trace.

pydantic-ai emits OpenTelemetry spans itself (``instrument=``): the compactions are children
of its agent run span. LangChain and the Agents SDK do not (LangSmith and the SDK's own
tracing are not OpenTelemetry), so the test opens the span a run would be traced under.
"""

from __future__ import annotations

import json
from collections import deque

import pytest
from agents import Agent as SdkAgent
from agents import OpenAIChatCompletionsModel, RunConfig, Runner, function_tool
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai.capabilities.instrumentation import Instrumentation
from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from forge_app.adapters import ForgeCompactionMiddleware, ForgeHistoryProcessor, ForgeSession
from forge_domain import Compact
from tests.app.adapters import scenario
from tests.app.adapters.test_langchain import ScriptedChatModel
from tests.app.adapters.test_langchain import script as langchain_script
from tests.app.fake_openai_server import FakeOpenAIServer, Reply

pytestmark = pytest.mark.anyio


def replies() -> deque[Reply]:
    script = deque(
        Reply.calls(*((cid, name, json.dumps(args)) for cid, name, args in scenario.calls(t)))
        for t in range(scenario.TURNS)
    )
    script.append(Reply.text(scenario.ANSWER))
    return script


def parents(telemetry) -> list[int]:
    return [s.parent.span_id for s in telemetry.spans("forge_compact.compaction")]


async def test_otel_pydantic_ai_compactions_are_inside_its_agent_run_span(telemetry):
    processor = ForgeHistoryProcessor(scenario.SETTINGS)
    script = replies()
    with FakeOpenAIServer(lambda body: script.popleft()) as server:
        model = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(openai_client=server.client()))
        agent = PydanticAgent(
            model,
            system_prompt="You are a careful coder.",
            capabilities=[
                Instrumentation(InstrumentationSettings(tracer_provider=telemetry.tracer_provider)),
                processor.capability(),
            ],
        )
        agent.tool_plain(scenario.read_file)
        agent.tool_plain(scenario.write_file)
        agent.tool_plain(scenario.shell)
        await agent.run(scenario.TASK)
    by_id = {s.context.span_id: s for s in telemetry.spans()}
    chain = [
        (by_id[parent].name, by_id[by_id[parent].parent.span_id].name)
        for parent in parents(telemetry)
    ]

    # pydantic-ai processes the history inside the request's span, inside its agent run span
    expected = [("chat gpt-4o", "invoke_agent agent")] * len(processor.compactions)
    assert (len(processor.compactions) >= 2, chain) == (True, expected)


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_otel_langchain_compactions_are_inside_the_run_span(telemetry, mode):
    model = ScriptedChatModel(replies=langchain_script(), requests=[])
    middleware = ForgeCompactionMiddleware(trigger=("tokens", 3_000), keep=("messages", 4))
    tools = [tool(scenario.read_file), tool(scenario.write_file), tool(scenario.shell)]
    agent = create_agent(model, tools=tools, middleware=[middleware])
    tracer = telemetry.tracer_provider.get_tracer("test")
    with tracer.start_as_current_span("langchain run") as run:
        messages = {"messages": [HumanMessage(scenario.TASK)]}
        if mode == "async":
            await agent.ainvoke(messages)
            await middleware.aclose()
        else:
            agent.invoke(messages)
            middleware.close()

    actual = [run.get_span_context().span_id] * len(middleware.compactions)
    assert (len(middleware.compactions) >= 2, actual) == (True, parents(telemetry))


async def test_otel_agents_sdk_compactions_are_inside_the_run_span(telemetry):
    session = ForgeSession("chat-1", scenario.SETTINGS)
    script = replies()
    tracer = telemetry.tracer_provider.get_tracer("test")
    with FakeOpenAIServer(lambda body: script.popleft()) as server:
        agent = SdkAgent(
            name="coder",
            instructions="You are a careful coder.",
            model=OpenAIChatCompletionsModel(model="gpt-4o", openai_client=server.client()),
            tools=[
                function_tool(scenario.read_file),
                function_tool(scenario.write_file),
                function_tool(scenario.shell),
            ],
        )
        with tracer.start_as_current_span("agents sdk run") as run:
            config = RunConfig(tracing_disabled=True)
            await Runner.run(agent, scenario.TASK, session=session, run_config=config)

    actual = [run.get_span_context().span_id] * len(session.compactions)
    assert (len(session.compactions) >= 1, actual) == (True, parents(telemetry))


async def test_otel_langchain_a_summary_of_user_messages_alone_is_one_span(telemetry):
    """The engine leaves user messages alone, the frame summarises them: still one compaction,
    one span (the head's fold, the engine and the frame's fold are steps of it)."""
    middleware = ForgeCompactionMiddleware(trigger=("messages", 6), keep=("messages", 2))
    messages = [HumanMessage(f"request {n}") for n in range(6)]
    tracer = telemetry.tracer_provider.get_tracer("test")
    with tracer.start_as_current_span("langchain run") as run:
        update = await middleware.abefore_model({"messages": messages}, runtime=None)  # type: ignore[arg-type]
        await middleware.aclose()

    assert update is not None
    assert (len(middleware.compactions), parents(telemetry)) == (
        1,
        [run.get_span_context().span_id],
    )


async def test_otel_pydantic_ai_a_bounded_summary_of_user_prompts_alone_is_one_span(telemetry):
    """Under a message bound the frame summarises user prompts the engine would leave: one
    compaction, one span, inside the caller's."""
    processor = ForgeHistoryProcessor(Compact(message_threshold=6, retention_window=2))
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart(f"request {n}")]) for n in range(6)
    ]
    tracer = telemetry.tracer_provider.get_tracer("test")
    with tracer.start_as_current_span("pydantic-ai run") as run:
        actual = await processor(messages)
        await processor.aclose()

    assert len(actual) == 3  # the summary and the last 2
    assert (len(processor.compactions), parents(telemetry)) == (
        1,
        [run.get_span_context().span_id],
    )
