"""Put a summary in place of a span without breaking the conversation's shape.

The summary gets the role that keeps user/assistant turns alternating with the
messages around it; when neither role fits it is merged into the next message,
ahead of that message's own content and closed by a visible end marker. After
the splice :func:`sanitize_tool_pairs` drops tool results whose call is gone and
gives every call whose result is gone a stub result pointing at the summary.
"""

from __future__ import annotations

from collections.abc import Sequence

from forge_app.compaction._messages import with_content
from forge_app.compaction.llm._prompt import framed
from forge_domain.json import JsonObject
from forge_domain.messages import ContextMessage, Role, TextMessage, TextPart, ToolResult
from forge_domain.usage import Usage

__all__ = ["sanitize_tool_pairs"]

STUB_RESULT = "[output compacted: this call's result is covered by the context summary above]"
"""Content of the stub result given to a call whose result was compacted away."""


def _role(message: ContextMessage | None) -> Role | None:
    return message.role if isinstance(message, TextMessage) else None


def summary_role(previous: ContextMessage | None, following: ContextMessage | None) -> Role | None:
    """The role a standalone summary takes between two messages, or None to merge.

    A conversation opens with a user turn, so after the system prompt (or at
    the very start) only ``user`` fits; otherwise a role fits when it differs
    from both neighbours' roles. ``user`` is preferred.
    """
    before = _role(previous)
    after = _role(following)
    opening = previous is None or before == Role.SYSTEM
    for role in (Role.USER, Role.ASSISTANT):
        if opening and role != Role.USER:
            continue
        if role not in (before, after):
            return role
    return None


def merged(message: TextMessage, summary: str) -> TextMessage:
    """``message`` with the framed ``summary`` placed ahead of its own content."""
    text = framed(summary)
    content = message.content
    if content is None or content == "" or content == ():
        return with_content(message, text)
    if isinstance(content, str):
        return with_content(message, f"{text}\n\n{content}")
    return with_content(message, (TextPart(text=text + "\n\n"), *content))


def splice_summary(
    messages: Sequence[ContextMessage],
    span: tuple[int, int],
    summary: str,
    *,
    span_usage: Usage | None = None,
    summary_data: JsonObject | None = None,
) -> list[ContextMessage]:
    """Replace ``messages[start..=end]`` with the framed ``summary``.

    ``summary_data`` (the structured frame of the span) is attached only to a
    standalone user summary, where a later frame compaction can fold it.
    """
    start, end = span
    head, tail = list(messages[:start]), list(messages[end + 1 :])
    role = summary_role(head[-1] if head else None, tail[0] if tail else None)
    if role is None:
        following = tail[0]
        assert isinstance(following, TextMessage)  # a tool result has no role, so a role fits
        return sanitize_tool_pairs([*head, merged(following, summary), *tail[1:]])
    message = TextMessage(
        role=role,
        content=framed(summary),
        span_usage=span_usage,
        summary_data=summary_data if role == Role.USER else None,
    )
    return sanitize_tool_pairs([*head, message, *tail])


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
