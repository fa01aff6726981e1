"""The OpenAI Responses codec: lossless round trips, grouping and located errors."""

from __future__ import annotations

import json

import pytest

from forge_domain import (
    ImagePart,
    InvalidMessage,
    InvalidTranscript,
    OtherPart,
    Role,
    TextMessage,
    TextPart,
    ToolCall,
    ToolResult,
)
from forge_domain.formats import message_to_openai, messages_from_responses, messages_to_responses
from forge_domain.formats._openai import messages_from_openai

_REASONING = {
    "id": "rs_1",
    "type": "reasoning",
    "summary": [{"type": "summary_text", "text": "look first"}],
    "encrypted_content": "gAAAAB-opaque",
}
_CALL = {
    "id": "fc_1",
    "type": "function_call",
    "call_id": "call_1",
    "name": "shell",
    "arguments": '{"cmd":"ls"}',
    "status": "completed",
}
_SAID = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "Listing.", "annotations": []}],
}
_AGENT_SESSION = [
    {"role": "user", "content": "list the files"},
    _REASONING,
    _SAID,
    _CALL,
    {"type": "function_call_output", "call_id": "call_1", "output": "a.py\nb.py"},
    {"type": "compaction", "id": "cmp_1", "encrypted_content": "ZW5jcnlwdGVk"},
    {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"query": "q"}},
    {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "d"}]},
    {"type": "message", "role": "user", "content": [{"type": "input_file", "file_id": "f1"}]},
]


def _normal(value: object) -> object:
    return json.loads(json.dumps(value))


@pytest.mark.parametrize(
    "items",
    [
        _AGENT_SESSION,
        [_SAID, _SAID],  # two assistant messages stay two
        [_CALL, _REASONING, {**_CALL, "call_id": "call_2"}],  # reasoning starts a turn
        [_CALL, _SAID],  # a message after a call starts a turn
        [{"role": "assistant", "content": None}],
        [
            {
                "type": "function_call_output",
                "call_id": "c",
                "output": [
                    {"type": "input_text", "text": "x"},
                    {"type": "input_image", "image_url": "data:image/png;base64,AA"},
                    {"type": "input_image", "image_url": "https://x/y.png", "detail": "low"},
                ],
            }
        ],
        [{"role": "user", "content": "x", "": 1}],
    ],
    ids=[
        "agent-session",
        "two-messages",
        "reasoning-splits",
        "message-splits",
        "null",
        "parts",
        "empty-key",
    ],
)
def test_responses_round_trip_is_exact(items):
    actual = _normal(messages_to_responses(messages_from_responses(items)))
    assert actual == _normal(items)


def test_responses_items_map_onto_the_internal_model():
    actual = messages_from_responses(_AGENT_SESSION[:5])
    expected = [
        TextMessage(role=Role.USER, content="list the files"),
        TextMessage(
            role=Role.ASSISTANT,
            content=(TextPart(text="Listing.", extra={"annotations": []}),),
            tool_calls=(
                ToolCall(
                    id="call_1",
                    name="shell",
                    arguments='{"cmd":"ls"}',
                    extra={"id": "fc_1", "status": "completed"},
                ),
            ),
            reasoning_details=(_REASONING,),
            extra={"id": "msg_1", "type": "message", "status": "completed"},
        ),
        ToolResult(call_id="call_1", content="a.py\nb.py"),
    ]
    assert actual == expected


def test_responses_opaque_items_are_kept_whole():
    compaction, search = _AGENT_SESSION[5], _AGENT_SESSION[6]
    actual = [
        (m.role, m.content)
        for m in messages_from_responses([compaction, search])
        if isinstance(m, TextMessage)
    ]
    expected = [
        (Role.USER, (OtherPart(raw=compaction),)),
        (Role.ASSISTANT, (OtherPart(raw=search),)),
    ]
    assert actual == expected


def test_responses_input_image_is_an_image_part():
    raw = [
        {"role": "user", "content": [{"type": "input_image", "image_url": "u", "detail": "high"}]}
    ]
    actual = messages_from_responses(raw)[0].content
    assert actual == (ImagePart(url="u", detail="high"),)


_OPENAI_ONLY = [
    {"role": "system", "content": "s"},
    {"role": "user", "content": "u", "name": "bob", "droppable": True},
    {"role": "assistant", "content": "thinking aloud"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{}"}, "index": 0}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
    },
    {"role": "tool", "tool_call_id": "c", "content": "r", "is_error": True, "name": "f"},
    {"role": "assistant", "reasoning_content": "hm", "content": "done"},
    {"role": "user"},
]


def test_responses_carries_what_it_cannot_say_from_openai():
    items = _normal(messages_to_responses(messages_from_openai(_OPENAI_ONLY)))
    actual = _normal([message_to_openai(m) for m in messages_from_responses(items)])
    assert actual == _OPENAI_ONLY


def test_responses_native_items_carry_nothing():
    actual = [item for item in messages_to_responses(messages_from_responses(_AGENT_SESSION))]
    assert all("_forge" not in item for item in actual)


@pytest.mark.parametrize(
    ("items", "index", "field"),
    [
        ([3], 0, ""),
        ([{"content": "x"}], 0, "type"),
        ([{"role": "robot", "content": "x"}], 0, "role"),
        ([{"role": "user"}], 0, "content"),
        ([{"role": "user", "content": 5}], 0, "content"),
        ([{"role": "user", "content": [{"type": "input_text", "text": 1}]}], 0, "content[0].text"),
        ([{"role": "user", "content": ["x"]}], 0, "content[0]"),
        ([{"role": "user", "content": "x"}, {"type": "function_call", "name": "f"}], 1, "call_id"),
        ([{"type": "function_call", "call_id": "c", "name": "", "arguments": "{}"}], 0, "name"),
        ([{"type": "function_call", "call_id": "c", "name": "f", "arguments": {}}], 0, "arguments"),
        ([{"type": "function_call_output", "call_id": "c", "output": None}], 0, "output"),
        ([{"type": "function_call_output", "output": "x"}], 0, "call_id"),
        ([{"role": "user", "content": "x", "_forge": 1}], 0, "_forge"),
        (
            [{"role": "user", "content": "x", "_forge": {"message": {"nope": 1}}}],
            0,
            "_forge.message.nope",
        ),
        (
            [{"role": "user", "content": "x", "_forge": {"message": {"name": 3}}}],
            0,
            "_forge.message.name",
        ),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_responses_bad_item_names_index_and_field(items, index, field):
    with pytest.raises(InvalidMessage) as caught:
        messages_from_responses(items)
    actual = (
        caught.value.index,
        caught.value.field,
        str(caught.value).startswith(f"input[{index}]"),
    )
    assert actual == (index, field, True)


def test_responses_not_a_list_is_invalid():
    with pytest.raises(InvalidTranscript, match="expected a list of input items, got object"):
        messages_from_responses({"input": []})


@pytest.mark.parametrize(
    ("message", "field"),
    [
        (
            TextMessage(
                role=Role.ASSISTANT,
                content=None,
                reasoning_details=({"type": "reasoning", "summary": []},),
                tool_calls=(
                    ToolCall(id="c", name="f", arguments="{}", extra={"_forge": {"split": True}}),
                ),
            ),
            "",
        ),
        (
            TextMessage(
                role=Role.USER,
                content=(OtherPart(raw={"type": "function_call"}),),
                extra={"_responses": "item"},
            ),
            "call_id",
        ),
    ],
    ids=["reads-back-as-two", "opaque-item-unreadable"],
)
def test_responses_unwritable_message_names_its_own_index(message, field):
    with pytest.raises(InvalidMessage) as caught:
        messages_to_responses([TextMessage.user("a"), TextMessage.user("b"), message])
    actual = (caught.value.index, caught.value.field, str(caught.value).startswith("input[2]"))
    assert actual == (2, field, True)


def test_responses_message_item_with_a_null_type_stays_its_own_message():
    thought = TextMessage(
        role=Role.ASSISTANT, content=None, reasoning_details=({"type": "reasoning"},)
    )
    said = TextMessage(role=Role.ASSISTANT, content="x", extra={"type": None})
    actual = messages_from_responses(_normal(messages_to_responses([thought, said])))
    assert actual == [thought, said]
