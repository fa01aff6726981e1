"""Put a summary in place of a span without breaking the conversation's shape.

The summary takes the role that keeps user and assistant turns alternating around
it (providers built on strict chat templates reject two user or two assistant
messages in a row), as Hermes's compressor places its own:

* ``user`` after an assistant turn or a tool result, and whenever the summary
  would open the conversation (after the system prompt only, or nothing);
* ``assistant`` after a user message (the task);
* when that role is the role of the message right after the span, the other one,
  unless it equals the role before the span (or ``user`` is required): then the
  summary is **merged** into the message after the span, ahead of its own text,
  closed by the end marker so the next compaction finds where the message's own
  text starts (:func:`~forge_app.compaction.llm._span.find_span`).

The summary message (or the merged one) carries the span's frame for a later
compaction of either engine to fold. After the splice :func:`sanitize_tool_pairs`
drops tool results whose call is gone and gives every call whose result is gone
a stub result pointing at the summary.
"""

from __future__ import annotations

from collections.abc import Sequence

from forge_app.compaction.llm._prompt import framed
from forge_domain.json import JsonObject
from forge_domain.messages import (
    Content,
    ContextMessage,
    Role,
    TextMessage,
    TextPart,
    ToolResult,
)
from forge_domain.usage import Usage

__all__ = ["sanitize_tool_pairs"]

STUB_RESULT = "[output compacted: this call's result is covered by the context summary above]"
"""Content of the stub result given to a call whose result was compacted away."""


def _turn(message: ContextMessage | None) -> str | None:
    """The turn ``message`` belongs to (``tool`` for a tool result), None when absent."""
    if message is None:
        return None
    return "tool" if isinstance(message, ToolResult) else message.role.value


def summary_role(before: ContextMessage | None, after: ContextMessage | None) -> Role | None:
    """The role of a summary put between ``before`` and ``after``; None when it must be
    merged into ``after`` (no role keeps the turns alternating)."""
    previous, following = _turn(before), _turn(after)
    forced = previous in (None, "system")
    role = Role.USER if forced or previous in ("assistant", "tool") else Role.ASSISTANT
    if role.value != following:
        return role
    flipped = Role.ASSISTANT if role == Role.USER else Role.USER
    return None if forced or flipped.value == previous else flipped


def _merged(message: TextMessage, text: str, summary_data: JsonObject | None) -> TextMessage:
    """``message`` with the framed summary ``text`` ahead of its own content."""
    content = message.content
    if content is None or content == "":
        new: Content = text
    elif isinstance(content, str):
        new = f"{text}\n\n{content}"
    else:
        new = (TextPart(text=text), *content)
    update = {"content": new, "summary_data": summary_data, "content_absent": False}
    return message.model_copy(update=update)


def splice_summary(
    messages: Sequence[ContextMessage],
    span: tuple[int, int],
    summary: str,
    *,
    span_usage: Usage | None = None,
    summary_data: JsonObject | None = None,
) -> list[ContextMessage]:
    """Replace ``messages[start..=end]`` with the framed ``summary``, placed to keep the
    turns alternating (see the module docstring).

    ``summary_data`` (the structured frame of the span) is attached for a later
    compaction to fold.
    """
    start, end = span
    before = messages[start - 1] if start > 0 else None
    after = messages[end + 1] if end + 1 < len(messages) else None
    role = summary_role(before, after)
    if role is None and isinstance(after, TextMessage):
        merged = _merged(after, framed(summary), summary_data)
        return sanitize_tool_pairs([*messages[:start], merged, *messages[end + 2 :]])
    message = TextMessage(
        role=role or Role.USER,
        content=framed(summary),
        span_usage=span_usage,
        summary_data=summary_data,
    )
    return sanitize_tool_pairs([*messages[:start], message, *messages[end + 1 :]])


def sanitize_tool_pairs(messages: Sequence[ContextMessage]) -> list[ContextMessage]:
    """Make every call answered exactly once by the results right after it.

    Results that answer no call of the assistant message just before them are
    dropped (as are repeated answers); a call left without a result gets a stub.
    """
    out: list[ContextMessage] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        index += 1
        if isinstance(message, ToolResult):
            continue
        out.append(message)
        if not message.tool_calls:
            continue
        expected = {call.id: call for call in message.tool_calls}
        answered: dict[str, ToolResult] = {}
        while index < len(messages) and isinstance(result := messages[index], ToolResult):
            if result.call_id in expected and result.call_id not in answered:
                answered[result.call_id] = result
            index += 1
        out.extend(answered.values())
        out.extend(
            ToolResult(call_id=call_id, name=call.name, content=STUB_RESULT)
            for call_id, call in expected.items()
            if call_id not in answered
        )
    return out
