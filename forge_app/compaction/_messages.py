"""Small constructors for rewritten messages."""

from __future__ import annotations

from typing import overload

from forge_domain.messages import Content, ContextMessage, TextMessage, ToolResult

__all__: list[str] = []  # internal: used by the engines, not part of the API


@overload
def with_content(message: TextMessage, content: Content) -> TextMessage: ...
@overload
def with_content(message: ToolResult, content: Content) -> ToolResult: ...
@overload
def with_content(message: ContextMessage, content: Content) -> ContextMessage: ...
def with_content(message: ContextMessage, content: Content) -> ContextMessage:
    """Return ``message`` with new content.

    Built from the fields rather than with ``model_copy``, which would carry the
    cached ``approx_tokens`` of the old content over to the new message.
    """
    fields = {name: getattr(message, name) for name in type(message).model_fields}
    fields["content"] = content
    return type(message).model_validate(fields)
