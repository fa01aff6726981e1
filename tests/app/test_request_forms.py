"""Requests share their messages' remembered provider forms (``request_messages``), never
a dict or a list of them: what one request's reader changes is in no other request, of the
same conversation or of another conversation holding the same messages, run one after the
other or at the same time."""

from __future__ import annotations

import json

import anyio
import pytest

from forge_app.runtime._model import (
    NON_STANDARD_KEYS,
    FunctionModel,
    ModelRequest,
    ModelResponse,
    request_messages,
)
from forge_app.runtime._orchestrator import Orchestrator
from forge_domain import Agent, Context, TextMessage, ToolCall, ToolResult
from forge_domain.formats import message_to_openai
from tests.app.tiny_engine import TinyEngine


def _fresh(context: Context) -> list[dict[str, object]]:
    """Each message converted on its own, our keys dropped (what a request must hold)."""
    out = []
    for message in context:
        wire = message_to_openai(message)
        out.append({k: v for k, v in wire.items() if k not in NON_STANDARD_KEYS})
    return out


def _history() -> list[TextMessage | ToolResult]:
    """Messages whose provider forms nest dicts and lists: content parts, tool calls,
    reasoning records."""
    return [
        TextMessage.system("be brief"),
        TextMessage.image("https://example.com/plot.png", detail="low"),
        TextMessage.assistant(
            "reading",
            (ToolCall(id="c1", name="read", arguments='{"path": "a.py"}'),),
            reasoning_details=({"type": "reasoning.text", "text": "look first"},),
        ),
        ToolResult.of("c1", "print(1)", name="read"),
        TextMessage.user("and now?"),
    ]


def _mark(value: object) -> None:
    """What an eager reader might do: a cache mark in every dict, an item on every list."""
    if isinstance(value, dict):
        for item in list(value.values()):
            _mark(item)
        value["cache_control"] = {"type": "ephemeral"}
    elif isinstance(value, list):
        for item in list(value):
            _mark(item)
        value.append({"marked": True})


def test_a_reader_changing_nested_values_leaves_the_next_request_as_it_was():
    context = Context(_history())
    _mark(request_messages(context))
    assert request_messages(context) == _fresh(context)


def test_a_conversation_sees_nothing_another_one_s_reader_changed():
    """Two contexts holding the same message objects (two replays of one transcript, a
    forked conversation): the second's request is its own messages converted."""
    shared = _history()
    first = Context([*shared, TextMessage.assistant("first")])
    second = Context([*shared, TextMessage.assistant("second")])
    _mark(request_messages(first))
    assert request_messages(second) == _fresh(second)


@pytest.mark.anyio
async def test_conversations_run_at_the_same_time_get_their_own_requests():
    """Two conversations opened on the same messages, run concurrently; the model marks
    each request it receives (after reading it) and yields to the other conversation
    before answering. No request arrives marked."""
    arrived: list[str] = []

    async def marking(request: ModelRequest) -> ModelResponse:
        arrived.append(json.dumps(request.messages))
        _mark(list(request.messages))
        await anyio.sleep(0)
        return ModelResponse(message=TextMessage.assistant("done"))

    agent = Agent(id="fork", model="m", max_turns=3)
    orchestrator = Orchestrator(agent, FunctionModel(marking), engine=TinyEngine)
    history = Context(_history())
    conversations = [orchestrator.open(history) for _ in range(4)]

    async with anyio.create_task_group() as group:
        for conversation in conversations:
            group.start_soon(orchestrator.run, conversation)

    marked = [text for text in arrived if "cache_control" in text or "marked" in text]
    expected = json.dumps(_fresh(history))
    assert (len(arrived), marked, set(arrived)) == (4, [], {expected})
