"""``CompactionHandler``: the built-in plugin that keeps a conversation inside its window.

It reacts to three events of its conversation:

- ``response``: with the usage-anchored size of the context (the assistant
  message just appended carries the provider's ``total_tokens``), ask the
  engine whether to compact; if so compact and swap the context. When the
  response calls tools, the compaction is due at the next request instead,
  once the results are in: compacting without them would leave the calls and
  their (possibly large) results out of the fit, and the request would be
  larger than the compaction measured;
- ``request``: the preflight check (Hermes): a context already over the
  threshold before it is sent is compacted first. Then the hard limit: a
  context over the model's window (``context_length``) is compacted with the
  forced strategy and, if that is not enough, its largest texts are cut
  (:func:`~forge_app.compaction._fit.cut_to_fit`), whatever the loop guard says;
- ``context_overflow``: the provider said the request was too long, so compact
  with the forced (manual) strategy; the orchestrator retries once.

It depends only on the :class:`~forge_domain.ContextEngine` protocol, so any
engine works.

**The loop guard backs off and recovers; it never gives up.** A compaction is
ineffective when it leaves the context at or over the threshold, judged at
once by the engine's estimate and, if that says it worked, again by the
provider's count on the next response (Hermes's rule: estimates can be
optimistic). After an ineffective compaction, automatic compaction is held
back until the context has grown by ``RETRY_GROWTH`` of the threshold or
``RETRY_TURNS`` responses have come (both doubling with each ineffective
attempt in a row, up to 8x), and the next attempt does more: it uses the
forced strategy (only the retention window is kept, then the tail shrinks).
``compaction_suspended`` says when the next attempt comes; a response under
the threshold clears the guard. Forced compaction is never held back. A
failing compaction fires ``compaction_failed`` and leaves the context as it
was; the run goes on, unless it cannot: an engine that raised an error of its own
(:class:`~forge_app.errors.EngineFailed`, a bug) ends the run with that error, and
so does the failure of the compaction that was to bring the context under the
window when cutting could not (a summary model without a key ends with the
provider's error, not with "cannot be compacted further").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import structlog

from forge_app.compaction import compress_with
from forge_app.compaction._fit import cut_to_fit
from forge_app.errors import EngineFailed, ForgeAppError
from forge_app.runtime._conversation import Conversation
from forge_app.runtime._events import (
    CompactionEndEvent,
    CompactionFailedEvent,
    CompactionReason,
    CompactionStartEvent,
    CompactionSuspendedEvent,
)
from forge_app.runtime._hookspecs import hookimpl
from forge_app.runtime._model import ModelResponse
from forge_domain import (
    Agent,
    CompactionMode,
    CompactionResult,
    Context,
    ContextEngine,
    ForgeDomainError,
    JsonObject,
    TextMessage,
    TokenCount,
    note_event,
)

_log = structlog.get_logger("forge_app")

RETRY_GROWTH = 0.1
"""Growth, as a fraction of the threshold, after which a held-back compaction is retried."""
RETRY_TURNS = 4
"""Responses after which a held-back compaction is retried."""
_MAX_BACKOFF = 8


@dataclass(frozen=True, slots=True)
class _Hold:
    """Automatic compaction waits until the context reaches ``tokens`` or turn ``turn``."""

    tokens: int
    turn: int


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
        self.window = window
        """The model's window; requests never exceed it (None: unknown, not enforced)."""
        self.threshold = agent.compaction_threshold(window)
        """The agent's safety threshold for the model's window."""
        self.ineffective = 0
        """Automatic compactions in a row that left the context over the threshold."""
        self.failure: ForgeAppError | ForgeDomainError | None = None
        """The error of the latest compaction that failed, if any."""
        self._hold: _Hold | None = None
        self._due = False
        self._started = False
        self._awaiting_usage = False
        engine.update_model(window)

    @property
    def suspended(self) -> bool:
        """True while the loop guard holds automatic compaction back."""
        return self._hold is not None

    def _is_held(self, conversation: Conversation, count: TokenCount) -> bool:
        hold = self._hold
        return hold is not None and int(count) < hold.tokens and conversation.turns < hold.turn

    def state(self) -> JsonObject:
        """The loop guard's state, saved with each turn of a stored conversation."""
        hold = self._hold
        return {
            "ineffective": self.ineffective,
            "hold_tokens": hold.tokens if hold is not None else None,
            "hold_turn": hold.turn if hold is not None else None,
            "due": self._due,
            "awaiting_usage": self._awaiting_usage,
        }

    def restore(self, state: Mapping[str, object]) -> None:
        """Take back what :meth:`state` saved (a resumed conversation)."""
        ineffective, tokens, turn = (
            state.get(key) for key in ("ineffective", "hold_tokens", "hold_turn")
        )
        self.ineffective = ineffective if isinstance(ineffective, int) else 0
        self._hold = (
            _Hold(tokens=tokens, turn=turn)
            if isinstance(tokens, int) and isinstance(turn, int)
            else None
        )
        self._due = state.get("due") is True
        self._awaiting_usage = state.get("awaiting_usage") is True

    def _clear(self) -> None:
        self.ineffective = 0
        self._hold = None

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
        """Preflight: compact a context over the threshold; make one over the window fit."""
        context = conversation.context
        due, self._due = self._due, False
        if self._is_held(conversation, conversation.token_count(context)):
            pass
        elif due:
            await self.compact(conversation, "threshold")
        elif self._preflight(conversation, context):
            await self.compact(conversation, "preflight")
        if self.window is not None and int(conversation.token_count()) > self.window:
            await self.fit_window(conversation)

    def _preflight(self, conversation: Conversation, context: Context) -> bool:
        """The engine's preflight check; with a tokenizer injected (``compact.tokenizer``),
        the threshold against the conversation's own count instead."""
        if conversation.meter.count_text is None:
            return self.engine.should_compress_preflight(context)
        return int(conversation.token_count(context)) >= self.threshold

    @hookimpl
    async def forge_on_response(self, conversation: Conversation, response: ModelResponse) -> None:
        """Compact when the engine's triggers fire on the usage-anchored size.

        The first response after a compaction also judges it: still over the
        threshold with the provider's own count means it was ineffective.
        """
        if response.usage is not None:
            self.engine.update_from_response(response.usage)
        context = conversation.context
        count = conversation.token_count(context)
        over = self.engine.should_compress(context, count)
        if self._awaiting_usage and count.is_actual():
            self._awaiting_usage = False
            if over:
                await self._ineffective(conversation, count)
        if not over:
            self._clear()
            return
        if self._is_held(conversation, count):
            return
        if response.message.tool_calls:
            self._due = True
        else:
            await self.compact(conversation, "threshold")

    @hookimpl
    async def forge_on_context_overflow(self, conversation: Conversation) -> None:
        """Reactive compaction: the provider rejected the request as too long."""
        await self.compact(conversation, "context_length_exceeded")

    async def fit_window(self, conversation: Conversation) -> None:
        """Bring a context over the model's window under it: compact, then cut.

        Runs whatever the loop guard says. When even cutting leaves it over, the
        context is left as it is and the orchestrator refuses to send it.
        """
        window = self.window
        if window is None:
            return
        self.failure = None
        await self.compact(conversation, "window")
        failure, self.failure = self.failure, None
        before = conversation.context
        if int(conversation.token_count(before)) <= window:
            return
        after = cut_to_fit(before, window, reach="task_too").context
        if after is not before and conversation.replace_context(before, after):
            note_event("cut", {"window": window, "reach": "task_too"})
            _log.warning(
                "context_cut_to_fit",
                conversation_id=conversation.id,
                tokens_before=int(conversation.token_count(before)),
                tokens_after=int(conversation.token_count(after)),
                window=window,
            )
        if failure is not None and int(conversation.token_count()) > window:
            raise failure  # the cause: what the orchestrator would refuse to send follows from it

    async def compact(
        self, conversation: Conversation, reason: CompactionReason
    ) -> CompactionResult | None:
        """Compact ``conversation.context`` now and swap it in; None when nothing was applied.

        A trailing assistant message whose tool calls have not been answered yet
        is kept out of the compaction and re-appended, so its results can follow;
        the result's "before" figures include it.
        """
        hooks = conversation.hooks
        before = conversation.context
        forced = reason in ("context_length_exceeded", "window") or self.ineffective > 0
        mode: CompactionMode = "forced" if forced else "automatic"
        await hooks.dispatch(
            CompactionStartEvent(
                conversation=conversation,
                reason=reason,
                mode=mode,
                token_count=conversation.token_count(before),
                threshold=self.threshold,
            )
        )
        last = before.last_message()
        pending = isinstance(last, TextMessage) and bool(last.tool_calls)
        target = Context(before[:-1], usage_floor=before.usage_floor) if pending else before
        try:
            outcome = await compress_with(self.engine, target, mode=mode)
        except EngineFailed:
            raise  # a bug in the engine: every later compaction would fail alike
        except (ForgeAppError, ForgeDomainError) as exc:
            self.failure = exc
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
        result = outcome.result.model_copy(
            update={
                "original_tokens": int(conversation.token_count(before)),
                "original_messages": len(before),
                "compacted_tokens": int(conversation.token_count(after)),
                "compacted_messages": len(after),
            }
        )
        await hooks.dispatch(
            CompactionEndEvent(conversation=conversation, reason=reason, result=result)
        )
        if reason in ("threshold", "preflight"):
            await self._guard(conversation, after, effective=outcome.changed())
        return result

    async def _guard(self, conversation: Conversation, after: Context, *, effective: bool) -> None:
        count = conversation.token_count(after)
        if effective and not self.engine.should_compress(after, count):
            self._awaiting_usage = True
            return
        await self._ineffective(conversation, count)

    async def _ineffective(self, conversation: Conversation, count: TokenCount) -> None:
        self.ineffective += 1
        backoff = min(2 ** (self.ineffective - 1), _MAX_BACKOFF)
        growth = max(1, int(self.threshold * RETRY_GROWTH)) * backoff
        turns = RETRY_TURNS * backoff
        self._hold = _Hold(tokens=int(count) + growth, turn=conversation.turns + turns)
        await conversation.hooks.dispatch(
            CompactionSuspendedEvent(
                conversation=conversation,
                attempts=self.ineffective,
                token_count=count,
                threshold=self.threshold,
                retry_at_tokens=self._hold.tokens,
                retry_after_turns=turns,
            )
        )
