"""Load forge's conformance vectors and convert forge's message JSON into our models.

The vectors live in ``/work/shared/reference/forge-vectors.json`` (override with the
``FORGE_VECTORS`` environment variable). Every key except ``_meta`` is a list of
entries ``{input, expected, source, [note], [expected_range]}``.

Public helpers, shared by every test package:

* :func:`load_vectors` — the entries of one key, as plain dicts;
* :func:`vector_params` — the same entries as ``pytest.param`` rows with readable ids;
* :func:`message_from_forge` — one forge ``MessageEntry`` (serde JSON) as a
  :class:`~forge_domain.TextMessage` or :class:`~forge_domain.ToolResult`;
* :func:`context_from_forge` — a list of entries as a :class:`~forge_domain.Context`;
* :func:`usage_from_forge` / :func:`strategy_from_forge` — forge's usage and strategy JSON.

Conversion rules (forge shape -> ours):

* ``{"text": {role, content, tool_calls?, reasoning_details?, droppable?}}`` -> ``TextMessage``;
  roles ``System``/``User``/``Assistant`` map to :class:`~forge_domain.Role`; a tool call
  ``{name, call_id, arguments}`` becomes ``ToolCall(id=call_id, ...)`` whose parsed
  ``arguments`` dict is written as compact JSON
  (``json.dumps(args, ensure_ascii=False, separators=(",", ":"), sort_keys=True)``, the
  text forge counts) and whose raw string ``arguments`` is kept as is; ``tool_calls: []``
  stays an empty tuple (forge counts it as a tool call);
* ``{"tool": {name, call_id, output: {is_error, values}}}`` -> ``ToolResult``; a single
  ``text`` value becomes string content, anything else a tuple of parts (``text`` ->
  ``TextPart``, ``image`` -> ``ImagePart``, ``aI`` / ``empty`` -> ``OtherPart``, which
  count 0 tokens like in forge); a missing ``call_id`` becomes ``""``;
* ``{"image": {url, mime_type}}`` -> ``TextMessage.image(url)``;
* an entry-level ``"usage"`` (``{"actual": n}`` / ``{"approx": n}`` token counts) becomes
  the message's :class:`~forge_domain.Usage`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import cast

import pytest
from _pytest.mark import ParameterSet

from forge_domain import (
    CompactionStrategy,
    ContentPart,
    Context,
    ContextMessage,
    ImagePart,
    JsonObject,
    JsonValue,
    OtherPart,
    Role,
    TextMessage,
    TextPart,
    TokenCount,
    ToolCall,
    ToolResult,
    Usage,
)

VECTORS_PATH = Path(os.environ.get("FORGE_VECTORS", "/work/shared/reference/forge-vectors.json"))
"""Where the vectors file is read from."""

_ROLES = {"System": Role.SYSTEM, "User": Role.USER, "Assistant": Role.ASSISTANT}


@cache
def _document() -> JsonObject:
    return cast(JsonObject, json.loads(VECTORS_PATH.read_text(encoding="utf-8")))


def load_vectors(key: str) -> list[JsonObject]:
    """The entries of ``key`` (``find_sequence_preserving_last_n`` …), in file order.

    Each entry is a fresh dict, so tests may not corrupt one another's data.

    Raises:
        KeyError: when the file has no such key.
    """
    entries = _document()[key]
    assert isinstance(entries, list)
    return [cast(JsonObject, json.loads(json.dumps(entry))) for entry in entries]


def vector_id(entry: JsonObject, index: int) -> str:
    """A short pytest id: the forge test name (or ``derived``) and the entry's index."""
    source = str(entry.get("source", ""))
    match = re.search(r":(test_\w+)", source)
    name = match.group(1).removeprefix("test_") if match else "derived"
    return f"{index}-{name}"


def vector_params(
    key: str,
    *,
    where: Callable[[JsonObject], bool] = lambda entry: True,
    marks: Sequence[pytest.MarkDecorator] = (),
) -> list[ParameterSet]:
    """``pytest.param(entry, id=...)`` for every entry of ``key`` that ``where`` accepts.

    The index in the id is the entry's position in the whole list, so an id stays
    stable when a filter changes.
    """
    return [
        pytest.param(entry, id=vector_id(entry, index), marks=tuple(marks))
        for index, entry in enumerate(load_vectors(key))
        if where(entry)
    ]


def compact_json(value: JsonValue) -> str:
    """JSON text as forge counts it: compact, keys sorted, non-ASCII unescaped."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _token_count(raw: JsonValue) -> TokenCount:
    if raw is None:
        return TokenCount()
    if not isinstance(raw, dict) or len(raw) != 1:
        raise ValueError(f"not a forge token count: {raw!r}")
    ((kind, value),) = raw.items()
    if not isinstance(value, int):
        raise ValueError(f"not a forge token count: {raw!r}")
    return TokenCount.actual(value) if kind == "actual" else TokenCount.approx(value)


def usage_from_forge(raw: JsonObject) -> Usage:
    """Forge's ``Usage`` serde JSON as our :class:`~forge_domain.Usage`."""
    cost = raw.get("cost")
    return Usage(
        prompt_tokens=_token_count(raw.get("prompt_tokens")),
        completion_tokens=_token_count(raw.get("completion_tokens")),
        total_tokens=_token_count(raw.get("total_tokens")),
        cached_tokens=_token_count(raw.get("cached_tokens")),
        cost=float(cost) if isinstance(cost, int | float) else None,
    )


def _tool_call(raw: JsonObject) -> ToolCall:
    arguments = raw.get("arguments")
    call_id = raw.get("call_id")
    name = raw.get("name")
    assert isinstance(name, str), raw
    return ToolCall(
        id=call_id if isinstance(call_id, str) else "",
        name=name,
        arguments=arguments if isinstance(arguments, str) else compact_json(arguments),
    )


def _tool_value(raw: JsonValue) -> ContentPart:
    if isinstance(raw, dict) and isinstance(raw.get("text"), str):
        return TextPart(text=cast(str, raw["text"]))
    if isinstance(raw, dict) and isinstance(raw.get("image"), dict):
        image = cast(JsonObject, raw["image"])
        return ImagePart(url=str(image.get("url", "")))
    if isinstance(raw, dict):
        return OtherPart(raw=raw)
    return OtherPart(raw={"type": str(raw)})


def _text(raw: JsonObject) -> TextMessage:
    role = _ROLES[str(raw["role"])]
    content = raw.get("content")
    calls = raw.get("tool_calls")
    details = raw.get("reasoning_details")
    return TextMessage(
        role=role,
        content=content if isinstance(content, str) else None,
        tool_calls=None
        if calls is None
        else tuple(_tool_call(cast(JsonObject, call)) for call in cast(list[JsonValue], calls)),
        reasoning_details=None
        if details is None
        else tuple(cast(JsonObject, detail) for detail in cast(list[JsonValue], details)),
        droppable=bool(raw.get("droppable", False)),
    )


def _tool(raw: JsonObject) -> ToolResult:
    output = cast(JsonObject, raw["output"])
    values = cast(list[JsonValue], output.get("values", []))
    parts = tuple(_tool_value(value) for value in values)
    content: str | tuple[ContentPart, ...]
    if not parts:
        content = ""
    elif len(parts) == 1 and isinstance(parts[0], TextPart):
        content = parts[0].text
    else:
        content = parts
    call_id = raw.get("call_id")
    name = raw.get("name")
    return ToolResult(
        call_id=call_id if isinstance(call_id, str) else "",
        name=name if isinstance(name, str) else None,
        content=content,
        is_error=bool(output.get("is_error", False)),
    )


def message_from_forge(entry: JsonObject) -> ContextMessage:
    """One forge ``MessageEntry`` (``{"text": ...}``, ``{"tool": ...}`` or ``{"image": ...}``).

    Raises:
        ValueError: when the entry has none of the three kinds.
    """
    message: ContextMessage
    if isinstance(entry.get("text"), dict):
        message = _text(cast(JsonObject, entry["text"]))
    elif isinstance(entry.get("tool"), dict):
        message = _tool(cast(JsonObject, entry["tool"]))
    elif isinstance(entry.get("image"), dict):
        message = TextMessage.image(str(cast(JsonObject, entry["image"]).get("url", "")))
    else:
        raise ValueError(f"not a forge message entry: {entry!r}")
    usage = entry.get("usage")
    if isinstance(usage, dict):
        message = message.model_copy(update={"usage": usage_from_forge(usage)})
    return message


def context_from_forge(entries: Sequence[JsonValue]) -> Context:
    """A list of forge message entries as a :class:`~forge_domain.Context`."""
    return Context(message_from_forge(cast(JsonObject, entry)) for entry in entries)


def strategy_from_forge(raw: JsonValue) -> CompactionStrategy:
    """``["evict", p]`` / ``["retain", n]`` / ``["min"|"max", s1, s2]`` as a strategy."""
    match raw:
        case ["evict", float() | int() as percentage]:
            return CompactionStrategy.evict(float(percentage))
        case ["retain", int() as count]:
            return CompactionStrategy.retain(count)
        case ["min", left, right]:
            return strategy_from_forge(left).min(strategy_from_forge(right))
        case ["max", left, right]:
            return strategy_from_forge(left).max(strategy_from_forge(right))
        case _:
            raise ValueError(f"not a forge strategy: {raw!r}")
