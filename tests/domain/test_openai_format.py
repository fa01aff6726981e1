"""The OpenAI chat-completions codec: lossless round trips and located errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_domain import (
    Context,
    ImagePart,
    InvalidMessage,
    InvalidTranscript,
    OtherPart,
    Role,
    TextMessage,
    TextPart,
    TokenCount,
    ToolCall,
    ToolResult,
    Usage,
)
from tests.sessions import SESSIONS


def _normal(value: object) -> object:
    return json.loads(json.dumps(value))


def _round_trip(raw: object) -> object:
    return _normal(Context.from_openai(raw).to_openai())


@pytest.mark.parametrize(
    "path", sorted(SESSIONS.glob("*.json")), ids=lambda p: p.stem if isinstance(p, Path) else p
)
def test_context_openai_round_trip_of_real_sessions(path):
    raw = json.loads(path.read_text(encoding="utf-8"))
    actual = _round_trip(raw)
    assert actual == _normal(raw)


def test_context_openai_real_sessions_are_present():
    actual = len(list(SESSIONS.glob("*.json")))
    assert actual >= 11


_CALL = {"id": "c1", "type": "function", "function": {"name": "read", "arguments": '{"p":1}'}}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look", "cache_control": {"type": "ephemeral"}},
                    {"type": "image_url", "image_url": {"url": "data:x", "detail": "low"}},
                ],
            },
            TextMessage(
                role=Role.USER,
                content=(
                    TextPart(text="look", extra={"cache_control": {"type": "ephemeral"}}),
                    ImagePart(url="data:x", detail="low"),
                ),
            ),
        ),
        (
            {
                "role": "user",
                "content": [
                    {"type": "image_url", "image_url": {"url": "u", "fmt": "png"}, "x": 1},
                    {"type": "input_audio", "input_audio": {"data": "..."}},
                ],
            },
            TextMessage(
                role=Role.USER,
                content=(
                    ImagePart(url="u", url_extra={"fmt": "png"}, extra={"x": 1}),
                    OtherPart(raw={"type": "input_audio", "input_audio": {"data": "..."}}),
                ),
            ),
        ),
        (
            {"role": "user", "content": "hi", "name": "alice"},
            TextMessage(role=Role.USER, content="hi", name="alice"),
        ),
        (
            {"role": "developer", "content": "rules"},
            TextMessage(role=Role.SYSTEM, content="rules", wire_role="developer"),
        ),
        (
            {"role": "assistant", "content": "x", "reasoning_content": "think"},
            TextMessage(role=Role.ASSISTANT, content="x", reasoning_content="think"),
        ),
        (
            {
                "role": "assistant",
                "content": "x",
                "reasoning_details": [{"type": "reasoning.text", "text": "t", "signature": "s"}],
            },
            TextMessage(
                role=Role.ASSISTANT,
                content="x",
                reasoning_details=({"type": "reasoning.text", "text": "t", "signature": "s"},),
            ),
        ),
        (
            {
                "role": "assistant",
                "content": None,
                "refusal": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "index": 0,
                        "function": {"name": "read", "arguments": "{}", "strict": True},
                    }
                ],
            },
            TextMessage(
                role=Role.ASSISTANT,
                content=None,
                tool_calls=(
                    ToolCall(
                        id="c1",
                        name="read",
                        arguments="{}",
                        function_extra={"strict": True},
                        extra={"index": 0},
                    ),
                ),
                extra={"refusal": None},
            ),
        ),
        (
            {"role": "assistant", "tool_calls": [_CALL]},
            TextMessage(
                role=Role.ASSISTANT,
                content=None,
                tool_calls=(ToolCall(id="c1", name="read", arguments='{"p":1}'),),
                content_absent=True,
            ),
        ),
        (
            {"role": "tool", "tool_call_id": "c1", "content": "out", "name": "read"},
            ToolResult(call_id="c1", name="read", content="out"),
        ),
        (
            {"role": "tool", "tool_call_id": "c1", "content": "boom", "is_error": True},
            ToolResult(call_id="c1", content="boom", is_error=True),
        ),
        (
            {"role": "user", "content": "attached", "droppable": True},
            TextMessage(role=Role.USER, content="attached", droppable=True),
        ),
        (
            {
                "role": "assistant",
                "content": "ok",
                "usage": {
                    "prompt_tokens": 90,
                    "completion_tokens": 10,
                    "total_tokens": 100,
                    "prompt_tokens_details": {"cached_tokens": 40},
                    "cost": 0.25,
                },
            },
            TextMessage(
                role=Role.ASSISTANT,
                content="ok",
                usage=Usage(
                    prompt_tokens=TokenCount.actual(90),
                    completion_tokens=TokenCount.actual(10),
                    total_tokens=TokenCount.actual(100),
                    cached_tokens=TokenCount.actual(40),
                    cost=0.25,
                    raw={
                        "prompt_tokens": 90,
                        "completion_tokens": 10,
                        "total_tokens": 100,
                        "prompt_tokens_details": {"cached_tokens": 40},
                        "cost": 0.25,
                    },
                ),
            ),
        ),
    ],
    ids=[
        "parts-text-cache-control-and-image-detail",
        "parts-image-extras-and-unknown-part",
        "name",
        "developer-role",
        "reasoning-content",
        "reasoning-details",
        "content-null-and-extras-at-every-level",
        "assistant-without-content-key",
        "tool-result-with-name",
        "tool-error",
        "droppable",
        "usage",
    ],
)
def test_context_from_openai_reads_every_field_and_writes_it_back(raw, expected):
    context = Context.from_openai([raw])
    actual = (context[0], _normal(context.to_openai()))
    assert actual == (expected, [raw])


@pytest.mark.parametrize(
    ("raw", "index", "field"),
    [
        ([{"role": "function", "content": "x"}], 0, "role"),
        ([{"content": "x"}], 0, "role"),
        ([{"role": "user", "content": "x"}, {"role": "tool", "content": "x"}], 1, "tool_call_id"),
        ([{"role": "tool", "tool_call_id": "", "content": "x"}], 0, "tool_call_id"),
        ([{"role": "tool", "tool_call_id": "c", "content": None}], 0, "content"),
        (
            [
                {
                    "role": "assistant",
                    "tool_calls": [{**_CALL, "function": {"name": "r", "arguments": {}}}],
                }
            ],
            0,
            "tool_calls[0].function.arguments",
        ),
        ([{"role": "assistant", "tool_calls": [{**_CALL, "id": ""}]}], 0, "tool_calls[0].id"),
        (
            [{"role": "assistant", "tool_calls": [{**_CALL, "type": 3}]}],
            0,
            "tool_calls[0].type",
        ),
        (
            [{"role": "assistant", "tool_calls": [{"id": "c", "type": "function"}]}],
            0,
            "tool_calls[0].function",
        ),
        (
            [{"role": "assistant", "tool_calls": [{**_CALL, "function": {"arguments": "{}"}}]}],
            0,
            "tool_calls[0].function.name",
        ),
        ([{"role": "assistant", "tool_calls": ["c1"]}], 0, "tool_calls[0]"),
        ([{"role": "user", "content": 3}], 0, "content"),
        ([{"role": "assistant", "tool_calls": {"id": "c1"}}], 0, "tool_calls"),
        ([{"role": "user", "content": "x"}, "hello"], 1, ""),
        ([{"role": "user", "content": ["text"]}], 0, "content[0]"),
        ([{"role": "user", "content": [{"text": "x"}]}], 0, "content[0].type"),
        ([{"role": "user", "content": [{"type": "text", "text": 1}]}], 0, "content[0].text"),
        (
            [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}],
            0,
            "content[0].image_url.url",
        ),
        (
            [
                {
                    "role": "user",
                    "content": [{"type": "image_url", "image_url": {"url": "u", "detail": 1}}],
                }
            ],
            0,
            "content[0].image_url.detail",
        ),
        ([{"role": "user", "content": "x", "name": 7}], 0, "name"),
        ([{"role": "assistant", "content": "x", "reasoning_content": 7}], 0, "reasoning_content"),
        (
            [{"role": "assistant", "content": "x", "reasoning_details": ["t"]}],
            0,
            "reasoning_details",
        ),
        ([{"role": "user", "content": "x", "droppable": "yes"}], 0, "droppable"),
        ([{"role": "tool", "tool_call_id": "c", "content": "x", "is_error": 1}], 0, "is_error"),
        ([{"role": "assistant", "content": "x", "usage": [1]}], 0, "usage"),
    ],
    ids=[
        "unknown-role",
        "missing-role",
        "tool-result-without-call-id",
        "tool-result-with-empty-call-id",
        "tool-result-with-null-content",
        "arguments-not-a-string",
        "call-id-empty",
        "call-type-not-a-string",
        "call-without-function",
        "function-without-name",
        "call-not-an-object",
        "content-of-wrong-type",
        "tool-calls-not-a-list",
        "message-not-an-object",
        "part-not-an-object",
        "part-without-type",
        "text-part-text-not-a-string",
        "image-without-url",
        "image-detail-not-a-string",
        "name-not-a-string",
        "reasoning-content-not-a-string",
        "reasoning-details-not-objects",
        "droppable-not-a-boolean",
        "is-error-not-a-boolean",
        "usage-not-an-object",
    ],
)
def test_context_from_openai_names_the_bad_message_and_field(raw, index, field):
    with pytest.raises(InvalidMessage) as caught:
        Context.from_openai(raw)
    actual = (caught.value.index, caught.value.field, str(caught.value).startswith("messages["))
    assert actual == (index, field, True)


@pytest.mark.parametrize(
    ("cost", "expected"),
    [
        (float("inf"), "messages[1].usage.cost: expected a finite number, got inf"),
        (float("-inf"), "messages[1].usage.cost: expected a finite number, got -inf"),
        (float("nan"), "messages[1].usage.cost: expected a finite number, got nan"),
        (
            10**400,
            "messages[1].usage.cost: expected a finite number, got an integer beyond 1.8e308",
        ),
        (
            10**5000,
            "messages[1].usage.cost: expected a finite number, got an integer beyond 1.8e308",
        ),
    ],
    ids=["inf", "minus-inf", "nan", "int-over-float-range", "int-over-digit-limit"],
)
def test_context_from_openai_rejects_a_cost_no_float_holds(cost, expected):
    raw = [
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": "y", "usage": {"cost": cost}},
    ]

    with pytest.raises(InvalidMessage) as caught:
        Context.from_openai(raw)

    assert str(caught.value) == expected


@pytest.mark.parametrize(
    ("cost", "expected"), [(1e308, 1e308), (3, 3.0), (True, None), ("0.5", None)], ids=str
)
def test_context_from_openai_reads_a_finite_cost(cost, expected):
    context = Context.from_openai([{"role": "user", "content": "x", "usage": {"cost": cost}}])

    actual = context[0].usage.cost

    assert actual == expected


@pytest.mark.parametrize("raw", [{"messages": []}, "[]", None], ids=["object", "string", "null"])
def test_context_from_openai_rejects_a_non_list(raw):
    with pytest.raises(InvalidTranscript) as caught:
        Context.from_openai(raw)
    actual = len(caught.value.violations)
    assert actual == 1


def test_context_to_openai_writes_models_built_in_code():
    usage = Usage.reported(prompt_tokens=5, completion_tokens=1, cached_tokens=2, cost=0.5)
    context = Context(
        [
            TextMessage.system("s"),
            TextMessage.assistant(None, (ToolCall(id="c", name="n", call_type=None),), usage=usage),
            ToolResult.failed("c", "x"),
        ]
    )
    actual = context.to_openai()
    expected = [
        {"role": "system", "content": "s"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c", "function": {"name": "n", "arguments": "{}"}}],
            "usage": {
                "prompt_tokens": 5,
                "completion_tokens": 1,
                "total_tokens": 6,
                "prompt_tokens_details": {"cached_tokens": 2},
                "cost": 0.5,
            },
        },
        {"role": "tool", "tool_call_id": "c", "content": "x", "is_error": True},
    ]
    assert actual == expected


# -- property: generated transcripts round-trip ---------------------------------------------

_json_leaves = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**40), 2**40), st.text(max_size=8)
)
json_values = st.one_of(
    _json_leaves,
    st.lists(_json_leaves, max_size=2),
    st.dictionaries(st.text(max_size=4), _json_leaves, max_size=2),
)


def _extras(reserved_prefix: str = "x_") -> st.SearchStrategy[dict[str, object]]:
    keys = st.text(alphabet="abcdefghij_", min_size=1, max_size=6).map(
        lambda key: reserved_prefix + key
    )
    return st.dictionaries(keys, json_values, max_size=2)


def _maybe(key: str, values: st.SearchStrategy[object]) -> st.SearchStrategy[dict[str, object]]:
    return st.one_of(st.just({}), values.map(lambda value: {key: value}))


text_parts = st.builds(
    lambda text, extra: {"type": "text", "text": text, **extra},
    st.text(max_size=20),
    _extras(),
)
image_parts = st.builds(
    lambda url, detail, url_extra, extra: {
        "type": "image_url",
        "image_url": {"url": url, **detail, **url_extra},
        **extra,
    },
    st.text(max_size=20),
    _maybe("detail", st.one_of(st.none(), st.sampled_from(["low", "high", "auto"]))),
    _extras(),
    _extras(),
)
other_parts = st.builds(
    lambda kind, extra: {"type": kind, **extra},
    st.sampled_from(["input_audio", "file", "refusal"]),
    _extras(),
)
parts = st.lists(st.one_of(text_parts, image_parts, other_parts), max_size=3)
contents = st.one_of(st.text(max_size=30), parts)
ids = st.text(min_size=1, max_size=10)

tool_calls = st.builds(
    lambda call_id, kind, name, arguments, function_extra, extra: {
        "id": call_id,
        **kind,
        "function": {"name": name, "arguments": arguments, **function_extra},
        **extra,
    },
    ids,
    _maybe("type", st.one_of(st.just("function"), st.none())),
    st.text(min_size=1, max_size=10),
    st.one_of(st.text(max_size=20), json_values.map(json.dumps)),
    _extras(),
    _extras(),
)
usages = st.fixed_dictionaries(
    {},
    optional={
        "prompt_tokens": st.integers(0, 10**6),
        "completion_tokens": st.integers(0, 10**6),
        "total_tokens": st.integers(0, 10**6),
        "cost": st.floats(0, 10, allow_nan=False),
        "prompt_tokens_details": st.fixed_dictionaries({"cached_tokens": st.integers(0, 100)}),
    },
)


def _merge(*dicts: dict[str, object]) -> dict[str, object]:
    merged: dict[str, object] = {}
    for item in dicts:
        merged.update(item)
    return merged


text_messages = st.builds(
    _merge,
    st.sampled_from(["system", "developer", "user"]).map(lambda role: {"role": role}),
    contents.map(lambda content: {"content": content}),
    _maybe("name", st.one_of(st.none(), st.text(max_size=8))),
    _maybe("droppable", st.booleans()),
    _extras(),
)
assistant_messages = st.builds(
    _merge,
    st.just({"role": "assistant"}),
    _maybe("content", st.one_of(st.none(), contents)),
    _maybe("tool_calls", st.one_of(st.none(), st.lists(tool_calls, max_size=3))),
    _maybe("reasoning_content", st.one_of(st.none(), st.text(max_size=10))),
    _maybe(
        "reasoning_details",
        st.one_of(st.none(), st.lists(st.dictionaries(st.text(max_size=5), json_values))),
    ),
    _maybe("usage", usages),
    _extras(),
)
tool_messages = st.builds(
    _merge,
    st.just({"role": "tool"}),
    ids.map(lambda call_id: {"tool_call_id": call_id}),
    contents.map(lambda content: {"content": content}),
    _maybe("name", st.one_of(st.none(), st.text(max_size=8))),
    _maybe("is_error", st.booleans()),
    _extras(),
)
transcripts = st.lists(st.one_of(text_messages, assistant_messages, tool_messages), max_size=5)


@given(transcripts)
def test_context_openai_round_trips_generated_transcripts(raw):
    actual = _round_trip(raw)
    assert actual == _normal(raw)


def test_context_openai_keeps_explicit_absent_values():
    raw = [
        {
            "role": "assistant",
            "content": "x",
            "name": None,
            "tool_calls": None,
            "reasoning_content": None,
            "reasoning_details": None,
            "usage": None,
            "droppable": False,
        },
        {"role": "tool", "tool_call_id": "c", "content": "y", "is_error": False, "name": None},
        {
            "role": "assistant",
            "content": [{"type": "image_url", "image_url": {"url": "u", "detail": None}}],
            "tool_calls": [{"id": "c", "type": None, "function": {"name": "n", "arguments": ""}}],
        },
    ]
    actual = _round_trip(raw)
    assert actual == raw


def test_context_to_openai_never_lets_extra_override_a_field():
    read = Context.from_openai([{"role": "user", "content": "x", "droppable": False}])
    changed = Context([read[0].model_copy(update={"droppable": True})])
    actual = changed.to_openai()
    assert actual == [{"role": "user", "content": "x", "droppable": True}]


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            TextMessage(
                role=Role.USER,
                content=(TextPart(text="kept", extra={"text": "extra", "type": "x", "k": 1}),),
            ),
            {"role": "user", "content": [{"type": "text", "text": "kept", "k": 1}]},
        ),
        (
            TextMessage(
                role=Role.USER,
                content=(ImagePart(url="data:,", extra={"image_url": "extra", "k": 1}),),
            ),
            {
                "role": "user",
                "content": [{"type": "image_url", "image_url": {"url": "data:,"}, "k": 1}],
            },
        ),
        (
            TextMessage(
                role=Role.ASSISTANT,
                tool_calls=(
                    ToolCall(
                        id="c",
                        name="kept",
                        arguments="{}",
                        function_extra={"name": "extra", "arguments": "[]", "k": 1},
                    ),
                ),
            ),
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "c",
                        "type": "function",
                        "function": {"name": "kept", "arguments": "{}", "k": 1},
                    }
                ],
            },
        ),
    ],
    ids=["text-part", "image-part", "function"],
)
def test_context_to_openai_never_lets_a_part_or_call_extra_override_a_field(message, expected):
    assert Context([message]).to_openai() == [expected]


@pytest.mark.parametrize(
    ("raw", "update", "expected"),
    [
        (
            {"role": "assistant", "tool_calls": [_CALL]},
            {"content": "now with text"},
            {"role": "assistant", "content": "now with text", "tool_calls": [_CALL]},
        ),
        (
            {"role": "developer", "content": "rules"},
            {"role": Role.USER},
            {"role": "user", "content": "rules"},
        ),
        (
            {"role": "developer", "content": "rules"},
            {"content": "new rules"},
            {"role": "developer", "content": "new rules"},
        ),
    ],
    ids=["content-set-on-a-message-read-without-content", "role-changed", "developer-kept"],
)
def test_context_to_openai_writes_copies_as_they_now_are(raw, update, expected):
    read = Context.from_openai([raw])[0]
    actual = _normal(Context([read.model_copy(update=update)]).to_openai())
    assert actual == [expected]
