"""ForgeHistoryProcessor inside a real pydantic-ai agent, against a loopback OpenAI server."""

from __future__ import annotations

import json
from collections import deque

import pytest
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from forge_app.adapters import ForgeHistoryProcessor
from forge_app.compaction import resolve_engine
from forge_domain import Agent as ForgeAgent
from tests.app.adapters import scenario
from tests.app.fake_openai_server import FakeOpenAIServer, Json, Reply

pytestmark = pytest.mark.anyio


def script() -> deque[Reply]:
    replies = deque(
        Reply.calls(*((cid, name, json.dumps(args)) for cid, name, args in scenario.calls(t)))
        for t in range(scenario.TURNS)
    )
    replies.append(Reply.text(scenario.ANSWER))
    replies.append(Reply.text("I changed the division parts."))
    return replies


def coding_agent(server: FakeOpenAIServer, processor: ForgeHistoryProcessor) -> Agent[None, str]:
    model = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(openai_client=server.client()))
    agent = Agent(
        model, system_prompt="You are a careful coder.", capabilities=[processor.capability()]
    )
    agent.tool_plain(scenario.read_file)
    agent.tool_plain(scenario.write_file)
    agent.tool_plain(scenario.shell)
    return agent


async def test_pydantic_ai_agent_accepts_every_compacted_history():
    replies = script()
    rejected: list[str] = []

    def responder(body: Json) -> Reply:
        rejected.extend(scenario.check(body["messages"]))  # type: ignore[arg-type]
        return replies.popleft()

    processor = ForgeHistoryProcessor(scenario.SETTINGS)
    with FakeOpenAIServer(responder) as server:
        agent = coding_agent(server, processor)
        first = await agent.run(scenario.TASK)
        second = await agent.run(scenario.FOLLOW_UP, message_history=first.all_messages())
        requests = [body["messages"] for body in server.requests]

    assert (first.output, second.output) == (scenario.ANSWER, "I changed the division parts.")
    assert rejected == []
    pruned_or_summarised, summarised = scenario.shrinks(requests)  # type: ignore[arg-type]
    assert (pruned_or_summarised >= 2, summarised >= 1) == (True, True)
    assert scenario.survives(requests[-1]) == []  # type: ignore[arg-type]
    assert len(processor.compactions) >= 2


LLM_SUMMARY = "## Goal\nFix calc.divide.\n## Progress\nRead, wrote and tested the parts so far."


async def run_with_llm_engine():
    replies = script()
    rejected: list[str] = []
    summaries: list[Json] = []

    def responder(body: Json) -> Reply:
        if "tools" not in body:  # the llm engine asking its summary model
            summaries.append(body)
            return Reply.text(LLM_SUMMARY)
        rejected.extend(scenario.check(body["messages"]))  # type: ignore[arg-type]
        return replies.popleft()

    agent = ForgeAgent(
        id="coder",
        model="gpt-4o-mini",
        compact=scenario.SETTINGS.model_copy(update={"engine": "llm"}),
    )
    with FakeOpenAIServer(responder) as server:
        processor = ForgeHistoryProcessor(
            agent, engine=resolve_engine(agent, client=server.client())
        )
        result = await coding_agent(server, processor).run(scenario.TASK)
        requests = [body["messages"] for body in server.requests if "tools" in body]
    return result.output, rejected, summaries, processor, requests


async def test_pydantic_ai_agent_compacts_with_the_llm_engine():
    output, rejected, summaries, processor, requests = await run_with_llm_engine()

    final = json.dumps(requests[-1])
    written = [c for c in processor.compactions if c.engine == "llm"]
    assert (output, rejected) == (scenario.ANSWER, [])
    assert (len(summaries) >= 2, len(written) >= 2) == (True, True)
    assert (scenario.TASK in final, final.count(LLM_SUMMARY.splitlines()[1])) == (True, 1)


async def test_pydantic_ai_llm_engine_keeps_every_modified_path():
    *_, requests = await run_with_llm_engine()

    assert scenario.survives(requests[-1]) == []  # type: ignore[arg-type]
