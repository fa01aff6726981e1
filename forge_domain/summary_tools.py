"""What a summary records about one tool call: its kind and the resource it touched.

:data:`SummaryTool` is a closed, tagged union (``kind``). The kinds follow forge's
``SummaryTool`` (forge-spec §9.1) plus :class:`GenericTool`, which keeps an unknown
tool's name and a short excerpt of its arguments instead of dropping the call.
"""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from forge_domain.json import JsonObject, JsonValue
from forge_domain.todo import TodoChange

__all__ = [
    "FetchTool",
    "FileReadTool",
    "FileRemoveTool",
    "FileUpdateTool",
    "FollowupTool",
    "GenericTool",
    "McpTool",
    "PlanTool",
    "SearchTool",
    "SemSearchTool",
    "SemanticQuery",
    "ShellTool",
    "SkillTool",
    "TaskTool",
    "TodoReadTool",
    "TodoWriteTool",
    "UndoTool",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class FileReadTool(BaseModel):
    """A file was read."""

    model_config = _FROZEN

    kind: Literal["file_read"] = "file_read"
    path: str
    """The file's path, as the call named it (made relative by ``StripWorkingDir``)."""


class FileUpdateTool(BaseModel):
    """A file was written, patched or created."""

    model_config = _FROZEN

    kind: Literal["file_update"] = "file_update"
    path: str
    """The file's path."""


class FileRemoveTool(BaseModel):
    """A file was deleted."""

    model_config = _FROZEN

    kind: Literal["file_remove"] = "file_remove"
    path: str
    """The file's path."""


class UndoTool(BaseModel):
    """The last edit of a file was undone."""

    model_config = _FROZEN

    kind: Literal["undo"] = "undo"
    path: str
    """The file's path."""


class ShellTool(BaseModel):
    """A shell command was run."""

    model_config = _FROZEN

    kind: Literal["shell"] = "shell"
    command: str
    """The command line."""


class SearchTool(BaseModel):
    """Files or their contents were searched."""

    model_config = _FROZEN

    kind: Literal["search"] = "search"
    pattern: str
    """The pattern, glob or file type searched for."""


class SemanticQuery(BaseModel):
    """One query of a semantic search."""

    model_config = _FROZEN

    query: str
    """What was searched for."""
    use_case: str
    """Why it was searched for."""


class SemSearchTool(BaseModel):
    """The code base was searched by meaning."""

    model_config = _FROZEN

    kind: Literal["sem_search"] = "sem_search"
    queries: tuple[SemanticQuery, ...]
    """The queries, in the order given."""


class FetchTool(BaseModel):
    """A URL was fetched."""

    model_config = _FROZEN

    kind: Literal["fetch"] = "fetch"
    url: str
    """The URL."""


class FollowupTool(BaseModel):
    """The agent asked the user a question."""

    model_config = _FROZEN

    kind: Literal["followup"] = "followup"
    question: str
    """The question."""


class PlanTool(BaseModel):
    """A plan document was written."""

    model_config = _FROZEN

    kind: Literal["plan"] = "plan"
    plan_name: str
    """The plan's name."""


class SkillTool(BaseModel):
    """A skill was loaded."""

    model_config = _FROZEN

    kind: Literal["skill"] = "skill"
    name: str
    """The skill's name."""


class TaskTool(BaseModel):
    """Work was delegated to another agent."""

    model_config = _FROZEN

    kind: Literal["task"] = "task"
    agent_id: str
    """The agent the work went to."""


class McpTool(BaseModel):
    """A tool served by an MCP server (or, in forge, any tool it does not know)."""

    model_config = _FROZEN

    kind: Literal["mcp"] = "mcp"
    name: str
    """The tool's name, untrimmed."""


class TodoWriteTool(BaseModel):
    """The todo list was written; only what changed is kept."""

    model_config = _FROZEN

    kind: Literal["todo_write"] = "todo_write"
    changes: tuple[TodoChange, ...]
    """The changes against the list as it stood before the message (may be empty)."""


class TodoReadTool(BaseModel):
    """The todo list was read."""

    model_config = _FROZEN

    kind: Literal["todo_read"] = "todo_read"


class GenericTool(BaseModel):
    """A tool the catalog does not know, or a known one whose arguments did not fit."""

    model_config = _FROZEN

    kind: Literal["generic"] = "generic"
    name: str
    """The tool's name, untrimmed."""
    arguments: str = ""
    """A short excerpt of the arguments (compact JSON, or the raw text when it is not JSON)."""


SummaryTool: TypeAlias = Annotated[
    FileReadTool
    | FileUpdateTool
    | FileRemoveTool
    | UndoTool
    | ShellTool
    | SearchTool
    | SemSearchTool
    | FetchTool
    | FollowupTool
    | PlanTool
    | SkillTool
    | TaskTool
    | McpTool
    | TodoWriteTool
    | TodoReadTool
    | GenericTool,
    Field(discriminator="kind"),
]
"""What a summary records about one tool call."""

FileTool: TypeAlias = FileReadTool | FileUpdateTool | FileRemoveTool | UndoTool
"""The kinds that carry a file path."""

ToolKind: TypeAlias = Literal[
    "file_read",
    "file_update",
    "file_remove",
    "undo",
    "shell",
    "search",
    "sem_search",
    "fetch",
    "followup",
    "plan",
    "skill",
    "task",
    "mcp",
    "todo_write",
    "todo_read",
    "generic",
]
"""The ``kind`` of every :data:`SummaryTool`."""

TOOL_KINDS: tuple[ToolKind, ...] = (
    "file_read",
    "file_update",
    "file_remove",
    "undo",
    "shell",
    "search",
    "sem_search",
    "fetch",
    "followup",
    "plan",
    "skill",
    "task",
    "mcp",
    "todo_write",
    "todo_read",
    "generic",
)
"""Every :data:`ToolKind`, in the order of forge-spec §9.1."""


_TOOL_ADAPTER: TypeAdapter[SummaryTool] = TypeAdapter(SummaryTool)


def tool_to_forge(tool: SummaryTool) -> JsonValue:
    """Forge's serde shape: ``{"<kind>": {...}}``; ``"todo_read"``; generic becomes ``mcp``."""
    match tool:
        case TodoReadTool():
            return "todo_read"
        case GenericTool(name=name):
            return {"mcp": {"name": name}}
        case _:
            fields: JsonObject = tool.model_dump(mode="json", exclude={"kind"})
            return {tool.kind: fields}


def tool_from_forge(raw: JsonValue) -> SummaryTool:
    """Parse forge's serde shape of a summary tool (the inverse of :func:`tool_to_forge`).

    Raises:
        ValueError: when ``raw`` is not a forge summary tool.
    """
    if raw == "todo_read":
        return TodoReadTool()
    if not isinstance(raw, dict) or len(raw) != 1:
        raise ValueError(f"not a forge summary tool: {raw!r}")
    ((kind, fields),) = raw.items()
    if not isinstance(fields, dict):
        raise ValueError(f"not a forge summary tool: {raw!r}")
    return _TOOL_ADAPTER.validate_python({**fields, "kind": kind})
