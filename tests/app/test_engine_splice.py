"""Splicing a summary in: a user message of its own, every tool call answered."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_app.compaction.llm._prompt import SUMMARY_PREFIX, framed, summary_body
from forge_app.compaction.llm._splice import (
    STUB_RESULT,
    sanitize_tool_pairs,
    splice_summary,
)
from forge_domain import Context, Role, TextMessage, ToolResult
from forge_domain.formats import find_violations
from forge_domain.summary import carry_reasoning
from forge_domain.testing import pattern, pattern_of

SPLICES = [
    # (id, letters, span, expected pattern): the summary is always a user message of its own
    ("after_system_before_assistant", "suaua", (1, 1), "suaua"),
    ("after_user_before_user", "suaua", (2, 2), "suuua"),
    ("after_assistant_before_assistant", "suaaa", (3, 3), "suaua"),
    ("after_system_before_user", "suaua", (1, 2), "suua"),
    ("after_the_task_before_assistant", "suauaa", (2, 4), "suua"),
    ("at_the_start_before_user", "uaua", (0, 1), "uua"),
    ("to_the_end", "suaua", (2, 4), "suu"),
    ("after_a_tool_result_before_assistant", "sutrua", (4, 4), "sutrua"),
]


@pytest.mark.parametrize(
    ("letters", "span", "expected_pattern"),
    [c[1:] for c in SPLICES],
    ids=[c[0] for c in SPLICES],
)
def test_splice_summary_is_a_user_message_of_its_own(letters, span, expected_pattern):
    fixture = pattern(letters)

    spliced = Context(splice_summary(list(fixture), span, "## Goal\nship it"))
    holders = [m for m in spliced if SUMMARY_PREFIX in m.text]
    actual = (
        pattern_of(spliced),
        [(m.role, m.text) for m in holders],
        find_violations(spliced),
    )

    assert actual == (expected_pattern, [(Role.USER, framed("## Goal\nship it"))], [])


def test_splice_summary_between_the_task_and_an_assistant_turn_leaves_that_turn_as_it_was():
    fixture = [
        TextMessage.system("sys"),
        TextMessage.user("task"),
        TextMessage.assistant("old"),
        TextMessage.user("more"),
        TextMessage.assistant("latest answer"),
    ]

    spliced = splice_summary(fixture, (2, 3), "## Goal\nship it", summary_data={"blocks": []})
    actual = [(m.role, m.text, m.summary_data) for m in spliced[1:]]

    assert actual == [
        (Role.USER, "task", None),
        (Role.USER, framed("## Goal\nship it"), {"blocks": []}),
        (Role.ASSISTANT, "latest answer", None),
    ]


def test_summary_body_reads_back_what_framed_wrote():
    fixture = framed("## Goal\nship it") + "\n\nlatest answer"

    actual = summary_body(fixture)

    assert actual == "## Goal\nship it"


def test_sanitize_tool_pairs_stubs_calls_and_drops_orphans():
    fixture = list(pattern("sutTrua"))
    fixture.insert(1, ToolResult.of("call_gone", "orphan"))

    actual = sanitize_tool_pairs(fixture)

    assert [(pattern_of(Context(actual)), [m.text for m in actual if m.text == STUB_RESULT])] == [
        ("sutrTrrua", [STUB_RESULT, STUB_RESULT, STUB_RESULT])
    ]


@given(st.text(alphabet="uatTre", max_size=25), st.data())
def test_splice_summary_output_is_always_provider_valid(letters, data):
    fixture = list(pattern("su" + letters))
    start = data.draw(st.integers(min_value=1, max_value=len(fixture) - 1))
    end = data.draw(st.integers(min_value=start, max_value=len(fixture) - 1))

    actual = find_violations(Context(splice_summary(fixture, (start, end), "## Goal\nx")))

    assert actual == []


def test_carry_reasoning_moves_the_span_s_last_reasoning_to_the_next_assistant():
    thinking = ({"type": "reasoning.text", "text": "think"},)
    span = [TextMessage.assistant("a", reasoning_details=thinking), TextMessage.user("u")]
    after = [TextMessage.user("summary"), TextMessage.assistant("b")]

    actual = [m.reasoning_details for m in carry_reasoning(after, span, after=0)]

    assert actual == [None, thinking]
