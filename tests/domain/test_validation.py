"""Provider-validity checks."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forge_domain import Context, InvalidTranscript, Role, TextMessage, ToolCall, ToolResult
from forge_domain.formats import Violation, ensure_valid, find_violations, is_valid
from forge_domain.testing import pattern, pattern_messages
from tests.profiles import examples

PATTERN_CASES = [
    ("sutrua", "openai", []),
    ("suTrra", "openai", []),
    ("suTeru", "openai", []),
    ("sua", "anthropic", []),
    ("suta", "openai", [(2, "unanswered_tool_call")]),
    ("sut", "openai", [(2, "unanswered_tool_call")]),
    ("suTra", "openai", [(2, "unanswered_tool_call")]),
    ("sur", "openai", [(2, "orphan_tool_result")]),
    ("sutrr", "openai", [(4, "duplicate_tool_result")]),
    ("sutrar", "openai", [(5, "orphan_tool_result")]),
    ("sasu", "openai", [(2, "system_not_first")]),
    ("sa", "openai", []),
    ("sa", "anthropic", [(1, "first_turn_not_user")]),
    ("s", "anthropic", [(0, "no_user_turn")]),
    ("", "openai", [(0, "no_messages")]),
    ("", "anthropic", [(0, "no_messages")]),
]


@pytest.mark.parametrize(
    ("letters", "dialect", "expected"),
    PATTERN_CASES,
    ids=[f"{case[0] or 'empty'}-{case[1]}" for case in PATTERN_CASES],
)
def test_find_violations_patterns(letters, dialect, expected):
    actual = [(v.index, v.rule) for v in find_violations(pattern(letters), dialect)]
    assert actual == expected
    assert is_valid(pattern(letters), dialect) is (expected == [])


def _call(call_id: str) -> ToolCall:
    return ToolCall(id=call_id, name="bash", arguments="{}")


HANDMADE = [
    (
        "duplicate call id across turns",
        [
            TextMessage.user("go"),
            TextMessage.assistant(None, (_call("a"),)),
            ToolResult.of("a", "ok"),
            TextMessage.assistant(None, (_call("a"),)),
            ToolResult.of("a", "ok"),
        ],
        [(3, "duplicate_tool_call_id")],
    ),
    (
        "duplicate call id in one message",
        [
            TextMessage.user("go"),
            TextMessage.assistant(None, (_call("a"), _call("a"))),
            ToolResult.of("a", "ok"),
        ],
        [(1, "duplicate_tool_call_id")],
    ),
    (
        "user message with answered tool calls",
        [
            TextMessage.model_validate(
                {"role": "user", "content": "x", "tool_calls": [_call("z")]}
            ),
            ToolResult.of("z", "ok"),
        ],
        [(0, "tool_calls_on_non_assistant")],
    ),
    (
        "user message with an empty list of tool calls",
        [TextMessage.model_validate({"role": "user", "content": "x", "tool_calls": []})],
        [(0, "tool_calls_on_non_assistant")],
    ),
    (
        "empty user message",
        [TextMessage.user("   "), TextMessage.assistant("hi")],
        [(0, "empty_message")],
    ),
    (
        "assistant with neither content nor calls",
        [TextMessage.user("go"), TextMessage.assistant(None)],
        [(1, "empty_message")],
    ),
    (
        "tool result with an empty list of parts",
        [
            TextMessage.user("go"),
            TextMessage.assistant(None, (_call("a"),)),
            ToolResult.model_validate({"call_id": "a", "content": []}),
        ],
        [(2, "empty_message")],
    ),
    (
        "user message with tool calls",
        [TextMessage.model_validate({"role": "user", "content": "x", "tool_calls": [_call("z")]})],
        [(0, "tool_calls_on_non_assistant"), (0, "unanswered_tool_call")],
    ),
    (
        "result answered twice",
        [
            TextMessage.user("go"),
            TextMessage.assistant(None, (_call("a"),)),
            ToolResult.of("a", "ok"),
            ToolResult.of("a", "again"),
        ],
        [(3, "duplicate_tool_result")],
    ),
]


@pytest.mark.parametrize(
    ("messages", "expected"), [case[1:] for case in HANDMADE], ids=[case[0] for case in HANDMADE]
)
def test_find_violations_handmade(messages, expected):
    actual = sorted((v.index, v.rule) for v in find_violations(Context(messages)))
    assert actual == sorted(expected)
    assert is_valid(Context(messages)) is (expected == [])


def test_ensure_valid_lists_every_violation():
    with pytest.raises(InvalidTranscript) as caught:
        ensure_valid(pattern("sutasr"))
    assert caught.value.violations == (
        "messages[2]: tool call 'call_3' has no tool result before the next message",
        "messages[4]: system message after the conversation started",
        "messages[5]: tool result for 'call_3' does not answer a call of the assistant message "
        "right before it",
    )


def test_violation_str_names_the_index():
    assert str(Violation(index=4, rule="x", message="bad")) == "messages[4]: bad"


# is_valid must agree with find_violations on any message sequence, valid or not.
_IDS = ("c1", "c2", "c3")
_MESSAGES = st.one_of(
    st.builds(TextMessage.system, st.sampled_from(["sys", " "])),
    st.builds(TextMessage.user, st.sampled_from(["hi", "", "  \n"])),
    st.builds(
        TextMessage,
        role=st.sampled_from(list(Role)),
        content=st.sampled_from(["text", "", None, ()]),
        tool_calls=st.none()
        | st.lists(st.sampled_from(_IDS), max_size=2).map(
            lambda ids: tuple(ToolCall(id=i, name="read") for i in ids)
        ),
    ),
    st.builds(ToolResult.of, st.sampled_from(_IDS), st.just("out")),
)


_VALID_PATTERNS = st.lists(st.sampled_from(["u", "a", "tr", "Trr", "te", "ua"]), max_size=6).map(
    lambda turns: "su" + "".join(turns)
)


@st.composite
def _near_valid_patterns(draw: st.DrawFn) -> str:
    """A valid pattern with one letter inserted, removed or replaced (or none)."""
    letters = draw(_VALID_PATTERNS)
    at = draw(st.integers(0, len(letters)))
    new = draw(st.sampled_from(["", *"sutTre"]))
    cut = draw(st.integers(0, 1))
    return letters[:at] + new + letters[at + cut :]


@settings(max_examples=examples(400))
@given(
    st.lists(_MESSAGES, max_size=9)
    | _VALID_PATTERNS.map(pattern_messages)
    | _near_valid_patterns().map(pattern_messages),
    st.sampled_from(["openai", "anthropic"]),
)
def test_is_valid_agrees_with_find_violations(messages, dialect):
    context = Context(messages)
    assert is_valid(context, dialect) is (find_violations(context, dialect) == [])
