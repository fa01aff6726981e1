"""What a summary carries over from the span it replaces: the last reasoning and the usage."""

from __future__ import annotations

from collections.abc import Sequence

from forge_domain._messages import ContextMessage, Role, TextMessage
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
    carried = next(
        (
            m.reasoning_details
            for m in reversed(span)
            if isinstance(m, TextMessage) and m.reasoning_details and not m.droppable
        ),
        None,
    )
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


def accumulated_usage(span: Sequence[ContextMessage]) -> Usage | None:
    """The summed usage of ``span``, earlier summaries' ``span_usage`` included (None if none)."""
    usages: list[Usage] = []
    for message in span:
        if message.usage is not None:
            usages.append(message.usage)
        # ``span_usage`` is read only from text messages: a failed ``getattr`` on a
        # pydantic model (a tool result) raises and catches inside ``__getattr__``.
        if isinstance(message, TextMessage) and message.span_usage is not None:
            usages.append(message.span_usage)
    return Usage.total(usages)
