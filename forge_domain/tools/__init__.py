"""What a tool call did: the tool catalog and everything it reads a call with.

* the kinds a summary records of a call (``_kinds.py``: :data:`TOOL_KIND_TABLE`, one
  row per kind) and the todo list (``_todo.py``);
* the catalog that turns a call into summary items (``_catalog.py``, its builders in
  ``_items.py``), the built-in tool specs of known agents (``_defaults.py``) and a
  user's spec (``_spec.py``);
* what a tool's output says about success or failure, and the evidence kept
  (``_outcome.py``); the files a shell command writes (``_shell_edits.py``);
* the actions and observations of text-protocol agents (``_text_protocol.py``).

The modules are private; import from this package. It imports only the message
model of :mod:`forge_domain` (never ``forge_domain.formats`` or
``forge_domain.summary``: an import-linter contract checks it).

Every exported name is imported from its module the first time it is read (PEP 562,
``forge_domain._lazy``), so importing the package builds none of its models
(plans/008-performance.md, round 6b)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from forge_domain._lazy import LazyExports

if TYPE_CHECKING:  # the names load on first use (__getattr__)
    from forge_domain.tools._catalog import CallClassifier, ToolCatalog, is_mcp_name
    from forge_domain.tools._kinds import (
        FILE_CHANGING_KINDS,
        TOOL_KIND_TABLE,
        TOOL_KINDS,
        FetchTool,
        FileReadTool,
        FileRemoveTool,
        FileTool,
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
        SummaryTool,
        TaskTool,
        TodoReadTool,
        TodoWriteTool,
        ToolKind,
        ToolKindDefinition,
        ToolReading,
        UndoTool,
    )
    from forge_domain.tools._outcome import (
        EARLIER_EVIDENCE,
        EVIDENCE_CHARS,
        EVIDENCE_RUNS,
        EVIDENCE_SEPARATOR,
        PRUNED_MARKER,
        Outcome,
        evidence_runs,
        failure_evidence,
        merged_evidence,
        output_outcome,
        output_reports_failure,
        pruned_output,
        shows_traceback,
    )
    from forge_domain.tools._shell_edits import UNKNOWN_PATH, shell_file_changes
    from forge_domain.tools._spec import ToolSpec
    from forge_domain.tools._text_protocol import (
        OBSERVATION_STARTS,
        AnsweredAction,
        TextAction,
        TextTurns,
        answers_text_action,
        looks_like_observation,
        text_action,
        text_turns,
    )
    from forge_domain.tools._todo import Todo, TodoChange, TodoStatus

_EXPORTS = LazyExports(
    "forge_domain.tools",
    {
        "forge_domain.tools._catalog": ("CallClassifier", "ToolCatalog", "is_mcp_name"),
        "forge_domain.tools._kinds": (
            "FILE_CHANGING_KINDS",
            "TOOL_KIND_TABLE",
            "TOOL_KINDS",
            "FetchTool",
            "FileReadTool",
            "FileRemoveTool",
            "FileTool",
            "FileUpdateTool",
            "FollowupTool",
            "GenericTool",
            "McpTool",
            "PlanTool",
            "SearchTool",
            "SemanticQuery",
            "SemSearchTool",
            "ShellTool",
            "SkillTool",
            "SummaryTool",
            "TaskTool",
            "TodoReadTool",
            "TodoWriteTool",
            "ToolKind",
            "ToolKindDefinition",
            "ToolReading",
            "UndoTool",
        ),
        "forge_domain.tools._outcome": (
            "EARLIER_EVIDENCE",
            "EVIDENCE_CHARS",
            "EVIDENCE_RUNS",
            "EVIDENCE_SEPARATOR",
            "PRUNED_MARKER",
            "Outcome",
            "evidence_runs",
            "failure_evidence",
            "merged_evidence",
            "output_outcome",
            "output_reports_failure",
            "pruned_output",
            "shows_traceback",
        ),
        "forge_domain.tools._shell_edits": ("UNKNOWN_PATH", "shell_file_changes"),
        "forge_domain.tools._spec": ("ToolSpec",),
        "forge_domain.tools._text_protocol": (
            "OBSERVATION_STARTS",
            "AnsweredAction",
            "TextAction",
            "TextTurns",
            "answers_text_action",
            "looks_like_observation",
            "text_action",
            "text_turns",
        ),
        "forge_domain.tools._todo": ("Todo", "TodoChange", "TodoStatus"),
    },
)
"""Which module defines each exported name."""

__all__ = [
    "EARLIER_EVIDENCE",
    "EVIDENCE_CHARS",
    "EVIDENCE_RUNS",
    "EVIDENCE_SEPARATOR",
    "FILE_CHANGING_KINDS",
    "OBSERVATION_STARTS",
    "PRUNED_MARKER",
    "TOOL_KINDS",
    "TOOL_KIND_TABLE",
    "UNKNOWN_PATH",
    "AnsweredAction",
    "CallClassifier",
    "FetchTool",
    "FileReadTool",
    "FileRemoveTool",
    "FileTool",
    "FileUpdateTool",
    "FollowupTool",
    "GenericTool",
    "McpTool",
    "Outcome",
    "PlanTool",
    "SearchTool",
    "SemSearchTool",
    "SemanticQuery",
    "ShellTool",
    "SkillTool",
    "SummaryTool",
    "TaskTool",
    "TextAction",
    "TextTurns",
    "Todo",
    "TodoChange",
    "TodoReadTool",
    "TodoStatus",
    "TodoWriteTool",
    "ToolCatalog",
    "ToolKind",
    "ToolKindDefinition",
    "ToolReading",
    "ToolSpec",
    "UndoTool",
    "answers_text_action",
    "evidence_runs",
    "failure_evidence",
    "is_mcp_name",
    "looks_like_observation",
    "merged_evidence",
    "output_outcome",
    "output_reports_failure",
    "pruned_output",
    "shell_file_changes",
    "shows_traceback",
    "text_action",
    "text_turns",
]


def __getattr__(name: str) -> object:
    """Import an exported name from its module the first time it is read (PEP 562)."""
    return _EXPORTS.load(globals(), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
