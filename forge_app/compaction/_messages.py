"""Small constructors for rewritten messages."""

from __future__ import annotations

from typing import overload

from forge_domain import Content, ContentPart, ContextMessage, TextMessage, ToolResult

__all__: list[str] = []  # internal: used by the engines, not part of the API


@overload
def with_content(message: TextMessage, content: Content) -> TextMessage: ...
@overload
def with_content(message: ToolResult, content: str | tuple[ContentPart, ...]) -> ToolResult: ...
@overload
def with_content(
    message: ContextMessage, content: str | tuple[ContentPart, ...]
) -> ContextMessage: ...
def with_content(message: ContextMessage, content: Content) -> ContextMessage:
    """Return ``message`` with ``content`` in place of its own, every other field kept.

    A tool result's content is never None: the overloads let only text messages take it.
    """
    return message.model_copy(update={"content": content})
