"""The Anthropic Messages codec: lossless round trips, regrouping and located errors."""

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
    Usage,
)
from forge_domain.formats import message_to_openai, messages_from_anthropic, messages_to_anthropic
from forge_domain.formats._openai import messages_from_openai

SYSTEM = [
    {"type": "text", "text": "You are a coding agent.", "cache_control": {"type": "ephemeral"}}
]
_THINKING = {"type": "thinking", "thinking": "Read it first.", "signature": "EqQBCkYIBxgCKkA"}
_USE = {"type": "tool_use", "id": "toolu_01", "name": "Read", "input": {"file_path": "/a.py"}}
TURNS = [
    {"role": "user", "content": "fix the bug"},
    {
        "role": "assistant",
        "content": [_THINKING, {"type": "text", "text": "Looking."}, _USE],
        "id": "msg_1",
        "usage": {"input_tokens": 10, "cache_read_input_tokens": 2000, "output_tokens": 50},
    },
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "x = 1"}],
    },
    {
        "role": "assistant",
        "content": [
            {"type": "redacted_thinking", "data": "ZW5jcnlwdGVk"},
            {"type": "tool_use", "id": "toolu_02", "name": "Bash", "input": {"command": "pytest"}},
            {"type": "tool_use", "id": "toolu_03", "name": "Bash", "input": {"command": "ls"}},
        ],
    },
    {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_02",
                "content": [{"type": "text", "text": "1 failed"}],
                "is_error": True,
            },
            {
                "type": "tool_result",
                "tool_use_id": "toolu_03",
                "content": "a.py",
                "is_error": False,
            },
            {"type": "text", "text": "also check b.py"},
        ],
    },
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "first"},
            {"type": "tool_use", "id": "toolu_04", "name": "Bash", "input": {}},
            {"type": "text", "text": "then"},
        ],
    },
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_04"}]},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "a turn of its own", "cache_control": {"type": "ephemeral"}},
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"},
            },
            {
                "type": "document",
                "source": {"type": "text", "media_type": "text/plain", "data": "d"},
            },
        ],
    },
    {"role": "assistant", "content": "a plain string"},
    {"role": "user", "content": [{"type": "text", "text": "a list of one text"}]},
    {
        "role": "assistant",
        "content": [
            {
                "type": "server_tool_use",
                "id": "srvtoolu_1",
                "name": "web_search",
                "input": {"q": 1},
            },
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
            {"type": "text", "text": "found it", "citations": []},
        ],
    },
]


def _normal(value: object) -> object:
    return json.loads(json.dumps(value))


def _round_trip(turns: list, system: object = None) -> tuple[object, object]:
    written_system, written = messages_to_anthropic(messages_from_anthropic(turns, system=system))
    return _normal(written_system), _normal(written)


def test_anthropic_round_trip_is_exact():
    actual = _round_trip(TURNS, SYSTEM)
    assert actual == (SYSTEM, _normal(TURNS))


@pytest.mark.parametrize(
    "turns",
    [
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "t"},
                    {"type": "tool_result", "tool_use_id": "a", "content": "r"},
                ],
            }
        ],
        [
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "a", "content": "r"}],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "b", "content": "s"}],
                "id": "u2",
            },
        ],
        [
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "a", "content": "r"}],
                "usage": None,
            }
        ],
        [
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}, _THINKING],
            }
        ],
        [
            {
                "role": "user",
                "content": [{"type": "image", "source": {"type": "url", "url": "https://x/y.png"}}],
            }
        ],
        [
            {
                "role": "user",
                "content": [{"type": "image", "source": {"type": "file", "file_id": "f"}}],
            }
        ],
        [
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "a", "content": "r"},
                    {"type": "text", "text": "t"},
                ],
                "usage": {"input_tokens": 1, "output_tokens": 2},
            },
        ],
        [{"role": "assistant", "content": [{"type": "text", "text": ""}]}],
        [
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "a", "content": "r"},
                    {"type": "text", "text": ""},
                ],
            }
        ],
    ],
    ids=[
        "text-before-result",
        "two-result-turns",
        "explicit-null",
        "call-before-thinking",
        "url-image",
        "file-image",
        "joined-turn-with-usage",
        "empty-text-block",
        "result-then-empty-text",
    ],
)
def test_anthropic_layouts_round_trip(turns):
    actual = _round_trip(turns)
    assert actual == (None, _normal(turns))


def test_anthropic_turns_map_onto_the_internal_model():
    actual = messages_from_anthropic(TURNS[:5], system="be brief")
    expected = [
        TextMessage(role=Role.SYSTEM, content="be brief"),
        TextMessage(role=Role.USER, content="fix the bug"),
        TextMessage(
            role=Role.ASSISTANT,
            content="Looking.",
            tool_calls=(ToolCall(id="toolu_01", name="Read", arguments='{"file_path": "/a.py"}'),),
            reasoning_details=(_THINKING,),
            usage=actual[2].usage,
            extra={"id": "msg_1"},
        ),
        ToolResult(call_id="toolu_01", content="x = 1"),
        TextMessage(
            role=Role.ASSISTANT,
            content=None,
            tool_calls=(
                ToolCall(id="toolu_02", name="Bash", arguments='{"command": "pytest"}'),
                ToolCall(id="toolu_03", name="Bash", arguments='{"command": "ls"}'),
            ),
            reasoning_details=({"type": "redacted_thinking", "data": "ZW5jcnlwdGVk"},),
        ),
        ToolResult(call_id="toolu_02", content=(TextPart(text="1 failed"),), is_error=True),
        ToolResult(call_id="toolu_03", content="a.py", extra={"is_error": False}),
        TextMessage(role=Role.USER, content="also check b.py"),
    ]
    assert actual == expected


def test_anthropic_usage_counts_cache_reads_as_prompt():
    usage = messages_from_anthropic(TURNS[:2])[1].usage
    actual = None if usage is None else (usage.prompt_tokens.value, usage.total_tokens.value)
    assert actual == (2010, 2060)


def test_anthropic_images_and_documents_are_parts():
    actual = messages_from_anthropic(TURNS[7:8])[0].content
    expected = (
        TextPart(text="a turn of its own", extra={"cache_control": {"type": "ephemeral"}}),
        ImagePart(url="data:image/png;base64,iVBO"),
        OtherPart(raw=TURNS[7]["content"][2]),
    )
    assert actual == expected


def test_anthropic_writes_results_first_in_the_turn_after_their_call():
    messages = messages_from_openai(
        [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": "calling",
                "tool_calls": [
                    {
                        "id": "a",
                        "type": "function",
                        "function": {"name": "f", "arguments": '{"x": 1}'},
                    },
                    {"id": "b", "type": "function", "function": {"name": "g", "arguments": "{}"}},
                ],
            },
            {"role": "tool", "tool_call_id": "a", "content": "A"},
            {"role": "tool", "tool_call_id": "b", "content": "B"},
            {"role": "user", "content": "and?"},
        ]
    )
    actual = messages_to_anthropic(messages)
    expected = (
        None,
        [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "calling"},
                    {"type": "tool_use", "id": "a", "name": "f", "input": {"x": 1}},
                    {"type": "tool_use", "id": "b", "name": "g", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "a", "content": "A"},
                    {"type": "tool_result", "tool_use_id": "b", "content": "B"},
                    {"type": "text", "text": "and?"},
                ],
            },
        ],
    )
    assert actual == expected


OPENAI_ONLY = [
    {"role": "developer", "content": "d", "name": "ops"},
    {"role": "system", "content": "late system"},
    {"role": "user", "content": "u", "droppable": True},
    {
        "role": "user",
        "content": [
            {
                "type": "image_url",
                "image_url": {"url": "data:image/jpeg;base64,AA", "detail": "low"},
            }
        ],
    },
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "c",
                "type": "function",
                "function": {"name": "f", "arguments": '{"a":1}'},
                "index": 0,
            },
            {"id": "d", "function": {"name": "f", "arguments": "not json"}},
            {"id": "e", "type": "function", "function": {"name": "f", "arguments": "[1, 2]"}},
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
        "reasoning_details": [{"type": "reasoning.text", "text": "hm"}],
    },
    {"role": "tool", "tool_call_id": "c", "content": "r", "name": "f"},
    {"role": "tool", "tool_call_id": "d", "content": ""},
    {"role": "tool", "tool_call_id": "e", "content": "e", "is_error": True},
    {"role": "user", "content": ""},
    {
        "role": "user",
        "content": [{"type": "image_url", "image_url": {"url": "https://x/y.png", "f": 1}}],
    },
    {"role": "user", "content": "next", "name": "bob"},
    {"role": "assistant", "reasoning_content": "thought", "content": None},
    {"role": "user"},
]


_CALLED = {
    "role": "assistant",
    "content": None,
    "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
}


@pytest.mark.parametrize(
    "messages",
    [
        OPENAI_ONLY,
        [
            _CALLED,
            {"role": "tool", "tool_call_id": "c", "content": "r"},
            {"role": "user", "content": "u", "name": "bob"},
        ],
        [
            _CALLED,
            {"role": "tool", "tool_call_id": "c", "content": "r", "name": "f"},
            {"role": "user", "content": "u"},
        ],
    ],
    ids=["many", "named-user-after-results", "named-result-before-user"],
)
def test_anthropic_carries_what_it_cannot_say_from_openai(messages):
    system, turns = messages_to_anthropic(messages_from_openai(messages))
    back = messages_from_anthropic(_normal(turns), system=_normal(system))
    actual = _normal([message_to_openai(m) for m in back])
    assert actual == messages


def test_anthropic_native_turns_carry_nothing():
    _, turns = messages_to_anthropic(messages_from_anthropic(TURNS))
    actual = "_forge" in json.dumps(turns)
    assert actual is False


def test_anthropic_stale_layout_is_dropped_not_carried():
    (message,) = messages_from_anthropic([TURNS[5]])
    changed = message.model_copy(update={"tool_calls": None})  # as if pruned
    _, turns = messages_to_anthropic([changed])
    actual = turns[0]["content"]
    expected = [{"type": "text", "text": "first"}, {"type": "text", "text": "then"}]
    assert actual == expected


_R = {"type": "tool_result", "tool_use_id": "a", "content": "r"}


@pytest.mark.parametrize(
    ("turns", "system", "location"),
    [
        ("x", None, None),
        ([3], None, "messages[0]"),
        ([{"role": "system", "content": "s"}], None, "messages[0].role"),
        ([{"role": "user"}], None, "messages[0].content"),
        ([{"role": "user", "content": 5}], None, "messages[0].content"),
        ([{"role": "user", "content": ["x"]}], None, "messages[0].content[0]"),
        ([{"role": "user", "content": [{"text": "x"}]}], None, "messages[0].content[0].type"),
        (
            [{"role": "user", "content": [{"type": "text", "text": 1}]}],
            None,
            "messages[0].content[0].text",
        ),
        (
            [
                {"role": "user", "content": "x"},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "", "name": "f", "input": {}}],
                },
            ],
            None,
            "messages[1].content[0].id",
        ),
        (
            [
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "a", "name": "f", "input": "{}"}],
                }
            ],
            None,
            "messages[0].content[0].input",
        ),
        (
            [{"role": "assistant", "content": [{"type": "tool_use", "id": "a", "input": {}}]}],
            None,
            "messages[0].content[0].name",
        ),
        ([{"role": "assistant", "content": [_R]}], None, "messages[0].content[0].type"),
        (
            [{"role": "user", "content": [{**_R, "tool_use_id": None}]}],
            None,
            "messages[0].content[0].tool_use_id",
        ),
        (
            [{"role": "user", "content": [{**_R, "is_error": "yes"}]}],
            None,
            "messages[0].content[0].is_error",
        ),
        (
            [{"role": "user", "content": [{**_R, "content": 7}]}],
            None,
            "messages[0].content[0].content",
        ),
        (
            [
                {
                    "role": "user",
                    "content": [_R, {"type": "tool_use", "id": "a", "name": "f", "input": {}}],
                }
            ],
            None,
            "messages[0].content[1].type",
        ),
        ([{"role": "assistant", "content": "x", "usage": 3}], None, "messages[0].usage"),
        (
            [{"role": "user", "content": "x", "_forge": {"message": {"role": "robot"}}}],
            None,
            "messages[0]._forge.message.role",
        ),
        ([], 5, "system[0]"),
        ([], [{"type": "text", "text": None}], "system[0].text"),
        ([], ["x"], "system[0]"),
        ([], [{"text": "x"}], "system[0].type"),
        (
            [{"role": "user", "content": "x", "_forge": {"message": 5}}],
            None,
            "messages[0]._forge.message",
        ),
        (
            [
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": "a",
                            "name": "f",
                            "input": {},
                            "_forge": {"spacing": "wide"},
                        }
                    ],
                }
            ],
            None,
            "messages[0].content[0]._forge.spacing",
        ),
    ],
    ids=lambda value: value if isinstance(value, str) and "[" in value else None,
)
def test_anthropic_bad_input_names_index_and_field(turns, system, location):
    with pytest.raises((InvalidMessage, InvalidTranscript)) as caught:
        messages_from_anthropic(turns, system=system)
    error = caught.value
    actual = (
        f"{error.container}[{error.index}]" + (f".{error.field}" if error.field else "")
        if isinstance(error, InvalidMessage)
        else None
    )
    assert actual == location


def test_anthropic_usage_built_in_code_is_written_in_anthropic_words():
    message = TextMessage.assistant(
        "a", usage=Usage.reported(prompt_tokens=120, completion_tokens=8)
    )
    _, turns = messages_to_anthropic([TextMessage.user("q"), message])
    back = messages_from_anthropic(turns)[1].usage
    actual = (turns[1]["usage"], None if back is None else back.total_tokens.value)
    assert actual == ({"input_tokens": 120, "output_tokens": 8, "cache_read_input_tokens": 0}, 128)


def test_anthropic_own_turn_without_the_results_before_it_is_dropped_not_carried():
    turns = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "r"}]},
        {"role": "user", "content": "a turn of its own"},
    ]
    messages = messages_from_anthropic(turns)
    _, written = messages_to_anthropic(
        [messages[0], messages[-1]]
    )  # as if the call were summarised
    assert written == [turns[0], turns[-1]]


@pytest.mark.parametrize(
    "message",
    [
        TextMessage(
            role=Role.ASSISTANT,
            content=(OtherPart(raw={"type": "tool_result", "tool_use_id": "x"}),),
        ),
        ToolResult(call_id="x", content="r", extra={"is_error": "yes"}),
    ],
    ids=["result-block-in-assistant", "result-with-a-bad-flag"],
)
def test_anthropic_unwritable_message_names_its_own_index(message):
    with pytest.raises(InvalidMessage) as caught:
        messages_to_anthropic([TextMessage.user("a"), TextMessage.assistant("b"), message])
    actual = (caught.value.index, str(caught.value).startswith("messages[2]"))
    assert actual == (2, True)
