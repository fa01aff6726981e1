"""A small deterministic context engine for hook and orchestrator tests.

It replaces the automatic strategy's range with one user message saying how
many messages it stood for, so tests do not depend on the summary templates.
``failing=True`` makes every compaction raise ``CompactionFailed``. Built on
:class:`BaseContextEngine`, as a plugin would be: its triggers are the defaults.
"""

from __future__ import annotations

from forge_app.errors import CompactionFailed
from forge_domain import (
    Agent,
    BaseContextEngine,
    CompactionMode,
    CompactionOutcome,
    CompactionStrategy,
    Context,
    TextMessage,
    Usage,
    compaction_outcome,
)


class TinyEngine(BaseContextEngine):
    """Summarises the evictable range into ``[summary of N messages]``."""

    name = "tiny"

    def __init__(self, agent: Agent, *, failing: bool = False, noop: bool = False) -> None:
        self.failing = failing
        self.noop = noop
        self.calls: list[CompactionMode] = []
        self.sessions: list[str] = []
        self.ended: list[str] = []
        self.usages: list[Usage] = []
        super().__init__(agent)

    def update_from_response(self, usage: Usage) -> None:
        self.usages.append(usage)

    async def compress(
        self, context: Context, *, focus: str | None = None, mode: CompactionMode = "automatic"
    ) -> CompactionOutcome:
        self.calls.append(mode)
        if self.failing:
            raise CompactionFailed("summary", "tiny engine told to fail")
        retain = CompactionStrategy.retain(self.compact.retention_window)
        strategy = (
            retain
            if mode != "automatic"
            else CompactionStrategy.evict(self.compact.eviction_window).max(retain)
        )
        span = None if self.noop else strategy.eviction_range(context)
        if span is None:
            return compaction_outcome(context, context, None, engine=self.name)
        start, end = span
        summary = TextMessage.user(f"[summary of {end - start + 1} messages]")
        compacted = context.replace_range(start, end, [summary])
        return compaction_outcome(context, compacted, span, engine=self.name)

    def on_session_start(self, session_id: str) -> None:
        self.sessions.append(session_id)

    def on_session_end(self, session_id: str) -> None:
        self.ended.append(session_id)
