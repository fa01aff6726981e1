"""Two processes start the same conversation at once: it is created once."""

from __future__ import annotations

import sqlite3
import threading
import time

from forge_app.errors import StoreError
from forge_app.store import open_store

INSERT = (
    "INSERT INTO forge_conversations (id, agent, created_at, updated_at) VALUES (?, '', '', '')"
)


def _uncommitted_conversation(url: str, conversation_id: str):
    """A second connection that has inserted the conversation and not yet committed."""
    if url.startswith("sqlite"):
        connection = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
        connection.execute("BEGIN IMMEDIATE")
        connection.execute(INSERT, (conversation_id,))
        return connection
    import psycopg

    connection = psycopg.connect(url)
    connection.execute(INSERT.replace("?", "%s"), (conversation_id,))
    return connection


def _wait_until_blocked(url: str, connection) -> None:
    """Until another session waits for a lock (PostgreSQL), or a moment (SQLite)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        time.sleep(0.2)
        if url.startswith("sqlite"):
            return
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_locks WHERE NOT granted")
            if cursor.fetchall():
                return
    raise AssertionError("the second start never waited for the first")


def _outcome(call, *args):
    try:
        return call(*args)
    except StoreError as exc:
        return exc


def test_store_two_starts_of_one_conversation_at_once_create_it_once(store_url):
    """The second start is told the conversation exists (False), however the two
    interleave: here its insert waits for the first one's uncommitted row."""
    with open_store(store_url) as store:
        first = _uncommitted_conversation(store_url, "conv")
        outcome: list[object] = []
        second = threading.Thread(
            target=lambda: outcome.append(_outcome(store.ensure_conversation, "conv"))
        )
        second.start()
        try:
            _wait_until_blocked(store_url, first)
            first.commit()
        finally:
            second.join(30)
            first.close()
        again = store.ensure_conversation("conv")
    assert (outcome, again) == ([False], False)
