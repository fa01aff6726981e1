"""A summary's JSON form (its `summary_data`, folded by a later compaction) reads back as it."""

from __future__ import annotations

import json

import pytest

from forge_domain import Context, Role
from forge_domain.summary import ContextSummary, SummaryBlock, TextItem, ToolCallItem
from forge_domain.tools import (
    FetchTool,
    FileReadTool,
    FileRemoveTool,
    FileUpdateTool,
    FollowupTool,
    GenericTool,
    McpTool,
    PlanTool,
    SearchTool,
    SemanticQuery,
    SemSearchTool,
    ShellTool,
    SkillTool,
    TaskTool,
    Todo,
    TodoChange,
    TodoReadTool,
    TodoWriteTool,
    UndoTool,
)
from tests.sessions import session_paths

TOOLS = [
    FileReadTool(path="a.py"),
    FileUpdateTool(path="b.py"),
    FileRemoveTool(path="c.py"),
    UndoTool(path="d.py"),
    ShellTool(command="ls -la"),
    SearchTool(pattern="def x"),
    SemSearchTool(queries=(SemanticQuery(query="q", use_case="why"),)),
    FetchTool(url="https://example.org"),
    FollowupTool(question="which?"),
    PlanTool(plan_name="p"),
    SkillTool(name="s"),
    TaskTool(agent_id="agent"),
    McpTool(name="mcp__x__y"),
    TodoWriteTool(changes=(TodoChange(todo=Todo(content="t", status="pending"), kind="added"),)),
    TodoReadTool(),
    GenericTool(name="think"),
    GenericTool(name="edit", arguments='{"a":1}'),
]


@pytest.mark.parametrize("tool", TOOLS, ids=[f"{i}-{tool.kind}" for i, tool in enumerate(TOOLS)])
def test_summary_json_round_trip_of_each_tool_kind(tool):
    summary = ContextSummary(
        blocks=(
            SummaryBlock(role=Role.USER, contents=(TextItem(text="go"),)),
            SummaryBlock(
                role=Role.ASSISTANT,
                contents=(
                    ToolCallItem(id="c1", tool=tool, is_success=True),
                    ToolCallItem(id=None, tool=tool, is_success=False),
                ),
            ),
        )
    )
    assert ContextSummary.model_validate(summary.model_dump(mode="json")) == summary


def test_summary_json_round_trip_covers_every_tool_class():
    assert {type(tool) for tool in TOOLS} == {
        cls for cls in ToolCallItem.model_fields["tool"].annotation.__args__
    }


@pytest.mark.parametrize("path", session_paths(), ids=lambda path: path.stem)
def test_summary_json_round_trip_of_real_sessions(path):
    context = Context.from_openai(json.loads(path.read_text(encoding="utf-8")))
    summary = ContextSummary.from_messages(list(context))
    assert ContextSummary.model_validate(summary.model_dump(mode="json")) == summary


def test_summary_json_round_trip_of_merged_lines_and_an_omission_note():
    summary = ContextSummary(
        blocks=(
            SummaryBlock(
                role=Role.ASSISTANT,
                contents=(
                    TextItem(text="[omitted: 3 commands]", omitted=(("shell", 3),)),
                    ToolCallItem(
                        id="c9",
                        tool=ShellTool(command="pytest"),
                        is_success=False,
                        earlier=3,
                        earlier_failures=1,
                    ),
                ),
            ),
        )
    )
    assert ContextSummary.model_validate(summary.model_dump(mode="json")) == summary
