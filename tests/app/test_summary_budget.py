"""Bounding summaries: cut texts and commands visibly, drop the oldest narration with a note."""

from __future__ import annotations

import pytest

from forge_app.summary_budget import (
    COMMAND_LIMIT,
    drop_oldest_narration,
    limit_texts,
    truncate_text,
)
from forge_domain import Role
from forge_domain.summary import ContextSummary, SummaryBlock, TextItem, ToolCallItem
from forge_domain.summary_tools import ShellTool

TRUNCATE_CASES = [
    ("short", 10, "short"),
    ("abcdefghij", 10, "abcdefghij"),
    ("abcdefghijkl", 10, "abcdefghij … [truncated 2 chars]"),
    ("abc   defgh", 6, "abc … [truncated 5 chars]"),
]


@pytest.mark.parametrize(("text", "limit", "expected"), TRUNCATE_CASES)
def test_truncate_text_marks_the_cut(text, limit, expected):
    assert truncate_text(text, limit) == expected


def _shell(command: str) -> ToolCallItem:
    return ToolCallItem(id="c", tool=ShellTool(command=command), is_success=True)


def test_limit_texts_cuts_texts_and_commands():
    fixture = ContextSummary(
        blocks=(
            SummaryBlock(role=Role.USER, contents=(TextItem(text="u" * 50),)),
            SummaryBlock(role=Role.ASSISTANT, contents=(_shell("x" * (COMMAND_LIMIT + 10)),)),
        )
    )
    actual = limit_texts(fixture, 20)
    expected = ContextSummary(
        blocks=(
            SummaryBlock(role=Role.USER, contents=(TextItem(text=truncate_text("u" * 50, 20)),)),
            SummaryBlock(
                role=Role.ASSISTANT,
                contents=(_shell(truncate_text("x" * (COMMAND_LIMIT + 10), 20)),),
            ),
        )
    )
    assert actual == expected


def test_drop_oldest_narration_keeps_asks_and_calls_with_a_note():
    fixture = ContextSummary(
        blocks=(
            SummaryBlock(role=Role.USER, contents=(TextItem(text="ask " * 20),)),
            SummaryBlock(
                role=Role.ASSISTANT,
                contents=(TextItem(text="a" * 60), _shell("ls"), TextItem(text="b" * 60)),
            ),
            SummaryBlock(role=Role.ASSISTANT, contents=(TextItem(text="c" * 60),)),
        )
    )
    actual = drop_oldest_narration(fixture, 70)
    expected = ContextSummary(
        blocks=(
            SummaryBlock(role=Role.USER, contents=(TextItem(text="ask " * 20),)),
            SummaryBlock(
                role=Role.ASSISTANT,
                contents=(
                    TextItem(
                        text="[2 earlier assistant notes omitted to keep this summary bounded]"
                    ),
                    _shell("ls"),
                ),
            ),
            SummaryBlock(role=Role.ASSISTANT, contents=(TextItem(text="c" * 60),)),
        )
    )
    assert actual == expected


def test_drop_oldest_narration_under_budget_is_identity():
    fixture = ContextSummary(
        blocks=(SummaryBlock(role=Role.ASSISTANT, contents=(TextItem(text="a" * 10),)),)
    )
    assert drop_oldest_narration(fixture, 10) is fixture
