"""Running an agent's context engine on a framework's history, as the live loop would.

Every adapter converts the framework's history to a :class:`Context` and hands
it to one :class:`HistoryCompactor`: when one of the agent's triggers fires it
compacts automatically, and once more in ``forced`` mode when that left the
context at or over the threshold. A compaction that still leaves it over is not
retried on every call: the compactor waits until the context has grown by 10%
of the threshold (the live loop's guard and its ``RETRY_GROWTH``, simplified; see
:class:`~forge_app.runtime.CompactionHandler`).

The compactor owns its engine: :meth:`HistoryCompactor.close` (or ``aclose``, or
``with``) releases what the engine holds (the ``llm`` engine's HTTP client).
Synchronous callers compact on the compactor's own event loop
(:meth:`HistoryCompactor.compact_blocking`), the same one until it is closed: an HTTP
client keeps its connections alive, bound to the loop that opened them, so a
fresh loop per call (``anyio.run``) would reuse a connection of a closed loop.
"""

from __future__ import annotations

import threading
import weakref
from contextlib import AbstractContextManager
from functools import partial
from types import TracebackType
from typing import Self

import structlog
from anyio import to_thread
from anyio.from_thread import BlockingPortal, start_blocking_portal

from forge_app.compaction import (
    Compactor,
    close_engine,
    compress_with,
    is_summary_message,
    resolve_engine,
)
from forge_app.compaction._boundaries import head_end, system_end
from forge_app.compaction._compactor import SUMMARY_TEXT_LIMIT
from forge_app.runtime._telemetry import observed_compaction
from forge_app.runtime.plugins._compaction import RETRY_GROWTH
from forge_app.summary import read_frame
from forge_domain import (
    Agent,
    Compact,
    CompactionMode,
    CompactionOutcome,
    CompactionResult,
    Context,
    ContextEngine,
    ContextMessage,
    JsonObject,
    TextMessage,
)
from forge_domain.formats import find_violations

__all__ = ["HistoryCompactor"]  # adapter_agent: for the adapters only

_log = structlog.get_logger("forge_app")

SUMMARIES_REMEMBERED = 16
"""Summaries whose structured form is kept, so that the next compaction folds them.

A frame of the default template would fold without it (the engines read its text back,
``forge_app.summary._read_frame``); a model-written summary (the ``llm`` engine) would
not: its text is prose, and only this keeps the frame of facts it was checked against."""


def load_templates() -> None:
    """Read and compile the bundled frame template now, once per process.

    A compaction renders frames and reads earlier ones back; both use the bundled template,
    cached after its first use. Loading it when this module is imported (with
    ``forge_app.adapters``), and again (a no-op) when an adapter is built, keeps that first
    read off the event loop: blocking-call detectors (blockbuster, run by
    LangChain's and pydantic-ai's test suites and by ``langgraph dev``) stop a run that
    reads a file on the loop.
    """
    read_frame("")


load_templates()  # the one file a compaction reads, read on import: adapters are built on loops


def adapter_agent(settings: Agent | Compact | None, context_length: int | None = None) -> Agent:
    """The agent whose settings an adapter compacts with.

    An :class:`Agent` (e.g. from :func:`~forge_app.load_agent`) is used as it is;
    :class:`Compact` settings alone get an agent named ``adapter``; nothing gets
    the defaults. ``context_length`` (the model's window) overrides the agent's.
    """
    if isinstance(settings, Agent):
        agent = settings
    else:
        agent = Agent(id="adapter", compact=settings if settings is not None else Compact())
    if context_length is not None:
        agent = agent.model_copy(update={"context_length": context_length})
    return agent


def cut_agent(agent: Agent, **update: object) -> Agent:
    """``agent`` for an engine that summarises the part before a cut its adapter chose.

    The adapter keeps the verbatim tail itself (LangChain's ``keep``, pydantic-ai's
    ``retention_window`` under a message bound), so the engine keeps no retention window of its
    own within the part (``retention_window`` 0); ``update`` sets more fields of ``compact``.
    """
    fields = {**agent.compact.model_dump(), "retention_window": 0, **update}
    return agent.model_copy(update={"compact": Compact.model_validate(fields)})


class _LoopThread:
    """An event loop in a daemon thread, for synchronous callers, kept until stopped.

    Stopped by :meth:`stop`, or when its owner is garbage-collected first: then from a new
    thread, since the collector may run on the loop's own thread, which cannot wait for
    itself to end (``RuntimeError: cannot join current thread`` from anyio's portal).
    """

    def __init__(self, owner: object) -> None:
        manager = start_blocking_portal()
        self.portal: BlockingPortal = manager.__enter__()
        self._stop = weakref.finalize(owner, _stop_from_new_thread, manager)
        self._stop.atexit = False  # a daemon thread ends with the interpreter

    def stop(self) -> None:
        """Stop the loop and wait for its thread (from any thread but the loop's own)."""
        detached = self._stop.detach()
        if detached is not None:
            _, _, (manager,), _ = detached
            manager.__exit__(None, None, None)


def _stop_from_new_thread(manager: AbstractContextManager[BlockingPortal]) -> None:
    threading.Thread(target=manager.__exit__, args=(None, None, None), daemon=True).start()


class AsyncClosing:
    """``async with``: :meth:`aclose` on the way out (every adapter holds an engine)."""

    async def aclose(self) -> None:
        """Release what the engine holds."""
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


class Closing(AsyncClosing):
    """``with`` too, for synchronous use: :meth:`close` on the way out."""

    def close(self) -> None:
        """Release what the engine holds, from synchronous code."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class HistoryCompactor(Closing):
    """Decides when a framework's history must shrink and shrinks it with the agent's engine."""

    def __init__(
        self,
        settings: Agent | Compact | None = None,
        *,
        engine: ContextEngine | None = None,
        context_length: int | None = None,
        engine_tail: bool = True,
    ) -> None:
        """Use ``engine``, or the engine the agent's ``compact.engine`` names (``frame``).

        ``engine_tail=False``: the engine built here keeps no token tail of its own
        (``tail_ratio=0``: the ``llm`` engine's protected tail, the prune tier's), for a
        caller that decides itself what stays verbatim (the LangChain middleware's ``keep``).

        An injected ``engine`` decides when to compact by the agent it was built for
        (its triggers and threshold); ``settings`` then only pace the retries after an
        ineffective compaction. A ``context_length`` given here reaches it, as the live
        loop's handler tells its engine the model's window (``engine.update_model``).
        """
        load_templates()
        self.agent = adapter_agent(settings, context_length)
        """The agent whose settings apply."""
        self.engine: ContextEngine = (
            engine
            if engine is not None
            else resolve_engine(
                self.agent,
                context_length=self.agent.context_length,
                **({} if engine_tail else {"tail_ratio": 0.0}),
            )
        )
        """The engine that decides and compacts."""
        if engine is not None and context_length is not None:
            engine.update_model(context_length)
        self.compactions: list[CompactionResult] = []
        """Every compaction applied, oldest first."""
        threshold = self.agent.compaction_threshold(self.agent.context_length)
        self._summariser = Compactor(
            self.agent.compact.model_copy(update={"token_threshold": threshold}),
            catalog=self.agent.tool_catalog(),
        )  # the frame, for spans the caller chose (compact_before's ``whole``)
        self._hold: int | None = None
        self._summaries: dict[str, JsonObject] = {}
        self._loop: _LoopThread | None = None
        self._loop_lock = threading.Lock()

    def restore(self, message: ContextMessage) -> ContextMessage:
        """``message`` with its structured summary back, when it is a summary this compactor wrote.

        A framework keeps only a summary's text (a user message, or an assistant message
        the ``llm`` engine wrote or merged it into); with its structure back, the next
        compaction folds it into the new summary instead of quoting it as conversation.
        (A frame's text is read back by the engines anyway; a model-written summary's
        structure exists only here.)
        """
        if isinstance(message, TextMessage) and message.summary_data is None:
            data = self._summaries.get(message.text)
            if data is not None:
                return message.model_copy(update={"summary_data": data})
        return message

    def _remember(self, context: Context) -> None:
        for message in context:
            if isinstance(message, TextMessage) and message.summary_data is not None:
                self._summaries.pop(message.text, None)
                self._summaries[message.text] = message.summary_data
        while len(self._summaries) > SUMMARIES_REMEMBERED:
            del self._summaries[next(iter(self._summaries))]

    def _held(self, tokens: int) -> bool:
        if self._hold is None:
            return False
        if tokens >= self._hold:
            self._hold = None
            return False
        return True

    async def compact(self, context: Context) -> Context | None:
        """The compacted context, or None when no trigger fired or nothing could be compacted.

        A history a provider would reject (a call whose results are partly stored) is
        left alone, with a ``compaction_skipped`` warning: the framework goes on as it
        would without the adapter, and the next call compacts.

        Raises:
            ForgeAppError: the engine failed (``CompactionFailed`` …); nothing was changed.
        """
        count = context.token_count()
        if self._held(int(count)) or not self.engine.should_compress(context, count):
            return None
        # a trailing message whose calls' results are due is kept out, then put back last
        last = context.last_message()
        pending = isinstance(last, TextMessage) and bool(last.tool_calls)
        target = Context(context[:-1], usage_floor=context.usage_floor) if pending else context
        if not _provider_valid(target):  # e.g. outputs of a turn not stored yet: next call
            return None
        compacted = await self._compact(target)
        if compacted is None or last is None or not pending:
            return compacted
        return Context([*compacted, last], usage_floor=len(compacted) + 1)  # its usage: stale

    async def _compress(self, context: Context, mode: CompactionMode) -> CompactionOutcome:
        """The engine's compaction, in a span when telemetry is on."""
        async with observed_compaction(
            self.agent, self.engine, reason="threshold", mode=mode
        ) as finish:
            outcome = await compress_with(self.engine, context, mode=mode)
            finish(outcome.result)
        return outcome

    async def compact_before(
        self, context: Context, cut: int, *, whole: bool = False
    ) -> Context | None:
        """``context`` with its messages before ``cut`` summarised and the rest kept as they are.

        The caller has decided that a compaction is due and where the verbatim tail starts
        (LangChain's ``keep``); the engine compacts the part before it in ``forced`` mode
        (head, summary, and the agent's retention window, 0 for the LangChain middleware).
        None when nothing before ``cut`` could be compacted or the part before it is not
        provider-valid (logged as ``compaction_skipped``). After nothing could be compacted,
        it waits until the history has grown by 10% of the threshold, as :meth:`compact`
        does (an ``llm`` engine would otherwise be asked again at every model call).

        ``whole``: everything before ``cut`` but the leading system messages becomes one
        summary (LangChain's bound: summary and ``keep``), also a part the engine would leave
        as it is (the task and user messages only, or too short for a summary to save
        anything): see :meth:`_summarise_whole`. None then only when that part is one summary
        already (or empty), and no wait follows: no engine was asked.

        Raises:
            ForgeAppError: the engine failed (``CompactionFailed`` …); nothing was changed.
        """
        count = int(context.token_count())
        if self._held(count):  # the last try saved nothing: wait for growth, as compact does
            return None
        before = Context(context[:cut])
        if not _provider_valid(before):
            return None
        summarised = await (self._summarise_whole(before) if whole else self._engine_before(before))
        if summarised is None:
            if not whole:  # with ``whole``, only a part that is one summary already: no engine ran
                self._hold_until_growth(count)
            return None
        kept = context[cut:]  # their reported usage measured the history before: stale
        compacted = Context([*summarised, *kept], usage_floor=len(summarised) + len(kept))
        self._remember(compacted)
        return compacted

    async def _engine_before(self, before: Context) -> Context | None:
        """``before`` compacted by the engine in ``forced`` mode, None when it changed nothing."""
        outcome = await self._compress(before, "forced")
        if not outcome.changed():
            return None
        self.compactions.append(outcome.result)
        return outcome.context

    async def _summarise_whole(self, before: Context) -> Context | None:
        """``before`` as its leading system messages and one summary; None when it is that already.

        1. The head's user messages (the task, and any before the first answer) become a
           frame summary first, so that the engine folds them ahead of what follows;
        2. the engine compacts in ``forced`` mode, as without ``whole`` (an engine built
           with ``engine_tail=False`` keeps nothing else; an engine passed in keeps what its
           own settings keep);
        3. when the engine changed nothing (user messages only, or too little text for a
           summary to save any), everything is folded into one frame summary
           (:meth:`Compactor.summarise_span`), even when that is longer than what it replaces;
        4. the task is never lost: a head longer than the frame quotes whole
           (``SUMMARY_TEXT_LIMIT``) is not summarised at all, and a head user message whose
           text the final summary does not hold word for word (cut by the summary budget, or
           paraphrased by the ``llm`` engine) goes back, as it was, before the summary.
        """
        messages = list(before)
        start = system_end(messages)
        head = messages[start : head_end(messages, is_summary=is_summary_message)]
        if any(len(message.text) > SUMMARY_TEXT_LIMIT for message in head):
            start, head = start + len(head), []  # the frame would cut it: the head stays whole
        if start == len(before) or _one_summary(before, start):
            return None
        async with observed_compaction(  # one span: the steps are parts of one compaction
            self.agent, self.engine, reason="threshold", mode="forced"
        ) as finish:
            current = await self._whole_steps(before, start, head)
            finish(self.compactions[-1])
        return current

    async def _whole_steps(
        self, before: Context, start: int, head: list[ContextMessage]
    ) -> Context:
        """Steps 1-4 of :meth:`_summarise_whole`; the one result is recorded."""
        current, steps = before, []
        if head:
            folded = self._summariser.summarise_span(current, (start, start + len(head) - 1))
            current, steps = folded.context, [folded.result]
        engine_wrote = False
        if not _one_summary(current, start):
            outcome = await compress_with(self.engine, current, mode="forced")
            if outcome.changed():
                current, steps, engine_wrote = outcome.context, [*steps, outcome.result], True
        if not engine_wrote and not _one_summary(current, start):
            folded = self._summariser.summarise_span(current, (start, len(current) - 1))
            current, steps = folded.context, [*steps, folded.result]
        texts = [message.text for message in current[start:]]
        lost = [m for m in head if not any(m.text in text for text in texts)]
        if lost:
            messages = [*current[:start], *lost, *current[start:]]
            current = Context(messages, usage_floor=len(messages))
        self.compactions.append(_whole_result(before, current, start, steps))
        return current

    def _hold_until_growth(self, count: int) -> None:
        """Try again only once the history has grown past ``count`` by 10% of the threshold
        (what could be compacted was not enough: an ``llm`` engine would otherwise be asked
        again at every model call)."""
        self._hold = count + max(1, int(self.agent.compaction_threshold() * RETRY_GROWTH))

    async def _compact(self, context: Context) -> Context | None:
        outcome = await self._compress(context, "automatic")
        current = outcome.context if outcome.changed() else context
        if outcome.changed():
            self.compactions.append(outcome.result)
        if self.engine.should_compress(current, current.token_count()):
            forced = await self._compress(current, "forced")
            if forced.changed():
                self.compactions.append(forced.result)
                current = forced.context
        after = current.token_count()
        if self.engine.should_compress(current, after):
            self._hold_until_growth(int(after))
        if current is context:
            return None
        self._remember(current)
        return current

    def compact_blocking(self, context: Context) -> Context | None:
        """:meth:`compact` for synchronous code, on this compactor's own event loop.

        The loop runs in a thread started on first use and is the same for every
        call until :meth:`close`, so the engine's HTTP connections stay usable. Any
        thread may call it, one that runs an event loop too (blocked meanwhile).
        """
        return self._portal().call(self.compact, context)

    def compact_before_blocking(
        self, context: Context, cut: int, *, whole: bool = False
    ) -> Context | None:
        """:meth:`compact_before` for synchronous code (see :meth:`compact_blocking`)."""
        return self._portal().call(partial(self.compact_before, context, cut, whole=whole))

    def _portal(self) -> BlockingPortal:
        with self._loop_lock:
            if self._loop is None:
                self._loop = _LoopThread(self)
            return self._loop.portal

    def close(self) -> None:
        """Release what the engine holds (the ``llm`` engine's HTTP client) and stop the loop.

        For synchronous use (:meth:`compact_blocking`); after :meth:`compact` call
        :meth:`aclose` in the event loop that compacted. An engine passed in is closed too;
        a client passed to that engine is left open (the engine's rule).
        """
        with self._loop_lock:
            loop, self._loop = self._loop, None
        if loop is None:
            with start_blocking_portal() as portal:
                portal.call(close_engine, self.engine)
            return
        try:
            loop.portal.call(close_engine, self.engine)
        finally:
            loop.stop()

    async def aclose(self) -> None:
        """Release what the engine holds, in the running event loop (see :meth:`close`)."""
        if self._loop is not None:  # the engine's connections belong to that loop
            await to_thread.run_sync(self.close)
        else:
            await close_engine(self.engine)


def _one_summary(context: Context, start: int) -> bool:
    """Whether ``context`` from ``start`` on is one summary message."""
    return len(context) - start == 1 and is_summary_message(context[start])


def _whole_result(
    before: Context, after: Context, start: int, steps: list[CompactionResult]
) -> CompactionResult:
    """One result for the steps of :meth:`HistoryCompactor._summarise_whole`: everything from
    ``start`` on was summarised; the engine named is the last step's (the summary's writer)."""
    last = steps[-1]
    span = (start, len(before) - 1)
    return CompactionResult(
        original_tokens=int(before.token_count()),
        compacted_tokens=int(after.token_count()),
        original_messages=len(before),
        compacted_messages=len(after),
        compacted_range=span,
        summarised_range=span,
        engine=last.engine,
        summary_usage=next((s.summary_usage for s in steps if s.summary_usage), None),
        coverage=next((s.coverage for s in reversed(steps) if s.coverage is not None), None),
    )


def _provider_valid(context: Context) -> bool:
    """Whether a provider would take ``context``; when not, a ``compaction_skipped`` warning
    (the framework goes on as it would without the adapter)."""
    violations = find_violations(context)
    if violations:
        _log.warning(
            "compaction_skipped", reason="history not provider-valid", first=str(violations[0])
        )
    return not violations
