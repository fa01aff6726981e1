"""The mutable state of one conversation run by the orchestrator.

A :class:`Conversation` belongs to exactly one agent loop; nothing in it is
shared with another conversation. Its ``context`` is an immutable
:class:`~forge_domain.Context` that is only ever *replaced* (one attribute
assignment), so a run cancelled at any await point leaves a consistent
conversation behind: either the old context or the new one, never a mix.

The tool-call ids in the context are kept as a set, so a new call's id is
checked in O(1): :meth:`Conversation.append` adds to it, and it is rebuilt once
after the context was replaced (by :meth:`~Conversation.replace_context` or an
assignment), which is noticed by identity.
"""

from __future__ import annotations

from collections.abc import Iterable, Set
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from forge_app.compaction import close_engine
from forge_domain import (
    CHARS_METER,
    Agent,
    Context,
    ContextEngine,
    ContextMessage,
    TextMessage,
    TokenCount,
    TokenMeter,
    Usage,
)

if TYPE_CHECKING:
    from forge_app.runtime._dispatch import Hooks
    from forge_app.runtime._tools import ToolExecutor
    from forge_app.store import ConversationRecorder


@dataclass(eq=False)
class Conversation:
    """One conversation: its agent, its context, and the hooks that watch it."""

    id: str
    """Identifies the conversation in logs and events."""
    agent: Agent
    """The agent definition the conversation runs with (fixed for its lifetime)."""
    context: Context
    """The messages sent with the next request; replaced atomically, never mutated."""
    hooks: Hooks
    """This conversation's plugins (built-ins hold per-conversation state)."""
    usage: Usage = field(default_factory=Usage)
    """Usage accumulated over every provider response of the conversation."""
    turns: int = 0
    """Provider calls made so far."""
    compactions: int = 0
    """Compactions applied so far."""
    tools: ToolExecutor | None = None
    """This conversation's tools when they differ from the orchestrator's (engine tools)."""
    call_id_aliases: dict[str, str] = field(default_factory=dict)
    """Tool-call ids given on receipt -> the id the provider sent (a duplicate, or empty)."""
    recorder: ConversationRecorder | None = None
    """Keeps the conversation in the session store (None: no store configured)."""
    meter: TokenMeter = CHARS_METER
    """How the triggers, the window check and the metrics count this conversation
    (``compact.tokenizer``; chars/4 unless the application injects a tokenizer)."""
    engine: ContextEngine | None = None
    """The context engine that compacts this conversation; :meth:`aclose` releases it."""
    _call_ids: set[str] = field(default_factory=set, init=False, repr=False)
    _call_ids_of: Context | None = field(default=None, init=False, repr=False)

    async def aclose(self) -> None:
        """Release what the conversation's engine holds (the llm engine's HTTP client).

        Call it when the conversation is over; the conversation itself stays readable.
        """
        if self.engine is not None:
            await close_engine(self.engine)

    def token_count(self, context: Context | None = None) -> TokenCount:
        """The size of ``context`` (default: the current one) as :attr:`meter` counts it."""
        return self.meter.count(self.context if context is None else context)

    def call_ids(self) -> Set[str]:
        """Every tool-call id in the context (O(1) unless the context was replaced)."""
        return self._current_call_ids()

    def _current_call_ids(self) -> set[str]:
        if self._call_ids_of is not self.context:
            self._call_ids = set(_ids_of(self.context))
            self._call_ids_of = self.context
        return self._call_ids

    def append(self, *messages: ContextMessage) -> None:
        """Replace the context with one that ends with ``messages``."""
        ids = self._current_call_ids()
        self.context = self.context.append(*messages)
        ids.update(_ids_of(messages))
        self._call_ids_of = self.context

    def replace_context(self, expected: Context, new: Context) -> bool:
        """Swap ``expected`` for ``new`` if nothing changed the context meanwhile.

        Returns False (and changes nothing) when the context is no longer
        ``expected``, e.g. because another hook replaced it during an await.
        """
        if self.context is not expected:
            return False
        self.context = new
        return True


def _ids_of(messages: Iterable[ContextMessage]) -> Iterable[str]:
    for message in messages:
        if isinstance(message, TextMessage):
            for call in message.tool_calls or ():
                yield call.id
