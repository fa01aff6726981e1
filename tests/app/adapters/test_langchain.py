"""ForgeCompactionMiddleware inside a real LangChain v1 agent (``create_agent``), offline."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler

import anyio
import pytest
from langchain.agents import create_agent
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, convert_to_openai_messages
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

from forge_app.adapters import ForgeCompactionMiddleware
from forge_app.compaction import resolve_engine
from forge_domain import Agent as ForgeAgent
from tests.app.adapters import scenario
from tests.app.fake_openai_server import FakeOpenAIServer, Reply

pytestmark = pytest.mark.anyio


class ScriptedChatModel(BaseChatModel):
    """Answers from a script and keeps every request as the provider would receive it."""

    replies: list[AIMessage]
    requests: list[list[dict[str, object]]]

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[object], **kwargs: object) -> ScriptedChatModel:  # type: ignore[override]
        return self

    def _generate(self, messages: list[BaseMessage], stop=None, run_manager=None, **kwargs):
        self.requests.append(convert_to_openai_messages(messages))  # type: ignore[arg-type]
        reply = self.replies[len(self.requests) - 1]
        return ChatResult(generations=[ChatGeneration(message=reply)])


def script() -> list[AIMessage]:
    replies = [
        AIMessage(
            "",
            tool_calls=[
                {"name": name, "args": args, "id": cid} for cid, name, args in scenario.calls(t)
            ],
        )
        for t in range(scenario.TURNS)
    ]
    return [*replies, AIMessage(scenario.ANSWER), AIMessage("I changed the division parts.")]


def coding_agent(model: ScriptedChatModel, middleware: ForgeCompactionMiddleware):
    tools = [tool(scenario.read_file), tool(scenario.write_file), tool(scenario.shell)]
    return create_agent(
        model, tools=tools, system_prompt="You are a careful coder.", middleware=[middleware]
    )


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_langchain_agent_accepts_every_compacted_history(mode, blockbuster):
    if mode == "sync":  # a sync run on a loop's thread blocks it: the caller's choice
        blockbuster.deactivate()
    model = ScriptedChatModel(replies=script(), requests=[])
    middleware = ForgeCompactionMiddleware(trigger=("tokens", 3_000), keep=("messages", 4))
    agent = coding_agent(model, middleware)
    first_input = {"messages": [HumanMessage(scenario.TASK)]}
    if mode == "async":
        first = await agent.ainvoke(first_input)
        follow = {"messages": [*first["messages"], HumanMessage(scenario.FOLLOW_UP)]}
        second = await agent.ainvoke(follow)
    else:
        first = agent.invoke(first_input)
        follow = {"messages": [*first["messages"], HumanMessage(scenario.FOLLOW_UP)]}
        second = agent.invoke(follow)

    rejected = [problem for request in model.requests for problem in scenario.check(request)]
    pruned_or_summarised, summarised = scenario.shrinks(model.requests)
    assert (first["messages"][-1].text, second["messages"][-1].text) == (
        scenario.ANSWER,
        "I changed the division parts.",
    )
    assert rejected == []
    assert (pruned_or_summarised >= 2, summarised >= 1) == (True, True)
    assert scenario.survives(model.requests[-1]) == []
    assert len(middleware.compactions) >= 2


LLM_SUMMARY = "## Goal\nFix calc.divide.\n## Progress\nRead, wrote and tested the parts so far."


@pytest.fixture
def keep_alive_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    """The loopback server answering summary requests over HTTP/1.1 (connections kept alive)."""
    monkeypatch.setattr(BaseHTTPRequestHandler, "protocol_version", "HTTP/1.1")
    with FakeOpenAIServer(lambda body: Reply.text(LLM_SUMMARY)) as server:
        yield server


def run_sync_with_llm_engine(server: FakeOpenAIServer) -> ForgeCompactionMiddleware:
    compact = scenario.SETTINGS.model_copy(update={"engine": "llm"})
    agent = ForgeAgent(id="coder", model="gpt-4o-mini", compact=compact)
    engine = resolve_engine(agent, base_url=server.base_url, api_key="test-key", max_retries=0)
    model = ScriptedChatModel(replies=script(), requests=[])
    with ForgeCompactionMiddleware(settings=agent, engine=engine) as middleware:
        first = coding_agent(model, middleware).invoke({"messages": [HumanMessage(scenario.TASK)]})
        follow = {"messages": [*first["messages"], HumanMessage(scenario.FOLLOW_UP)]}
        coding_agent(model, middleware).invoke(follow)
    return middleware


async def run_sync_in_event_loop(server: FakeOpenAIServer) -> ForgeCompactionMiddleware:
    return run_sync_with_llm_engine(server)


@pytest.mark.parametrize("caller", ["plain thread", "event loop thread"])
def test_langchain_sync_agent_summarises_with_the_llm_engine_every_time(
    keep_alive_server: FakeOpenAIServer, caller: str, blockbuster
) -> None:
    blockbuster.deactivate()  # a sync run on a loop's thread blocks it: the caller's choice
    middleware = (
        run_sync_with_llm_engine(keep_alive_server)
        if caller == "plain thread"
        else anyio.run(run_sync_in_event_loop, keep_alive_server)
    )

    summarised = [c.engine for c in middleware.compactions if c.engine != "prune"]
    assert (len(summarised) >= 3, len(keep_alive_server.requests)) == (True, len(summarised))
    assert summarised == ["llm"] * len(summarised)
