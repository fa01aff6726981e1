"""Hook specifications: one per lifecycle event, keyword arguments only.

Plugins implement any subset with ``@hookimpl`` (pluggy), taking only the
arguments they need. An implementation may be a plain function or a coroutine
function; :class:`forge_app.Hooks` awaits what it returns. Return values are
ignored: plugins act on the conversation (for example by replacing
``conversation.context``) or on the outside world (logs, metrics).

Order of one turn: ``request`` → provider call → ``response`` →
(``tool_call_start`` → ``tool_call_end``)* → ``turn_end``. Compaction events
nest inside ``request`` (preflight), ``response`` (threshold) or
``context_overflow`` (reactive). ``start`` and ``end`` bracket a run.
"""

from __future__ import annotations

import pluggy

from forge_app.errors import ContextLengthExceeded
from forge_app.runtime._conversation import Conversation
from forge_app.runtime._events import CompactionReason, EndReason
from forge_app.runtime._model import ModelRequest, ModelResponse
from forge_domain import CompactionMode, CompactionResult, TokenCount, ToolCall, ToolResult

__all__ = ["hookimpl", "hookspec"]

PROJECT = "forge"
"""pluggy project name of every marker."""
ENTRY_POINT_GROUP = "forge.hooks"
"""Entry-point group third-party plugins are published under."""

hookspec = pluggy.HookspecMarker(PROJECT)
"""Marks a hook specification."""
hookimpl = pluggy.HookimplMarker(PROJECT)
"""Marks a hook implementation (use it on plugin methods or module functions)."""


@hookspec
def forge_on_start(conversation: Conversation) -> None:
    """A run of the agent loop begins with ``conversation.context``."""


@hookspec
def forge_on_request(conversation: Conversation, turn: int) -> None:
    """A request for turn ``turn`` is about to be built from ``conversation.context``.

    Replacing ``conversation.context`` here changes what is sent (preflight compaction).
    """


@hookspec
def forge_on_response(
    conversation: Conversation, turn: int, request: ModelRequest, response: ModelResponse
) -> None:
    """The provider answered ``request`` with ``response``.

    The assistant message (with ``response.usage``) is already the last message
    of ``conversation.context``; its tool calls have not run yet.
    """


@hookspec
def forge_on_tool_call_start(conversation: Conversation, turn: int, call: ToolCall) -> None:
    """``call`` is about to run."""


@hookspec
def forge_on_tool_call_end(
    conversation: Conversation, turn: int, call: ToolCall, result: ToolResult
) -> None:
    """``call`` finished with ``result``; the result is appended right after."""


@hookspec
def forge_on_turn_end(conversation: Conversation, turn: int) -> None:
    """Turn ``turn`` is complete: its response and tool results are in the context."""


@hookspec
def forge_on_context_overflow(
    conversation: Conversation, turn: int, error: ContextLengthExceeded
) -> None:
    """The provider rejected the request as too long.

    A plugin that shrinks ``conversation.context`` here gets the request retried
    once; if nobody does, the run fails with ``error``.
    """


@hookspec
def forge_on_compaction_start(
    conversation: Conversation,
    reason: CompactionReason,
    mode: CompactionMode,
    token_count: TokenCount,
    threshold: int,
) -> None:
    """A compaction of ``conversation.context`` (``token_count`` tokens) is about to run in
    ``mode``."""


@hookspec
def forge_on_compaction_end(
    conversation: Conversation, reason: CompactionReason, result: CompactionResult
) -> None:
    """A compaction finished; ``conversation.context`` is the compacted context."""


@hookspec
def forge_on_compaction_failed(
    conversation: Conversation, reason: CompactionReason, error: Exception
) -> None:
    """A compaction raised ``error``; the context is unchanged."""


@hookspec
def forge_on_compaction_suspended(
    conversation: Conversation,
    attempts: int,
    token_count: TokenCount,
    threshold: int,
    retry_at_tokens: int,
    retry_after_turns: int,
) -> None:
    """Automatic compaction is held back for a while.

    The last ``attempts`` compactions left the context over ``threshold``; the
    next try comes at ``retry_at_tokens`` or after ``retry_after_turns``
    responses, whichever is first, and does more (the forced strategy).
    """


@hookspec
def forge_on_end(conversation: Conversation, reason: EndReason) -> None:
    """A run is over; ``reason`` is ``final_answer``, ``max_turns``, ``error`` or ``cancelled``."""
