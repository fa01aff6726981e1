"""TOOL_KIND_TABLE: each summary tool kind is defined once; the rest is derived from it."""

from __future__ import annotations

import json
from typing import get_args

import pytest
from pydantic import BaseModel

from forge_domain import ToolCall
from forge_domain.tools import (
    FILE_CHANGING_KINDS,
    TOOL_KIND_TABLE,
    TOOL_KINDS,
    FileTool,
    ShellTool,
    SummaryTool,
    ToolCatalog,
    ToolKind,
    ToolKindDefinition,
    ToolSpec,
)

ROW_IDS = [row.kind for row in TOOL_KIND_TABLE]

ARGUMENTS = {
    "path": lambda row: {row.args[0]: "src/a.py"},
    "value": lambda row: {row.args[0]: "x"},
    "command": lambda row: {row.args[0]: "ls"},
    "queries": lambda row: {row.args[0]: [{"query": "q", "use_case": "u"}]},
    "todos": lambda row: {row.args[0]: [{"content": "c", "status": "pending"}]},
    "nothing": lambda row: {},
    "tool_name": lambda row: {},
    "excerpt": lambda row: {"x": 1},
}
"""Per way of reading a call, arguments a spec naming only the kind accepts."""


def test_tool_kind_table_lists_the_summary_tool_union_in_order():
    actual = tuple(row.model for row in TOOL_KIND_TABLE)
    expected = get_args(get_args(SummaryTool)[0])
    assert actual == expected


def test_tool_kinds_are_the_table_kinds():
    actual = (TOOL_KINDS, get_args(ToolKind))
    expected = (tuple(row.kind for row in TOOL_KIND_TABLE),) * 2
    assert actual == expected


def test_file_tool_is_every_kind_that_reads_a_path():
    actual = set(get_args(FileTool))
    expected = {row.model for row in TOOL_KIND_TABLE if row.reading == "path"}
    assert actual == expected


def test_file_changing_kinds_are_the_rows_that_change_a_file():
    actual = FILE_CHANGING_KINDS
    expected = {row.kind for row in TOOL_KIND_TABLE if row.is_file_change}
    assert actual == expected == {"file_update", "file_remove", "undo"}


@pytest.mark.parametrize("row", TOOL_KIND_TABLE, ids=ROW_IDS)
def test_every_kind_has_a_catalog_builder(row):
    catalog = ToolCatalog.from_data({"t": {"kind": row.kind}})
    call = ToolCall(id="c", name="t", arguments=json.dumps(ARGUMENTS[row.reading](row)))
    actual = [(tool.kind, tool.definition) for tool in catalog.classify(call)]
    assert actual == [(row.kind, row)]


@pytest.mark.parametrize("row", TOOL_KIND_TABLE, ids=ROW_IDS)
def test_every_kind_that_reads_arguments_has_default_ones(row):
    actual = (ToolSpec(kind=row.kind).resource_args, bool(row.args))
    expected = (row.args, row.reading not in ("nothing", "tool_name", "excerpt"))
    assert actual == expected


def test_tool_kind_definition_derives_kind_and_resource_from_the_model():
    actual = ToolKindDefinition(ShellTool, "Execute", "command", ("command",))
    expected = ("shell", ("command",), "command")
    assert (actual.kind, actual.shown, actual.resource) == expected


def test_tool_kind_definition_rejects_a_model_without_a_kind():
    class NoKind(BaseModel):
        path: str

    with pytest.raises(ValueError, match="NoKind needs a kind literal with a default"):
        ToolKindDefinition(NoKind, "Read", "path")  # type: ignore[arg-type]  # the point


def test_tool_kind_definition_rejects_a_file_change_that_reads_no_path():
    with pytest.raises(ValueError, match="reads a path, got 'command'"):
        ToolKindDefinition(ShellTool, "Execute", "command", is_file_change=True)
