"""``OpenTelemetryPlugin``: a span per turn and per compaction, and the compaction metrics.

One per conversation (it remembers that conversation's open spans), sharing the
tracer and instruments (:class:`Instruments`). Registered before the other built-ins
when telemetry is enabled (:mod:`forge_app.runtime._telemetry`); never imported otherwise.

- A turn (``forge_compact.turn``) spans ``request`` to ``turn_end`` (or ``end``, when an
  error cuts it short), a child of whatever span is current when the turn starts (an
  application's, a framework's), and is current meanwhile.
- A compaction (``forge_compact.compaction``) spans ``compaction_start`` to
  ``compaction_end`` / ``compaction_failed``, a child of the current span (the turn),
  and is current meanwhile, so the summary call's span is its child. Its attributes
  are the :class:`~forge_domain.CompactionResult`'s; a failure sets the error status.
- What the loop decides after a compaction is the turn's: the guard's suspension
  (``compaction_suspended``) and a cut to the window are events of the turn's span
  (of the current span, outside a turn).
"""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

from forge_app.runtime._conversation import Conversation
from forge_app.runtime._events import CompactionReason, EndReason
from forge_app.runtime._hookspecs import hookimpl
from forge_app.runtime.plugins._otel_spans import CompactionSpan, Instruments, SpanTrace
from forge_domain import CompactionMode, CompactionResult, TokenCount

__all__: list[str] = []  # loaded by forge_app.runtime._telemetry, on demand

TURN_SPAN = "forge_compact.turn"
"""Name of the span of one turn of the agent loop."""


class OpenTelemetryPlugin:
    """Traces one conversation's turns and compactions with OpenTelemetry."""

    name = "otel"
    """The plugin's registered name (agents may disable it)."""

    def __init__(self, instruments: Instruments) -> None:
        """Trace with ``instruments`` (shared by every conversation)."""
        self.instruments = instruments
        self._turn: SpanTrace | None = None
        self._compaction: CompactionSpan | None = None

    def _end_turn(self, reason: EndReason | None = None) -> None:
        if self._compaction is not None:  # a hook failed mid-compaction
            self._compaction.end()
            self._compaction = None
        turn, self._turn = self._turn, None
        if turn is None:
            return
        if reason in ("error", "cancelled"):
            turn.span.set_status(Status(StatusCode.ERROR, f"run ended: {reason}"))
        turn.end()

    @hookimpl(tryfirst=True)
    def forge_on_request(self, conversation: Conversation, turn: int) -> None:
        """Open the turn's span (before any preflight compaction) and make it current."""
        self._end_turn()
        span = self.instruments.tracer.start_span(
            TURN_SPAN,
            attributes={
                "gen_ai.agent.name": conversation.agent.id,
                "gen_ai.conversation.id": conversation.id,
                "forge_compact.turn": turn,
            },
        )
        self._turn = SpanTrace(self.instruments, span)
        self._turn.activate()

    @hookimpl
    def forge_on_turn_end(self) -> None:
        """End the turn's span."""
        self._end_turn()

    @hookimpl
    def forge_on_end(self, reason: EndReason) -> None:
        """End whatever is still open (a turn cut short by an error or a cancellation)."""
        self._end_turn(reason)

    @hookimpl
    def forge_on_compaction_start(
        self,
        conversation: Conversation,
        reason: CompactionReason,
        mode: CompactionMode,
        threshold: int,
    ) -> None:
        """Start the compaction's span, current until it ends."""
        span = self.instruments.compaction(
            reason=reason,
            mode=mode,
            engine=conversation.engine.name if conversation.engine is not None else "none",
            agent=conversation.agent.id,
            conversation=conversation.id,
            threshold=threshold,
        )
        span.activate()
        self._compaction = span

    @hookimpl
    def forge_on_compaction_end(self, result: CompactionResult) -> None:
        """Record the result and end the compaction's span."""
        span, self._compaction = self._compaction, None
        if span is not None:
            span.finish(result)
            span.end()

    @hookimpl
    def forge_on_compaction_failed(self, error: Exception) -> None:
        """Error status on the compaction's span, and end it."""
        span, self._compaction = self._compaction, None
        if span is not None:
            span.fail(error)
            span.end()

    @hookimpl
    def forge_on_compaction_suspended(
        self,
        attempts: int,
        token_count: TokenCount,
        threshold: int,
        retry_at_tokens: int,
        retry_after_turns: int,
    ) -> None:
        """A ``forge_compact.suspended`` event on the current span (the turn's)."""
        attributes = {
            "attempts": attempts,
            "tokens": int(token_count),
            "threshold": threshold,
            "retry_at_tokens": retry_at_tokens,
            "retry_after_turns": retry_after_turns,
        }
        trace.get_current_span().add_event(
            "forge_compact.suspended", {f"forge_compact.{k}": v for k, v in attributes.items()}
        )
