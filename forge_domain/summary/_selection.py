"""Which of a span's calls and assistant texts a summary builds (:class:`Selection`).

A compaction whose budget keeps a few hundred of a span's thousands of lines decides,
before any item is built, which calls it needs (``forge_app``'s bounded build); the
summary is then built from the span's own messages, so blocks start and end where they
would have, and only the selected calls and texts become items.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass

from forge_domain._messages import Role, TextMessage, TextPart, ToolResult

__all__: list[str] = []  # internal: ContextSummary.from_messages and forge_app's bounded build


@dataclass(frozen=True, slots=True)
class Selection:
    """The calls and assistant texts to build; for a span without text-protocol turns."""

    calls: Container[str]
    """Ids of the calls built (each call's items)."""
    earlier: Mapping[str, int]
    """Per call built, the calls of its operation left out before it (its line's ``earlier``)."""
    texts: Container[int] | None = None
    """Indexes of the assistant messages whose text is built; None: every one."""
    visit: Sequence[int] | None = None
    """Indexes of the messages read, ascending; None: every one. A message left out builds
    nothing (no text, no selected call) and another message of its run of one speaker is
    read, so blocks start and end where they would."""
    results: Mapping[str, ToolResult] | None = None
    """The span's results by call id (the newest of an id), when the caller has them."""
    clean: Container[str] = ()
    """Ids of built calls the caller found answered by a result that is not flagged and
    shows no error (:func:`~forge_domain.tools._outcome.output_shows_error`): each is a
    success without evidence, its output not read for them again."""

    def has_text(self, index: int, speaker: Role) -> bool:
        """True when the text of the message at ``index`` (written by ``speaker``) is built:
        user texts always are."""
        return speaker != Role.ASSISTANT or self.texts is None or index in self.texts


def is_only_media(message: TextMessage) -> bool:
    """True for a message of images or other non-text parts only, and no call: a summary
    skips it (it neither adds an item nor ends a block)."""
    content = message.content
    return (
        isinstance(content, tuple)
        and bool(content)
        and not any(isinstance(part, TextPart) for part in content)
        and not message.tool_calls
    )
