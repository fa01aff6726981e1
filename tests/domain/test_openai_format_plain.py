"""The plain-shape reader of OpenAI messages builds what the general reader builds.

``messages_from_openai`` reads messages of the plain shape most transcripts hold with
``_plain_message`` (the validated model's state, built without validation)
and every other message with ``message_from_openai``. Both must give equal messages, with
equal estimates, that write back to the input, in the input's order.
"""

from __future__ import annotations

import json
import random

import pytest

from forge_domain import JsonObject, Role, TextMessage, ToolCall, ToolResult
from forge_domain.formats import message_from_openai, message_to_openai
from forge_domain.formats._openai import messages_from_openai
from forge_domain.formats._openai_plain import _plain_message
from tests.sessions import session_paths

_CALL: JsonObject = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
}
PLAIN: list[tuple[str, JsonObject]] = [
    ("system", {"role": "system", "content": "You are terse."}),
    ("user", {"role": "user", "content": "Fix the bug."}),
    ("assistant-text", {"role": "assistant", "content": "Done."}),
    ("assistant-null-content", {"role": "assistant", "content": None, "tool_calls": [_CALL]}),
    ("assistant-empty-calls", {"role": "assistant", "content": "", "tool_calls": []}),
    ("assistant-two-calls", {"role": "assistant", "content": "x", "tool_calls": [_CALL, _CALL]}),
    ("tool", {"role": "tool", "tool_call_id": "call_1", "content": "print(1)\n"}),
]
OTHER: list[tuple[str, JsonObject]] = [
    ("developer", {"role": "developer", "content": "Be brief."}),
    ("no-content-key", {"role": "assistant", "tool_calls": [_CALL]}),
    ("null-tool-calls", {"role": "assistant", "content": "x", "tool_calls": None}),
    ("name", {"role": "user", "content": "hi", "name": "ann"}),
    ("extra-key", {"role": "user", "content": "hi", "timestamp": 3}),
    ("parts", {"role": "user", "content": [{"type": "text", "text": "hi"}]}),
    ("usage", {"role": "assistant", "content": "x", "usage": {"total_tokens": 5}}),
    ("droppable", {"role": "user", "content": "x", "droppable": True}),
    (
        "call-without-type",
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c", "function": _CALL["function"]}],
        },
    ),
    (
        "call-extra-key",
        {"role": "assistant", "content": None, "tool_calls": [{**_CALL, "index": 0}]},
    ),
    (
        "call-other-type",
        {"role": "assistant", "content": None, "tool_calls": [{**_CALL, "type": "custom"}]},
    ),
    ("tool-name", {"role": "tool", "tool_call_id": "c", "content": "x", "name": "read"}),
    ("tool-error", {"role": "tool", "tool_call_id": "c", "content": "x", "is_error": True}),
    (
        "tool-parts",
        {"role": "tool", "tool_call_id": "c", "content": [{"type": "text", "text": "x"}]},
    ),
]


@pytest.mark.parametrize(("name", "raw"), PLAIN + OTHER, ids=[n for n, _ in PLAIN + OTHER])
def test_messages_from_openai_reads_each_shape_as_the_general_reader(name, raw):
    (actual,) = messages_from_openai([raw])
    expected = message_from_openai(0, raw)

    assert (actual, actual.approx_tokens, message_to_openai(actual)) == (
        expected,
        expected.approx_tokens,
        raw,
    )


@pytest.mark.parametrize(("name", "raw"), PLAIN, ids=[n for n, _ in PLAIN])
def test_plain_messages_take_the_plain_reader(name, raw):
    assert _plain_message(raw) is not None


@pytest.mark.parametrize(("name", "raw"), PLAIN, ids=[n for n, _ in PLAIN])
def test_plain_reader_stores_the_estimate_the_message_would_compute(name, raw):
    read = _plain_message(raw)
    assert read is not None
    stored = read.__dict__.get("approx_tokens")

    assert stored == message_from_openai(0, raw).approx_tokens


@pytest.mark.parametrize(("name", "raw"), OTHER, ids=[n for n, _ in OTHER])
def test_other_messages_are_left_to_the_general_reader(name, raw):
    assert _plain_message(raw) is None


@pytest.mark.parametrize(
    "raw",
    [
        {"role": "tool", "tool_call_id": "", "content": "x"},
        {"role": "tool", "tool_call_id": "c", "content": None},
        {"role": ["user"], "content": "x"},
        {"role": "assistant", "content": None, "tool_calls": [{**_CALL, "id": ""}]},
        {"role": "assistant", "content": 3},
    ],
    ids=["empty-call-id", "null-tool-content", "unhashable-role", "empty-id", "number-content"],
)
def test_plain_reader_leaves_malformed_messages_to_the_general_reader(raw):
    assert _plain_message(raw) is None


def test_messages_from_openai_keeps_the_order_of_plain_and_other_messages():
    shapes = [raw for _, raw in PLAIN + OTHER] * 3
    fixture = random.Random(0).sample(shapes, len(shapes))

    actual = messages_from_openai(fixture)

    expected = [message_from_openai(i, raw) for i, raw in enumerate(fixture)]
    assert (actual, [m.approx_tokens for m in actual]) == (
        expected,
        [m.approx_tokens for m in expected],
    )


@pytest.mark.skipif(not session_paths(), reason="shared sessions not present")
@pytest.mark.parametrize("path", session_paths(), ids=[p.stem for p in session_paths()])
def test_messages_from_openai_reads_each_shared_session_as_the_general_reader(path):
    fixture = json.loads(path.read_text(encoding="utf-8"))

    actual = messages_from_openai(fixture)

    expected = [message_from_openai(i, raw) for i, raw in enumerate(fixture)]
    assert (actual, [m.approx_tokens for m in actual]) == (
        expected,
        [m.approx_tokens for m in expected],
    )


def _state(model: object) -> tuple[object, ...]:
    """Everything a pydantic model instance holds: its fields (the stored estimate left
    out), which were set, its extra and private values, and the same of its calls."""
    fields = {k: v for k, v in vars(model).items() if k != "approx_tokens"}
    calls = tuple(_state(call) for call in getattr(model, "tool_calls", None) or ())
    return (
        type(model),
        fields,
        list(fields),
        model.__pydantic_fields_set__,  # type: ignore[attr-defined]
        model.__pydantic_extra__,  # type: ignore[attr-defined]
        model.__pydantic_private__,  # type: ignore[attr-defined]
        calls,
    )


def _validated(raw: JsonObject) -> object:
    """The validated model of the fields of plain ``raw`` that differ from their defaults."""
    if raw["role"] == "tool":
        return ToolResult(call_id=raw["tool_call_id"], content=raw["content"])
    role = Role(raw["role"])
    if "tool_calls" not in raw:
        return TextMessage(role=role, content=raw["content"])
    calls = tuple(
        ToolCall(id=c["id"], name=c["function"]["name"], arguments=c["function"]["arguments"])
        for c in raw["tool_calls"]
    )
    return TextMessage(role=role, content=raw["content"], tool_calls=calls)


@pytest.mark.parametrize(("name", "raw"), PLAIN, ids=[n for n, _ in PLAIN])
def test_plain_reader_builds_the_validated_model_s_state(name, raw):
    read = _plain_message(raw)
    assert read is not None

    assert _state(read) == _state(_validated(raw))
    assert read.model_dump(exclude_unset=True) == _validated(raw).model_dump(  # type: ignore[attr-defined]
        exclude_unset=True
    )
    assert read.extra is not _plain_message(raw).extra  # type: ignore[union-attr]


@pytest.mark.parametrize(("name", "raw"), PLAIN, ids=[n for n, _ in PLAIN])
def test_a_copy_with_an_update_leaves_the_fields_set_other_messages_share(name, raw):
    # The plain reader gives every message of one shape the same fields-set object; a
    # copy must take its own, or an update would show up as set on every other message.
    first, second = _plain_message(raw), _plain_message(raw)
    assert first is not None
    assert second is not None
    shared = set(second.model_fields_set)

    copied = first.model_copy(update={"extra": {"seen": True}})

    assert (copied.model_fields_set, second.model_fields_set, first.model_fields_set) == (
        shared | {"extra"},
        shared,
        shared,
    )
    calls = (getattr(first, "tool_calls", None) or (), getattr(second, "tool_calls", None) or ())
    for one, other in zip(*calls, strict=True):
        one.model_copy(update={"extra": {"seen": True}})
        assert other.model_fields_set == {"id", "name", "arguments"}
