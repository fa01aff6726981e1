"""Closing an adapter closes its engine, on the event loop that compacted."""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Callable

import pytest

from forge_app.adapters import (
    ForgeCompactionMiddleware,
    ForgeHistoryProcessor,
    ForgeSession,
    HistoryCompactor,
)
from forge_domain import (
    Agent,
    BaseContextEngine,
    Compact,
    CompactionMode,
    CompactionOutcome,
    Context,
    TextMessage,
    compaction_outcome,
)

pytestmark = pytest.mark.anyio

AGENT = Agent(id="adapter", compact=Compact(token_threshold=1_000))


class LoopRecordingEngine(BaseContextEngine):
    """Never compacts; records each call and the event loop it ran on."""

    name = "recording"

    def __init__(self, agent: Agent) -> None:
        self.calls: list[tuple[str, asyncio.AbstractEventLoop]] = []
        super().__init__(agent)

    async def compress(
        self, context: Context, *, focus: str | None = None, mode: CompactionMode = "automatic"
    ) -> CompactionOutcome:
        self.calls.append(("compress", asyncio.get_running_loop()))
        return compaction_outcome(context, context, None, engine=self.name)

    async def aclose(self) -> None:
        self.calls.append(("aclose", asyncio.get_running_loop()))

    def names(self) -> list[str]:
        return [name for name, _ in self.calls]

    def loops(self) -> int:
        """How many event loops the calls ran on (the loops are kept alive, so ids differ)."""
        return len({id(loop) for _, loop in self.calls})


def over_threshold(tokens: int) -> Context:
    return Context([TextMessage.system("You are a coder."), TextMessage.user("x" * 4 * tokens)])


ADAPTERS: dict[str, Callable[[LoopRecordingEngine], object]] = {
    "HistoryCompactor": lambda engine: HistoryCompactor(AGENT, engine=engine),
    "ForgeCompactionMiddleware": lambda engine: ForgeCompactionMiddleware(engine=engine),
    "ForgeHistoryProcessor": lambda engine: ForgeHistoryProcessor(engine=engine),
    "ForgeSession": lambda engine: ForgeSession(engine=engine),
}


@pytest.mark.parametrize("adapter", list(ADAPTERS))
async def test_adapter_async_with_closes_its_engine(adapter: str) -> None:
    engine = LoopRecordingEngine(AGENT)

    async with ADAPTERS[adapter](engine):  # type: ignore[attr-defined]
        pass

    assert engine.names() == ["aclose"]


@pytest.mark.parametrize("adapter", ["HistoryCompactor", "ForgeCompactionMiddleware"])
def test_sync_adapter_with_closes_its_engine(adapter: str) -> None:
    engine = LoopRecordingEngine(AGENT)

    with ADAPTERS[adapter](engine):  # type: ignore[attr-defined]
        pass

    assert engine.names() == ["aclose"]


def test_history_compactor_compacts_and_closes_on_one_loop_in_blocking_use() -> None:
    engine = LoopRecordingEngine(AGENT)

    with HistoryCompactor(AGENT, engine=engine) as compactor:
        compactor.compact_blocking(over_threshold(2_000))
        compactor.compact_blocking(over_threshold(2_500))  # grown past the retry hold

    assert (engine.names(), engine.loops()) == (["compress"] * 4 + ["aclose"], 1)


async def test_history_compactor_aclose_after_blocking_use_closes_on_that_loop(
    blockbuster,
) -> None:
    blockbuster.deactivate()  # a sync call on a loop's thread blocks it: the caller's choice
    engine = LoopRecordingEngine(AGENT)
    compactor = HistoryCompactor(AGENT, engine=engine)

    compactor.compact_blocking(over_threshold(2_000))
    await compactor.aclose()

    current = asyncio.get_running_loop()
    assert (engine.names(), engine.loops(), current in [loop for _, loop in engine.calls]) == (
        ["compress", "compress", "aclose"],
        1,
        False,
    )


async def test_history_compactor_aclose_after_async_use_closes_in_the_running_loop() -> None:
    engine = LoopRecordingEngine(AGENT)

    async with HistoryCompactor(AGENT, engine=engine) as compactor:
        await compactor.compact(over_threshold(2_000))

    current = asyncio.get_running_loop()
    assert engine.calls == [("compress", current), ("compress", current), ("aclose", current)]


def test_a_sync_compactor_never_closed_stops_its_loop_when_collected_on_that_loop() -> None:
    # The collector may run on the loop's own thread (any allocation there can trigger it);
    # stopping the loop from there used to raise "cannot join current thread" out of anyio's
    # portal, as an unraisable exception in whatever test ran at the time.
    compactor = HistoryCompactor(AGENT, engine=LoopRecordingEngine(AGENT))
    compactor.compact_blocking(over_threshold(2_000))
    before = set(threading.enumerate())
    assert compactor._loop is not None
    portal = compactor._loop.portal
    loop_thread = portal.call(threading.current_thread)
    compactor.cycle = compactor  # type: ignore[attr-defined]  # only the collector frees it
    del compactor

    portal.call(gc.collect)
    loop_thread.join(timeout=10)

    assert (loop_thread in before, loop_thread.is_alive()) == (True, False)
