"""Where the protected head ends and the protected tail begins.

Both boundaries are aligned so that a tool call and its results always fall on
the same side: the tail never starts with a tool result (it starts at the
assistant message that made the calls instead).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from forge_domain import ContextMessage, Role, TextMessage, ToolResult

__all__: list[str] = []  # internal: used by the engines, not part of the API


def _is_role(message: ContextMessage, role: Role) -> bool:
    return isinstance(message, TextMessage) and message.role == role


def system_end(messages: Sequence[ContextMessage]) -> int:
    """The index of the first message after the leading system messages."""
    index = 0
    while index < len(messages) and _is_role(messages[index], Role.SYSTEM):
        index += 1
    return index


def head_end(
    messages: Sequence[ContextMessage],
    *,
    is_summary: Callable[[ContextMessage], bool] = lambda message: False,
) -> int:
    """The index of the first message after the protected head.

    The head is what the frame engine never summarises either: the leading
    system messages and the task, i.e. the user messages before the first
    assistant message (an agent may put a demonstration before the task; it is
    kept too). An earlier summary (``is_summary``) ends the head, so that it is
    folded into the next summary instead of being kept forever.
    """
    index = system_end(messages)
    while (
        index < len(messages)
        and not _is_role(messages[index], Role.ASSISTANT)
        and isinstance(messages[index], TextMessage)
        and not is_summary(messages[index])
    ):
        index += 1
    return index


def task_index(
    messages: Sequence[ContextMessage],
    *,
    is_summary: Callable[[ContextMessage], bool] = lambda message: False,
) -> int | None:
    """The task: the last user message of the head (:func:`head_end`), None when the head
    holds none.

    One definition for every part that protects the task (the head the engines keep,
    the texts ``cut_to_fit`` spares): SWE-agent and OpenHands put a demonstration in a
    user message before the issue statement, and the statement is the task; a user
    message after a summary is a later ask, not the task, which the head (or, once
    folded, the summary) holds.
    """
    start, end = system_end(messages), head_end(messages, is_summary=is_summary)
    users = [index for index in range(start, end) if _is_role(messages[index], Role.USER)]
    return users[-1] if users else None


def align_to_call(messages: Sequence[ContextMessage], index: int, lower: int) -> int:
    """Move ``index`` back over tool results to the assistant message that made the calls."""
    while lower < index < len(messages) and isinstance(messages[index], ToolResult):
        index -= 1
    return index


def tail_start(
    messages: Sequence[ContextMessage], *, lower: int, min_messages: int, token_budget: int
) -> int:
    """The index of the first message of the protected tail (``len`` for an empty tail).

    Walking back from the end, messages join the tail while the tail has fewer
    than ``min_messages`` messages or still fits ``token_budget`` (approximate
    tokens). The tail never reaches below ``lower`` and never starts with a
    tool result.
    """
    start = len(messages)
    used = 0
    while start > lower:
        cost = messages[start - 1].approx_tokens
        if len(messages) - start >= min_messages and used + cost > token_budget:
            break
        used += cost
        start -= 1
    return align_to_call(messages, start, lower)
