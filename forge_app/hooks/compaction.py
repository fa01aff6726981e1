"""``CompactionHandler``: the built-in plugin that keeps a conversation under its threshold.

It reacts to three events of its conversation:

- ``response``: with the usage-anchored size of the context (the assistant
  message just appended carries the provider's ``total_tokens``), ask the
  engine whether to compact; if so compact and swap the context;
- ``request``: the preflight check (Hermes): a context already over the
  threshold before it is sent is compacted first;
- ``context_overflow``: the provider said the request was too long, so compact
  with the forced (manual) strategy; the orchestrator retries once.

It depends only on the :class:`~forge_domain.ContextEngine` protocol, so any
engine works. The loop guard stops automatic compaction after two compactions
in a row that leave the context over the threshold (they would only burn time
and summary quality). A compaction is judged at once by the engine's estimate
and, if that says it worked, again by the provider's count on the next
response (Hermes's rule: estimates can be optimistic). The guard fires
``compaction_suspended`` and lifts once a response shows the context under the
threshold again. Forced compaction is
never suspended. A failing compaction fires ``compaction_failed`` and leaves
the context as it was; the run goes on.
"""

from __future__ import annotations

from forge_app.conversation import Conversation
from forge_app.errors import ForgeAppError
from forge_app.events import (
    CompactionEndEvent,
    CompactionFailedEvent,
    CompactionReason,
    CompactionStartEvent,
    CompactionSuspendedEvent,
)
from forge_app.hookspecs import hookimpl
from forge_app.model import ModelResponse
from forge_domain import (
    Agent,
    CompactionResult,
    Context,
    ContextEngine,
    ForgeDomainError,
    TextMessage,
    TokenCount,
)

MAX_INEFFECTIVE_COMPACTIONS = 2
"""Automatic compactions in a row that may leave the context over the threshold."""


class CompactionHandler:
    """Compacts one conversation with ``engine`` when the agent's triggers fire."""

    name = "compaction"
    """The plugin's registered name (agents may disable it)."""

    def __init__(
        self, engine: ContextEngine, agent: Agent, *, context_length: int | None = None
    ) -> None:
        """Watch a conversation of ``agent`` whose model has ``context_length`` tokens."""
        window = context_length if context_length is not None else agent.context_length
        self.engine = engine
        self.threshold = agent.compaction_threshold(window)
        """The agent's safety threshold for the model's window."""
        self.ineffective = 0
        """Automatic compactions in a row that left the context over the threshold."""
        self.suspended = False
        """True while the loop guard holds automatic compaction back."""
        self._started = False
        self._awaiting_usage = False
        engine.update_model(window)

    @hookimpl
    def forge_on_start(self, conversation: Conversation) -> None:
        """Tell the engine about the conversation (once, on its first run)."""
        if not self._started:
            self._started = True
            self.engine.on_session_start(conversation.id)

    @hookimpl
    def forge_on_end(self, conversation: Conversation) -> None:
        """Tell the engine the run is over; the next run of the conversation starts it again."""
        if self._started:
            self._started = False
            self.engine.on_session_end(conversation.id)

    @hookimpl
    async def forge_on_request(self, conversation: Conversation) -> None:
        """Preflight: compact a context that is already over the threshold."""
        if not self.suspended and self.engine.should_compress_preflight(conversation.context):
            await self.compact(conversation, "preflight")

    @hookimpl
    async def forge_on_response(self, conversation: Conversation, response: ModelResponse) -> None:
        """Compact when the engine's triggers fire on the usage-anchored size.

        The first response after a compaction also judges it: still over the
        threshold with the provider's own count means it was ineffective.
        """
        if response.usage is not None:
            self.engine.update_from_response(response.usage)
        context = conversation.context
        count = context.token_count()
        over = self.engine.should_compress(context, count)
        if self._awaiting_usage and count.is_actual():
            self._awaiting_usage = False
            if over:
                await self._ineffective(conversation, count)
        if not over:
            self.ineffective = 0
            self.suspended = False
            return
        if not self.suspended:
            await self.compact(conversation, "threshold")

    @hookimpl
    async def forge_on_context_overflow(self, conversation: Conversation) -> None:
        """Reactive compaction: the provider rejected the request as too long."""
        await self.compact(conversation, "context_length_exceeded")

    async def compact(
        self, conversation: Conversation, reason: CompactionReason
    ) -> CompactionResult | None:
        """Compact ``conversation.context`` now and swap it in; None when nothing was applied.

        A trailing assistant message whose tool calls have not been answered yet
        is kept out of the compaction and re-appended, so its results can follow.
        """
        hooks = conversation.hooks
        before = conversation.context
        await hooks.dispatch(
            CompactionStartEvent(
                conversation=conversation,
                reason=reason,
                token_count=before.token_count(),
                threshold=self.threshold,
            )
        )
        last = before.last_message()
        pending = isinstance(last, TextMessage) and bool(last.tool_calls)
        target = Context(before[:-1], usage_floor=before.usage_floor) if pending else before
        try:
            outcome = await self.engine.compress(target, force=reason == "context_length_exceeded")
        except (ForgeAppError, ForgeDomainError) as exc:
            await hooks.dispatch(
                CompactionFailedEvent(conversation=conversation, reason=reason, error=exc)
            )
            return None
        after = before
        if outcome.changed():
            after = outcome.context
            if pending and last is not None:
                after = Context([*after, last], usage_floor=len(after) + 1)
            if not conversation.replace_context(before, after):
                return None
            conversation.compactions += 1
        await hooks.dispatch(
            CompactionEndEvent(conversation=conversation, reason=reason, result=outcome.result)
        )
        if reason != "context_length_exceeded":
            await self._guard(conversation, after, effective=outcome.changed())
        return outcome.result

    async def _guard(self, conversation: Conversation, after: Context, *, effective: bool) -> None:
        count = after.token_count()
        if effective and not self.engine.should_compress(after, count):
            self._awaiting_usage = True
            return
        await self._ineffective(conversation, count)

    async def _ineffective(self, conversation: Conversation, count: TokenCount) -> None:
        self.ineffective += 1
        if self.ineffective >= MAX_INEFFECTIVE_COMPACTIONS and not self.suspended:
            self.suspended = True
            await conversation.hooks.dispatch(
                CompactionSuspendedEvent(
                    conversation=conversation,
                    attempts=self.ineffective,
                    token_count=count,
                    threshold=self.threshold,
                )
            )
