"""The two databases behind one small interface: SQLite (stdlib) and PostgreSQL (psycopg 3).

Statements are written once with ``?`` placeholders; the PostgreSQL side turns them
into ``%s``. Writes run in :meth:`Database.write`, one transaction each:

- SQLite: WAL journal, ``BEGIN IMMEDIATE`` (one writer at a time across
  processes, others wait up to the busy timeout), autocommit outside it;
- PostgreSQL: autocommit outside ``conn.transaction()``; writers of one
  conversation serialise on its row (the row update that opens each write locks it).

Every read and every write transaction has a total deadline (:mod:`._deadline`);
PostgreSQL also gets server-side statement, lock and idle-in-transaction timeouts and
TCP keepalives, SQLite a busy timeout no longer than the deadline. Past the deadline
the operation ends with :class:`StoreTimeout` and its transaction is rolled back.

Driver errors are mapped to the store's typed errors here and nowhere else.
"""

from __future__ import annotations

import os
import socket
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from forge_app.errors import StoreCorrupt, StoreError, StoreTimeout, StoreUnavailable
from forge_app.store._deadline import Deadline
from forge_app.store._url import Dialect, StoreUrl

if TYPE_CHECKING:
    import psycopg

__all__: list[str] = []

Param = str | int | float | None
Row = tuple[object, ...]

CONNECT_TIMEOUT = 5
"""Seconds a PostgreSQL server has to answer before :class:`StoreUnavailable`."""
BATCH_ROWS = 500
"""Rows per multi-row insert (SQLite allows 32,766 parameters per statement)."""
BUSY_TIMEOUT_MS = 30_000
"""Milliseconds a SQLite writer waits for another process's transaction to end (at most
the operation's deadline)."""
NO_STORE = "no session store there (nothing was stored yet); give --store or FORGE_COMPACT_STORE"
"""Why a store that a read-only use would have to create is refused."""
OPERATION_DEADLINE = 60.0
"""Seconds one store operation (a read, a whole write transaction) may take in all."""


class Cursor(Protocol):
    """What a transaction hands its body: run a statement, read rows."""

    def run(self, sql: str, params: Sequence[Param] = ()) -> list[Row]:
        """Execute ``sql`` and return its rows (empty for statements without any)."""
        ...


def _sqlite_error(shown: str, exc: sqlite3.Error, deadline: Deadline) -> StoreError:
    text = str(exc)
    if deadline.expired:
        return StoreTimeout(shown, deadline.seconds, f"SQLite: {text}")
    if isinstance(exc, sqlite3.OperationalError) and "unable to open" in text:
        return StoreUnavailable(shown, f"cannot open the database file: {text}")
    if isinstance(exc, sqlite3.DatabaseError) and (
        "not a database" in text or "malformed" in text or "corrupt" in text
    ):
        return StoreCorrupt(shown, f"not a readable SQLite session store: {text}")
    if isinstance(exc, sqlite3.OperationalError) and "locked" in text:
        return StoreTimeout(shown, deadline.seconds, f"the database stayed locked: {text}")
    return StoreError(shown, f"SQLite error: {text}")


class _SQLiteCursor:
    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection

    def run(self, sql: str, params: Sequence[Param] = ()) -> list[Row]:
        return [tuple(row) for row in self._connection.execute(sql, tuple(params)).fetchall()]


class SQLiteDatabase:
    """A SQLite file in WAL mode (created with its directory's permissions)."""

    dialect: Dialect = "sqlite"

    def __init__(
        self, url: StoreUrl, deadline: float = OPERATION_DEADLINE, *, create: bool = True
    ) -> None:
        self.shown = url.shown
        path = Path(url.target)
        missing_directory = f"directory {str(path.parent)!r} does not exist"
        if not create and not path.exists():
            why = missing_directory if not path.parent.is_dir() else "no such file"
            raise StoreUnavailable(self.shown, f"{NO_STORE} ({why})")
        if not path.parent.is_dir():
            raise StoreUnavailable(self.shown, missing_directory)
        if path.exists() and not path.is_file():
            raise StoreUnavailable(self.shown, f"{str(path)!r} is not a regular file")
        busy = min(BUSY_TIMEOUT_MS / 1000, deadline)
        self._deadline = Deadline(busy, lambda: None)
        if path.is_file() and path.stat().st_size > 0:
            self._refuse_foreign(path)
        try:
            self._connection = sqlite3.connect(
                path, isolation_level=None, timeout=busy, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise _sqlite_error(self.shown, exc, self._deadline) from exc
        self._deadline = Deadline(deadline, self._connection.interrupt)
        try:
            with self._deadline.running():
                self._connection.execute("PRAGMA journal_mode = WAL").fetchall()
                self._connection.execute("PRAGMA synchronous = NORMAL")
                self._connection.execute("PRAGMA foreign_keys = ON")
        except sqlite3.Error as exc:
            self.close()
            raise _sqlite_error(self.shown, exc, self._deadline) from exc

    def read(self, sql: str, params: Sequence[Param] = ()) -> list[Row]:
        try:
            with self._deadline.running():
                return _SQLiteCursor(self._connection).run(sql, params)
        except sqlite3.Error as exc:
            raise _sqlite_error(self.shown, exc, self._deadline) from exc

    def _refuse_foreign(self, path: Path) -> None:
        """Refuse a file that is not a session store, opened read-only so that it stays
        exactly as it was (a read-write open would switch it to WAL first).

        Raises:
            StoreCorrupt: not a database, or one with other tables and no forge schema.
        """
        try:
            probe = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        except sqlite3.Error as exc:
            raise _sqlite_error(self.shown, exc, self._deadline) from exc
        try:
            names = {str(row[0]) for row in probe.execute("SELECT name FROM sqlite_master")}
        except sqlite3.Error as exc:
            raise _sqlite_error(self.shown, exc, self._deadline) from exc
        finally:
            probe.close()
        if names and "forge_schema" not in names:
            raise StoreCorrupt(self.shown, "not a forge-compact session store (other tables)")

    @contextmanager
    def write(self) -> Iterator[Cursor]:
        connection = self._connection
        with self._deadline.running():
            try:
                connection.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise _sqlite_error(self.shown, exc, self._deadline) from exc
            try:
                yield _SQLiteCursor(connection)
                connection.execute("COMMIT")
            except sqlite3.Error as exc:
                self._rollback()
                raise _sqlite_error(self.shown, exc, self._deadline) from exc
            except BaseException:
                self._rollback()
                raise

    def _rollback(self) -> None:
        """End the open transaction, unless SQLite already rolled it back (after some errors)."""
        if self._connection.in_transaction:
            self._connection.execute("ROLLBACK")

    def close(self) -> None:
        self._deadline.close()
        self._connection.close()


class _PostgresCursor:
    def __init__(self, connection: psycopg.Connection[tuple[object, ...]]) -> None:
        self._connection = connection

    def run(self, sql: str, params: Sequence[Param] = ()) -> list[Row]:
        cursor = self._connection.execute(sql.replace("?", "%s"), tuple(params))
        if cursor.description is None:
            return []
        return [tuple(row) for row in cursor.fetchall()]


class PostgresDatabase:
    """A PostgreSQL database reached by URL (psycopg 3, the ``postgres`` extra)."""

    dialect: Dialect = "postgresql"

    def __init__(
        self,
        url: StoreUrl,
        connect_timeout: int = CONNECT_TIMEOUT,
        deadline: float = OPERATION_DEADLINE,
    ) -> None:
        self.shown = url.shown
        try:
            import psycopg
        except ImportError as exc:
            raise StoreUnavailable(
                self.shown, "PostgreSQL needs psycopg: pip install 'forge-compact[postgres]'"
            ) from exc
        self._psycopg = psycopg
        millis = max(1, int(deadline * 1000))
        try:
            self._connection: psycopg.Connection[tuple[object, ...]] = psycopg.connect(
                url.target,
                autocommit=True,
                connect_timeout=connect_timeout,
                tcp_user_timeout=millis,
                keepalives=1,
                keepalives_idle=10,
                keepalives_interval=5,
                keepalives_count=3,
            )
        except psycopg.Error as exc:
            raise StoreUnavailable(
                self.shown, f"no answer within {connect_timeout}s or refused: {_first_line(exc)}"
            ) from exc
        self._socket = self._connection.fileno()
        self._deadline = Deadline(deadline, self._shut_down)
        try:
            self.read(
                f"SET statement_timeout = {millis}; SET lock_timeout = {millis}; "
                f"SET idle_in_transaction_session_timeout = {millis}"
            )
        except StoreError:
            self.close()
            raise

    def _shut_down(self) -> None:
        """End whatever the connection waits for (called by the deadline's watchdog)."""
        try:
            with socket.socket(fileno=os.dup(self._socket)) as duplicate:
                duplicate.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _error(self, exc: Exception) -> StoreError:
        errors = self._psycopg.errors
        if self._deadline.expired or isinstance(
            exc, errors.QueryCanceled | errors.LockNotAvailable
        ):
            return StoreTimeout(self.shown, self._deadline.seconds, _first_line(exc))
        if isinstance(exc, self._psycopg.OperationalError):
            return StoreUnavailable(self.shown, _first_line(exc))
        return StoreError(self.shown, f"PostgreSQL error: {_first_line(exc)}")

    def read(self, sql: str, params: Sequence[Param] = ()) -> list[Row]:
        try:
            with self._deadline.running():
                return _PostgresCursor(self._connection).run(sql, params)
        except self._psycopg.Error as exc:
            raise self._error(exc) from exc

    @contextmanager
    def write(self) -> Iterator[Cursor]:
        try:
            with self._deadline.running(), self._connection.transaction():
                yield _PostgresCursor(self._connection)
        except self._psycopg.Error as exc:
            raise self._error(exc) from exc

    def close(self) -> None:
        self._deadline.close()
        self._connection.close()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


Database = SQLiteDatabase | PostgresDatabase
"""One open connection to a store."""


def connect(
    url: StoreUrl,
    connect_timeout: int = CONNECT_TIMEOUT,
    deadline: float = OPERATION_DEADLINE,
    *,
    create: bool = True,
) -> Database:
    """Open the database ``url`` names (a server has ``connect_timeout`` seconds to answer,
    each later operation ``deadline`` seconds in all); without ``create`` a SQLite file
    that does not exist is refused instead of created."""
    if url.dialect == "sqlite":
        return SQLiteDatabase(url, deadline, create=create)
    return PostgresDatabase(url, connect_timeout, deadline)
