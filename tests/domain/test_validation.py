"""Provider-validity checks."""

from __future__ import annotations

import pytest

from forge_domain import Context, InvalidTranscript, TextMessage, ToolCall, ToolResult
from forge_domain.testing import pattern
from forge_domain.validation import Violation, ensure_valid, find_violations

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
    ("", "openai", []),
]


@pytest.mark.parametrize(
    ("letters", "dialect", "expected"),
    PATTERN_CASES,
    ids=[f"{case[0] or 'empty'}-{case[1]}" for case in PATTERN_CASES],
)
def test_find_violations_patterns(letters, dialect, expected):
    actual = [(v.index, v.rule) for v in find_violations(pattern(letters), dialect)]
    assert actual == expected


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
