"""Tools the model may call: a registry of plain Python callables.

A tool is a function (sync or async) with typed parameters; its JSON schema is
derived from the signature with pydantic, and the model's arguments are
validated against it before the call. Sync functions run in a worker thread so
that one slow tool does not stall other conversations.

Failures the model should see (bad arguments, an unknown tool, a tool raising
:class:`~forge_app.errors.ToolFailed`) become error results; any other exception
is a bug in the tool and propagates.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol, cast, get_type_hints, runtime_checkable

import anyio.to_thread
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from forge_app.errors import ForgeAppError, ToolFailed
from forge_domain import (
    ContextEngine,
    ForgeDomainError,
    InvalidArguments,
    JsonObject,
    JsonValue,
    ToolCall,
    ToolResult,
)

ToolFunction = Callable[..., object]
"""A tool's implementation: returns text or any JSON value (sync or async)."""


@runtime_checkable
class ToolExecutor(Protocol):
    """Runs tool calls for the orchestrator."""

    def schemas(self) -> tuple[JsonObject, ...]:
        """OpenAI function-tool schemas offered to the model."""
        ...

    async def execute(self, call: ToolCall) -> ToolResult:
        """Run ``call`` and return its result (an error result for expected failures)."""
        ...


def _arguments_model(function: ToolFunction, name: str) -> type[BaseModel]:
    hints = get_type_hints(function)
    fields: dict[str, tuple[object, object]] = {}
    for parameter in inspect.signature(function).parameters.values():
        annotation = hints.get(parameter.name, str)
        default = ... if parameter.default is inspect.Parameter.empty else parameter.default
        fields[parameter.name] = (annotation, default)
    config = ConfigDict(extra="forbid")
    model: type[BaseModel] = create_model(  # type: ignore[call-overload]  # fields built at runtime
        f"{name}_arguments", __config__=config, **fields
    )
    return model


@dataclass(frozen=True, slots=True)
class Tool:
    """One callable tool: its name, description and argument schema."""

    name: str
    """The name the model calls it by."""
    function: ToolFunction
    """The implementation."""
    description: str = ""
    """What the tool does (the model reads it)."""
    arguments: type[BaseModel] = field(repr=False, default=BaseModel)
    """pydantic model of the arguments (derived from the signature)."""

    @classmethod
    def of(
        cls, function: ToolFunction, *, name: str | None = None, description: str | None = None
    ) -> Tool:
        """Build a tool from a function; name and description default to its own."""
        tool_name: str = name or str(getattr(function, "__name__", "tool"))
        doc = description if description is not None else inspect.getdoc(function) or ""
        return cls(tool_name, function, doc, _arguments_model(function, tool_name))

    def schema(self) -> JsonObject:
        """The OpenAI function-tool schema."""
        parameters = cast(JsonObject, self.arguments.model_json_schema())
        parameters.pop("title", None)
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": parameters,
            },
        }

    async def __call__(self, arguments: Mapping[str, JsonValue]) -> str:
        """Validate ``arguments``, call the function and return its output as text."""
        validated = self.arguments.model_validate(dict(arguments))
        kwargs = {name: getattr(validated, name) for name in type(validated).model_fields}
        if inspect.iscoroutinefunction(self.function):
            output = await cast(Callable[..., Awaitable[object]], self.function)(**kwargs)
        else:
            output = await anyio.to_thread.run_sync(functools.partial(self.function, **kwargs))
        return output if isinstance(output, str) else json.dumps(output)


class ToolRegistry:
    """A :class:`ToolExecutor` over a fixed set of :class:`Tool` s."""

    def __init__(self, tools: Iterable[Tool | ToolFunction] = ()) -> None:
        """Register ``tools`` (functions are wrapped with :meth:`Tool.of`)."""
        self._tools: dict[str, Tool] = {}
        for item in tools:
            tool = item if isinstance(item, Tool) else Tool.of(item)
            self._tools[tool.name] = tool

    def names(self) -> tuple[str, ...]:
        """The registered tool names."""
        return tuple(self._tools)

    def only(self, names: Iterable[str]) -> ToolRegistry:
        """A registry with just the tools named (an agent's ``tools:`` list)."""
        wanted = set(names)
        return ToolRegistry(tool for name, tool in self._tools.items() if name in wanted)

    def schemas(self) -> tuple[JsonObject, ...]:
        """Schemas of every tool."""
        return tuple(tool.schema() for tool in self._tools.values())

    async def execute(self, call: ToolCall) -> ToolResult:
        """Run ``call``; unknown tools, bad arguments and :class:`ToolFailed` give error results."""
        tool = self._tools.get(call.name)
        if tool is None:
            known = ", ".join(self._tools) or "none"
            return ToolResult.failed(
                call.id, f"unknown tool {call.name!r} (available: {known})", name=call.name
            )
        try:
            arguments = call.parsed_arguments
            if not isinstance(arguments, dict):
                return ToolResult.failed(call.id, "arguments must be a JSON object", name=call.name)
            output = await tool(arguments)
        except (InvalidArguments, ValidationError, ToolFailed) as exc:
            return ToolResult.failed(call.id, str(exc), name=call.name)
        return ToolResult.of(call.id, output, name=call.name)


@dataclass(frozen=True, slots=True)
class EngineTools:
    """Tools of ``base`` plus the tools a context engine offers (e.g. search of compacted history).

    A call to one of the engine's tools goes to :meth:`ContextEngine.handle_tool_call`;
    every other call goes to ``base``. An engine error becomes an error result.
    """

    base: ToolExecutor
    """The agent's own tools."""
    engine: ContextEngine
    """The conversation's context engine."""

    def _engine_names(self) -> frozenset[str]:
        names = set()
        for schema in self.engine.tool_schemas():
            function = schema.get("function")
            if isinstance(function, dict) and isinstance(function.get("name"), str):
                names.add(str(function["name"]))
        return frozenset(names)

    def schemas(self) -> tuple[JsonObject, ...]:
        """The agent's schemas followed by the engine's."""
        return (*self.base.schemas(), *self.engine.tool_schemas())

    async def execute(self, call: ToolCall) -> ToolResult:
        """Route ``call`` to the engine when it names one of the engine's tools."""
        if call.name not in self._engine_names():
            return await self.base.execute(call)
        try:
            arguments = call.parsed_arguments
            if not isinstance(arguments, dict):
                raise InvalidArguments(call.name, call.arguments)
            output = await self.engine.handle_tool_call(call.name, arguments)
        except (ForgeAppError, ForgeDomainError) as exc:
            return ToolResult.failed(call.id, str(exc), name=call.name)
        return ToolResult.of(call.id, output, name=call.name)
