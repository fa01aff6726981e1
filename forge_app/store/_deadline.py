"""A total deadline on each store operation, enforced from a watchdog thread.

A driver's own timeouts do not cover everything: a PostgreSQL server (or a proxy in
front of it) that accepts a connection and then stops answering leaves a query
waiting for ever, and the server-side timeouts never start because the query never
arrives. So each operation (a read, a whole write transaction) runs under a
:class:`Deadline`: past it, a watchdog thread ends the operation from outside (the
database's ``expire``: shut the socket down, interrupt SQLite), the driver raises,
and the backend turns that into :class:`~forge_app.errors.StoreTimeout`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__: list[str] = []

IDLE_SECONDS = 30.0
"""The watchdog thread ends after this long without an operation (a store that is never
closed does not keep a thread, and the connection it holds, for ever)."""


class Deadline:
    """At most ``seconds`` per operation; nested operations share the outermost one's."""

    def __init__(self, seconds: float, expire: Callable[[], None]) -> None:
        """Call ``expire`` (from the watchdog thread) when an operation runs past ``seconds``."""
        self.seconds = seconds
        self.expired = False
        """True when the latest operation ran past its deadline."""
        self._expire = expire
        self._changed = threading.Condition()
        self._until: float | None = None
        self._depth = 0
        self._closed = False
        self._thread: threading.Thread | None = None

    @contextmanager
    def running(self) -> Iterator[None]:
        """One operation; the outermost starts the clock."""
        with self._changed:
            self._depth += 1
            if self._depth == 1:
                self.expired = False
                self._until = time.monotonic() + self.seconds
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=self._watch, name="forge-store-deadline", daemon=True
                    )
                    self._thread.start()
                self._changed.notify()
        try:
            yield
        finally:
            with self._changed:
                self._depth -= 1
                if self._depth == 0:
                    self._until = None
                    self._changed.notify()

    def close(self) -> None:
        """Stop the watchdog."""
        with self._changed:
            self._closed = True
            self._changed.notify()

    def _watch(self) -> None:
        with self._changed:
            while not self._closed:
                if self._until is None:
                    if not self._changed.wait(IDLE_SECONDS) and self._until is None:
                        self._thread = None  # the next operation starts another
                        return
                    continue
                left = self._until - time.monotonic()
                if left > 0:
                    self._changed.wait(left)
                    continue
                self.expired = True
                self._until = None
                self._expire()
