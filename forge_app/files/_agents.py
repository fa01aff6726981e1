"""Agent definitions from files: a ``forge.yaml``-like YAML file or Markdown with front matter.

YAML::

    compact:                 # defaults merged under every agent (agent fields win)
      retention_window: 6
    model: gpt-4o-mini       # also defaults: max_turns, context_length, base_url, api_key_env
    agents:
      - id: coder
        system_prompt: You write code.
        compact:
          eviction_window: 0.3

``agents`` may also be a mapping from id to definition (forge's older layout).
A Markdown agent file holds the definition in YAML front matter between two
``---`` lines; the body is the system prompt and ``id`` defaults to the file
name. Unknown keys are errors, and every error names the file, the line and
the field (``agents[1].compact.eviction_window``). The deprecated forge
``transforms:`` list is accepted with a :class:`DeprecatedAgentSyntax` warning
and mapped onto ``compact:``.
"""

from __future__ import annotations

import importlib.resources
import warnings
from pathlib import Path
from typing import NoReturn, cast

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails

from forge_app.errors import AgentNotFound, InvalidAgentFile
from forge_domain import Agent, Compact

Path_ = tuple[str | int, ...]
_METADATA_KEYS = frozenset({"title", "description"})
"""Keys forge's agent files carry for people; accepted and ignored."""
_DEFAULT_KEYS = ("model", "max_turns", "context_length", "base_url", "api_key_env")


class DeprecatedAgentSyntax(DeprecationWarning):
    """An agent file uses syntax that still works but should be rewritten."""


class AgentFile(BaseModel):
    """The agents defined in one file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: Path
    """The file they were read from."""
    agents: tuple[Agent, ...] = Field(min_length=1)
    """The agents, in file order."""

    def get(self, agent_id: str) -> Agent:
        """The agent called ``agent_id``.

        Raises:
            AgentNotFound: no agent has that id.
        """
        for agent in self.agents:
            if agent.id == agent_id:
                return agent
        raise AgentNotFound(self.path, agent_id, tuple(a.id for a in self.agents))

    @property
    def first(self) -> Agent:
        """The first agent of the file (the default one)."""
        return self.agents[0]


class _Defaults(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    compact: Compact | None = None
    model: str | None = None
    max_turns: int | None = Field(default=None, ge=1)
    context_length: int | None = Field(default=None, ge=0)
    base_url: str | None = None
    api_key_env: str | None = None


def _field_name(path: Path_) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


class _Document:
    """A YAML document turned into plain values, remembering where each came from."""

    def __init__(self, path: Path, text: str, line_offset: int = 0) -> None:
        self.path = path
        self.offset = line_offset
        self.lines: dict[Path_, int] = {}
        self.key_lines: dict[Path_, int] = {}
        loader = yaml.SafeLoader(text)
        try:
            node = loader.get_single_node()
            self.value: object = None if node is None else self._convert(loader, node, ())
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line = mark.line + 1 + self.offset if mark is not None else None
            problem = " ".join(p for p in (exc.context, exc.problem) if p)
            raise InvalidAgentFile(path, line, "", f"invalid YAML: {problem}") from exc
        finally:
            loader.dispose()

    def _convert(self, loader: yaml.SafeLoader, node: yaml.Node, at: Path_) -> object:
        self.lines[at] = node.start_mark.line + 1 + self.offset
        if isinstance(node, yaml.MappingNode):
            loader.flatten_mapping(node)
            out: dict[str, object] = {}
            for key_node, value_node in node.value:
                key = loader.construct_object(key_node)
                line = key_node.start_mark.line + 1 + self.offset
                if not isinstance(key, str):
                    self.fail(line, at, f"keys must be strings, got {key!r}")
                if key in out:
                    first = self.key_lines[(*at, key)]
                    self.fail(line, (*at, key), f"duplicate key (first given on line {first})")
                self.key_lines[(*at, key)] = line
                out[key] = self._convert(loader, value_node, (*at, key))
            return out
        if isinstance(node, yaml.SequenceNode):
            return [self._convert(loader, item, (*at, i)) for i, item in enumerate(node.value)]
        return loader.construct_object(node, deep=True)

    def line_of(self, at: Path_, *, key: bool = False) -> int | None:
        """Line of the value (or key) at ``at``, else of its closest located parent."""
        if key and at in self.key_lines:
            return self.key_lines[at]
        probe = at
        while probe not in self.lines and probe:
            probe = probe[:-1]
        return self.lines.get(probe)

    def fail(self, line: int | None, at: Path_, problem: str) -> NoReturn:
        raise InvalidAgentFile(self.path, line, _field_name(at), problem)

    def invalid(self, error: ValidationError, at: Path_) -> InvalidAgentFile:
        """The first (topmost) validation error, located."""
        first = min(error.errors(), key=lambda e: self.line_of((*at, *e["loc"])) or 0)
        where = (*at, *first["loc"])
        if first["type"] == "extra_forbidden":
            line = self.line_of(where, key=True)
            return InvalidAgentFile(self.path, line, _field_name(where), "unknown key")
        return InvalidAgentFile(self.path, self.line_of(where), _field_name(where), _problem(first))


def _problem(error: ErrorDetails) -> str:
    if error["type"] == "value_error":
        cause = error.get("ctx", {}).get("error")
        return str(cause) if cause is not None else error["msg"]
    if error["type"] == "missing":
        return "required"
    return f"{error['msg'][0].lower()}{error['msg'][1:]}, got {error['input']!r}"


def _mapping(doc: _Document, value: object, at: Path_) -> dict[str, object]:
    if not isinstance(value, dict):
        doc.fail(doc.line_of(at), at, f"expected a mapping, got {type(value).__name__}")
    return cast(dict[str, object], value)


def _migrate_transforms(doc: _Document, data: dict[str, object], at: Path_) -> None:
    """Map forge's deprecated ``transforms: [{assistant: {...}}]`` onto ``compact:``."""
    where = (*at, "transforms")
    transforms = data.pop("transforms")
    if not isinstance(transforms, list):
        doc.fail(doc.line_of(where), where, "expected a list of transforms")
    token_limit: object = None
    for index, item in enumerate(transforms):
        kind, settings = (
            next(iter(item.items())) if isinstance(item, dict) and item else (None, None)
        )
        if kind != "assistant":
            doc.fail(
                doc.line_of((*where, index)),
                (*where, index),
                f"transform {kind!r} is no longer supported; remove it "
                "(compaction is configured with the agent's `compact:` block)",
            )
        if isinstance(settings, dict) and "token_limit" in settings:
            token_limit = settings["token_limit"]
    compact = _mapping(doc, data.setdefault("compact", {}), (*at, "compact"))
    instead = "compact: {}"
    if token_limit is not None and "token_threshold" not in compact:
        compact["token_threshold"] = token_limit
        instead = f"compact: {{token_threshold: {token_limit}}}"
    warnings.warn(
        f"{doc.path}:{doc.line_of(where, key=True)}: {_field_name(where)} is deprecated: "
        f"the assistant transform is replaced by the agent's `compact:` block; "
        f"write `{instead}` instead",
        DeprecatedAgentSyntax,
        stacklevel=4,
    )


def _agent(
    doc: _Document,
    raw: object,
    at: Path_,
    defaults: _Defaults,
    *,
    default_id: str | None = None,
    body: str | None = None,
) -> Agent:
    data = dict(_mapping(doc, raw, at))
    for key in _METADATA_KEYS:
        data.pop(key, None)
    if "transforms" in data:
        _migrate_transforms(doc, data, at)
    if default_id is not None:
        data.setdefault("id", default_id)
    if body is not None:
        if "system_prompt" in data:
            doc.fail(
                doc.line_of((*at, "system_prompt"), key=True),
                (*at, "system_prompt"),
                "given in the front matter and as the Markdown body; keep one",
            )
        data["system_prompt"] = body
    for key in _DEFAULT_KEYS:
        value = getattr(defaults, key)
        if value is not None:
            data.setdefault(key, value)
    try:
        agent = Agent.model_validate(data)
    except ValidationError as exc:
        raise doc.invalid(exc, at) from exc
    if defaults.compact is not None:
        agent = agent.model_copy(update={"compact": defaults.compact.merged_with(agent.compact)})
    return agent


def parse_agents(text: str, path: Path | str = "<string>") -> AgentFile:
    """Read a YAML agents file from ``text`` (``path`` is used in errors)."""
    doc = _Document(Path(path), text)
    top = _mapping(doc, doc.value if doc.value is not None else {}, ())
    settings = {k: v for k, v in top.items() if k != "agents"}
    try:
        defaults = _Defaults.model_validate(settings)
    except ValidationError as exc:
        raise doc.invalid(exc, ()) from exc
    if "agents" not in top:
        doc.fail(1, ("agents",), "required: the file defines no agents")
    raw = top["agents"]
    if isinstance(raw, list):
        items: list[tuple[Path_, object, str | None]] = [
            (("agents", i), item, None) for i, item in enumerate(raw)
        ]
    elif isinstance(raw, dict):
        items = [(("agents", key), item, key) for key, item in raw.items()]
    else:
        doc.fail(doc.line_of(("agents",)), ("agents",), "expected a list of agents")
    if not items:
        doc.fail(doc.line_of(("agents",)), ("agents",), "the list of agents is empty")
    agents = [_agent(doc, item, at, defaults, default_id=key) for at, item, key in items]
    seen: dict[str, int] = {}
    for (at, _, _), agent in zip(items, agents, strict=True):
        if agent.id in seen:
            doc.fail(doc.line_of((*at, "id")), (*at, "id"), f"duplicate agent id {agent.id!r}")
        seen[agent.id] = 0
    return AgentFile(path=Path(path), agents=tuple(agents))


def parse_agent_markdown(text: str, path: Path | str = "<string>") -> AgentFile:
    """Read a Markdown agent (YAML front matter plus a system-prompt body)."""
    file = Path(path)
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise InvalidAgentFile(file, 1, "", "expected YAML front matter opened by a '---' line")
    closing = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if closing is None:
        raise InvalidAgentFile(file, 1, "", "the front matter is never closed by a '---' line")
    doc = _Document(file, "".join(lines[1:closing]), line_offset=1)
    raw = doc.value if doc.value is not None else {}
    body = "".join(lines[closing + 1 :]).strip() or None
    agent = _agent(doc, raw, (), _Defaults(), default_id=file.stem, body=body)
    return AgentFile(path=file, agents=(agent,))


def load_agents(path: Path | str) -> AgentFile:
    """Read an agent file: ``.md`` is Markdown with front matter, anything else YAML.

    Raises:
        InvalidAgentFile: naming the file, line and field at fault.
        FileNotFoundError: the file does not exist.
    """
    file = Path(path)
    text = file.read_text(encoding="utf-8")
    if file.suffix.lower() in (".md", ".markdown"):
        return parse_agent_markdown(text, file)
    return parse_agents(text, file)


def load_agent(path: Path | str, agent_id: str | None = None) -> Agent:
    """One agent of a file: ``agent_id``, or the first one."""
    agents = load_agents(path)
    return agents.first if agent_id is None else agents.get(agent_id)


DEFAULT_AGENT_RESOURCE = "default_agent.yaml"
"""The bundled default agent (the same as the first agent of ``examples/forge.yaml``)."""


def default_agent() -> Agent:
    """The bundled default agent (offline compaction of real sessions)."""
    resource = importlib.resources.files("forge_app").joinpath(DEFAULT_AGENT_RESOURCE)
    return parse_agents(
        resource.read_text(encoding="utf-8"), f"forge_app/{DEFAULT_AGENT_RESOURCE}"
    ).first
