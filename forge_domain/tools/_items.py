"""How one call's arguments become summary items, per kind of tool spec.

:class:`~forge_domain.tools._catalog.CallClassifier` picks the spec of a call; the builder
:func:`_builder` chose for that spec once reads the call's arguments (a path, a value,
a command line and the files it writes, a V4A patch, queries, a todo list) and makes the
items, or none when the arguments do not fit.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Sequence
from typing import assert_never, cast

from pydantic_core import from_json

from forge_domain._errors import InvalidArguments
from forge_domain._json import JsonObject, JsonValue
from forge_domain._messages import ToolCall
from forge_domain.tools._kinds import (
    FileRemoveTool,
    FileUpdateTool,
    GenericTool,
    SemanticQuery,
    SemSearchTool,
    ShellTool,
    SummaryTool,
    TodoWriteTool,
    ToolKindDefinition,
)
from forge_domain.tools._shell_edits import shell_file_changes
from forge_domain.tools._spec import ToolSpec
from forge_domain.tools._todo import TODO_STATUSES, Todo, todo_changes

__all__: list[str] = []  # internal: the builders and argument readers of tool_catalog

EXCERPT_CHARS = 120
"""Longest argument excerpt kept for a generic tool call."""

_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$")
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "fish"})


def patch_files(patch: str) -> tuple[FileUpdateTool | FileRemoveTool, ...]:
    """The files a Codex/Hermes (V4A) patch touches, in order, deletions as removals."""
    tools: list[FileUpdateTool | FileRemoveTool] = []
    for line in patch.splitlines():
        match = _PATCH_FILE.match(line)
        if match is None:
            continue
        action, path, moved_to = match.groups()
        if moved_to is not None:
            tools.append(FileUpdateTool(path=moved_to))
        elif action == "Delete":
            tools.append(FileRemoveTool(path=path))
        else:
            tools.append(FileUpdateTool(path=path))
    return tuple(tools)


def argument_excerpt(call: ToolCall) -> str:
    """A short, single-line excerpt of a call's arguments (compact JSON, at most 120 chars)."""
    try:
        value = call.parsed_arguments
    except InvalidArguments:
        return _excerpt(" ".join(call.arguments.split()))
    return excerpt_of(value)


def excerpt_of(value: JsonValue) -> str:
    """:func:`argument_excerpt` of a call whose arguments parse to ``value`` (for a caller
    that has parsed them already: an edit's arguments can hold pages of code)."""
    return _excerpt(_json_head(value, EXCERPT_CHARS + 1))


def _excerpt(text: str) -> str:
    if text in ("{}", ""):
        return ""
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1] + "…"


_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""Compact JSON, as ``json.dumps(value, ensure_ascii=False, separators=(",", ":"))``."""
_dumps_text: Callable[[str], str] = json.encoder.encode_basestring
""":data:`_dumps` of a string (what that encoder calls for one), without its dispatch."""


def _json_head(value: JsonValue, limit: int) -> str:
    """The compact JSON of ``value`` when it has at most ``limit`` characters; else a text
    longer than ``limit`` whose first ``limit`` characters are those of the compact JSON.

    An edit's arguments can hold pages of code, and an excerpt needs 120 characters:
    string values of an object are cut before they are serialised (escaping only
    lengthens a string, so the head of the cut one is the head of the whole one).
    """
    if not isinstance(value, dict):
        return _dumps(value)
    pieces = ["{"]
    length = 1
    for key, item in value.items():
        if length > limit:
            return "".join(pieces)
        if isinstance(item, str):
            text = _dumps_text(item[:limit] if len(item) > limit else item)
        else:
            text = _dumps(item)
        piece = ("," if length > 1 else "") + _dumps_text(key) + ":" + text
        pieces.append(piece)
        length += len(piece)
    pieces.append("}")
    return "".join(pieces)


_Build = Callable[[ToolCall, JsonObject, "str | None", Sequence[Todo]], tuple[SummaryTool, ...]]
"""Makes the tools of one call from its arguments, its output and the todo list before it."""


def _arguments(call: ToolCall) -> JsonObject | None:
    """:attr:`ToolCall.parsed_arguments` when they are a JSON object, else None (parsed
    here: a summary reads thousands of calls, and the property's error is not needed)."""
    try:
        value = from_json(call.arguments)
    except ValueError:
        return None
    return cast(JsonObject, value) if isinstance(value, dict) else None


def _builder(spec: ToolSpec) -> _Build:
    """The function that makes ``spec``'s tools of a call; its result is empty when they do
    not fit. Chosen once per spec, by how its kind reads a call (:data:`ToolReading`), so a
    call pays for no dispatch on the spec's kind."""
    names = spec.resource_args

    def first(arguments: JsonObject) -> str | None:
        for name in names:
            value = arguments.get(name)
            if isinstance(value, str):
                return value
        return None

    if spec.format == "patch":
        return lambda call, arguments, output, todos: patch_files(first(arguments) or "")
    definition = ToolKindDefinition.of(spec.kind)
    model, resource = definition.model, definition.resource
    made: dict[str, tuple[SummaryTool, ...]] = {}  # per resource: calls that differ elsewhere

    def one(value: str) -> tuple[SummaryTool, ...]:
        """The tool of ``value`` (one per builder and value: the tools are immutable)."""
        tools = made.get(value)
        if tools is None:
            tools = made[value] = (model.model_validate({resource: value}),)
        return tools

    match definition.reading:
        case "path":

            def path_tool(
                call: ToolCall, arguments: JsonObject, output: str | None, todos: Sequence[Todo]
            ) -> tuple[SummaryTool, ...]:
                path = first(arguments) or _path_in_output(spec, output)
                return () if path is None else one(path)

            return path_tool
        case "value":

            def value_tool(
                call: ToolCall, arguments: JsonObject, output: str | None, todos: Sequence[Todo]
            ) -> tuple[SummaryTool, ...]:
                value = first(arguments)
                return () if value is None else one(value)

            return value_tool
        case "command":
            return lambda call, arguments, output, todos: _shell(spec, arguments)
        case "queries":
            return lambda call, arguments, output, todos: _sem_search(spec, arguments)
        case "todos":
            return lambda call, arguments, output, todos: _todo_write(spec, arguments, todos)
        case "nothing":
            return lambda call, arguments, output, todos: (model.model_validate({}),)
        case "tool_name":
            return lambda call, arguments, output, todos: (
                model.model_validate({resource: call.name}),
            )
        case "excerpt":
            return lambda call, arguments, output, todos: (
                _generic_tool(call.name, excerpt_of(arguments)),
            )
        case unknown:
            assert_never(unknown)


def _sem_search(spec: ToolSpec, arguments: JsonObject) -> tuple[SummaryTool, ...]:
    queries = _queries(spec, arguments)
    return () if queries is None else (SemSearchTool(queries=queries),)


def _todo_write(
    spec: ToolSpec, arguments: JsonObject, todos: Sequence[Todo]
) -> tuple[SummaryTool, ...]:
    written = _todos(spec, arguments)
    changes = None if written is None else todo_changes(todos, written)
    return () if changes is None else (TodoWriteTool(changes=changes),)


def _generic_tool(name: str, arguments: str) -> SummaryTool:
    return GenericTool(name=name, arguments=arguments)


def _shell_tool(command: str) -> SummaryTool:
    return ShellTool(command=command)


def _path_in_output(spec: ToolSpec, output: str | None) -> str | None:
    if spec.path_from_output is None or output is None:
        return None
    match = re.search(spec.path_from_output, output)
    return None if match is None else match.group(1)


def _shell(spec: ToolSpec, arguments: JsonObject) -> tuple[SummaryTool, ...]:
    """A shell call's command line, then the files it writes or removes (if it says)."""
    cwd = arguments.get("cwd")
    if not isinstance(cwd, str):
        cwd = arguments.get("workdir")
        if not isinstance(cwd, str):
            cwd = ""
    for name in spec.resource_args:
        value = arguments.get(name)
        if isinstance(value, str):
            return (_shell_tool(value), *shell_file_changes(value, cwd))
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            argv = cast(list[str], value)
            if argv[0] == "apply_patch" and len(argv) > 1:
                return patch_files(argv[1]) or (ShellTool(command=shlex.join(argv)),)
            if (
                len(argv) == 3
                and argv[0].rsplit("/", 1)[-1] in _SHELLS
                and argv[1] in ("-c", "-lc")
            ):
                return (ShellTool(command=argv[2]), *shell_file_changes(argv[2], cwd))
            command = shlex.join(argv)
            return (ShellTool(command=command), *shell_file_changes(command, cwd))
    return ()


def _queries(spec: ToolSpec, arguments: JsonObject) -> tuple[SemanticQuery, ...] | None:
    raw = next((arguments.get(n) for n in spec.resource_args if n in arguments), None)
    if not isinstance(raw, list):
        return None
    queries: list[SemanticQuery] = []
    for item in raw:
        if not isinstance(item, dict):
            return None
        query, use_case = item.get("query"), item.get("use_case")
        if not isinstance(query, str) or not isinstance(use_case, str):
            return None
        queries.append(SemanticQuery(query=query, use_case=use_case))
    return tuple(queries)


def _todos(spec: ToolSpec, arguments: JsonObject) -> tuple[Todo, ...] | None:
    raw = next((arguments.get(n) for n in spec.resource_args if n in arguments), None)
    if not isinstance(raw, list):
        return None
    todos: list[Todo] = []
    for item in raw:
        if not isinstance(item, dict):
            return None
        content, status = item.get(spec.content_key), item.get("status")
        if not isinstance(content, str) or status not in TODO_STATUSES:
            return None
        todos.append(Todo(content=content, status=status))
    return tuple(todos)
