"""ToolCatalog.extended: users add tools as plain data (as loaded from YAML)."""

from __future__ import annotations

import json

import pytest
import yaml

from forge_domain import InvalidConfig, InvalidToolSpec, ToolCall
from forge_domain.tools import (
    FileReadTool,
    FileUpdateTool,
    GenericTool,
    McpTool,
    ShellTool,
    ToolCatalog,
)


def _call(name: str, arguments: object) -> ToolCall:
    return ToolCall(id="c", name=name, arguments=json.dumps(arguments))


def test_tool_catalog_extended_adds_a_reader():
    catalog = ToolCatalog.default().extended(
        {"my_reader": {"kind": "file_read", "path_arg": "filename"}}
    )
    actual = catalog.classify(_call("my_reader", {"filename": "a.txt"}))
    assert actual == (FileReadTool(path="a.txt"),)


def test_tool_catalog_extended_replaces_a_default_entry():
    catalog = ToolCatalog.default().extended({"Bash": {"kind": "mcp"}})
    actual = catalog.classify(_call("bash", {"command": "ls"}))
    assert actual == (McpTool(name="bash"),)


def test_tool_catalog_extended_leaves_the_original_unchanged():
    original = ToolCatalog.default()
    original.extended({"bash": {"kind": "generic"}})
    actual = original.classify(_call("bash", {"command": "ls"}))
    assert actual == (ShellTool(command="ls"),)


def test_tool_catalog_loads_alternatives_from_yaml():
    data = yaml.safe_load(
        """
        editor:
          - {kind: file_read, when: {op: view}, path_arg: file}
          - {kind: file_update, when: {op: write}, args: [file, target], required: [file|target]}
        runner: {kind: shell, command_arg: [cmd, command]}
        """
    )
    catalog = ToolCatalog.from_data(data)
    actual = [
        catalog.classify(_call("editor", {"op": "view", "file": "a"})),
        catalog.classify(_call("editor", {"op": "write", "target": "b"})),
        catalog.classify(_call("editor", {"op": "delete", "file": "c"})),
        catalog.classify(_call("runner", {"command": "ls"})),
    ]
    expected = [
        (FileReadTool(path="a"),),
        (FileUpdateTool(path="b"),),
        (GenericTool(name="editor", arguments='{"op":"delete","file":"c"}'),),
        (ShellTool(command="ls"),),
    ]
    assert actual == expected


def test_tool_catalog_path_from_output():
    catalog = ToolCatalog.from_data(
        {"touch": {"kind": "file_update", "path_from_output": r"wrote (\S+)"}}
    )
    actual = catalog.classify(_call("touch", {}), output="ok, wrote /tmp/x.txt")
    assert actual == (FileUpdateTool(path="/tmp/x.txt"),)


INVALID_ROWS = [
    ({"t": "file_read"}, "expected a mapping"),
    ({"t": {"kind": "teleport"}}, "kind must be one of"),
    ({"t": {"kind": "file_read", "pth_arg": "p"}}, r"unknown key\(s\) pth_arg"),
    ({"t": {"kind": "file_read", "path_arg": 3}}, "path_arg must be an argument name"),
    ({"t": {"kind": "file_read", "required": [""]}}, "required must be an argument name"),
    ({"t": {"kind": "file_read", "when": {"mode": 1}}}, "when must map argument names to strings"),
    ({"t": {"kind": "file_read", "format": "diff"}}, "format must be 'value' or 'patch'"),
    ({"t": {"kind": "file_read", "path_from_output": "("}}, "path_from_output is not a regex"),
    ({"t": {"kind": "file_read", "path_from_output": "x"}}, "needs a capture group"),
    ({"t": {"kind": "todo_write", "content_key": ""}}, "content_key must be a non-empty string"),
    ({"t": []}, "empty list of alternatives"),
    ({" ": {"kind": "shell"}}, "tool name must be a non-empty string"),
]


@pytest.mark.parametrize(("data", "message"), INVALID_ROWS, ids=[r[1][:24] for r in INVALID_ROWS])
def test_tool_catalog_rejects_malformed_entries(data, message):
    with pytest.raises(InvalidToolSpec, match=message) as caught:
        ToolCatalog.default().extended(data)
    assert isinstance(caught.value, InvalidConfig)
    assert caught.value.tool == next(iter(data))


def test_tool_catalog_default_is_shared():
    assert ToolCatalog.default() is ToolCatalog.default()


def test_tool_catalog_specs_for_unknown_tool_is_empty():
    assert ToolCatalog.default().specs_for("nope") == ()
