"""Turn a span of messages into the text a summarising model reads.

One block per message, secrets redacted, with three limits: per message
(long texts keep their head and tail around a visible cut), per tool-call
argument, and on the total (blocks are left out from the middle of the span,
visibly, until it fits: the oldest and newest turns matter most).

:func:`serialize_span` gives a whole span; :func:`serialize_excerpts` only the
latest messages of one (and its last error output), each cut short, for a
summariser that reads the span's deterministic record instead of its turns.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from forge_app.summary._redaction import redact_for_model as redact
from forge_domain import ContextMessage, ImagePart, OtherPart, TextMessage, ToolResult

__all__ = ["SerializationLimits"]

_THINK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>\s*", re.DOTALL | re.IGNORECASE)


class SerializationLimits(BaseModel):
    """Character limits of the summariser's input."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    message_chars: int = Field(default=6_000, ge=100)
    """A message text longer than this is cut to its head and tail."""
    head_chars: int = Field(default=4_000, ge=0)
    """Characters kept from the start of a cut message."""
    tail_chars: int = Field(default=1_500, ge=0)
    """Characters kept from the end of a cut message."""
    argument_chars: int = Field(default=1_200, ge=20)
    """Tool-call arguments are cut to this many characters."""
    total_chars: int = Field(default=200_000, ge=1_000)
    """The whole serialised span is kept under this many characters."""


def cut(text: str, limits: SerializationLimits) -> str:
    """Keep the head and tail of a text longer than ``limits.message_chars``."""
    if len(text) <= limits.message_chars:
        return text
    dropped = len(text) - limits.head_chars - limits.tail_chars
    tail = text[len(text) - limits.tail_chars :] if limits.tail_chars else ""
    return f"{text[: limits.head_chars]}\n…[{dropped:,} chars cut]…\n{tail}"


def _content_text(message: ContextMessage) -> str:
    content = message.content
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    pieces: list[str] = []
    for part in content:
        if isinstance(part, ImagePart):
            pieces.append("[image]" if part.url.startswith("data:") else f"[image: {part.url}]")
        elif isinstance(part, OtherPart):
            pieces.append(f"[{part.raw.get('type', 'attachment')}]")
        else:
            pieces.append(part.text)
    return "\n".join(pieces)


def _arguments(arguments: str, limits: SerializationLimits) -> str:
    text = redact(arguments)
    if len(text) <= limits.argument_chars:
        return text
    return f"{text[: limits.argument_chars]}…[{len(text) - limits.argument_chars:,} chars cut]"


def serialize_message(message: ContextMessage, limits: SerializationLimits) -> str:
    """One block: a bracketed label, then the redacted, cut text (and calls)."""
    text = _content_text(message)
    if isinstance(message, ToolResult):
        outcome = " (failed)" if message.is_error else ""
        name = f" {message.name}" if message.name else ""
        return f"[TOOL RESULT{name} {message.call_id}{outcome}]: {cut(redact(text), limits)}"
    assert isinstance(message, TextMessage)
    if message.role.value == "assistant":
        text = _THINK.sub("", text)
    block = f"[{message.role.value.upper()}]: {cut(redact(text), limits)}"
    if message.tool_calls:
        calls = "\n".join(
            f"  {call.name}({_arguments(call.arguments, limits)}) id={call.id}"
            for call in message.tool_calls
        )
        block += f"\n[TOOL CALLS:\n{calls}\n]"
    return block


def serialize_span(messages: Sequence[ContextMessage], limits: SerializationLimits) -> str:
    """The blocks of ``messages`` joined by blank lines, within ``limits.total_chars``."""
    blocks = [serialize_message(message, limits) for message in messages]
    total = sum(len(block) + 2 for block in blocks)
    if total <= limits.total_chars:
        return "\n\n".join(blocks)
    keep_head = [blocks[0][: limits.total_chars // 2]]
    rest = blocks[1:]
    budget = limits.total_chars - sum(len(block) + 2 for block in keep_head) - 80
    kept_tail: list[str] = []
    for block in reversed(rest):
        if len(block) + 2 > budget:
            break
        kept_tail.append(block)
        budget -= len(block) + 2
    kept_tail.reverse()
    omitted = len(rest) - len(kept_tail)
    marker = f"[… {omitted} older messages left out to fit the summariser's input limit …]"
    return "\n\n".join([*keep_head, marker, *kept_tail])


def serialize_excerpts(
    messages: Sequence[ContextMessage], *, max_chars: int, keep: int | None = None
) -> str:
    """Blocks of the latest ``messages`` (oldest first) within about ``max_chars``.

    Each message is cut to about a quarter of ``max_chars`` (its head and tail).
    ``messages[keep]`` (the last error output) is taken first, then messages
    walking back from the last one while they fit; messages left out are
    marked by how many there were.
    """
    per = max(100, max_chars // 4)
    limits = SerializationLimits(
        message_chars=per,
        head_chars=per // 2,
        tail_chars=per // 2 - 50,
        argument_chars=max(20, per // 4),
        total_chars=max(1_000, max_chars),
    )
    first = [keep] if keep is not None and 0 <= keep < len(messages) else []
    chosen: dict[int, str] = {}
    used = 0
    for index in [*first, *range(len(messages) - 1, -1, -1)]:
        if index in chosen:
            continue
        block = serialize_message(messages[index], limits)
        if chosen and used + len(block) + 2 > max_chars:
            break
        chosen[index] = block
        used += len(block) + 2
    blocks: list[str] = []
    previous = -1
    for index in sorted(chosen):
        if index > previous + 1:
            blocks.append(f"[… {index - previous - 1} messages not shown …]")
        blocks.append(chosen[index])
        previous = index
    return "\n\n".join(blocks)
