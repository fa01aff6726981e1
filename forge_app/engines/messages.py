"""Small constructors for rewritten messages."""

from __future__ import annotations

from typing import TypeVar

from forge_domain.messages import Content, TextMessage, ToolResult

__all__: list[str] = []  # internal: used by the engines, not part of the API

_Message = TypeVar("_Message", TextMessage, ToolResult)


def with_content(message: _Message, content: Content) -> _Message:
    """Return ``message`` with new content.

    Built from the fields rather than with ``model_copy``, which would carry the
    cached ``approx_tokens`` of the old content over to the new message.
    """
    fields = {name: getattr(message, name) for name in type(message).model_fields}
    fields["content"] = content
    return type(message).model_validate(fields)
