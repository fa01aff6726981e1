"""The app's per-kind behaviour comes from TOOL_KIND_TABLE: frame line, merge key, pruning
targets and the lines a budget keeps; a kind added to the table needs no edit in the app.

The one per-kind list left in the app is the omission note's ``_NOUNS`` (how an omission note
names a kind's calls); the test below checks it names every kind.
"""

from __future__ import annotations

import json
from typing import Literal

import pytest

from forge_app.compaction._pruning import _TARGET_KEYS, _target_keys
from forge_app.summary._fit_cuts import KEPT_KINDS
from forge_app.summary._frame import SummaryFrame
from forge_app.summary._omission import _NOUNS
from forge_app.summary.transformers._keep_last_operation import _key_of, operation_key
from forge_domain import Role, ToolCall
from forge_domain.summary import ContextSummary, SummaryBlock, ToolCallItem
from forge_domain.tools import TOOL_KIND_TABLE, ToolCatalog, ToolKindDefinition, ToolSpec
from forge_domain.tools._kinds import _BY_KIND, _ToolModel

FRAME = SummaryFrame()
ROW_IDS = [row.kind for row in TOOL_KIND_TABLE]


def _sample(row: ToolKindDefinition):
    """A tool of ``row``'s kind: every string field ``"x"``, every other one empty."""
    fields = row.model.model_fields
    return row.model.model_validate(
        {name: "x" if fields[name].annotation is str else () for name in row.shown}
    )


def _frame_line(tool) -> str:
    """The frame's line for one successful call of ``tool`` (built unvalidated: the tool
    may be of a kind the ``SummaryTool`` union does not hold)."""
    item = ToolCallItem.model_construct(id=None, tool=tool, is_success=True)
    block = SummaryBlock.model_construct(role=Role.ASSISTANT, contents=(item,))
    frame = FRAME.render(ContextSummary.model_construct(blocks=(block,)))
    return frame.split("### 1. Assistant\n\n")[1].split("\n")[0]


@pytest.mark.parametrize("row", TOOL_KIND_TABLE, ids=ROW_IDS)
def test_every_kind_gets_its_app_behaviour_from_its_row(row):
    tool = _sample(row)
    string_args = row.args if row.reading in ("path", "value", "command") else ()
    actual = (
        _frame_line(tool).startswith(f"**{row.label}"),
        operation_key(tool),
        set(string_args) <= set(_TARGET_KEYS),
        row.kind in KEPT_KINDS,
        row.kind in _NOUNS,
    )
    expected = (
        True,
        (row.kind, *(getattr(tool, name) for name in row.shown)) if row.is_mergeable else None,
        True,
        row.is_file_change,
        True,
    )
    assert actual == expected


SIMPLE_LINES = [
    ("file_read", "**Read:** `x`"),
    ("search", "**Search:** `x`"),
    ("mcp", "**MCP:** `x`"),
    ("todo_read", "**Read Task Plan**"),
]


@pytest.mark.parametrize(("kind", "expected"), SIMPLE_LINES, ids=[k for k, _ in SIMPLE_LINES])
def test_frame_line_of_a_simple_kind_is_its_label_and_resource(kind, expected):
    assert _frame_line(_sample(ToolKindDefinition.of(kind))) == expected


class LintTool(_ToolModel):
    """A kind that exists only in this test."""

    kind: Literal["lint"] = "lint"
    target: str


LINT = ToolKindDefinition(LintTool, "Lint", "value", ("target",))  # type: ignore[arg-type]
"""Its row; ``type: ignore``: a real kind also joins the static ``SummaryTool`` union."""


def test_a_kind_added_to_the_table_needs_no_other_edit(monkeypatch):
    monkeypatch.setitem(_BY_KIND, "lint", LINT)  # what its row in TOOL_KIND_TABLE gives
    catalog = ToolCatalog(entries={"lint": (ToolSpec.model_construct(kind="lint"),)})
    call = ToolCall(id="c", name="lint", arguments=json.dumps({"target": "src"}))
    tools = catalog.classify(call)
    key_of = _key_of(LINT)
    actual = (
        tools,
        None if key_of is None else key_of(tools[0]),
        _frame_line(tools[0]),
        "target" in _target_keys([*TOOL_KIND_TABLE, LINT]),
    )
    expected = ((LintTool(target="src"),), ("lint", "src"), "**Lint:** `src`", True)
    assert actual == expected
