"""An OpenAI Agents SDK session that compacts its items with forge-compact.

:class:`ForgeSession` implements the SDK's ``Session`` protocol
(``get_items``, ``add_items``, ``pop_item``, ``clear_session``), so it goes
wherever the SDK takes a session (``Runner.run(agent, input, session=...)``).
It stores Responses input items, in memory or in another session it wraps
(``SQLiteSession`` …). After each ``add_items`` it reads the items as one
context (:func:`forge_domain.formats._responses.messages_from_responses`: a
reasoning item, an assistant message and its function calls are one message;
a function call output is a tool result), lets the agent's engine compact it
when a trigger fires, and writes the items back
(:func:`~forge_domain.formats._responses.messages_to_responses`). The conversion
is lossless, so every item the compaction did not touch is written back
exactly as it was; the summary is one user message item. A call whose output
has not been added yet is kept out of the compaction and stays last.
``aclose()`` (or ``async with``) releases what the engine holds.

The module imports nothing from the SDK at run time: the protocol is structural.
"""

from __future__ import annotations

import threading
import uuid
from typing import TYPE_CHECKING, cast

from anyio import to_thread

from forge_app.adapters._compaction import AsyncClosing, HistoryCompactor
from forge_domain import Agent, Compact, CompactionResult, Context, ContextEngine
from forge_domain.formats import messages_from_responses, messages_to_responses

if TYPE_CHECKING:
    from agents.items import TResponseInputItem
    from agents.memory import Session
    from agents.memory.session_settings import SessionSettings

__all__ = ["ForgeSession"]

EVERY_ITEM = 2**31 - 1
"""The ``limit`` that reads a wrapped store's whole history.

``get_items()`` without a limit applies the store's own ``session_settings.limit``
(the latest N items only); compacting those and writing them back would erase the
rest. Every SDK store reads "the latest ``limit``", so a limit above any history's
length reads it all (kept within 32 bits for the backends' query limits)."""


class _ThreadLock:
    """``async with``: a thread lock, waited for in a worker thread, never on the event loop.

    A thread lock, since one session may be used from several threads, each with its own
    event loop (``Runner.run_sync`` in a thread pool), where an ``anyio.Lock`` (bound to one
    loop) deadlocks.
    """

    def __init__(self, lock: threading.Lock) -> None:
        self._lock = lock

    async def __aenter__(self) -> None:
        if not self._lock.acquire(blocking=False):
            await to_thread.run_sync(self._lock.acquire)

    async def __aexit__(self, *exc_info: object) -> None:
        self._lock.release()


class ForgeSession(AsyncClosing):
    """A Responses-item session whose history is compacted by the agent's engine.

    ::

        async with ForgeSession("chat-1", Compact(token_threshold=20_000)) as session:
            await Runner.run(agent, "fix the failing test", session=session)

    Leaving the ``async with`` (or :meth:`aclose`) releases what the engine holds (the
    ``llm`` engine's HTTP client); the items stay readable, a wrapped ``store`` open.
    """

    def __init__(
        self,
        session_id: str | None = None,
        settings: Agent | Compact | None = None,
        *,
        engine: ContextEngine | None = None,
        context_length: int | None = None,
        store: Session | None = None,
        session_settings: SessionSettings | None = None,
    ) -> None:
        """A session compacting with ``settings`` (an agent or ``compact:`` settings).

        Args:
            session_id: the session's id (a random one when None).
            settings: an :class:`Agent` or :class:`Compact` settings; the defaults when None.
            engine: a ready engine; else the one ``compact.engine`` names. A ready engine
                compacts by the triggers of the agent it was built for.
            context_length: the model's window (else the agent's).
            store: a session to keep the items in (e.g. the SDK's ``SQLiteSession``);
                in memory when None. Compacting reads its whole history (whatever its
                ``session_settings.limit``) and replaces its items (clear, then add).
            session_settings: the SDK's settings (``limit`` …) of an in-memory session; a
                wrapped ``store``'s own are used (and set) otherwise.
        """
        self.session_id = session_id or uuid.uuid4().hex
        self.compactor = HistoryCompactor(settings, engine=engine, context_length=context_length)
        self.store = store
        self._items: list[TResponseInputItem] = []
        self._settings = session_settings
        self._lock = threading.Lock()  # one session may serve several threads, each its own loop

    @property
    def session_settings(self) -> SessionSettings | None:
        """The SDK's settings (``limit`` …): the wrapped store's, else this session's."""
        if self.store is not None:
            return self.store.session_settings
        return self._settings

    @session_settings.setter
    def session_settings(self, settings: SessionSettings | None) -> None:
        if self.store is not None:
            self.store.session_settings = settings
        else:
            self._settings = settings

    def _locked(self) -> _ThreadLock:
        """This session's lock, waited for in a worker thread, never on the event loop."""
        return _ThreadLock(self._lock)

    @property
    def compactions(self) -> list[CompactionResult]:
        """Every compaction applied so far, oldest first."""
        return self.compactor.compactions

    async def _history(self) -> list[TResponseInputItem]:
        """Every stored item, whatever limit the wrapped store applies to its readers."""
        if self.store is not None:
            return await self.store.get_items(limit=EVERY_ITEM)
        return list(self._items)

    async def _replace(self, items: list[TResponseInputItem]) -> None:
        if self.store is not None:
            await self.store.clear_session()
            await self.store.add_items(items)
        else:
            self._items = list(items)

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The latest ``limit`` items, oldest first (none for 0); every item when None and no
        ``session_settings.limit`` applies.

        A wrapped store reads them (its own ``session_settings.limit`` when ``limit`` is None).
        """
        if self.store is not None:
            return await self.store.get_items(limit)
        if limit is None and self._settings is not None:
            limit = self._settings.limit
        if limit is None:
            return list(self._items)
        return self._items[-limit:] if limit > 0 else []

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append ``items``, then compact the whole history when a trigger fires.

        Raises:
            InvalidMessage: an item is not a valid Responses input item.
            ForgeAppError: the engine failed; the items were added, nothing else changed.
        """
        async with self._locked():
            if self.store is not None:
                await self.store.add_items(items)
            else:
                self._items.extend(items)
            current = await self._history()
            context = Context(map(self.compactor.restore, messages_from_responses(current)))
            compacted = await self.compactor.compact(context)
            if compacted is not None:
                written = messages_to_responses(compacted)
                await self._replace(cast("list[TResponseInputItem]", written))

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove and return the newest item (None when empty)."""
        async with self._locked():
            if self.store is not None:
                return await self.store.pop_item()
            return self._items.pop() if self._items else None

    async def aclose(self) -> None:
        """Release what the engine holds (the ``llm`` engine's HTTP client); not the ``store``."""
        await self.compactor.aclose()

    def close(self) -> None:
        """Close the wrapped ``store`` (as ``SQLiteSession.close`` does), from synchronous code.

        What the engine holds is released by :meth:`aclose` (in the loop that compacted).
        """
        close = getattr(self.store, "close", None)
        if callable(close):
            close()

    async def clear_session(self) -> None:
        """Remove every item."""
        async with self._locked():
            if self.store is not None:
                await self.store.clear_session()
            self._items = []
