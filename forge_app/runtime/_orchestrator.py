"""The agent loop: request, response, tool calls, events — until a final answer.

One :class:`Orchestrator` serves any number of conversations at once (run them
in an anyio task group): it holds only immutable configuration, and each
:class:`Conversation` carries its own context, hooks and compaction state.

One turn::

    request event        (preflight compaction may replace the context)
    provider call        (transient errors retried with backoff and jitter;
                          context_length_exceeded -> context_overflow event
                          -> one retry with the compacted context)
    append the assistant message with its usage
    response event       (threshold compaction)
    tool calls           (tool_call_start / tool_call_end around each)
    append the results in one step
    turn_end event

No request over the model's window (``context_length``) is ever sent: the
request hook compacts and cuts (see :class:`~forge_app.runtime.plugins.CompactionHandler`),
and a context still over it stops the run with :class:`ContextDoesNotFit`.

The run stops at an answer without tool calls or after ``agent.max_turns``
provider calls. Whatever ends it (an answer, an error, a cancellation), the
context is left provider-valid: calls that never got a result are answered
with an error result before the ``end`` event.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import anyio
import structlog

from forge_app.compaction._fit import irreducible_parts
from forge_app.errors import (
    ContextDoesNotFit,
    ContextLengthExceeded,
    ProviderUnavailable,
    StoreError,
    TurnDeadlineExceeded,
)
from forge_app.runtime._call_ids import with_unique_call_ids
from forge_app.runtime._conversation import Conversation
from forge_app.runtime._dispatch import Hooks, NamedPlugin, discover_plugins
from forge_app.runtime._events import (
    ContextOverflowEvent,
    EndEvent,
    EndReason,
    RequestEvent,
    ResponseEvent,
    StartEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    TurnEndEvent,
)
from forge_app.runtime._model import ChatModel, ModelRequest, ModelResponse, OpenAIChatModel
from forge_app.runtime._retry import RetryPolicy
from forge_app.runtime._saved_state import restore_state, saved_state
from forge_app.runtime._telemetry import telemetry_plugin
from forge_app.runtime._tools import EngineTools, ToolExecutor, ToolRegistry
from forge_app.runtime.plugins import CompactionHandler, LoggingPlugin
from forge_app.store import (
    ArchivingEngine,
    ConversationRecorder,
    SessionStore,
    new_conversation_id,
)
from forge_domain import (
    CHARS_METER,
    Agent,
    Context,
    ContextEngine,
    ContextMessage,
    TextMessage,
    TokenMeter,
    ToolResult,
)

EngineFactory = Callable[[Agent], ContextEngine]
"""Builds a fresh engine for one conversation (engines keep per-conversation state)."""

_log = structlog.get_logger("forge_app")


def default_engine(agent: Agent) -> ContextEngine:
    """The engine ``agent.compact.engine`` names (``frame`` unless configured)."""
    from forge_app.compaction._registry import resolve_engine

    return resolve_engine(agent)


def _settle(conversation: Conversation) -> None:
    """Answer the calls of a trailing assistant message that never got results."""
    last = conversation.context.last_message()
    if isinstance(last, TextMessage) and last.tool_calls:
        conversation.append(
            *(
                ToolResult.failed(call.id, "the run stopped before this call ran", name=call.name)
                for call in last.tool_calls
            )
        )


class Orchestrator:
    """Runs conversations of one agent against one model."""

    def __init__(
        self,
        agent: Agent,
        model: ChatModel,
        *,
        tools: ToolExecutor | None = None,
        plugins: Sequence[NamedPlugin] = (),
        engine: EngineFactory = default_engine,
        retry: RetryPolicy | None = None,
        context_length: int | None = None,
        store: SessionStore | None = None,
        meter: TokenMeter | None = None,
    ) -> None:
        """Configure the loop.

        Args:
            agent: the agent definition (model, prompt, compaction, plugins, turn limit).
            model: the provider.
            tools: runs tool calls; a :class:`ToolRegistry` is narrowed to ``agent.tools``
                when the agent lists any.
            plugins: third-party plugins (e.g. :func:`discover_plugins`), shared by every
                conversation; filtered by ``agent.plugins``.
            engine: builds each conversation's context engine.
            retry: backoff for transient provider errors.
            context_length: the model's window (else ``agent.context_length``).
            store: keeps every conversation (its original messages, what each
                compaction replaced) and offers the model the recall tools;
                :meth:`resume` picks a stored conversation up again.
            meter: how conversations are counted for the triggers, the window and the
                metrics (``compact.tokenizer``; the application loads the tokenizer,
                e.g. ``forge_app.files.TokenizerLoader``); default chars/4. Each
                conversation gets a fresh meter of the same tokenizer.
        """
        if isinstance(tools, ToolRegistry) and agent.tools:
            tools = tools.only(agent.tools)
        self.agent = agent
        self.model = model
        self.tools: ToolExecutor = tools if tools is not None else ToolRegistry()
        self.plugins = tuple(plugins)
        self.engine = engine
        self.retry = retry or RetryPolicy()
        self.context_length = context_length if context_length is not None else agent.context_length
        self.store = store
        self.meter = meter or CHARS_METER

    @classmethod
    def for_agent(
        cls,
        agent: Agent,
        *,
        tools: ToolExecutor | None = None,
        engine: EngineFactory = default_engine,
        retry: RetryPolicy | None = None,
        environ: Mapping[str, str] | None = None,
        store: SessionStore | None = None,
    ) -> Orchestrator:
        """Production wiring: the agent's OpenAI-compatible model and the installed plugins.

        The model comes from :meth:`OpenAIChatModel.for_agent` (agent fields, else the
        ``OPENAI_*`` variables of ``environ``); plugins from the ``forge.hooks`` entry points.
        """
        model = OpenAIChatModel.for_agent(agent, environ=environ)
        return cls(
            agent,
            model,
            tools=tools,
            plugins=discover_plugins(),
            engine=engine,
            retry=retry,
            store=store,
        )

    # -- conversations -------------------------------------------------------------------

    def open(
        self,
        start: str | Context | Iterable[ContextMessage],
        *,
        conversation_id: str | None = None,
    ) -> Conversation:
        """A new conversation; a string becomes the agent's system prompt plus a user message."""
        if isinstance(start, str):
            messages: list[ContextMessage] = []
            if self.agent.system_prompt:
                messages.append(TextMessage.system(self.agent.system_prompt))
            messages.append(TextMessage.user(start))
            context = Context(messages)
        elif isinstance(start, Context):
            context = start
        else:
            context = Context(start)
        conversation_id = conversation_id or new_conversation_id(self.agent.id)
        recorder = None
        if self.store is not None:
            recorder = ConversationRecorder.start(self.store, conversation_id, self.agent.id)
        conversation = self._conversation(conversation_id, context, recorder)
        self.persist(conversation)
        return conversation

    def resume(self, conversation_id: str) -> Conversation:
        """A stored conversation, as it was after its latest stored turn.

        Its context (the latest compaction's result and every message after it),
        counters, usage, the loop guard and the engine's state come back; run it
        with :meth:`run` after appending a message, or drive :meth:`turn`.

        Raises:
            StoreError: no store is configured.
            ConversationNotFound: the store has no such conversation.
        """
        if self.store is None:
            raise StoreError("(none)", "resume needs an orchestrator with a store")
        saved = self.store.load(conversation_id)
        recorder = ConversationRecorder.resume(self.store, saved)
        context = Context(saved.messages, usage_floor=saved.usage_floor)
        conversation = self._conversation(conversation_id, context, recorder)
        restore_state(conversation, saved.runtime)
        return conversation

    def _conversation(
        self, conversation_id: str, context: Context, recorder: ConversationRecorder | None
    ) -> Conversation:
        engine = self.engine(self.agent)
        if recorder is not None:
            engine = ArchivingEngine(engine, recorder)
        handler = CompactionHandler(engine, self.agent, context_length=self.context_length)
        builtins: list[NamedPlugin] = []
        telemetry = telemetry_plugin(self.agent)
        if telemetry is not None:
            builtins.append((telemetry.name, telemetry))
        builtins += [(LoggingPlugin.name, LoggingPlugin()), (CompactionHandler.name, handler)]
        hooks = Hooks(
            builtins=builtins,
            plugins=self.plugins,
            selection=self.agent.plugins,
        )
        return Conversation(
            id=conversation_id,
            agent=self.agent,
            context=context,
            hooks=hooks,
            tools=EngineTools(self.tools, engine) if engine.tool_schemas() else None,
            recorder=recorder,
            meter=self.meter.fresh(),
            engine=engine,
        )

    def persist(self, conversation: Conversation) -> None:
        """Store what joined the conversation since the last call (when a store is set).

        The loop calls it after each turn and when a run ends; a driver that appends
        messages itself (a replay) calls it after its own appends.
        """
        recorder = conversation.recorder
        if recorder is None:
            return
        before = conversation.context
        after = recorder.sync(before, saved_state(conversation))
        if after is not before:
            conversation.replace_context(before, after)

    def _persist_at_end(self, conversation: Conversation) -> None:
        """:meth:`persist` when a run ends, whatever ended it: a store error is logged
        (``conversation_not_stored``) rather than raised over the run's own outcome."""
        try:
            self.persist(conversation)
        except StoreError as exc:
            _log.error("conversation_not_stored", conversation_id=conversation.id, error=str(exc))

    async def chat(
        self, prompt: str | Context, *, conversation_id: str | None = None
    ) -> Conversation:
        """Open a conversation and run it to the end."""
        conversation = self.open(prompt, conversation_id=conversation_id)
        await self.run(conversation)
        return conversation

    async def run(self, conversation: Conversation) -> EndReason:
        """Run the loop on ``conversation`` until an answer or the turn limit."""
        hooks = conversation.hooks
        reason: EndReason = "error"
        await hooks.dispatch(StartEvent(conversation=conversation))
        try:
            reason = await self._loop(conversation)
        except anyio.get_cancelled_exc_class():
            reason = "cancelled"
            raise
        finally:
            _settle(conversation)
            self._persist_at_end(conversation)
            with anyio.CancelScope(shield=True):
                await hooks.dispatch(EndEvent(conversation=conversation, reason=reason))
        return reason

    # -- the loop ------------------------------------------------------------------------

    async def _loop(self, conversation: Conversation) -> EndReason:
        for number in range(1, conversation.agent.max_turns + 1):
            if await self.turn(conversation, number):
                return "final_answer"
        return "max_turns"

    async def turn(self, conversation: Conversation, number: int) -> bool:
        """Run one turn (request, response, tool calls); True when the model gave its answer.

        :meth:`run` calls this in a loop between the ``start`` and ``end`` events;
        drivers such as :mod:`forge_app.runtime._replay` call it directly.
        """
        hooks = conversation.hooks
        await hooks.dispatch(RequestEvent(conversation=conversation, turn=number))
        request, response = await self._call(conversation, number)
        conversation.turns += 1
        if response.usage is not None:
            conversation.usage = conversation.usage.accumulate(response.usage)
        response = with_unique_call_ids(conversation, response)
        conversation.append(response.message)
        context = conversation.context
        if response.usage is not None and context.distrusted_usage_index() == len(context) - 1:
            _log.warning(
                "usage_distrusted",
                conversation_id=conversation.id,
                reported=response.usage.total_tokens.value,
                estimate=context.token_count_approx(),
            )
        await hooks.dispatch(
            ResponseEvent(
                conversation=conversation, turn=number, request=request, response=response
            )
        )
        calls = response.message.tool_calls or ()
        results: list[ToolResult] = []
        for call in calls:
            await hooks.dispatch(
                ToolCallStartEvent(conversation=conversation, turn=number, call=call)
            )
            result = await (conversation.tools or self.tools).execute(call)
            await hooks.dispatch(
                ToolCallEndEvent(conversation=conversation, turn=number, call=call, result=result)
            )
            results.append(result)
        if results:
            conversation.append(*results)
        await hooks.dispatch(TurnEndEvent(conversation=conversation, turn=number))
        self.persist(conversation)
        return not calls

    async def _call(
        self, conversation: Conversation, turn: int
    ) -> tuple[ModelRequest, ModelResponse]:
        """One provider call; a context overflow gets one retry after the plugins reacted."""
        overflowed = False
        while True:
            self._ensure_fits(conversation)
            request = ModelRequest.of(
                conversation.context,
                model=conversation.agent.model,
                tools=(conversation.tools or self.tools).schemas(),
            )
            try:
                return request, await self._complete(conversation, request)
            except ContextLengthExceeded as exc:
                if overflowed:
                    raise
                overflowed = True
                before = conversation.context
                await conversation.hooks.dispatch(
                    ContextOverflowEvent(conversation=conversation, turn=turn, error=exc)
                )
                if conversation.context is before:
                    raise

    def _ensure_fits(self, conversation: Conversation) -> None:
        """Refuse to send a context over the model's window (the request hook had its chance).

        Raises:
            ContextDoesNotFit: naming the parts that could not be shrunk.
        """
        window = self.context_length
        tokens = int(conversation.token_count())
        if window is not None and tokens > window:
            raise ContextDoesNotFit(tokens, window, irreducible_parts(conversation.context))

    async def _complete(self, conversation: Conversation, request: ModelRequest) -> ModelResponse:
        """The model's answer to ``request``; a transient failure (:class:`ProviderUnavailable`)
        is tried again after the policy's wait, up to its attempts, all within its deadline.

        A plain loop, not a retrying object per call: a replay makes one call per turn and
        each such object was about 35 objects left in reference cycles (``plans/008``).
        """
        policy = self.retry
        with anyio.move_on_after(policy.deadline) as deadline:
            for attempt in range(1, policy.attempts + 1):
                try:
                    return await self.model.complete(request)
                except ProviderUnavailable as error:
                    if attempt == policy.attempts:
                        raise
                    _log.warning(
                        "model_call_retried",
                        conversation_id=conversation.id,
                        attempt=attempt,
                        error=str(error),
                    )
                    await anyio.sleep(policy.wait(attempt))
        if deadline.cancelled_caught:
            raise TurnDeadlineExceeded(request.model, policy.deadline)
        raise AssertionError("the last attempt returns or raises")  # pragma: no cover
