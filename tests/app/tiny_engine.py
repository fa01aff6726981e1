"""A small deterministic ContextEngine for hook and orchestrator tests.

It replaces the automatic strategy's range with one user message saying how
many messages it stood for, so tests do not depend on the summary templates.
``failing=True`` makes every compaction raise ``CompactionFailed``.
"""

from __future__ import annotations

from forge_app.errors import CompactionFailed
from forge_domain import (
    Agent,
    CompactionOutcome,
    CompactionResult,
    CompactionStrategy,
    Context,
    JsonObject,
    TextMessage,
    TokenCount,
    Usage,
)


class TinyEngine:
    """Summarises the evictable range into ``[summary of N messages]``."""

    name = "tiny"

    def __init__(self, agent: Agent, *, failing: bool = False, noop: bool = False) -> None:
        self.agent = agent
        self.failing = failing
        self.noop = noop
        self.threshold = agent.compaction_threshold()
        self.calls: list[bool] = []
        self.sessions: list[str] = []
        self.ended: list[str] = []
        self.usages: list[Usage] = []

    def update_model(self, context_length: int | None) -> None:
        self.threshold = self.agent.compaction_threshold(context_length)

    def update_from_response(self, usage: Usage) -> None:
        self.usages.append(usage)

    def should_compress(self, context: Context, token_count: TokenCount) -> bool:
        compact = self.agent.compact.model_copy(update={"token_threshold": self.threshold})
        return compact.should_compact(context, token_count)

    def should_compress_preflight(self, context: Context) -> bool:
        return int(context.token_count()) >= self.threshold

    async def compress(
        self, context: Context, *, focus: str | None = None, force: bool = False
    ) -> CompactionOutcome:
        self.calls.append(force)
        if self.failing:
            raise CompactionFailed("summary", "tiny engine told to fail")
        compact = self.agent.compact
        strategy = (
            CompactionStrategy.retain(compact.retention_window)
            if force
            else CompactionStrategy.evict(compact.eviction_window).max(
                CompactionStrategy.retain(compact.retention_window)
            )
        )
        span = None if self.noop else strategy.eviction_range(context)
        before = CompactionResult(
            original_tokens=int(context.token_count()),
            compacted_tokens=int(context.token_count()),
            original_messages=len(context),
            compacted_messages=len(context),
            engine=self.name,
        )
        if span is None:
            return CompactionOutcome(context=context, result=before)
        start, end = span
        summary = TextMessage.user(f"[summary of {end - start + 1} messages]")
        compacted = context.replace_range(start, end, [summary])
        result = before.model_copy(
            update={
                "compacted_tokens": int(compacted.token_count()),
                "compacted_messages": len(compacted),
                "compacted_range": span,
            }
        )
        return CompactionOutcome(context=compacted, result=result)

    def on_session_start(self, session_id: str) -> None:
        self.sessions.append(session_id)

    def on_session_end(self, session_id: str) -> None:
        self.ended.append(session_id)

    def on_session_reset(self) -> None:
        pass

    def tool_schemas(self) -> tuple[JsonObject, ...]:
        return ()

    async def handle_tool_call(self, name: str, arguments: JsonObject) -> str:
        raise NotImplementedError(name)
