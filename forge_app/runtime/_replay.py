"""Replay a recorded transcript through the real event pipeline.

Each recorded assistant message is served as if a provider had just returned
it (:class:`ReplayModel`), and each tool call gets its recorded output
(:class:`ReplayTools`). User and system messages are fed in before the turn
that follows them. Everything else is the production path: the orchestrator's
turns, the hooks, the :class:`~forge_app.runtime.plugins.CompactionHandler` and its
engine — so a replay shows when and how an agent definition would have
compacted a real session, turn by turn, without a model or a network.

Recorded usage is served as long as the conversation is the recording; after
the first compaction it no longer describes what would have been sent, so it
is dropped and sizes become estimates.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import AsyncIterator, Callable, Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from forge_app.errors import ModelCallFailed
from forge_app.runtime._conversation import Conversation
from forge_app.runtime._dispatch import NamedPlugin
from forge_app.runtime._events import EndEvent, StartEvent
from forge_app.runtime._hookspecs import hookimpl
from forge_app.runtime._model import ModelRequest, ModelResponse
from forge_app.runtime._orchestrator import EngineFactory, Orchestrator, default_engine
from forge_app.runtime._turn_log import TurnRecord
from forge_app.store import SessionStore
from forge_domain import (
    CHARS_METER,
    Agent,
    CompactionResult,
    Context,
    ContextMessage,
    JsonObject,
    Role,
    TextMessage,
    TokenCount,
    TokenMeter,
    ToolCall,
    ToolResult,
)


class ReplayModel:
    """A ChatModel that answers with recorded assistant messages, in order."""

    def __init__(self, responses: Iterable[TextMessage]) -> None:
        """Serve ``responses`` one per request."""
        self._queue = deque(responses)
        self.recorded_usage = True
        """Serve the recorded usage (turned off once the conversation diverged)."""
        self.observe: Callable[[], Context] | None = None
        """Gives the context being sent; each one goes to every ``listeners``."""
        self.listeners: list[Callable[[Context], object]] = []
        """Called with the context of each request, as it is served (in order). Nothing
        keeps the requests: a listener keeps what it needs of them."""
        self.requests = 0
        """Requests served so far."""

    def remaining(self) -> int:
        """Responses not served yet."""
        return len(self._queue)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """The next recorded assistant message."""
        if not self._queue:
            raise ModelCallFailed(request.model, "the recording has no response left")
        self.requests += 1
        if self.observe is not None:
            context = self.observe()
            for listener in self.listeners:
                listener(context)
        message = self._queue.popleft()
        if not self.recorded_usage and message.usage is not None:
            message = message.model_copy(update={"usage": None})
        finish = "tool_calls" if message.tool_calls else "stop"
        return ModelResponse(message=message, finish_reason=finish)


class ReplayTools:
    """A tool executor that returns the recorded result of each call id."""

    def __init__(self, results: Iterable[ToolResult]) -> None:
        """Index ``results`` by call id (repeated ids are served in order)."""
        self._results: defaultdict[str, deque[ToolResult]] = defaultdict(deque)
        for result in results:
            self._results[result.call_id].append(result)

    def schemas(self) -> tuple[JsonObject, ...]:
        """No schemas: the recording already says which tools were called."""
        return ()

    async def execute(self, call: ToolCall) -> ToolResult:
        """The recorded result, or an error result when the recording has none."""
        queue = self._results.get(call.id)
        if queue:
            return queue.popleft()
        return ToolResult.failed(call.id, "no recorded output for this call", name=call.name)


class ReplayTurn(BaseModel):
    """The state after one replayed turn."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    turn: int
    """1-based number of the recorded assistant message."""
    messages: int
    """Messages in the (possibly compacted) context after the turn."""
    tokens: TokenCount
    """Its size (usage-anchored while recorded usage applies, else estimated)."""
    request_tokens: TokenCount
    """Size of the request sent in this turn, after any preflight compaction (the
    largest one when a provider overflow made the turn send twice)."""
    recorded_messages: int
    """Messages of the recording up to this turn (the size without compaction)."""
    recorded_tokens: int
    """Estimated tokens of the recording up to this turn."""
    compactions: tuple[CompactionResult, ...] = ()
    """Compactions applied during the turn."""


class _Recorder:
    """Collects compaction results and stops recorded usage after the first one."""

    name = "replay"

    def __init__(self, model: ReplayModel) -> None:
        self.model = model
        self.results: list[CompactionResult] = []

    @hookimpl
    def forge_on_compaction_end(self, result: CompactionResult) -> None:
        if result.compacted_range is not None:
            self.model.recorded_usage = False
            self.results.append(result)

    def drain(self) -> tuple[CompactionResult, ...]:
        out = tuple(self.results)
        self.results.clear()
        return out


def _is_response(message: ContextMessage) -> bool:
    return isinstance(message, TextMessage) and message.has_role(Role.ASSISTANT)


class Replay:
    """One replay of ``transcript`` under ``agent``; iterate :meth:`turns`."""

    def __init__(
        self,
        transcript: Context | Sequence[ContextMessage],
        agent: Agent,
        *,
        engine: EngineFactory = default_engine,
        plugins: Sequence[NamedPlugin] = (),
        context_length: int | None = None,
        store: SessionStore | None = None,
        meter: TokenMeter | None = None,
        conversation_id: str | None = None,
    ) -> None:
        """Prepare the replay; ``plugins`` observe it like any conversation.

        ``meter`` counts for the triggers and the sizes reported (``compact.tokenizer``;
        default chars/4).

        With a ``store``, the replayed conversation is stored as a live one would be
        (originals, archives of every compaction, refs named in the context), as
        ``conversation_id`` (default: ``new_conversation_id`` of the agent id).
        """
        self.transcript = tuple(transcript)
        responses = [m for m in self.transcript if isinstance(m, TextMessage) and _is_response(m)]
        results = [m for m in self.transcript if isinstance(m, ToolResult)]
        self.model = ReplayModel(responses)
        self._recorder = _Recorder(self.model)
        turns = max(1, len(responses))
        self.orchestrator = Orchestrator(
            agent.model_copy(update={"max_turns": turns}),
            self.model,
            tools=ReplayTools(results),
            plugins=(*plugins, (_Recorder.name, self._recorder)),
            engine=engine,
            context_length=context_length,
            store=store,
            meter=meter,
        )
        self._recorded_meter = (meter or CHARS_METER).fresh()
        first = next((i for i, m in enumerate(self.transcript) if _is_response(m)), None)
        self._start = len(self.transcript) if first is None else first
        self.conversation: Conversation = self.orchestrator.open(
            Context(self.transcript[: self._start]), conversation_id=conversation_id
        )
        """The replayed conversation; its context is the compacted result at the end."""
        self.model.observe = lambda: self.conversation.context
        self._turn_requests: list[Context] = []
        """The contexts sent in the turn being replayed (one, or two after an overflow)."""
        self.model.listeners.append(self._turn_requests.append)

    def on_request(self, listener: Callable[[Context], object]) -> None:
        """Call ``listener`` with the context of every request, as it is sent.

        The replay keeps no request past its turn: whoever needs a figure over all of
        them (a cost, a peak) adds it up here.
        """
        self.model.listeners.append(listener)

    async def turns(self) -> AsyncIterator[ReplayTurn]:
        """Replay every recorded turn, yielding the state after each."""
        async for record in self.records():
            yield record.replay_turn()

    async def records(self) -> AsyncIterator[TurnRecord]:
        """Replay every recorded turn, yielding the state after each as plain numbers
        (the figures of :meth:`turns`, without building a pydantic model per turn)."""
        conversation = self.conversation
        hooks = conversation.hooks
        transcript = self.transcript
        recorded = Context(transcript[: self._start])
        pending: list[ContextMessage] = []
        number = 0
        end = self._start
        await hooks.dispatch(StartEvent(conversation=conversation))
        for index in range(self._start, len(transcript)):
            message = transcript[index]
            if isinstance(message, ToolResult):
                if index >= end:
                    recorded = recorded.append(message)
                continue
            if not _is_response(message):
                pending.append(message)
                recorded = recorded.append(message)
                continue
            if pending:
                conversation.append(*pending)
                pending.clear()
            end = index + 1
            while end < len(transcript) and isinstance(transcript[end], ToolResult):
                end += 1
            recorded = recorded.append(*transcript[index:end])
            number += 1
            self._turn_requests.clear()
            await self.orchestrator.turn(conversation, number)
            context = conversation.context
            tokens = conversation.token_count(context)
            request = max((conversation.token_count(c) for c in self._turn_requests), key=int)
            yield TurnRecord(
                number,
                len(context),
                tokens.value,
                tokens.is_actual(),
                request.value,
                request.is_actual(),
                len(recorded),
                self._recorded_meter.total(recorded),
                self._recorder.drain(),
            )
        if pending:
            conversation.append(*pending)
        self.orchestrator.persist(conversation)
        await hooks.dispatch(EndEvent(conversation=conversation, reason="final_answer"))
        await conversation.aclose()


async def replay(
    transcript: Context | Sequence[ContextMessage],
    agent: Agent,
    *,
    engine: EngineFactory = default_engine,
    plugins: Sequence[NamedPlugin] = (),
    context_length: int | None = None,
) -> AsyncIterator[ReplayTurn]:
    """Replay ``transcript`` under ``agent``, yielding each turn's sizes and compactions."""
    session = Replay(
        transcript, agent, engine=engine, plugins=plugins, context_length=context_length
    )
    async for turn in session.turns():
        yield turn
