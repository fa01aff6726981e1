"""What a summary records about one tool call: its kind and the resource it touched.

:data:`SummaryTool` is a closed, tagged union (``kind``). The kinds follow forge's
``SummaryTool`` (forge-spec §9.1) plus :class:`GenericTool`, which keeps an unknown
tool's name and a short excerpt of its arguments instead of dropping the call.

:data:`TOOL_KIND_TABLE` defines each kind once (one :class:`ToolKindDefinition` row:
model, frame label, how the catalog reads it, default arguments, whether it changes a
file, whether repeats merge); :data:`TOOL_KINDS`, :data:`ToolKind`,
:data:`FILE_CHANGING_KINDS`, the catalog's builders, the merge keys, pruning's target
arguments and the frame's line are derived from it. Adding a kind takes its model, its
place in :data:`SummaryTool` and its row (and :data:`FileTool` when it carries a path).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from forge_domain._json import JsonObject, JsonValue
from forge_domain.tools._todo import TodoChange

__all__ = [
    "FILE_CHANGING_KINDS",
    "TOOL_KINDS",
    "TOOL_KIND_TABLE",
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
    "ToolKind",
    "ToolKindDefinition",
    "ToolReading",
    "UndoTool",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class _ToolModel(BaseModel):
    """What every summary tool model has: its kind's row of :data:`TOOL_KIND_TABLE`."""

    model_config = _FROZEN

    if TYPE_CHECKING:
        kind: str

    @property
    def definition(self) -> ToolKindDefinition:
        """This tool's kind as :data:`TOOL_KIND_TABLE` defines it (the frame reads its label)."""
        return ToolKindDefinition.of(self.kind)


class FileReadTool(_ToolModel):
    """A file was read."""

    kind: Literal["file_read"] = "file_read"
    path: str
    """The file's path, as the call named it (made relative by ``StripWorkingDir``)."""


class FileUpdateTool(_ToolModel):
    """A file was written, patched or created."""

    kind: Literal["file_update"] = "file_update"
    path: str
    """The file's path."""


class FileRemoveTool(_ToolModel):
    """A file was deleted."""

    kind: Literal["file_remove"] = "file_remove"
    path: str
    """The file's path."""


class UndoTool(_ToolModel):
    """The last edit of a file was undone."""

    kind: Literal["undo"] = "undo"
    path: str
    """The file's path."""


class ShellTool(_ToolModel):
    """A shell command was run."""

    kind: Literal["shell"] = "shell"
    command: str
    """The command line."""


class SearchTool(_ToolModel):
    """Files or their contents were searched."""

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


class SemSearchTool(_ToolModel):
    """The code base was searched by meaning."""

    kind: Literal["sem_search"] = "sem_search"
    queries: tuple[SemanticQuery, ...]
    """The queries, in the order given."""


class FetchTool(_ToolModel):
    """A URL was fetched."""

    kind: Literal["fetch"] = "fetch"
    url: str
    """The URL."""


class FollowupTool(_ToolModel):
    """The agent asked the user a question."""

    kind: Literal["followup"] = "followup"
    question: str
    """The question."""


class PlanTool(_ToolModel):
    """A plan document was written."""

    kind: Literal["plan"] = "plan"
    plan_name: str
    """The plan's name."""


class SkillTool(_ToolModel):
    """A skill was loaded."""

    kind: Literal["skill"] = "skill"
    name: str
    """The skill's name."""


class TaskTool(_ToolModel):
    """Work was delegated to another agent."""

    kind: Literal["task"] = "task"
    agent_id: str
    """The agent the work went to."""


class McpTool(_ToolModel):
    """A tool served by an MCP server (or, in forge, any tool it does not know)."""

    kind: Literal["mcp"] = "mcp"
    name: str
    """The tool's name, untrimmed."""


class TodoWriteTool(_ToolModel):
    """The todo list was written; only what changed is kept."""

    kind: Literal["todo_write"] = "todo_write"
    changes: tuple[TodoChange, ...]
    """The changes against the list as it stood before the message (may be empty)."""


class TodoReadTool(_ToolModel):
    """The todo list was read."""

    kind: Literal["todo_read"] = "todo_read"


class GenericTool(_ToolModel):
    """A tool the catalog does not know, or a known one whose arguments did not fit."""

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

ToolReading: TypeAlias = Literal[
    "path", "value", "command", "queries", "todos", "nothing", "tool_name", "excerpt"
]
"""How the catalog makes a kind's tool from a call:

* ``path``: the first non-empty string argument, else the path the output names
  (``ToolSpec.path_from_output``);
* ``value``: the first string argument;
* ``command``: a command line, or an argv list (an ``apply_patch`` argv gives file items);
* ``queries``: a list of ``{query, use_case}`` objects;
* ``todos``: a todo list, kept as its changes against the list before the call;
* ``nothing``: no argument;
* ``tool_name``: the call's own name;
* ``excerpt``: the call's name and a short excerpt of its arguments.
"""


@dataclass(frozen=True, slots=True)
class ToolKindDefinition:
    """One summary tool kind, defined once: a row of :data:`TOOL_KIND_TABLE`."""

    model: type[SummaryTool]
    """The model of the kind's tools; its ``kind`` literal names the kind."""
    label: str
    """What the frame's line of the kind starts with (``Read``: ``**Read:** …``)."""
    reading: ToolReading
    """How the catalog makes the kind's tool from a call."""
    args: tuple[str, ...] = ()
    """Where a catalog spec that names no argument finds the resource, tried in order."""
    is_file_change: bool = False
    """True when a call of the kind changes a file: a budget never drops its line, and a
    model-written summary must name its path."""
    is_mergeable: bool = True
    """True when repeated calls on one resource merge into one line (not ``todo_write``:
    each call carries its own diff)."""
    kind: str = field(init=False)
    """The kind's name: the default of the model's ``kind``."""
    shown: tuple[str, ...] = field(init=False)
    """The model's fields but ``kind``: what a reader of the summary sees of a call."""
    resource: str | None = field(init=False)
    """The field naming what a call acted on (the first of ``shown``; None without one)."""

    def __post_init__(self) -> None:
        """Derive ``kind``, ``shown`` and ``resource`` from the model; check the row."""
        fields = self.model.model_fields
        kind = fields["kind"].default if "kind" in fields else None
        if not isinstance(kind, str):
            raise ValueError(f"{self.model.__name__} needs a kind literal with a default")
        if self.is_file_change and self.reading != "path":
            raise ValueError(f"a kind that changes a file reads a path, got {self.reading!r}")
        shown = tuple(name for name in fields if name != "kind")
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "shown", shown)
        object.__setattr__(self, "resource", shown[0] if shown else None)

    @classmethod
    def of(cls, kind: str) -> ToolKindDefinition:
        """The row of ``kind``.

        Raises:
            KeyError: ``kind`` is not in :data:`TOOL_KIND_TABLE`.
        """
        return _BY_KIND[kind]


TOOL_KIND_TABLE: tuple[ToolKindDefinition, ...] = (
    ToolKindDefinition(FileReadTool, "Read", "path", ("file_path", "path")),
    ToolKindDefinition(
        FileUpdateTool, "Update", "path", ("file_path", "path"), is_file_change=True
    ),
    ToolKindDefinition(FileRemoveTool, "Delete", "path", ("path",), is_file_change=True),
    ToolKindDefinition(UndoTool, "Undo", "path", ("path",), is_file_change=True),
    ToolKindDefinition(ShellTool, "Execute", "command", ("command",)),
    ToolKindDefinition(SearchTool, "Search", "value", ("pattern",)),
    ToolKindDefinition(SemSearchTool, "Semantic Search", "queries", ("queries",)),
    ToolKindDefinition(FetchTool, "Fetch", "value", ("url",)),
    ToolKindDefinition(FollowupTool, "Asked", "value", ("question",)),
    ToolKindDefinition(PlanTool, "Plan", "value", ("plan_name",)),
    ToolKindDefinition(SkillTool, "Skill", "value", ("name",)),
    ToolKindDefinition(TaskTool, "Delegated", "value", ("agent_id",)),
    ToolKindDefinition(McpTool, "MCP", "tool_name"),
    ToolKindDefinition(TodoWriteTool, "Task Plan", "todos", ("todos",), is_mergeable=False),
    ToolKindDefinition(TodoReadTool, "Read Task Plan", "nothing"),
    ToolKindDefinition(GenericTool, "Tool", "excerpt"),
)
"""Every summary tool kind, in the order of forge-spec §9.1: the one place a kind is defined."""

_BY_KIND: Mapping[str, ToolKindDefinition] = {row.kind: row for row in TOOL_KIND_TABLE}

TOOL_KINDS: tuple[ToolKind, ...] = tuple(_BY_KIND)
"""Every kind's name, in the order of :data:`TOOL_KIND_TABLE`."""

if TYPE_CHECKING:
    ToolKind: TypeAlias = str
else:
    ToolKind = Literal[TOOL_KINDS]
"""The ``kind`` of every :data:`SummaryTool`: a ``Literal`` of :data:`TOOL_KINDS` (for
pydantic; mypy sees ``str``, as a ``Literal`` cannot be computed statically)."""

FILE_CHANGING_KINDS: frozenset[str] = frozenset(
    row.kind for row in TOOL_KIND_TABLE if row.is_file_change
)
"""The kinds whose calls change a file (``file_update``, ``file_remove``, ``undo``)."""


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
