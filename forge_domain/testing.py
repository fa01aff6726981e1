"""Test helpers that build contexts from message-pattern strings.

Letters (forge's alphabet, message ``i`` has content ``"Message i"``, 1-based):

====  =====================================================================
``s``  system message
``u``  user message
``a``  assistant message without tool calls
``t``  assistant message with one ``read`` call (``{"path":"/test/path"}``)
``T``  assistant message with two parallel ``read`` calls (our addition)
``r``  successful tool result ``{"content":"File content"}``
``e``  failed tool result (our addition)
====  =====================================================================

Calls get unique ids ``call_<i>`` (``call_<i>_1``/``call_<i>_2`` for ``T``); a result
answers the oldest unanswered call, or repeats the previous id when none is open
(forge's patterns such as ``trr`` rely on that).
"""

from __future__ import annotations

from collections import deque

from forge_domain._context import Context
from forge_domain._errors import InvalidPattern
from forge_domain._messages import ContextMessage, Role, TextMessage, ToolCall, ToolResult

_ARGUMENTS = '{"path":"/test/path"}'
_OUTPUT = '{"content":"File content"}'
PATTERN_LETTERS = "sutTre"
"""Every letter :func:`pattern` understands."""


def _call(call_id: str) -> ToolCall:
    return ToolCall(id=call_id, name="read", arguments=_ARGUMENTS)


def pattern_messages(letters: str) -> list[ContextMessage]:
    """The messages of :func:`pattern`, as a list."""
    messages: list[ContextMessage] = []
    pending: deque[str] = deque()
    last_id = "call_0"
    for position, letter in enumerate(letters):
        content = f"Message {position + 1}"
        match letter:
            case "s":
                messages.append(TextMessage(role=Role.SYSTEM, content=content))
            case "u":
                messages.append(TextMessage(role=Role.USER, content=content))
            case "a":
                messages.append(TextMessage(role=Role.ASSISTANT, content=content))
            case "t" | "T":
                ids = (
                    [f"call_{position + 1}"]
                    if letter == "t"
                    else [f"call_{position + 1}_1", f"call_{position + 1}_2"]
                )
                pending.extend(ids)
                calls = tuple(_call(call_id) for call_id in ids)
                messages.append(TextMessage(role=Role.ASSISTANT, content=content, tool_calls=calls))
            case "r" | "e":
                if pending:
                    last_id = pending.popleft()
                messages.append(
                    ToolResult(
                        call_id=last_id, name="read", content=_OUTPUT, is_error=letter == "e"
                    )
                )
            case _:
                raise InvalidPattern(letters, position)
    return messages


def pattern(letters: str) -> Context:
    """Build a context from a pattern string such as ``"sutrua"``."""
    return Context(pattern_messages(letters))


def pattern_of(context: Context) -> str:
    """The pattern string of a context (inverse of :func:`pattern` up to content)."""
    letters = []
    for message in context:
        if isinstance(message, ToolResult):
            letters.append("e" if message.is_error else "r")
        elif message.tool_calls:
            letters.append("T" if len(message.tool_calls) > 1 else "t")
        else:
            letters.append({Role.SYSTEM: "s", Role.USER: "u", Role.ASSISTANT: "a"}[message.role])
    return "".join(letters)


def bracket(letters: str, span: tuple[int, int] | None) -> str:
    """Forge's bracket notation: ``su[aaau]`` for the inclusive range (2, 5)."""
    if span is None:
        return letters
    start, end = span
    return f"{letters[:start]}[{letters[start : end + 1]}]{letters[end + 1 :]}"
