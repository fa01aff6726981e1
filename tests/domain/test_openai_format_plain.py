"""The plain-shape reader of OpenAI messages builds what the general reader builds.

``messages_from_openai`` reads messages of the plain shape most transcripts hold with
``_plain_message`` (the validated model's state, built without validation)
and every other message with ``message_from_openai``. Both must give equal messages, with
equal estimates, that write back to the input, in the input's order.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forge_domain import (
    ContextMessage,
    InvalidMessage,
    JsonObject,
    Role,
    TextMessage,
    ToolCall,
    ToolResult,
)
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


@pytest.mark.parametrize(("name", "raw"), PLAIN, ids=[n for n, _ in PLAIN])
def test_plain_reader_s_field_dicts_are_no_larger_than_the_validated_ones(name, raw):
    # The reader copies each shape's fields from a key-sharing dict (plans/008, round 8c):
    # never larger than the validated model's dict (on CPython 3.11 less than half).
    read, validated = _plain_message(raw), _validated(raw)
    assert read is not None
    calls = getattr(read, "tool_calls", None) or ()
    expected_calls = getattr(validated, "tool_calls", None) or ()
    for one, other in [(read, validated), *zip(calls, expected_calls, strict=True)]:
        assert sys.getsizeof(vars(one)) <= sys.getsizeof(vars(other))


@pytest.mark.parametrize(("name", "raw"), PLAIN, ids=[n for n, _ in PLAIN])
def test_a_copy_of_a_plain_message_takes_new_keys_and_estimates_afresh(name, raw):
    read = _plain_message(raw)
    assert read is not None
    longer = "y" * 41

    copied = read.model_copy(update={"content": longer})
    vars(copied)["added"] = 1  # a key the shared table does not hold

    assert (
        copied.approx_tokens == type(read)(**{**read.model_dump(), "content": longer}).approx_tokens
    )
    assert (copied.content, vars(copied)["added"], read.content) == (longer, 1, raw["content"])
    assert vars(read).keys() == vars(_validated(raw)).keys() | {"approx_tokens"}


# -- generated wire messages: both readers agree on every shape ------------------------------

_TEXTS = st.sampled_from(["", "x", "Fix the bug.", '{"path": "a.py"}', "é\n\t\"'", "{}"])
_IDS = st.sampled_from(["call_1", "c", "call_2", "call_3", "", None, 3])
_ODD = st.sampled_from([None, 3, 2.5, True, [], {}, ["x"], {"a": 1}])
"""Values of the wrong type for any field the plain reader reads."""


def _maybe(draw: st.DrawFn, key: str, values: st.SearchStrategy[object], into: dict) -> None:
    if draw(st.booleans()):
        into[key] = draw(values)


@st.composite
def _parts(draw: st.DrawFn) -> list[object]:
    kinds = st.sampled_from(["text", "image", "refusal", "odd"])
    parts: list[object] = []
    for kind in draw(st.lists(kinds, max_size=3)):
        if kind == "text":
            parts.append({"type": "text", "text": draw(_TEXTS)})
        elif kind == "image":
            image = {"url": "data:image/png;base64,AAAA"}
            _maybe(draw, "detail", st.sampled_from(["low", "high", "auto"]), image)
            parts.append({"type": "image_url", "image_url": image})
        elif kind == "refusal":
            parts.append({"type": "refusal", "refusal": draw(_TEXTS)})
        else:
            parts.append(draw(_ODD))
    return parts


def _changed(draw: st.DrawFn, plain: dict[str, object], keys: list[str]) -> dict[str, object]:
    """``plain``, or it with one key dropped, given a value of the wrong type, or added."""
    raw = dict(plain)
    change = draw(st.sampled_from(["none"] * 6 + ["drop", "odd", "add"]))
    if change == "drop" and raw:
        del raw[draw(st.sampled_from(sorted(raw)))]
    elif change == "odd":
        raw[draw(st.sampled_from(keys))] = draw(_ODD)
    elif change == "add":
        raw[draw(st.sampled_from(["index", "strict", "timestamp", "cache_control"]))] = 0
    return raw


@st.composite
def _call(draw: st.DrawFn) -> dict[str, object]:
    function = {
        "name": draw(st.sampled_from(["read_file", "shell", ""])),
        "arguments": draw(_TEXTS),
    }
    call = {
        "id": draw(_IDS),
        "type": draw(st.sampled_from(["function"] * 4 + ["custom"])),
        "function": _changed(draw, function, ["name", "arguments"]),
    }
    return _changed(draw, call, ["id", "type", "function"])


_GOOD_IDS = st.sampled_from(["call_1", "c", "call_2"])


@st.composite
def _plain_wire(draw: st.DrawFn) -> dict[str, object]:
    """A message of the plain shape (text or null content, plain calls, a tool result)."""
    role = draw(st.sampled_from(["system", "user", "assistant", "tool"]))
    if role == "tool":
        return {"role": role, "tool_call_id": draw(_GOOD_IDS), "content": draw(_TEXTS)}
    raw: dict[str, object] = {"role": role, "content": draw(st.one_of(_TEXTS, st.none()))}
    if role == "assistant" and draw(st.booleans()):
        function = {
            "name": draw(st.sampled_from(["read_file", "shell"])),
            "arguments": draw(_TEXTS),
        }
        call = {"id": draw(_GOOD_IDS), "type": "function", "function": function}
        raw["tool_calls"] = [call] * draw(st.integers(0, 2))
    return raw


@st.composite
def _wire_message(draw: st.DrawFn) -> dict[str, object]:
    """An OpenAI chat message: of the plain shape, or with one thing changed."""
    if draw(st.booleans()):
        return draw(_plain_wire())
    roles = ["system", "user", "assistant", "assistant", "tool", "tool", "developer", "bot"]
    role = draw(st.sampled_from(roles))
    content = draw(st.one_of(_TEXTS, _TEXTS, _TEXTS, st.none(), _parts()))
    raw: dict[str, object] = {"role": role, "content": content}
    if role == "tool":
        raw["tool_call_id"] = draw(_IDS)
    if role == "assistant" and draw(st.booleans()):
        raw["tool_calls"] = draw(st.lists(_call(), max_size=3))
    extra = st.sampled_from(["name", "refusal", "is_error", "droppable", "usage", "timestamp"])
    if draw(st.integers(0, 4)) == 0:
        key = draw(extra)
        raw[key] = {"usage": {"total_tokens": 5}, "is_error": True, "droppable": True}.get(
            key, draw(_TEXTS)
        )
    return _changed(draw, raw, sorted(raw))


def _outcome(read: Callable[[], list[ContextMessage]]) -> object:
    """The messages read, their estimates and written form; or the error's message."""
    try:
        messages = read()
    except InvalidMessage as error:
        return str(error)
    return messages, [m.approx_tokens for m in messages], [message_to_openai(m) for m in messages]


@settings(max_examples=600, deadline=None)
@given(st.lists(_wire_message(), min_size=1, max_size=4))
def test_generated_messages_read_as_the_general_reader_reads_them(raws):
    # what the transcript reader builds (the plain reader first) against the general
    # reader alone: the same messages, estimates and written form, or the same error
    actual = _outcome(lambda: messages_from_openai(raws))

    assert actual == _outcome(lambda: [message_from_openai(i, r) for i, r in enumerate(raws)])
