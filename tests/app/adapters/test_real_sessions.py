"""The three adapters on the shared real sessions, compacted at about half their size."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage, convert_to_messages, convert_to_openai_messages
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from forge_app.adapters import ForgeCompactionMiddleware, ForgeHistoryProcessor, ForgeSession
from forge_app.adapters._convert import History
from forge_app.adapters._pydantic_ai import _Converter
from forge_domain import Compact, Context
from forge_domain.formats import find_violations, messages_from_responses, messages_to_responses
from tests.sessions import session_paths

pytestmark = pytest.mark.anyio

PATHS = session_paths()


def openai_messages(path: Path) -> list:
    raw = json.loads(path.read_text())
    return raw["messages"] if isinstance(raw, dict) else raw


def tokens(messages: list) -> int:
    return int(Context.from_openai(messages).token_count())


def threshold(messages: list) -> int:
    """Half the session, but at least twice its head (the system prompt and the task).

    A lower threshold leaves a target below the head itself, and the engine then cuts
    the task to fit (by design): that is not what these tests are about.
    """
    first_answer = next(i for i, m in enumerate(messages) if m["role"] == "assistant")
    limit = max(tokens(messages) // 2, 2 * tokens(messages[:first_answer]))
    if limit >= tokens(messages):
        pytest.skip("the session is barely larger than its head: nothing to compact")
    return limit


@pytest.mark.skipif(not PATHS, reason="the shared sessions are not on this machine")
@pytest.mark.parametrize("path", PATHS, ids=[path.stem for path in PATHS])
async def test_langchain_middleware_keeps_real_sessions_valid(path):
    raw = openai_messages(path)
    messages = convert_to_messages(raw)
    task = next(m for m in messages if isinstance(m, HumanMessage))
    middleware = ForgeCompactionMiddleware(trigger=("tokens", threshold(raw)), keep=("messages", 6))

    update = await middleware.abefore_model({"messages": messages}, runtime=None)  # type: ignore[arg-type]

    assert update is not None
    out = convert_to_openai_messages(update["messages"][1:])
    assert find_violations(Context.from_openai(out)) == []
    assert (any(m is task for m in update["messages"]), tokens(out) < tokens(raw)) == (True, True)


@pytest.mark.skipif(not PATHS, reason="the shared sessions are not on this machine")
@pytest.mark.parametrize("path", PATHS, ids=[path.stem for path in PATHS])
async def test_agents_sdk_session_keeps_real_sessions_valid(path):
    raw = openai_messages(path)
    items = messages_to_responses(Context.from_openai(raw))
    task = next(item for item in items if item.get("role") == "user")
    session = ForgeSession(path.stem, Compact(token_threshold=threshold(raw)))

    await session.add_items(items)  # type: ignore[arg-type]

    stored = await session.get_items()
    context = Context(messages_from_responses(stored))
    assert find_violations(context) == []
    assert (task in stored, int(context.token_count()) < tokens(raw)) == (True, True)


def model_messages(raw: list) -> list[ModelMessage]:
    """An OpenAI chat transcript as pydantic-ai messages (one request between two answers)."""
    out: list[ModelMessage] = []
    parts: list = []
    for message in raw:
        role, content = message["role"], message.get("content") or ""
        text = content if isinstance(content, str) else json.dumps(content)
        if role == "assistant":
            if parts:
                out.append(ModelRequest(parts=parts))
                parts = []
            calls = [
                ToolCallPart(c["function"]["name"], c["function"]["arguments"], c["id"])
                for c in message.get("tool_calls") or ()
            ]
            out.append(ModelResponse(parts=[*([TextPart(text)] if text else []), *calls]))
        elif role == "tool":
            parts.append(
                ToolReturnPart(message.get("name") or "tool", text, message["tool_call_id"])
            )
        elif role == "system" and not out:
            parts.append(SystemPromptPart(text))
        else:
            parts.append(UserPromptPart(text))
    if parts:
        out.append(ModelRequest(parts=parts))
    return out


@pytest.mark.skipif(not PATHS, reason="the shared sessions are not on this machine")
@pytest.mark.parametrize("path", PATHS, ids=[path.stem for path in PATHS])
async def test_pydantic_ai_processor_keeps_real_sessions_valid(path):
    raw = openai_messages(path)
    messages = model_messages(raw)
    if not isinstance(messages[-1], ModelRequest):
        messages = messages[:-1]  # pydantic-ai calls the processor before a request
    processor = ForgeHistoryProcessor(Compact(token_threshold=threshold(raw)))

    actual = await processor(messages)

    context = History(actual, _Converter()).context
    assert (len(processor.compactions) >= 1, find_violations(context)) == (True, [])
    assert (actual[0] is messages[0], actual[-1] is messages[-1]) == (True, True)
    assert isinstance(actual[-1], ModelRequest)
