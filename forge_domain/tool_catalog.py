"""Which tool does what: the catalog that turns tool calls into summary items.

The built-in catalog knows the tools of forge, Claude Code, Codex, OpenHands,
SWE-agent / mini-swe-agent and Hermes (see :mod:`forge_domain.tool_defaults`).
Names are matched trimmed and case-insensitively, as forge does.

Departures from forge, on purpose:

* an unknown tool, or a known one whose arguments do not fit, becomes a
  :class:`GenericTool` (name plus an argument excerpt) rather than forge's ``mcp``,
  unless its name looks like an MCP tool (``mcp_…``, ``mcp__…``, ``mcp-…``); forge's
  JSON shape still shows it as ``mcp`` (:func:`tool_to_forge`);
* one call can yield several items: a Codex/Hermes patch touching three files gives
  three file items;
* a call whose result is not flagged as an error may still count as failed when its
  output says so (:mod:`forge_domain.tool_outcome`), because OpenAI-format transcripts
  have no error flag;
* a shell command that writes files (``sed -i``, ``cat > f``, ``mv`` …) also yields
  a file item per path it writes or removes (:mod:`forge_domain.shell_edits`).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Literal, assert_never, cast

from pydantic import BaseModel, ConfigDict

from forge_domain.errors import InvalidArguments, InvalidToolSpec
from forge_domain.json import JsonObject, JsonValue
from forge_domain.messages import ToolCall, ToolResult
from forge_domain.shell_edits import shell_file_changes
from forge_domain.summary_tools import (
    FileRemoveTool,
    FileUpdateTool,
    GenericTool,
    McpTool,
    SemanticQuery,
    SemSearchTool,
    ShellTool,
    SummaryTool,
    TodoWriteTool,
    ToolKindDefinition,
)
from forge_domain.todo import TODO_STATUSES, Todo, todo_changes
from forge_domain.tool_defaults import DEFAULT_TOOLS
from forge_domain.tool_outcome import (
    Outcome,
    failure_evidence,
    output_outcome,
    output_reports_failure,
    shows_traceback,
)
from forge_domain.tool_spec import ToolSpec

__all__ = [
    "CallClassifier",
    "ToolCatalog",
    "is_mcp_name",
    "output_reports_failure",
]
"""``output_reports_failure`` lives in :mod:`forge_domain.tool_outcome`; importable here too."""

EXCERPT_CHARS = 120
"""Longest argument excerpt kept for a generic tool call."""

_MCP_NAME = re.compile(r"^mcp[_\-]", re.IGNORECASE)
_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$")
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "fish"})
FailureInference = Literal["output", "none"]
"""``output``: also read failures from output text; ``none``: trust ``is_error`` only."""


def is_mcp_name(name: str) -> bool:
    """Return True for names MCP clients give tools (``mcp_github_x``, ``mcp__server__x``)."""
    return _MCP_NAME.match(name.strip()) is not None


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
        text = " ".join(call.arguments.split())
    else:
        text = _json_head(value, EXCERPT_CHARS + 1)
    if text in ("{}", ""):
        return ""
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1] + "…"


_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""Compact JSON, as ``json.dumps(value, ensure_ascii=False, separators=(",", ":"))``."""


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
        if isinstance(item, str) and len(item) > limit:
            item = item[:limit]
        piece = ("," if length > 1 else "") + _dumps(key) + ":" + _dumps(item)
        pieces.append(piece)
        length += len(piece)
    pieces.append("}")
    return "".join(pieces)


class ToolCatalog(BaseModel):
    """Maps tool names to :class:`ToolSpec` alternatives; classifies calls."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    entries: dict[str, tuple[ToolSpec, ...]]
    """Specs by trimmed, case-folded tool name; alternatives in the order tried."""
    failure_inference: FailureInference = "output"
    """Whether failures are also read from output text."""

    @classmethod
    def default(cls) -> ToolCatalog:
        """The built-in catalog."""
        return _default_catalog()

    @classmethod
    def from_data(cls, mapping: Mapping[str, JsonValue]) -> ToolCatalog:
        """A catalog of only the given entries (plain data, as loaded from YAML).

        Raises:
            InvalidToolSpec: naming the first malformed entry.
        """
        return cls(entries=_parse_entries(mapping))

    def extended(self, mapping: Mapping[str, JsonValue]) -> ToolCatalog:
        """This catalog with ``mapping``'s entries added; they replace same-named ones.

        Raises:
            InvalidToolSpec: naming the first malformed entry.
        """
        return self.model_copy(update={"entries": {**self.entries, **_parse_entries(mapping)}})

    def specs_for(self, name: str) -> tuple[ToolSpec, ...]:
        """The specs for a tool name (empty when the catalog does not know it)."""
        return self.entries.get(_key(name), ())

    def classifier(self) -> CallClassifier:
        """A classifier for many calls (a summary's), resolving each tool name once."""
        return CallClassifier(self)

    def classify(
        self, call: ToolCall, *, output: str | None = None, todos: Sequence[Todo] = ()
    ) -> tuple[SummaryTool, ...]:
        """What ``call`` did, as one or more summary tools (never none).

        ``output`` is the call's result text (some tools name their file only there);
        ``todos`` is the todo list before the call's message, for ``todo_write`` diffs.
        """
        return CallClassifier(self).tools(call, output, todos)

    def written_todos(self, call: ToolCall) -> tuple[Todo, ...] | None:
        """The todo items ``call`` writes, or None when it writes no todo list."""
        return CallClassifier(self).written_todos(call)

    def outcome(self, result: ToolResult | None, output: str | None = None) -> Outcome:
        """How the call ``result`` answers went: ``failed``, ``ok`` or ``unknown``.

        No result: ``unknown``. The error flag: ``failed``. Otherwise, when inferring,
        what the output text shows (:func:`output_outcome`); without inference, ``unknown``
        (no flag says nothing of success). ``output`` is ``result.text`` when the caller
        has read it already.
        """
        if result is None:
            return "unknown"
        if result.is_error:
            return "failed"
        if self.failure_inference != "output":
            return "unknown"
        return output_outcome(result.text if output is None else output)

    def has_failed(self, result: ToolResult, output: str | None = None) -> bool:
        """Return True when ``result`` reports a failure (flag, or output when inferring)."""
        return self.outcome(result, output) == "failed"

    def evidence(
        self, result: ToolResult, output: str | None = None, outcome: Outcome | None = None
    ) -> str | None:
        """A short excerpt of why the call failed (:func:`failure_evidence`), or of the
        traceback an unfailed call printed (a script can catch an exception and exit 0);
        None for a call whose output shows no error. ``outcome`` is :meth:`outcome`'s, when
        the caller has it already.
        """
        text = result.text if output is None else output
        failed = (outcome or self.outcome(result, text)) == "failed"
        if failed or (self.failure_inference == "output" and shows_traceback(text)):
            return failure_evidence(text)
        return None


_Build = Callable[[ToolCall, JsonObject, "str | None", Sequence[Todo]], tuple[SummaryTool, ...]]
"""Makes the tools of one call from its arguments, its output and the todo list before it."""


@dataclass(frozen=True, slots=True)
class _CompiledSpec:
    """A :class:`ToolSpec` with its builder chosen once."""

    spec: ToolSpec
    build: _Build


@dataclass(frozen=True, slots=True)
class _NameRule:
    """What a catalog knows of one tool name."""

    specs: tuple[_CompiledSpec, ...]
    writes_todos: bool
    """True when one of ``specs`` is a ``todo_write`` (only those can write a todo list)."""
    mcp: bool
    """True when the name looks like an MCP tool's."""
    pure: bool
    """True when a call's tools depend on its name and arguments only (no spec reads the
    output or the todo list), so identical calls can share one classification."""


class CallClassifier:
    """:meth:`ToolCatalog.classify` and ``written_todos`` for many calls.

    A summary classifies thousands of calls to a handful of tools; the catalog
    entry of each distinct name is looked up, and its specs prepared, once here.
    """

    __slots__ = ("_catalog", "_rules", "_seen")

    def __init__(self, catalog: ToolCatalog) -> None:
        """Classify with ``catalog``."""
        self._catalog = catalog
        self._rules: dict[str, _NameRule] = {}
        self._seen: dict[tuple[str, str], tuple[SummaryTool, ...]] = {}
        """Tools of the pure calls classified so far, by name and arguments text."""

    def _rule(self, name: str) -> _NameRule:
        rule = self._rules.get(name)
        if rule is None:
            specs = tuple(
                _CompiledSpec(spec, _builder(spec)) for spec in self._catalog.specs_for(name)
            )
            writes = any(compiled.spec.kind == "todo_write" for compiled in specs)
            pure = not writes and all(c.spec.path_from_output is None for c in specs)
            rule = self._rules[name] = _NameRule(specs, writes, is_mcp_name(name), pure)
        return rule

    def tools(
        self, call: ToolCall, output: str | None = None, todos: Sequence[Todo] = ()
    ) -> tuple[SummaryTool, ...]:
        """What ``call`` did (see :meth:`ToolCatalog.classify`).

        Agents repeat themselves (the same test command, the same file read): a pure
        call identical to one already classified gets the same (immutable) tools
        without its arguments being parsed again.
        """
        rule = self._rule(call.name)
        if not rule.pure:
            return self._classify(rule, call, output, todos)
        key = (call.name, call.arguments)
        tools = self._seen.get(key)
        if tools is None:
            tools = self._seen[key] = self._classify(rule, call, output, todos)
        return tools

    def _classify(
        self, rule: _NameRule, call: ToolCall, output: str | None, todos: Sequence[Todo]
    ) -> tuple[SummaryTool, ...]:
        arguments = _arguments(call)
        if arguments is not None:
            for compiled in rule.specs:
                if compiled.spec.applies_to(arguments):
                    tools = compiled.build(call, arguments, output, todos)
                    if tools:
                        return tools
        if rule.mcp:
            return (McpTool(name=call.name),)
        return (_generic_tool(call.name, argument_excerpt(call)),)

    def written_todos(self, call: ToolCall) -> tuple[Todo, ...] | None:
        """The todo items ``call`` writes (see :meth:`ToolCatalog.written_todos`)."""
        rule = self._rule(call.name)
        if not rule.writes_todos:
            return None
        arguments = _arguments(call)
        if arguments is None:
            return None
        for compiled in rule.specs:
            if compiled.spec.applies_to(arguments):
                if compiled.spec.kind != "todo_write":
                    return None
                written = _todos(compiled.spec, arguments)
                if written is not None:
                    return written
        return None


@cache
def _default_catalog() -> ToolCatalog:
    return ToolCatalog.from_data(DEFAULT_TOOLS)


@lru_cache(maxsize=1024)
def _key(name: str) -> str:
    """The catalog key of a tool name (sessions call the same few tools again and again)."""
    return name.strip().casefold()


def _parse_entries(mapping: Mapping[str, JsonValue]) -> dict[str, tuple[ToolSpec, ...]]:
    entries: dict[str, tuple[ToolSpec, ...]] = {}
    for name, data in mapping.items():
        if not isinstance(name, str) or not name.strip():
            raise InvalidToolSpec(str(name), "a tool name must be a non-empty string")
        alternatives = data if isinstance(data, list) else [data]
        if not alternatives:
            raise InvalidToolSpec(name, "an empty list of alternatives")
        entries[_key(name)] = tuple(ToolSpec.from_data(name, item) for item in alternatives)
    return entries


def _arguments(call: ToolCall) -> JsonObject | None:
    try:
        value = call.parsed_arguments
    except InvalidArguments:
        return None
    return value if isinstance(value, dict) else None


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
    match definition.reading:
        case "path":

            def path_tool(
                call: ToolCall, arguments: JsonObject, output: str | None, todos: Sequence[Todo]
            ) -> tuple[SummaryTool, ...]:
                path = first(arguments) or _path_in_output(spec, output)
                return () if path is None else (model.model_validate({resource: path}),)

            return path_tool
        case "value":

            def value_tool(
                call: ToolCall, arguments: JsonObject, output: str | None, todos: Sequence[Todo]
            ) -> tuple[SummaryTool, ...]:
                value = first(arguments)
                return () if value is None else (model.model_validate({resource: value}),)

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
                _generic_tool(call.name, argument_excerpt(call)),
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
    cwd = next((v for n in ("cwd", "workdir") if isinstance(v := arguments.get(n), str)), "")
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
