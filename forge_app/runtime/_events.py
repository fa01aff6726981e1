"""Typed payloads of the lifecycle events, one class per hook.

The orchestrator and the built-in plugins never call hooks by name: they build
one of these events and hand it to :meth:`forge_app.Hooks.dispatch`. Each
event's fields are exactly the keyword arguments of its hook specification in
:mod:`forge_app.runtime._hookspecs` (a test checks they agree), and ``hook`` names it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import ClassVar, Literal, TypeAlias

from forge_app.errors import ContextLengthExceeded
from forge_app.runtime._conversation import Conversation
from forge_app.runtime._model import ModelRequest, ModelResponse
from forge_domain import CompactionMode, CompactionResult, TokenCount, ToolCall, ToolResult

CompactionReason = Literal["threshold", "preflight", "window", "context_length_exceeded"]
"""Why a compaction ran: the response check, the pre-request check, a request that would
not fit the model's window, or a provider overflow."""
EndReason = Literal["final_answer", "max_turns", "error", "cancelled"]
"""Why a run stopped."""


@dataclass(frozen=True, slots=True, kw_only=True)
class _Event:
    hook: ClassVar[str]
    conversation: Conversation
    """The conversation the event belongs to."""

    def arguments(self) -> dict[str, object]:
        """The event's fields as the hook's keyword arguments."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True, slots=True, kw_only=True)
class StartEvent(_Event):
    """A run of the agent loop begins."""

    hook: ClassVar[str] = "forge_on_start"


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestEvent(_Event):
    """A request is about to be built from ``conversation.context`` and sent."""

    hook: ClassVar[str] = "forge_on_request"
    turn: int
    """1-based number of the provider call within the run."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ResponseEvent(_Event):
    """The provider answered; the assistant message is already appended to the context."""

    hook: ClassVar[str] = "forge_on_response"
    turn: int
    """1-based number of the provider call within the run."""
    request: ModelRequest
    """What was sent."""
    response: ModelResponse
    """What came back (``response.usage`` is the reported usage)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallStartEvent(_Event):
    """A tool call is about to run."""

    hook: ClassVar[str] = "forge_on_tool_call_start"
    turn: int
    """The turn whose response requested the call."""
    call: ToolCall
    """The call."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallEndEvent(_Event):
    """A tool call finished (successfully or not); its result is not yet appended."""

    hook: ClassVar[str] = "forge_on_tool_call_end"
    turn: int
    """The turn whose response requested the call."""
    call: ToolCall
    """The call."""
    result: ToolResult
    """Its result (``result.is_error`` for failures)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnEndEvent(_Event):
    """A turn is complete: response appended and every tool result appended."""

    hook: ClassVar[str] = "forge_on_turn_end"
    turn: int
    """The turn that ended."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextOverflowEvent(_Event):
    """The provider rejected the request as too long.

    A plugin may compact; the call is then retried once.
    """

    hook: ClassVar[str] = "forge_on_context_overflow"
    turn: int
    """The turn whose request overflowed."""
    error: ContextLengthExceeded
    """The provider's error."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionStartEvent(_Event):
    """A compaction is about to run."""

    hook: ClassVar[str] = "forge_on_compaction_start"
    reason: CompactionReason
    """Why it runs."""
    mode: CompactionMode
    """How far it may go: ``automatic``, or ``forced`` (an overflow, the window, a retry)."""
    token_count: TokenCount
    """The context's size (usage-anchored) when it was triggered."""
    threshold: int
    """The agent's safety threshold for the model's window."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionEndEvent(_Event):
    """A compaction finished and ``conversation.context`` holds its output."""

    hook: ClassVar[str] = "forge_on_compaction_end"
    reason: CompactionReason
    """Why it ran."""
    result: CompactionResult
    """Its metrics."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionFailedEvent(_Event):
    """A compaction raised; the context is unchanged."""

    hook: ClassVar[str] = "forge_on_compaction_failed"
    reason: CompactionReason
    """Why it ran."""
    error: Exception
    """What went wrong."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionSuspendedEvent(_Event):
    """Automatic compaction is held back: the last attempt did not get under the threshold.

    It is tried again (doing more) once the context reaches ``retry_at_tokens``
    or ``retry_after_turns`` more responses have come, whichever is first.
    """

    hook: ClassVar[str] = "forge_on_compaction_suspended"
    attempts: int
    """Ineffective compactions in a row."""
    token_count: TokenCount
    """The context's size after the last attempt."""
    threshold: int
    """The threshold it stayed over."""
    retry_at_tokens: int
    """The size at which compaction is tried again."""
    retry_after_turns: int
    """Responses after which compaction is tried again."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EndEvent(_Event):
    """A run of the agent loop is over (also after an error or a cancellation)."""

    hook: ClassVar[str] = "forge_on_end"
    reason: EndReason
    """Why it stopped."""


HookEvent: TypeAlias = (
    StartEvent
    | RequestEvent
    | ResponseEvent
    | ToolCallStartEvent
    | ToolCallEndEvent
    | TurnEndEvent
    | ContextOverflowEvent
    | CompactionStartEvent
    | CompactionEndEvent
    | CompactionFailedEvent
    | CompactionSuspendedEvent
    | EndEvent
)
"""Every event a plugin can observe."""

EVENT_TYPES: tuple[type[HookEvent], ...] = (
    StartEvent,
    RequestEvent,
    ResponseEvent,
    ToolCallStartEvent,
    ToolCallEndEvent,
    TurnEndEvent,
    ContextOverflowEvent,
    CompactionStartEvent,
    CompactionEndEvent,
    CompactionFailedEvent,
    CompactionSuspendedEvent,
    EndEvent,
)
"""The event classes, in lifecycle order."""
