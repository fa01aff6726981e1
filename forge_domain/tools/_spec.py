"""How one tool's calls are summarised: a :class:`ToolSpec`, and reading one from plain data.

A spec names the summary kind, the argument(s) holding the resource (path, command,
pattern, URL …), the arguments that must be present, and optional conditions on
argument values (``when: {command: view}``), so one tool name can map to several
kinds (OpenHands' ``str_replace_editor``). Plain data, as loaded from YAML::

    my_reader: {kind: file_read, path_arg: filename}
    editor:
      - {kind: file_read, when: {command: view}, path_arg: path}
      - {kind: file_update, when: {command: write}, path_arg: path}
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import Literal, cast, get_args

from pydantic import BaseModel, ConfigDict, Field

from forge_domain._errors import InvalidToolSpec
from forge_domain._json import JsonObject, JsonValue
from forge_domain.tools._kinds import TOOL_KINDS, ToolKind, ToolKindDefinition

ARG_KEYS = (
    "arg",
    "args",
    "path_arg",
    "command_arg",
    "pattern_arg",
    "url_arg",
    "question_arg",
    "name_arg",
    "agent_arg",
    "todos_arg",
)
"""Keys of the plain-data form that name the resource argument(s); all mean the same."""

SpecFormat = Literal["value", "patch"]
"""``patch``: the argument holds patch text whose ``*** Update File:`` lines name the files."""


class ToolSpec(BaseModel):
    """How calls of one tool (or one mode of it) become summary items."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: ToolKind
    """The summary kind."""
    args: tuple[str, ...] = ()
    """Arguments holding the resource, tried in order; empty means the kind's default."""
    required: tuple[str, ...] = ()
    """Arguments that must be present; ``"a|b"`` means either one."""
    when: dict[str, str] = Field(default_factory=dict)
    """Argument values this spec applies to (``{"command": "view"}``)."""
    format: SpecFormat = "value"
    """How the resource argument is read."""
    path_from_output: str | None = None
    """A regex whose group 1 finds the path in the tool's output when no argument names it."""
    content_key: str = "content"
    """For ``todo_write``: the key of an item's text (Codex ``update_plan`` uses ``step``)."""

    @property
    def resource_args(self) -> tuple[str, ...]:
        """The argument names to read the resource from (by default, the kind's ``args``)."""
        return self.args or ToolKindDefinition.of(self.kind).args

    @cached_property
    def required_alternatives(self) -> tuple[tuple[str, ...], ...]:
        """``required`` with each ``"a|b"`` split into its alternatives (worked out once)."""
        return tuple(tuple(required.split("|")) for required in self.required)

    def applies_to(self, arguments: JsonObject) -> bool:
        """Return True when the required arguments are present and ``when`` holds."""
        get = arguments.get
        for alternatives in self.required_alternatives:
            for name in alternatives:
                if get(name) is not None:
                    break
            else:
                return False
        return not self.when or all(get(name) == value for name, value in self.when.items())

    @classmethod
    def from_data(cls, tool: str, data: JsonValue) -> ToolSpec:
        """Read a spec from plain data (a YAML mapping).

        Raises:
            InvalidToolSpec: naming the tool and what is wrong with its entry.
        """
        if not isinstance(data, dict):
            raise InvalidToolSpec(tool, f"expected a mapping, got {type(data).__name__}")
        allowed = {"kind", "required", "when", "format", "path_from_output", "content_key"}
        unknown = sorted(set(data) - allowed - set(ARG_KEYS))
        if unknown:
            known = ", ".join(sorted(allowed | set(ARG_KEYS)))
            raise InvalidToolSpec(tool, f"unknown key(s) {', '.join(unknown)}; known: {known}")
        kind = data.get("kind")
        if kind not in TOOL_KINDS:
            raise InvalidToolSpec(
                tool, f"kind must be one of {', '.join(TOOL_KINDS)}; got {kind!r}"
            )
        args: list[str] = []
        for key in ARG_KEYS:
            if key in data:
                args.extend(_names(tool, key, data[key]))
        spec_format = data.get("format", "value")
        if spec_format not in get_args(SpecFormat):
            raise InvalidToolSpec(tool, f"format must be 'value' or 'patch'; got {spec_format!r}")
        return cls(
            kind=kind,
            args=tuple(args),
            required=_names(tool, "required", data.get("required", [])),
            when=_conditions(tool, data.get("when", {})),
            format=cast(SpecFormat, spec_format),
            path_from_output=_regex(tool, data.get("path_from_output")),
            content_key=_text(tool, "content_key", data.get("content_key", "content")),
        )


def _names(tool: str, key: str, value: JsonValue) -> tuple[str, ...]:
    if isinstance(value, str) and value:
        return (value,)
    if isinstance(value, list) and all(isinstance(item, str) and item for item in value):
        return tuple(cast(list[str], value))
    raise InvalidToolSpec(tool, f"{key} must be an argument name or a list of them; got {value!r}")


def _text(tool: str, key: str, value: JsonValue) -> str:
    if isinstance(value, str) and value:
        return value
    raise InvalidToolSpec(tool, f"{key} must be a non-empty string; got {value!r}")


def _conditions(tool: str, value: JsonValue) -> dict[str, str]:
    if isinstance(value, dict) and all(isinstance(item, str) for item in value.values()):
        return cast(dict[str, str], value)
    raise InvalidToolSpec(tool, f"when must map argument names to strings; got {value!r}")


def _regex(tool: str, value: JsonValue) -> str | None:
    if value is None:
        return None
    pattern = _text(tool, "path_from_output", value)
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise InvalidToolSpec(tool, f"path_from_output is not a regex: {exc}") from exc
    if compiled.groups < 1:
        raise InvalidToolSpec(tool, f"path_from_output needs a capture group: {pattern!r}")
    return pattern
