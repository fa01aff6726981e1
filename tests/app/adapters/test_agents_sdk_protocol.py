"""ForgeSession keeps the Agents SDK's ``Session`` protocol whole, as ``SQLiteSession`` does."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest
from agents import Agent, Runner, SQLiteSession
from agents.memory import SessionSettings
from agents.testing import ScriptedModel, assistant_message

from forge_app.adapters import ForgeSession

pytestmark = pytest.mark.anyio


def items(count: int) -> list:
    return [{"role": "user", "content": f"message {n}"} for n in range(count)]


def sessions() -> list[ForgeSession]:
    return [
        ForgeSession("memory"),
        ForgeSession("sqlite", store=SQLiteSession("sqlite")),
    ]


@pytest.mark.parametrize("session", sessions(), ids=["memory", "sqlite"])
async def test_forge_session_limit_zero_reads_no_item(session):
    await session.add_items(items(3))

    assert await session.get_items(limit=0) == []


async def test_forge_session_explicit_limit_above_the_stores_own_is_honoured():
    store = SQLiteSession("s", session_settings=SessionSettings(limit=2))
    session = ForgeSession("s", store=store)
    await session.add_items(items(5))

    actual = (len(await session.get_items()), len(await session.get_items(limit=4)))

    assert actual == (2, 4)


async def test_forge_session_settings_are_the_wrapped_stores():
    store = SQLiteSession("s", session_settings=SessionSettings(limit=3))
    session = ForgeSession("s", store=store)
    before = session.session_settings  # read through, before any is set

    session.session_settings = SessionSettings(limit=1)

    assert before == SessionSettings(limit=3)

    assert (store.session_settings, session.session_settings) == (
        SessionSettings(limit=1),
        SessionSettings(limit=1),
    )


async def test_forge_session_in_memory_applies_its_own_settings_limit():
    session = ForgeSession("m", session_settings=SessionSettings(limit=2))
    await session.add_items(items(5))

    assert [item["content"] for item in await session.get_items()] == ["message 3", "message 4"]


async def test_forge_session_close_closes_the_wrapped_store():
    session = ForgeSession("s", store=SQLiteSession("s"))

    session.close()

    with pytest.raises(RuntimeError, match="SQLiteSession is closed"):
        await session.add_items(items(1))


def test_forge_session_serves_runs_from_several_threads_each_with_its_own_loop():
    """As ``Runner.run_sync`` in a thread pool does (``asyncio.run`` here: the SDK's
    ``run_sync`` leaves each thread's loop open, which pytest reports at exit)."""
    session = ForgeSession("shared", store=SQLiteSession("shared"))

    def run(n: int) -> str:
        model = ScriptedModel([[assistant_message(f"answer {n}")]])  # type: ignore[list-item]
        agent = Agent(name="a", model=model)
        result = asyncio.run(Runner.run(agent, f"question {n}", session=session))
        return str(result.final_output)

    with ThreadPoolExecutor(max_workers=4) as pool:
        answers = sorted(pool.map(run, range(8), timeout=60))

    assert answers == sorted(f"answer {n}" for n in range(8))


def test_forge_session_serves_run_sync_from_a_thread_pool():
    """``Runner.run_sync`` itself in a thread pool (issue 24): each thread runs on its own
    default loop, which the SDK leaves open and reuses; closed here after each run, so that
    no loop is left for the collector to report (the next run on that thread opens a new one)."""
    session = ForgeSession("shared", store=SQLiteSession("shared"))

    def run(n: int) -> str:
        model = ScriptedModel([[assistant_message(f"answer {n}")]])  # type: ignore[list-item]
        agent = Agent(name="a", model=model)
        try:
            return str(Runner.run_sync(agent, f"question {n}", session=session).final_output)
        finally:
            asyncio.get_event_loop_policy().get_event_loop().close()

    with ThreadPoolExecutor(max_workers=4) as pool:
        answers = sorted(pool.map(run, range(8), timeout=60))

    assert answers == sorted(f"answer {n}" for n in range(8))
    assert len(asyncio.run(session.get_items())) == 16  # each run: its question and answer
