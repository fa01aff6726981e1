"""ToolCatalog: classifying calls of forge, Claude Code, Codex, OpenHands, SWE-agent, Hermes."""

from __future__ import annotations

import json

import pytest

from forge_domain import ToolCall, ToolResult
from forge_domain.tools import (
    FetchTool,
    FileReadTool,
    FileRemoveTool,
    FileUpdateTool,
    GenericTool,
    McpTool,
    SearchTool,
    SemanticQuery,
    SemSearchTool,
    ShellTool,
    TaskTool,
    Todo,
    TodoChange,
    TodoReadTool,
    TodoWriteTool,
    ToolCatalog,
    UndoTool,
)

CATALOG = ToolCatalog.default()


def _call(name: str, arguments: object) -> ToolCall:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return ToolCall(id="c", name=name, arguments=text)


CLASSIFY_ROWS = [
    # forge
    ("read", {"file_path": "/a"}, None, FileReadTool(path="/a")),
    (" READ ", {"path": "/a"}, None, FileReadTool(path="/a")),
    ("write", {"file_path": "/a"}, None, GenericTool(name="write", arguments='{"file_path":"/a"}')),
    ("patch", {"path": "/a", "search": "x", "content": "y"}, None, FileUpdateTool(path="/a")),
    ("multi_patch", {"file_path": "/a", "edits": []}, None, FileUpdateTool(path="/a")),
    ("remove", {"path": "/a"}, None, FileRemoveTool(path="/a")),
    ("undo", {"path": "/a"}, None, UndoTool(path="/a")),
    ("fs_search", {"pattern": "p", "type": "py"}, None, SearchTool(pattern="py")),
    ("fetch", {"url": "https://x"}, None, FetchTool(url="https://x")),
    ("todo_read", {}, None, TodoReadTool()),
    ("task", {"tasks": ["t"], "agent_id": "sage"}, None, TaskTool(agent_id="sage")),
    (
        "sem_search",
        {"queries": [{"query": "q", "use_case": "u"}]},
        None,
        SemSearchTool(queries=(SemanticQuery(query="q", use_case="u"),)),
    ),
    (
        "sem_search",
        {"queries": [{"query": "q"}]},
        None,
        GenericTool(name="sem_search", arguments='{"queries":[{"query":"q"}]}'),
    ),
    # Claude Code
    ("Read", {"file_path": "/a", "limit": 10}, None, FileReadTool(path="/a")),
    ("Write", {"file_path": "/a", "content": ""}, None, FileUpdateTool(path="/a")),
    (
        "Edit",
        {"file_path": "/a", "old_string": "x", "new_string": "y"},
        None,
        FileUpdateTool(path="/a"),
    ),
    ("MultiEdit", {"file_path": "/a", "edits": []}, None, FileUpdateTool(path="/a")),
    ("Bash", {"command": "make"}, None, ShellTool(command="make")),
    ("Grep", {"pattern": "TODO", "path": "src"}, None, SearchTool(pattern="TODO")),
    ("Glob", {"pattern": "**/*.py"}, None, SearchTool(pattern="**/*.py")),
    ("WebFetch", {"url": "https://x", "prompt": "p"}, None, FetchTool(url="https://x")),
    (
        "Task",
        {"description": "d", "prompt": "p", "subagent_type": "explorer"},
        None,
        TaskTool(agent_id="explorer"),
    ),
    (
        "TodoWrite",
        {"todos": [{"content": "A", "status": "pending", "activeForm": "Doing A"}]},
        None,
        TodoWriteTool(
            changes=(TodoChange(todo=Todo(content="A", status="pending"), kind="added"),)
        ),
    ),
    # Codex
    ("shell", {"command": ["bash", "-lc", "ls -la"]}, None, ShellTool(command="ls -la")),
    ("shell", {"command": ["rg", "foo bar"]}, None, ShellTool(command="rg 'foo bar'")),
    (
        "shell",
        {"command": ["apply_patch", "*** Begin Patch\n*** Update File: a.py\n*** End Patch"]},
        None,
        FileUpdateTool(path="a.py"),
    ),
    (
        "apply_patch",
        {"input": "*** Begin Patch\n*** Delete File: b.py\n*** End Patch"},
        None,
        FileRemoveTool(path="b.py"),
    ),
    (
        "apply_patch",
        {"input": "no files here"},
        None,
        GenericTool(name="apply_patch", arguments='{"input":"no files here"}'),
    ),
    (
        "update_plan",
        {"plan": [{"step": "S", "status": "in_progress"}]},
        None,
        TodoWriteTool(
            changes=(TodoChange(todo=Todo(content="S", status="in_progress"), kind="added"),)
        ),
    ),
    # OpenHands
    (
        "str_replace_editor",
        {"command": "view", "path": "/r/a.c"},
        None,
        FileReadTool(path="/r/a.c"),
    ),
    (
        "str_replace_editor",
        {"command": "create", "path": "/r/a.c", "file_text": ""},
        None,
        FileUpdateTool(path="/r/a.c"),
    ),
    (
        "str_replace_editor",
        {"command": "str_replace", "path": "/r/a.c"},
        None,
        FileUpdateTool(path="/r/a.c"),
    ),
    (
        "str_replace_editor",
        {"command": "insert", "path": "/r/a.c"},
        None,
        FileUpdateTool(path="/r/a.c"),
    ),
    (
        "str_replace_editor",
        {"command": "undo_edit", "path": "/r/a.c"},
        None,
        UndoTool(path="/r/a.c"),
    ),
    (
        "str_replace_editor",
        {"command": "explode", "path": "/r/a.c"},
        None,
        GenericTool(name="str_replace_editor", arguments='{"command":"explode","path":"/r/a.c"}'),
    ),
    ("execute_bash", {"command": "make test"}, None, ShellTool(command="make test")),
    ("think", {"thought": "hmm"}, None, GenericTool(name="think", arguments='{"thought":"hmm"}')),
    # SWE-agent
    ("open", {"path": "setup.py", "line_number": 3}, None, FileReadTool(path="setup.py")),
    ("create", {"filename": "r.py"}, None, FileUpdateTool(path="r.py")),
    (
        "edit",
        {"search": "a", "replace": "b"},
        "[File: /t/src/f.py (1997 lines total)]\n1:x",
        FileUpdateTool(path="/t/src/f.py"),
    ),
    (
        "edit",
        {"search": "a", "replace": "b"},
        None,
        GenericTool(name="edit", arguments='{"search":"a","replace":"b"}'),
    ),
    ("find_file", {"file_name": "fields.py", "dir": "src"}, None, SearchTool(pattern="fields.py")),
    ("search_dir", {"search_term": "TimeDelta"}, None, SearchTool(pattern="TimeDelta")),
    ("submit", {}, None, GenericTool(name="submit")),
    # Hermes
    ("read_file", {"path": "a.py", "offset": 1}, None, FileReadTool(path="a.py")),
    ("write_file", {"path": "a.py", "content": "x"}, None, FileUpdateTool(path="a.py")),
    (
        "patch",
        {"mode": "replace", "path": "a.py", "old_string": "x", "new_string": "y"},
        None,
        FileUpdateTool(path="a.py"),
    ),
    (
        "patch",
        {"mode": "patch", "patch": "*** Begin Patch\n*** Add File: n.py\n*** End Patch"},
        None,
        FileUpdateTool(path="n.py"),
    ),
    ("terminal", {"command": "npm test"}, None, ShellTool(command="npm test")),
    ("search_files", {"pattern": "*.py", "target": "files"}, None, SearchTool(pattern="*.py")),
    ("todo", {}, None, TodoReadTool()),
    # newer Codex, Gemini CLI, Cline
    ("exec_command", {"cmd": "ls"}, None, ShellTool(command="ls")),
    ("run_shell_command", {"command": "ls"}, None, ShellTool(command="ls")),
    ("read_file", {"absolute_path": "/a"}, None, FileReadTool(path="/a")),
    ("write_file", {"file_path": "/a", "content": ""}, None, FileUpdateTool(path="/a")),
    ("replace", {"file_path": "/a", "old_string": "x"}, None, FileUpdateTool(path="/a")),
    ("write_to_file", {"path": "a", "content": ""}, None, FileUpdateTool(path="a")),
    ("search_files", {"path": ".", "regex": "TODO"}, None, SearchTool(pattern="TODO")),
    # known tools whose arguments do not fit
    ("shell", {"command": 5}, None, GenericTool(name="shell", arguments='{"command":5}')),
    (
        "sem_search",
        {"queries": "q"},
        None,
        GenericTool(name="sem_search", arguments='{"queries":"q"}'),
    ),
    (
        "sem_search",
        {"queries": ["q"]},
        None,
        GenericTool(name="sem_search", arguments='{"queries":["q"]}'),
    ),
    ("todo_write", {"todos": "x"}, None, GenericTool(name="todo_write", arguments='{"todos":"x"}')),
    (
        "todo_write",
        {"todos": ["x"]},
        None,
        GenericTool(name="todo_write", arguments='{"todos":["x"]}'),
    ),
    # unknown
    ("mcp_github_create_issue", {"title": "t"}, None, McpTool(name="mcp_github_create_issue")),
    ("sage", {"tasks": ["x"]}, None, GenericTool(name="sage", arguments='{"tasks":["x"]}')),
    ("weird", "[1, 2]", None, GenericTool(name="weird", arguments="[1,2]")),
    (
        "weird",
        {"text": "x" * 200},
        None,
        GenericTool(name="weird", arguments='{"text":"' + "x" * 110 + "…"),
    ),
]


@pytest.mark.parametrize(
    ("name", "arguments", "output", "expected"),
    CLASSIFY_ROWS,
    ids=[f"{i}-{row[0].strip()}" for i, row in enumerate(CLASSIFY_ROWS)],
)
def test_tool_catalog_classifies_known_agents(name, arguments, output, expected):
    actual = CATALOG.classify(_call(name, arguments), output=output)
    assert actual == (expected,)


def test_tool_catalog_patch_with_move_and_several_files():
    patch = (
        "*** Begin Patch\n*** Update File: a.py\n*** Move to: b.py\n@@\n-x\n+y\n"
        "*** Add File: c.py\n+z\n*** End Patch"
    )
    actual = CATALOG.classify(_call("apply_patch", {"input": patch}))
    expected = (
        FileUpdateTool(path="a.py"),
        FileUpdateTool(path="b.py"),
        FileUpdateTool(path="c.py"),
    )
    assert actual == expected


def test_tool_catalog_todo_write_diffs_against_previous_list():
    before = (Todo(content="A", status="pending"), Todo(content="B", status="pending"))
    call = _call(
        "todo",
        {
            "todos": [
                {"id": "1", "content": "A", "status": "completed"},
                {"id": "2", "content": "B", "status": "cancelled"},
            ]
        },
    )
    actual = CATALOG.classify(call, todos=before)
    expected = (
        TodoWriteTool(
            changes=(
                TodoChange(todo=Todo(content="A", status="completed"), kind="updated"),
                TodoChange(todo=Todo(content="B", status="pending"), kind="removed"),
            )
        ),
    )
    assert actual == expected


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        (
            "TodoWrite",
            {"todos": [{"content": "A", "status": "pending"}]},
            (Todo(content="A", status="pending"),),
        ),
        ("TodoWrite", {"todos": [{"content": "A", "status": "someday"}]}, None),
        ("todo", {}, None),
        ("read", {"file_path": "/a"}, None),
        ("todo_write", "not json", None),
        ("unknown", {"todos": []}, None),
    ],
    ids=["claude", "bad-status", "hermes-read", "not-todo", "bad-json", "unknown"],
)
def test_tool_catalog_written_todos(name, arguments, expected):
    actual = CATALOG.written_todos(_call(name, arguments))
    assert actual == expected


FAILURE_ROWS = [
    ("<returncode>0</returncode>\n<output>\nok\n</output>", False),
    ("<returncode>1</returncode>\n<output>\n</output>", True),
    ("<returncode>0</returncode>\n<output>\nTraceback (most recent call last):\n</output>", False),
    ("total 4\n[Command finished with exit code 0]", False),
    ("boom\n[Command finished with exit code 2]", True),
    ("boom\n[The command completed with exit code 1.]", True),
    ("ERROR:\nNo replacement was performed", True),
    ("Ran into [Errno 2] No such file or directory: '/w/h.py'", True),
    ("Invalid `path` parameter: hello.py. The path should be an absolute path", True),
    ('  File "x.py", line 1\nTraceback (most recent call last):\nValueError', True),
    ("All tests passed. No ERROR: found", False),
    ("", False),
]


@pytest.mark.parametrize(
    ("output", "expected"), FAILURE_ROWS, ids=[str(i) for i in range(len(FAILURE_ROWS))]
)
def test_tool_catalog_reads_failure_from_output(output, expected):
    actual = CATALOG.has_failed(ToolResult.of("c", output))
    assert actual is expected


def test_tool_catalog_error_flag_always_fails():
    actual = CATALOG.model_copy(update={"failure_inference": "none"}).has_failed(
        ToolResult.failed("c", "ok")
    )
    assert actual is True
