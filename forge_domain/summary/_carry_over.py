"""What a summary carries over from the span it replaces: the last reasoning and the usage."""

from __future__ import annotations

from collections.abc import Sequence

from forge_domain._json import JsonObject
from forge_domain._messages import ContextMessage, Role, TextMessage, ToolResult
from forge_domain._usage import Usage

__all__ = [
    "accumulated_usage",
    "carry_reasoning",
]


def carry_reasoning(
    messages: Sequence[ContextMessage], span: Sequence[ContextMessage], *, after: int
) -> list[ContextMessage]:
    """Give the first assistant message from index ``after`` on the span's last reasoning.

    Providers with extended thinking expect the assistant turn that follows a
    compacted span to carry the span's latest reasoning record (forge does the
    same); a message that has its own reasoning keeps it.
    """
    carried = _last_reasoning(span)
    out = list(messages)
    if carried is None:
        return out
    for index in range(after, len(out)):
        message = out[index]
        if isinstance(message, TextMessage) and message.role == Role.ASSISTANT:
            if not message.reasoning_details:
                out[index] = message.model_copy(update={"reasoning_details": carried})
            break
    return out


def _last_reasoning(span: Sequence[ContextMessage]) -> tuple[JsonObject, ...] | None:
    """The reasoning of the span's last message that has some and is not droppable."""
    for message in reversed(span):
        if type(message) is ToolResult:  # (half a coding span: no isinstance for them)
            continue
        if isinstance(message, TextMessage) and message.reasoning_details and not message.droppable:
            return message.reasoning_details
    return None


def accumulated_usage(span: Sequence[ContextMessage]) -> Usage | None:
    """The summed usage of ``span``, earlier summaries' ``span_usage`` included (None if none)."""
    usages: list[Usage] = []
    append = usages.append
    for message in span:
        usage = message.usage
        if usage is not None:
            append(usage)
        # ``span_usage`` is read only from text messages: a failed ``getattr`` on a
        # pydantic model (a tool result) raises and catches inside ``__getattr__``.
        if type(message) is ToolResult or not isinstance(message, TextMessage):
            continue
        if message.span_usage is not None:
            append(message.span_usage)
    return Usage.total(usages)
