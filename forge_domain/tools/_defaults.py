"""The built-in tool catalog, as the same plain data users write to extend it.

Names are matched trimmed and case-insensitively, so forge's ``read`` and Claude
Code's ``Read`` share one entry. A list holds alternatives, tried in order: the
first whose required arguments are present (and whose ``when`` holds) wins.
"""

from __future__ import annotations

from forge_domain._json import JsonObject, JsonValue

_FILE: list[JsonValue] = ["file_path", "path"]
_SWE_AGENT_FILE = r"\[File: (.+?) \(\d+ lines total\)\]"


def _editor(path_arg: str) -> list[JsonValue]:
    """OpenHands' ``str_replace_editor`` / ``file_editor``: the mode is the ``command``."""
    modes = {
        "view": "file_read",
        "create": "file_update",
        "str_replace": "file_update",
        "insert": "file_update",
        "undo_edit": "undo",
    }
    return [
        {"kind": kind, "when": {"command": command}, "path_arg": path_arg, "required": [path_arg]}
        for command, kind in modes.items()
    ]


FORGE_TOOLS: JsonObject = {
    "read": {"kind": "file_read", "path_arg": _FILE, "required": ["file_path|path"]},
    "write": {
        "kind": "file_update",
        "path_arg": _FILE,
        "required": ["file_path|path", "content"],
    },
    "patch": [
        {
            "kind": "file_update",
            "path_arg": _FILE,
            "required": ["file_path|path", "old_string|search", "new_string|content"],
        },
        {"kind": "file_update", "when": {"mode": "patch"}, "arg": "patch", "format": "patch"},
    ],
    "multi_patch": {
        "kind": "file_update",
        "path_arg": "file_path",
        "required": ["file_path", "edits"],
    },
    "remove": {"kind": "file_remove", "path_arg": "path", "required": ["path"]},
    "undo": {"kind": "undo", "path_arg": "path", "required": ["path"]},
    "shell": {"kind": "shell", "command_arg": "command", "required": ["command"]},
    "fs_search": {
        "kind": "search",
        "pattern_arg": ["glob", "type", "pattern"],
        "required": ["pattern"],
    },
    "sem_search": {"kind": "sem_search", "arg": "queries", "required": ["queries"]},
    "fetch": {"kind": "fetch", "url_arg": "url", "required": ["url"]},
    "followup": {"kind": "followup", "question_arg": "question", "required": ["question"]},
    "plan": {
        "kind": "plan",
        "name_arg": "plan_name",
        "required": ["plan_name", "version", "content"],
    },
    "skill": {"kind": "skill", "name_arg": "name", "required": ["name"]},
    "todo_write": {"kind": "todo_write", "todos_arg": "todos", "required": ["todos"]},
    "todo_read": {"kind": "todo_read"},
    "task": [
        {"kind": "task", "agent_arg": "agent_id", "required": ["tasks", "agent_id"]},
        {
            "kind": "task",
            "agent_arg": ["subagent_type", "description"],
            "required": ["subagent_type|description"],
        },
    ],
}
"""forge's built-in tools (forge-spec §9.1, required arguments included).

``task`` also accepts Claude Code's ``Task`` (``subagent_type``), ``patch`` also
Hermes' ``patch`` in ``mode: patch``; both share forge's name case-insensitively.
"""

CLAUDE_CODE_TOOLS: JsonObject = {
    "edit": {"kind": "file_update", "path_arg": "file_path", "required": ["file_path"]},
    "multiedit": {"kind": "file_update", "path_arg": "file_path", "required": ["file_path"]},
    "notebookedit": {
        "kind": "file_update",
        "path_arg": "notebook_path",
        "required": ["notebook_path"],
    },
    "bash": {"kind": "shell", "command_arg": "command", "required": ["command"]},
    "grep": {"kind": "search", "pattern_arg": "pattern", "required": ["pattern"]},
    "glob": {"kind": "search", "pattern_arg": "pattern", "required": ["pattern"]},
    "webfetch": {"kind": "fetch", "url_arg": "url", "required": ["url"]},
    "websearch": {"kind": "search", "pattern_arg": "query", "required": ["query"]},
    "todowrite": {"kind": "todo_write", "todos_arg": "todos", "required": ["todos"]},
}
"""Claude Code (``Read``, ``Write`` and ``Task`` share forge's entries)."""

CODEX_TOOLS: JsonObject = {
    "apply_patch": {
        "kind": "file_update",
        "arg": ["input", "patch"],
        "format": "patch",
        "required": ["input|patch"],
    },
    "update_plan": {
        "kind": "todo_write",
        "todos_arg": "plan",
        "content_key": "step",
        "required": ["plan"],
    },
}
"""Codex (``shell`` with an argv list shares forge's entry)."""

OPENHANDS_TOOLS: JsonObject = {
    "str_replace_editor": _editor("path"),
    "file_editor": _editor("path"),
    "execute_bash": {"kind": "shell", "command_arg": "command", "required": ["command"]},
    "terminal": {"kind": "shell", "command_arg": "command", "required": ["command"]},
    "think": {"kind": "generic"},
    "finish": {"kind": "generic"},
}
"""OpenHands (``terminal`` is also Hermes' shell)."""

SWE_AGENT_TOOLS: JsonObject = {
    "open": {"kind": "file_read", "path_arg": "path", "required": ["path"]},
    "create": {"kind": "file_update", "path_arg": "filename", "required": ["filename"]},
    "edit": {"kind": "file_update", "path_from_output": _SWE_AGENT_FILE},
    "insert": {"kind": "file_update", "path_from_output": _SWE_AGENT_FILE},
    "find_file": {"kind": "search", "pattern_arg": "file_name", "required": ["file_name"]},
    "search_dir": {"kind": "search", "pattern_arg": "search_term", "required": ["search_term"]},
    "search_file": {"kind": "search", "pattern_arg": "search_term", "required": ["search_term"]},
    "submit": {"kind": "generic"},
}
"""SWE-agent and mini-swe-agent (``bash`` shares Claude Code's entry).

``edit`` and ``insert`` act on the open file, which only their output names
(``[File: /repo/a.py (10 lines total)]``).
"""

HERMES_TOOLS: JsonObject = {
    "read_file": {
        "kind": "file_read",
        "path_arg": ["path", "absolute_path", "file_path"],
        "required": ["path|absolute_path|file_path"],
    },
    "write_file": {
        "kind": "file_update",
        "path_arg": ["path", "file_path"],
        "required": ["path|file_path"],
    },
    "search_files": {
        "kind": "search",
        "pattern_arg": ["pattern", "regex"],
        "required": ["pattern|regex"],
    },
    "todo": [
        {"kind": "todo_write", "todos_arg": "todos", "required": ["todos"]},
        {"kind": "todo_read"},
    ],
}
"""Hermes (``patch`` and ``terminal`` share entries above).

``read_file``, ``write_file`` and ``search_files`` also accept the argument names of
Gemini CLI (``absolute_path``, ``file_path``) and Cline (``regex``).
"""

OTHER_AGENT_TOOLS: JsonObject = {
    "exec_command": {
        "kind": "shell",
        "command_arg": ["cmd", "command"],
        "required": ["cmd|command"],
    },
    "shell_command": {"kind": "shell", "command_arg": "command", "required": ["command"]},
    "run_shell_command": {"kind": "shell", "command_arg": "command", "required": ["command"]},
    "execute_command": {"kind": "shell", "command_arg": "command", "required": ["command"]},
    "replace": {"kind": "file_update", "path_arg": "file_path", "required": ["file_path"]},
    "write_to_file": {"kind": "file_update", "path_arg": "path", "required": ["path"]},
    "replace_in_file": {"kind": "file_update", "path_arg": "path", "required": ["path"]},
    "search_file_content": {"kind": "search", "pattern_arg": "pattern", "required": ["pattern"]},
    "google_web_search": {"kind": "search", "pattern_arg": "query", "required": ["query"]},
}
"""Newer Codex shells (``exec_command``, ``shell_command``), Gemini CLI and Cline."""

DEFAULT_TOOLS: JsonObject = {
    **FORGE_TOOLS,
    **CLAUDE_CODE_TOOLS,
    **CODEX_TOOLS,
    **OPENHANDS_TOOLS,
    **SWE_AGENT_TOOLS,
    **HERMES_TOOLS,
    **OTHER_AGENT_TOOLS,
}
"""Every built-in entry."""

TEXT_PROTOCOL_COMMANDS: dict[str, str | None] = {
    "open": "path",
    "create": "filename",
    "edit": None,
    "insert": None,
    "find_file": "file_name",
    "search_dir": "search_term",
    "search_file": "search_term",
    "goto": None,
    "scroll_up": None,
    "scroll_down": None,
    "submit": None,
}
"""SWE-agent's commands as a text-protocol agent writes them (``open src/a.py 120`` in a
bare fence): each name and the argument its first word fills (None: none), so the catalog
classifies them as it does SWE-agent's tool calls. Any other fenced command is ``bash``."""
