"""Tool-call ids made unique on receipt: a table of renames, the id set, and a live loop."""

from __future__ import annotations

import dataclasses

import pytest
from structlog.testing import capture_logs

from forge_app.runtime._call_ids import with_unique_call_ids
from forge_app.runtime._conversation import Conversation
from forge_app.runtime._dispatch import Hooks
from forge_app.runtime._hookspecs import hookimpl
from forge_app.runtime._model import ModelResponse, OpenAIChatModel
from forge_app.runtime._orchestrator import Orchestrator
from forge_domain import Agent, Context, TextMessage, ToolCall, ToolResult
from forge_domain.formats import find_violations
from forge_domain.testing import pattern
from tests.app.fake_openai_server import FakeOpenAIServer, Json, Reply
from tests.app.test_orchestrator_openai import SMALL, TOOLS, ToolSession, assert_provider_valid


def _assistant(*ids: str) -> TextMessage:
    return TextMessage.assistant(None, tuple(ToolCall(id=i, name="read") for i in ids))


def _answered(*ids: str) -> list[TextMessage | ToolResult]:
    return [_assistant(*ids), *(ToolResult.of(i, "ok") for i in ids)]


def _conversation(context: Context) -> Conversation:
    return Conversation(id="c1", agent=Agent(id="a"), context=context, hooks=Hooks())


@pytest.mark.parametrize(
    ("history", "aliases", "incoming", "expected"),
    [
        ([], {}, ("call_1", "call_2"), ("call_1", "call_2")),
        (_answered("call_1"), {}, ("call_1",), ("call_1-2",)),
        (_answered("call_1"), {"call_1-2": "call_1"}, ("call_1",), ("call_1-3",)),
        ([], {}, ("call_1", "call_1", "call_1"), ("call_1", "call_1-2", "call_1-3")),
        ([], {}, ("",), ("call-2",)),
        (_answered("call_1", "call_1-2"), {}, ("call_1",), ("call_1-3",)),
        ([], {"call_1-2": "call_1"}, ("call_1-2",), ("call_1-2-3",)),
    ],
    ids=[
        "fresh-ids-kept",
        "reused-from-the-context",
        "numbers-go-on-from-earlier-renames",
        "repeated-within-the-message",
        "empty",
        "steps-past-a-provider-id-of-that-form",
        "an-id-given-out-before-is-not-reused",
    ],
)
def test_with_unique_call_ids_renames_duplicates_and_empty_ids(
    history, aliases, incoming, expected
):
    conversation = _conversation(Context([TextMessage.user("go"), *history]))
    conversation.call_id_aliases.update(aliases)
    response = ModelResponse(message=_assistant(*incoming))
    received = with_unique_call_ids(conversation, response)
    renamed = {new: old for new, old in conversation.call_id_aliases.items() if new not in aliases}
    actual = (tuple(c.id for c in received.message.tool_calls or ()), renamed)
    assert actual == (expected, {n: o for n, o in zip(expected, incoming, strict=True) if n != o})


def test_with_unique_call_ids_returns_the_same_response_when_nothing_clashes():
    conversation = _conversation(pattern("sutr"))
    response = ModelResponse(message=_assistant("call_new"))
    with capture_logs() as logs:
        actual = (with_unique_call_ids(conversation, response) is response, logs)
    assert actual == (True, [])


def test_with_unique_call_ids_logs_each_rename():
    conversation = _conversation(Context(_answered("call_1")))
    with capture_logs() as logs:
        with_unique_call_ids(conversation, ModelResponse(message=_assistant("call_1", "call_1")))
    expected = [
        {
            "event": "call_id_renamed",
            "log_level": "info",
            "conversation_id": "c1",
            "provider_id": "call_1",
            "call_id": f"call_1-{n}",
        }
        for n in (2, 3)
    ]
    assert logs == expected


def test_conversation_call_ids_follow_appends_and_replacements():
    conversation = _conversation(Context(_answered("a")))
    seen = [set(conversation.call_ids())]
    conversation.append(*_answered("b", "c"))
    seen.append(set(conversation.call_ids()))
    conversation.replace_context(conversation.context, Context(_answered("d")))
    seen.append(set(conversation.call_ids()))
    conversation.context = Context([TextMessage.user("assigned")])
    seen.append(set(conversation.call_ids()))
    conversation.append(*_answered("e"))
    seen.append(set(conversation.call_ids()))
    assert seen == [{"a"}, {"a", "b", "c"}, {"d"}, set(), {"e"}]


class SameIds:
    """A provider that gives every call the id ``call_1`` (LiteLLM's mock), two calls a turn."""

    def __init__(self, turns: int) -> None:
        self.session = ToolSession(turns)

    def __call__(self, body: Json) -> Reply:
        reply = self.session(body)
        calls = tuple(("call_1", name, args) for _, name, args in reply.tool_calls)
        return dataclasses.replace(reply, tool_calls=calls + calls[:1] if calls else ())


class Failures:
    def __init__(self) -> None:
        self.errors: list[str] = []

    @hookimpl
    def forge_on_compaction_failed(self, error) -> None:
        self.errors.append(str(error))


@pytest.mark.anyio
async def test_provider_reusing_one_call_id_gives_a_valid_transcript_and_compactions_succeed():
    failures = Failures()
    with FakeOpenAIServer(SameIds(turns=8)) as server:
        orchestrator = Orchestrator(
            SMALL,
            OpenAIChatModel(server.client(), SMALL.model),
            tools=TOOLS,
            plugins=[("failures", failures)],
        )
        conversation = await orchestrator.chat("Fix the bug in src/.")
    sent_ids = [
        call["id"]
        for body in server.requests
        for message in body["messages"]
        for call in message.get("tool_calls", ())
    ]
    actual = {
        "answer": conversation.context[-1].text,
        "violations": find_violations(conversation.context),
        "compacted": conversation.compactions >= 1,
        "failures": failures.errors,
        "aliases point at call_1": set(conversation.call_id_aliases.values()),
        "every sent id is call_1 or renamed": set(sent_ids)
        <= {"call_1", *conversation.call_id_aliases},
        "a rename per second call at least": len(conversation.call_id_aliases) >= 8,
    }
    expected = {
        "answer": "Done with ",
        "violations": [],
        "compacted": True,
        "failures": [],
        "aliases point at call_1": {"call_1"},
        "every sent id is call_1 or renamed": True,
        "a rename per second call at least": True,
    }
    assert actual == expected
    assert_provider_valid(server.requests)
