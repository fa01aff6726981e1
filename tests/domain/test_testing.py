"""The message-pattern helpers themselves."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_domain import InvalidPattern, TextMessage, ToolCall, ToolResult
from forge_domain.testing import PATTERN_LETTERS, bracket, pattern, pattern_of


@given(st.text(alphabet=PATTERN_LETTERS, max_size=30))
def test_pattern_of_inverts_pattern(letters):
    actual = pattern_of(pattern(letters))
    assert actual == letters


@pytest.mark.parametrize(
    ("letters", "position"),
    [("x", 0), ("suax", 3), ("su a", 2), ("S", 0)],
    ids=["first", "last", "space", "upper-s"],
)
def test_pattern_rejects_unknown_letters_naming_the_position(letters, position):
    with pytest.raises(InvalidPattern) as caught:
        pattern(letters)
    actual = (caught.value.pattern, caught.value.position, str(caught.value))
    expected = (
        letters,
        position,
        f"unknown letter {letters[position]!r} at position {position} of pattern {letters!r}",
    )
    assert actual == expected


def test_pattern_builds_forge_messages():
    read = '{"path":"/test/path"}'
    actual = pattern("tTrrer").messages
    expected = (
        TextMessage.assistant("Message 1", (ToolCall(id="call_1", name="read", arguments=read),)),
        TextMessage.assistant(
            "Message 2",
            (
                ToolCall(id="call_2_1", name="read", arguments=read),
                ToolCall(id="call_2_2", name="read", arguments=read),
            ),
        ),
        ToolResult(call_id="call_1", name="read", content='{"content":"File content"}'),
        ToolResult(call_id="call_2_1", name="read", content='{"content":"File content"}'),
        ToolResult(
            call_id="call_2_2", name="read", content='{"content":"File content"}', is_error=True
        ),
        ToolResult(call_id="call_2_2", name="read", content='{"content":"File content"}'),
    )
    assert actual == expected


@pytest.mark.parametrize(
    ("letters", "span", "expected"),
    [("suaaau", (2, 5), "su[aaau]"), ("sua", None, "sua"), ("ua", (1, 1), "u[a]")],
    ids=["to-end", "none", "single"],
)
def test_bracket(letters, span, expected):
    actual = bracket(letters, span)
    assert actual == expected
