"""The cheap tier: replace old tool outputs with one-line placeholders, no model involved.

Outside the protected tail every tool result longer than a few lines has its
content replaced by a line saying what was called, on what, how it went (with
the evidence of a failure) and how big the output was::

    [tool output pruned: bash `make` -> failed: No rule to make target | exit code 2, 812 chars]
    [tool output pruned: bash `ls -R` -> ok, 9,120 chars]
    [tool output pruned: read `src/app.py`, 2,301 chars]

How it went is the catalog's reading (:meth:`ToolCatalog.outcome`): ``ok`` only when
the output shows success, nothing when it shows neither success nor failure.

An output identical to an earlier one becomes a pointer to that earlier call, still
saying how this call went (``[tool output pruned: bash `pytest` (same output as call
c1) -> failed: E   assert 1 == 2, 812 chars]``).
Every tool result message stays where it was (only its content changes), so
call/result pairs remain valid; user messages and the protected tail are never
touched.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from forge_app.compaction._messages import with_content
from forge_app.summary._redaction import redact
from forge_domain import Context, ContextMessage, ImagePart, TextMessage, ToolCall, ToolResult
from forge_domain.tools import (
    PRUNED_MARKER,
    TOOL_KIND_TABLE,
    ToolCatalog,
    ToolKindDefinition,
    pruned_output,
)

__all__ = ["Pruned", "prune_tool_outputs"]

MIN_PRUNED_CHARS = 200
"""Outputs up to this many characters are kept: a placeholder would not be shorter."""
_TARGET_FIRST = (
    "command",
    "cmd",
    "file_path",
    "path",
    "filepath",
    "filename",
    "pattern",
    "glob",
    "query",
)
"""Arguments that say most about a call, tried first: a command, a file, a pattern (as
several agents spell them)."""


def _target_keys(rows: Iterable[ToolKindDefinition]) -> tuple[str, ...]:
    """``_TARGET_FIRST``, then the default arguments of every kind (of ``rows``) whose
    resource is a string: the arguments that say what a call acted on, in the order tried."""
    kind_args = (n for row in rows if row.reading in ("path", "value", "command") for n in row.args)
    return tuple(dict.fromkeys((*_TARGET_FIRST, *kind_args)))


_TARGET_KEYS = _target_keys(TOOL_KIND_TABLE)
_TARGET_CHARS = 80
_EVIDENCE_CHARS = 160
"""Most characters of a failure's evidence a placeholder keeps."""


@dataclass(frozen=True, slots=True)
class Pruned:
    """The context after pruning and what was pruned."""

    context: Context
    """The pruned context (the input itself when nothing was pruned)."""
    indices: tuple[int, ...]
    """Indices of the tool results whose content was replaced."""


def call_target(call: ToolCall) -> str | None:
    """The argument that says what a call acted on (command, path, pattern …), shortened."""
    if not call.has_valid_arguments():
        return None
    arguments = call.parsed_arguments
    if not isinstance(arguments, dict):
        return None
    value = next((arguments[key] for key in _TARGET_KEYS if key in arguments), None)
    if value is None:
        value = next((v for v in arguments.values() if isinstance(v, str) and v), None)
    if value is None:
        return None
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return _cut(_one_line(text).replace("`", "'"), _TARGET_CHARS)  # it goes in a code span


def describe_call(call: ToolCall | None, result: ToolResult) -> str:
    """``name `target``` for the call that produced ``result`` (as much as is known)."""
    name = call.name if call is not None else (result.name or "tool")
    target = call_target(call) if call is not None else None
    return f"{name} `{target}`" if target else name


def _size(result: ToolResult) -> str:
    chars = len(result.text)
    images = (
        0
        if isinstance(result.content, str)
        else sum(isinstance(part, ImagePart) for part in result.content)
    )
    size = f"{chars:,} chars"
    return size if not images else f"{size}, {images} image{'s' if images > 1 else ''}"


def _one_line(text: str) -> str:
    """``text`` redacted, on one line."""
    return " ".join(redact(text).split())


def _cut(line: str, limit: int) -> str:
    """``line`` cut to ``limit`` characters, the cut marked ``…``."""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def placeholder(
    call: ToolCall | None, result: ToolResult, catalog: ToolCatalog | None = None
) -> str:
    """The one-line placeholder for a pruned result: what was called, how it went (the
    catalog's reading; nothing when it cannot be known) with the evidence of an error,
    and the output's size."""
    catalog = catalog if catalog is not None else ToolCatalog.default()
    output = result.text
    outcome = catalog.outcome(result, output)
    evidence = catalog.evidence(result, output, outcome)
    shown = None if evidence is None else _cut(_one_line(evidence), _EVIDENCE_CHARS)
    return pruned_output(describe_call(call, result), outcome, shown, _size(result))


def duplicate_pointer(
    call: ToolCall | None,
    result: ToolResult,
    earlier_id: str,
    catalog: ToolCatalog | None = None,
) -> str:
    """The placeholder for a result identical to the output of call ``earlier_id``: the
    pointer, and how this call went (with its evidence) as :func:`placeholder` says it,
    since the earlier output may be pruned or summarised away."""
    catalog = catalog if catalog is not None else ToolCatalog.default()
    output = result.text
    outcome = catalog.outcome(result, output)
    evidence = catalog.evidence(result, output, outcome)
    shown = None if evidence is None else _cut(_one_line(evidence), _EVIDENCE_CHARS)
    described = f"{describe_call(call, result)} (same output as call {earlier_id})"
    return pruned_output(described, outcome, shown, _size(result))


def _is_prunable(result: ToolResult) -> bool:
    if result.text.startswith(PRUNED_MARKER):
        return False
    has_images = not isinstance(result.content, str) and any(
        isinstance(part, ImagePart) for part in result.content
    )
    return has_images or len(result.text) > MIN_PRUNED_CHARS


def prune_tool_outputs(
    messages: Context | Sequence[ContextMessage],
    protect_from: int,
    catalog: ToolCatalog | None = None,
) -> Pruned:
    """Replace the content of prunable tool results before index ``protect_from``.

    A result whose text equals an earlier result's text points to that earlier
    call instead of describing itself. A placeholder replaces an output only when it is
    shorter. ``catalog`` reads how calls went (the built-in one when None).
    """
    catalog = catalog if catalog is not None else ToolCatalog.default()
    calls: dict[str, ToolCall] = {}
    first_seen: dict[str, str] = {}
    replaced: list[ContextMessage] = list(messages)
    indices: list[int] = []
    for index, message in enumerate(messages):
        if isinstance(message, TextMessage):
            if message.tool_calls:  # (most messages of a chat have none: no generator)
                calls.update((call.id, call) for call in message.tool_calls)
            continue
        earlier = first_seen.setdefault(message.text, message.call_id) if message.text else None
        if index >= protect_from or not _is_prunable(message):
            continue
        call = calls.get(message.call_id)
        if earlier is not None and earlier != message.call_id:
            text = duplicate_pointer(call, message, earlier, catalog)
        else:
            text = placeholder(call, message, catalog)
        if len(text) >= len(message.text) and isinstance(message.content, str):
            continue
        replaced[index] = with_content(message, text)
        indices.append(index)
    if not indices:
        context = messages if isinstance(messages, Context) else Context(messages)
        return Pruned(context, ())
    return Pruned(Context(replaced, usage_floor=len(replaced)), tuple(indices))
