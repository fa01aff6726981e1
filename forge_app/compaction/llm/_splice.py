"""Put a summary in place of a span without breaking the conversation's shape.

The summary is a user message of its own, as the frame engine's is (one role, whatever
the engine): two user messages in a row are kept apart, and providers that need one turn
per role combine them. The summary message carries the span's frame for a later
compaction of either engine to fold. After the splice :func:`sanitize_tool_pairs` drops
tool results whose call is gone and gives every call whose result is gone a stub result
pointing at the summary. Summaries an earlier version merged into the next assistant
message are still read back (:func:`~forge_app.compaction.llm._span.find_span`).
"""

from __future__ import annotations

from collections.abc import Sequence

from forge_app.compaction.llm._prompt import framed
from forge_domain import ContextMessage, JsonObject, Role, TextMessage, ToolResult, Usage

__all__ = ["sanitize_tool_pairs"]

STUB_RESULT = "[output compacted: this call's result is covered by the context summary above]"
"""Content of the stub result given to a call whose result was compacted away."""


def splice_summary(
    messages: Sequence[ContextMessage],
    span: tuple[int, int],
    summary: str,
    *,
    span_usage: Usage | None = None,
    summary_data: JsonObject | None = None,
) -> list[ContextMessage]:
    """Replace ``messages[start..=end]`` with the framed ``summary``, a user message.

    ``summary_data`` (the structured frame of the span) is attached for a later
    compaction to fold.
    """
    start, end = span
    message = TextMessage(
        role=Role.USER,
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
