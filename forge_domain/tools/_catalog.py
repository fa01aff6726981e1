"""Which tool does what: the catalog that turns tool calls into summary items.

The built-in catalog knows the tools of forge, Claude Code, Codex, OpenHands,
SWE-agent / mini-swe-agent and Hermes (see :mod:`forge_domain.tools._defaults`).
Names are matched trimmed and case-insensitively, as forge does.

Departures from forge, on purpose:

* an unknown tool, or a known one whose arguments do not fit, becomes a
  :class:`GenericTool` (name plus an argument excerpt) rather than forge's ``mcp``,
  unless its name looks like an MCP tool (``mcp_…``, ``mcp__…``, ``mcp-…``); forge's
  JSON shape still shows it as ``mcp`` (:func:`tool_to_forge`);
* one call can yield several items: a Codex/Hermes patch touching three files gives
  three file items;
* a call whose result is not flagged as an error may still count as failed when its
  output says so (:mod:`forge_domain.tools._outcome`), because OpenAI-format transcripts
  have no error flag;
* a shell command that writes files (``sed -i``, ``cat > f``, ``mv`` …) also yields
  a file item per path it writes or removes (:mod:`forge_domain.tools._shell_edits`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict

from forge_domain._errors import InvalidToolSpec
from forge_domain._json import JsonValue
from forge_domain._messages import ToolCall, ToolResult
from forge_domain.tools._defaults import DEFAULT_TOOLS
from forge_domain.tools._items import (
    _arguments,
    _Build,
    _builder,
    _generic_tool,
    _todos,
    argument_excerpt,
    excerpt_of,
)
from forge_domain.tools._kinds import McpTool, SummaryTool
from forge_domain.tools._outcome import (
    Outcome,
    failure_evidence,
    output_outcome,
    output_reports_failure,
    shows_traceback,
)
from forge_domain.tools._spec import ToolSpec
from forge_domain.tools._todo import Todo

__all__ = [
    "CallClassifier",
    "ToolCatalog",
    "is_mcp_name",
    "output_reports_failure",
]
"""``output_reports_failure`` lives in :mod:`forge_domain.tools._outcome`; importable here too."""

_MCP_NAME = re.compile(r"^mcp[_\-]", re.IGNORECASE)
FailureInference = Literal["output", "none"]
"""``output``: also read failures from output text; ``none``: trust ``is_error`` only."""


def is_mcp_name(name: str) -> bool:
    """Return True for names MCP clients give tools (``mcp_github_x``, ``mcp__server__x``)."""
    return _MCP_NAME.match(name.strip()) is not None


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
    seen: dict[str, tuple[SummaryTool, ...]]
    """When ``pure``: the tools of the calls classified so far, by arguments text."""


class CallClassifier:
    """:meth:`ToolCatalog.classify` and ``written_todos`` for many calls.

    A summary classifies thousands of calls to a handful of tools; the catalog
    entry of each distinct name is looked up, and its specs prepared, once here.
    """

    __slots__ = ("_catalog", "_rules")

    def __init__(self, catalog: ToolCatalog) -> None:
        """Classify with ``catalog``."""
        self._catalog = catalog
        self._rules: dict[str, _NameRule] = {}

    def _rule(self, name: str) -> _NameRule:
        rule = self._rules.get(name)
        if rule is None:
            specs = tuple(
                _CompiledSpec(spec, _builder(spec)) for spec in self._catalog.specs_for(name)
            )
            writes = any(compiled.spec.kind == "todo_write" for compiled in specs)
            pure = not writes and all(c.spec.path_from_output is None for c in specs)
            rule = self._rules[name] = _NameRule(specs, writes, is_mcp_name(name), pure, {})
        return rule

    def is_pure(self, name: str) -> bool:
        """True when the tools of a call to ``name`` depend on its name and arguments only
        (no spec reads the output or the todo list, none writes todos): identical calls
        then have identical readings."""
        return self._rule(name).pure

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
        arguments = call.arguments
        tools = rule.seen.get(arguments)
        if tools is None:
            tools = rule.seen[arguments] = self._classify(rule, call, output, todos)
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
        excerpt = argument_excerpt(call) if arguments is None else excerpt_of(arguments)
        return (_generic_tool(call.name, excerpt),)

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
