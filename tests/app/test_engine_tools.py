"""A context engine's own tools are offered to the model and answered by the engine."""

from __future__ import annotations

import pytest

from forge_app.errors import ForgeAppError
from forge_app.runtime._model import FunctionModel, ModelRequest, ModelResponse
from forge_app.runtime._orchestrator import Orchestrator
from forge_app.runtime._tools import Tool, ToolRegistry
from forge_domain import Agent, JsonObject, TextMessage, ToolCall, ToolResult
from tests.app.tiny_engine import TinyEngine

AGENT = Agent(id="history", model="m", system_prompt="be brief", max_turns=4)
SEARCH: JsonObject = {
    "type": "function",
    "function": {
        "name": "search_history",
        "description": "Search the compacted history.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
    },
}


class HistoryEngine(TinyEngine):
    """An engine that lets the model search what it compacted."""

    def tool_schemas(self) -> tuple[JsonObject, ...]:
        return (SEARCH,)

    async def handle_tool_call(self, name: str, arguments: JsonObject) -> str:
        if arguments.get("query") == "boom":
            raise ForgeAppError("history index unavailable")
        return f"{name}: 2 hits for {arguments['query']!r}"


def echo(text: str) -> str:
    """Echo the text."""
    return text


def model_calling(*calls: ToolCall) -> tuple[FunctionModel, list[ModelRequest]]:
    requests: list[ModelRequest] = []
    queue = [TextMessage.assistant(None, (c,)) for c in calls] + [TextMessage.assistant("done")]

    def answer(request: ModelRequest) -> ModelResponse:
        requests.append(request)
        return ModelResponse(message=queue.pop(0))

    return FunctionModel(answer), requests


CASES = [
    ("found", '{"query": "auth bug"}', (False, "search_history: 2 hits for 'auth bug'")),
    ("engine error", '{"query": "boom"}', (True, "history index unavailable")),
]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("arguments", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
async def test_engine_tools_are_offered_and_answered(arguments, expected):
    model, requests = model_calling(ToolCall(id="h1", name="search_history", arguments=arguments))
    tools = ToolRegistry([Tool.of(echo)])
    orchestrator = Orchestrator(AGENT, model, tools=tools, engine=HistoryEngine)
    conversation = await orchestrator.chat("what did we do?")
    offered = [schema["function"]["name"] for schema in requests[0].tools]
    result = next(m for m in conversation.context if isinstance(m, ToolResult))
    assert (offered, (result.is_error, result.text)) == (["echo", "search_history"], expected)


@pytest.mark.anyio
async def test_engine_without_tools_offers_only_the_agents_tools():
    model, requests = model_calling(ToolCall(id="e1", name="echo", arguments='{"text": "hi"}'))
    orchestrator = Orchestrator(
        AGENT, model, tools=ToolRegistry([Tool.of(echo)]), engine=TinyEngine
    )
    conversation = await orchestrator.chat("say hi")
    offered = [schema["function"]["name"] for schema in requests[0].tools]
    result = next(m for m in conversation.context if isinstance(m, ToolResult))
    assert (offered, result.text, conversation.tools) == (["echo"], "hi", None)
