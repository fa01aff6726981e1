"""``LoggingPlugin``: one structlog event per lifecycle event.

Log event names are snake_case past tense (``compaction_triggered``,
``context_compacted`` …) with key-value fields; rendering (JSON or console) is
the application's choice, see :func:`forge_app.configure_logging`.
"""

from __future__ import annotations

import structlog

from forge_app.errors import ContextLengthExceeded
from forge_app.runtime._conversation import Conversation
from forge_app.runtime._events import CompactionReason, EndReason
from forge_app.runtime._hookspecs import hookimpl
from forge_app.runtime._model import ModelRequest, ModelResponse
from forge_domain import CompactionResult, TokenCount, ToolCall, ToolResult


def _size(conversation: Conversation) -> dict[str, int | str]:
    count = conversation.token_count()  # as the conversation's meter counts it
    return {
        "messages": len(conversation.context),
        "tokens": count.value,
        "token_count_kind": count.kind,
    }


class LoggingPlugin:
    """Logs every event of a conversation with ``structlog``."""

    name = "logging"
    """The plugin's registered name (agents may disable it)."""

    def __init__(self) -> None:
        """Log through the ``forge_app`` logger."""
        self._log = structlog.get_logger("forge_app")

    def _bind(self, conversation: Conversation) -> structlog.typing.FilteringBoundLogger:
        log: structlog.typing.FilteringBoundLogger = self._log.bind(
            conversation_id=conversation.id, agent_id=conversation.agent.id
        )
        return log

    @hookimpl
    def forge_on_start(self, conversation: Conversation) -> None:
        """``conversation_started``."""
        self._bind(conversation).info("conversation_started", **_size(conversation))

    @hookimpl
    def forge_on_request(self, conversation: Conversation, turn: int) -> None:
        """``request_prepared``."""
        self._bind(conversation).debug("request_prepared", turn=turn, **_size(conversation))

    @hookimpl
    def forge_on_response(
        self, conversation: Conversation, turn: int, request: ModelRequest, response: ModelResponse
    ) -> None:
        """``response_received`` with the usage."""
        usage = response.usage
        self._bind(conversation).info(
            "response_received",
            turn=turn,
            model=request.model,
            finish_reason=response.finish_reason,
            tool_calls=len(response.message.tool_calls or ()),
            prompt_tokens=usage.prompt_tokens.value if usage else None,
            completion_tokens=usage.completion_tokens.value if usage else None,
            total_tokens=usage.total_tokens.value if usage else None,
        )

    @hookimpl
    def forge_on_tool_call_start(
        self, conversation: Conversation, turn: int, call: ToolCall
    ) -> None:
        """``tool_call_started``."""
        self._bind(conversation).debug(
            "tool_call_started", turn=turn, tool=call.name, call_id=call.id
        )

    @hookimpl
    def forge_on_tool_call_end(
        self, conversation: Conversation, turn: int, call: ToolCall, result: ToolResult
    ) -> None:
        """``tool_call_finished``."""
        self._bind(conversation).info(
            "tool_call_finished",
            turn=turn,
            tool=call.name,
            call_id=call.id,
            is_error=result.is_error,
            tokens=result.approx_tokens,
        )

    @hookimpl
    def forge_on_turn_end(self, conversation: Conversation, turn: int) -> None:
        """``turn_ended``."""
        self._bind(conversation).debug("turn_ended", turn=turn, **_size(conversation))

    @hookimpl
    def forge_on_context_overflow(
        self, conversation: Conversation, turn: int, error: ContextLengthExceeded
    ) -> None:
        """``context_overflowed``."""
        self._bind(conversation).warning(
            "context_overflowed", turn=turn, status=error.status, error=error.problem
        )

    @hookimpl
    def forge_on_compaction_start(
        self,
        conversation: Conversation,
        reason: CompactionReason,
        token_count: TokenCount,
        threshold: int,
    ) -> None:
        """``compaction_triggered``."""
        self._bind(conversation).info(
            "compaction_triggered",
            reason=reason,
            tokens=token_count.value,
            token_count_kind=token_count.kind,
            threshold=threshold,
            messages=len(conversation.context),
        )

    @hookimpl
    def forge_on_compaction_end(
        self, conversation: Conversation, reason: CompactionReason, result: CompactionResult
    ) -> None:
        """``context_compacted`` with the metrics (``compaction_skipped`` when nothing changed)."""
        event = "context_compacted" if result.compacted_range is not None else "compaction_skipped"
        self._bind(conversation).info(
            event,
            reason=reason,
            engine=result.engine,
            original_tokens=result.original_tokens,
            compacted_tokens=result.compacted_tokens,
            original_messages=result.original_messages,
            compacted_messages=result.compacted_messages,
            compacted_range=result.compacted_range,
            summarised_range=result.summarised_range,
            pruned_range=result.pruned_range,
            token_reduction_pct=round(result.token_reduction_percentage(), 1),
            message_reduction_pct=round(result.message_reduction_percentage(), 1),
            budget_status=result.budget_status,
            coverage=result.coverage,
        )

    @hookimpl
    def forge_on_compaction_failed(
        self, conversation: Conversation, reason: CompactionReason, error: Exception
    ) -> None:
        """``compaction_failed``."""
        self._bind(conversation).error(
            "compaction_failed", reason=reason, error=f"{type(error).__name__}: {error}"
        )

    @hookimpl
    def forge_on_compaction_suspended(
        self,
        conversation: Conversation,
        attempts: int,
        token_count: TokenCount,
        threshold: int,
        retry_at_tokens: int,
        retry_after_turns: int,
    ) -> None:
        """``compaction_suspended``, with when compaction is tried again."""
        self._bind(conversation).warning(
            "compaction_suspended",
            attempts=attempts,
            tokens=token_count.value,
            threshold=threshold,
            retry_at_tokens=retry_at_tokens,
            retry_after_turns=retry_after_turns,
        )

    @hookimpl
    def forge_on_end(self, conversation: Conversation, reason: EndReason) -> None:
        """``conversation_ended``."""
        self._bind(conversation).info(
            "conversation_ended",
            reason=reason,
            turns=conversation.turns,
            compactions=conversation.compactions,
            **_size(conversation),
        )
