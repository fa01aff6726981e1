"""A PostgreSQL that stops answering: every store call ends within its deadline, typed.

The server is the real test PostgreSQL behind a loopback proxy that stalls
(``tests/app/store/hanging_proxy.py``), or a proxy that never answers at all.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from forge_app.errors import StoreTimeout, StoreUnavailable
from forge_app.store import open_store
from forge_app.store._records import NewArchive
from forge_domain import TextMessage
from tests.app.store.conftest import fresh_postgres_database
from tests.app.store.hanging_proxy import HangingProxy

DEADLINE = 2.0
SLACK = 4.0
"""Seconds a call may take past its deadline (a loaded machine)."""


@pytest.fixture
def database(postgres_server: str) -> str:
    """A fresh database with a store and one conversation in it."""
    url = fresh_postgres_database(postgres_server)
    with open_store(url) as store:
        store.ensure_conversation("conv")
        store.append("conv", [TextMessage.user("before the hang")])
    return url


def _rows(url: str, sql: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url, autocommit=True) as connection:
        return connection.execute(sql).fetchall()


def test_store_call_on_a_stalled_server_ends_within_its_deadline(database):
    with HangingProxy(database) as proxy:
        store = open_store(proxy.url(), deadline=DEADLINE)
        proxy.stall()
        started = time.monotonic()
        with pytest.raises(StoreTimeout, match=r"no answer within 2s"):
            store.append("conv", [TextMessage.user("during the hang")])
        took = time.monotonic() - started
        store.close()
    assert DEADLINE <= took < DEADLINE + SLACK
    assert _rows(database, "SELECT seq FROM forge_messages") == [(1,)]


def test_store_transaction_stalled_halfway_writes_nothing_and_frees_the_row(database):
    """The row update went through, then the server stopped answering: the transaction
    is never committed, and the server ends it (idle-in-transaction timeout), so the
    conversation's row is free for the next writer."""
    with HangingProxy(database) as proxy:
        store = open_store(proxy.url(), deadline=DEADLINE)

        def build(refs, fresh):
            proxy.stall()
            archive = NewArchive(
                kind="span", seqs=((1, 1),), replaced=(), replacement=(), engine="t", reason="r"
            )
            return [archive], None

        started = time.monotonic()
        with pytest.raises(StoreTimeout):
            store.record("conv", ["span"], build, version=1)
        took = time.monotonic() - started
        store.close()
        time.sleep(DEADLINE + 1)
        with open_store(database, deadline=DEADLINE) as direct:
            direct.append("conv", [TextMessage.user("after the hang")])
    assert took < DEADLINE + SLACK
    counters = _rows(database, "SELECT next_c, version FROM forge_conversations")
    archives = _rows(database, "SELECT COUNT(*) FROM forge_archives")
    assert (counters, archives) == ([(1, 2)], [(0,)])


def test_store_open_on_a_server_that_never_answers_is_refused_in_time():
    with HangingProxy(None) as proxy:
        started = time.monotonic()
        with pytest.raises(StoreUnavailable, match=r"no answer within 2s"):
            open_store(proxy.url(), connect_timeout=2)
        took = time.monotonic() - started
    assert took < 2 + SLACK


def _cli(args: list[str], deadline: float) -> tuple[int, list[str], float]:
    env = {**os.environ, "FORGE_COMPACT_STORE_DEADLINE": str(deadline)}
    started = time.monotonic()
    done = subprocess.run(
        [str(Path(sys.executable).parent / "forge-compact"), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    return done.returncode, done.stderr.splitlines(), time.monotonic() - started


def test_cli_on_a_hung_server_exits_2_with_one_line_within_the_deadline(database):
    with HangingProxy(database, forward_chunks=1) as proxy:
        code, lines, took = _cli(["history", "list", "--store", proxy.url()], DEADLINE)
    assert (code, len(lines)) == (2, 1), lines
    assert "no answer within 2s" in lines[0]
    assert took < DEADLINE + SLACK + 5  # the interpreter's start-up


def test_cli_on_a_server_that_never_answers_exits_2_with_one_line(tmp_path):
    with HangingProxy(None) as proxy:
        code, lines, took = _cli(["history", "list", "--store", proxy.url()], DEADLINE)
    assert (code, len(lines)) == (2, 1), lines
    assert "no answer within" in lines[0]
    assert took < 5 + SLACK + 5


def test_store_sqlite_write_behind_a_held_lock_ends_within_its_deadline(tmp_path):
    url = f"sqlite:///{tmp_path / 'sessions.db'}"
    with open_store(url) as store:
        store.ensure_conversation("conv")
    store = open_store(url, deadline=1.0)
    holder = sqlite3.connect(tmp_path / "sessions.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        started = time.monotonic()
        with pytest.raises(StoreTimeout, match=r"no answer within 1s \(.*locked"):
            store.append("conv", [TextMessage.user("behind the lock")])
        took = time.monotonic() - started
    finally:
        holder.close()
        store.close()
    assert took < 1.0 + SLACK
