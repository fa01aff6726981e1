"""A loopback TCP proxy in front of the test PostgreSQL that can stop answering.

- ``HangingProxy(upstream)``: forwards both ways; :meth:`HangingProxy.stall` makes it
  stop forwarding (the connections stay open, nothing more passes);
- ``forward_chunks=N``: stops passing the client's sends after its first ``N`` (1: the
  startup packet, so the connection is made and its first query never arrives);
- ``HangingProxy(None)``: accepts connections and never answers at all.
"""

from __future__ import annotations

import socket
import threading
from urllib.parse import urlsplit, urlunsplit


class HangingProxy:
    """See the module docstring; use as a context manager."""

    def __init__(self, upstream: str | None, forward_chunks: int | None = None) -> None:
        self._upstream = upstream
        self._chunks_left = forward_chunks
        self._stalled = threading.Event()
        self._requests_stalled = threading.Event()
        self._closed = threading.Event()
        self._sockets: list[socket.socket] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def url(self) -> str:
        """The upstream URL with the proxy as its host (no SSL or GSS negotiation)."""
        parts = urlsplit(self._upstream or "postgresql://forge@127.0.0.1:1/postgres")
        user = parts.netloc.rpartition("@")[0]
        netloc = f"{user}@127.0.0.1:{self.port}" if user else f"127.0.0.1:{self.port}"
        query = "sslmode=disable&gssencmode=disable"
        return urlunsplit(parts._replace(netloc=netloc, query=query))

    def stall(self) -> None:
        """Stop forwarding anything, in both directions, from now on."""
        self._stalled.set()

    def __enter__(self) -> HangingProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closed.set()
        self._stalled.set()
        for sock in [self._listener, *self._sockets]:
            sock.close()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            self._sockets.append(client)
            if self._upstream is None:
                continue  # accepted, never answered
            parts = urlsplit(self._upstream)
            server = socket.create_connection((parts.hostname, parts.port))
            self._sockets.append(server)
            for source, target, counted in ((client, server, True), (server, client, False)):
                threading.Thread(
                    target=self._pipe, args=(source, target, counted), daemon=True
                ).start()

    def _is_stalled(self, counted: bool) -> bool:
        return self._stalled.is_set() or (counted and self._requests_stalled.is_set())

    def _pipe(self, source: socket.socket, target: socket.socket, counted: bool) -> None:
        while not self._is_stalled(counted):
            try:
                data = source.recv(65536)
            except OSError:
                return
            if not data or self._is_stalled(counted):
                return
            try:
                target.sendall(data)
            except OSError:
                return
            if counted and self._chunks_left is not None:
                self._chunks_left -= 1
                if self._chunks_left <= 0:
                    self._requests_stalled.set()
