"""Run the installed ``forge-compact`` in its own process, warm or fresh.

``forge(...)`` returns what ``subprocess.run(..., capture_output=True, text=True)`` of the
console script returns. By default the process is forked from a warm interpreter that
already imported the CLI (``tests/app/cli_forkserver.py``, one per pytest process,
started on first use): a separate process with its own pipes, working directory,
environment, argv and exit status, minus the interpreter's start-up and the CLI's import
(about 0.3 s of CPU of the 0.4-0.6 s a typical run costs; the suite runs the CLI
several hundred times).

``fresh=True`` runs the console script itself (``subprocess.run``): the tests of the
start-up and of the script as installed use it (``tests/app/test_cli.py`` and at least
one test of every command). A run whose environment differs from the warm server's in
a variable that may be read before ``main()`` (``PYTHONPATH``, ``COLUMNS``, which the
CLI's consoles read when they are built at import, anything not in ``RUN_TIME_ONLY``)
is fresh too, so a warm run always sees the environment it asked for. ``FORGE_TEST_CLI=fresh``
makes every run fresh.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import locale
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

SERVER = Path(__file__).with_name("cli_forkserver.py")
DEFAULT_ENV = {"COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"}
"""A wide, colourless terminal for every run (``env`` entries override it)."""
RUN_TIME_ONLY = ("OPENAI_", "FORGE_", "XDG_DATA_HOME", "PYTEST_CURRENT_TEST")
"""Variables (prefixes) nothing reads at import: a warm run may differ from its server in them."""
TIMEOUT = 120.0
MODE_ENV = "FORGE_TEST_CLI"
"""``FORGE_TEST_CLI=fresh`` runs every CLI test in a fresh interpreter (the suite before the
warm server; ``benchmarks/SUITE.md`` measures both)."""


def script() -> str:
    """The installed ``forge-compact`` console script (beside this interpreter, else on PATH)."""
    beside = Path(sys.executable).parent / "forge-compact"
    found = str(beside) if beside.exists() else shutil.which("forge-compact")
    if found is None:
        pytest.fail("the forge-compact console script is not installed (pip install -e .)")
    return found


def environment(env: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment with no provider configured, the defaults, then ``env``."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    environ.update({**DEFAULT_ENV, **(env or {})})
    return environ


def forge(
    *args: str | Path,
    cwd: Path | None = None,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
    fresh: bool = False,
) -> subprocess.CompletedProcess[str]:
    """Run ``forge-compact ARGS`` with no provider configured and a wide, colourless terminal."""
    argv = [script(), *map(str, args)]
    environ = environment(env)
    if not fresh and os.environ.get(MODE_ENV, "warm") != "fresh":
        server = _server()
        if server.can_run(environ):
            return server.run(argv, cwd=cwd, stdin=stdin, env=environ)
    return subprocess.run(
        argv,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=environ,
        input=stdin,
        timeout=TIMEOUT,
        check=False,
    )


def _differs_at_start(one: dict[str, str], other: dict[str, str]) -> bool:
    names = {name for name in one.keys() | other.keys() if one.get(name) != other.get(name)}
    return any(not name.startswith(RUN_TIME_ONLY) for name in names)


def _text(data: bytes) -> str:
    """Decode as ``subprocess.run(text=True)`` does: locale encoding, universal newlines."""
    text = data.decode(locale.getpreferredencoding(False))
    return text.replace("\r\n", "\n").replace("\r", "\n")


class _Server:
    """One warm server, a child of this process; stopped when this process exits."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="forge-warm-"))
        self.socket = self.folder / "s"
        self.env = environment()
        self.env.pop("PYTEST_CURRENT_TEST", None)
        self.log = open(self.folder / "log", "wb")  # noqa: SIM115  closed in stop()
        interpreter = _interpreter(script())
        self.process = subprocess.Popen(
            [interpreter, str(SERVER), str(self.socket), script()],
            stdin=subprocess.PIPE,  # closing it stops the server
            stdout=subprocess.DEVNULL,
            stderr=self.log,
            env=self.env,
            cwd=self.folder,
        )
        atexit.register(self.stop)

    def can_run(self, environ: dict[str, str]) -> bool:
        return not _differs_at_start(self.env, environ)

    def _connect(self) -> socket.socket:
        deadline = time.monotonic() + 60
        while True:
            if self.process.poll() is not None:
                self.log.flush()
                log = (self.folder / "log").read_text(errors="replace")
                pytest.fail(f"the warm forge-compact server exited:\n{log[-3000:]}")
            connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                connection.connect(str(self.socket))
            except (FileNotFoundError, ConnectionRefusedError):
                connection.close()
                if time.monotonic() > deadline:
                    pytest.fail("the warm forge-compact server did not start within 60 s")
                time.sleep(0.02)
                continue
            return connection

    def run(
        self, argv: list[str], *, cwd: Path | None, stdin: str | None, env: dict[str, str]
    ) -> subprocess.CompletedProcess[str]:
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        in_read, in_write = os.pipe() if stdin is not None else (0, -1)
        request = json.dumps({"argv": argv, "cwd": str(cwd or os.getcwd()), "env": env}).encode()
        connection = self._connect()
        try:
            socket.send_fds(connection, [b"%08d" % len(request)], [in_read, out_write, err_write])
            connection.sendall(request)
        finally:
            for fd in (out_write, err_write) + ((in_read,) if stdin is not None else ()):
                os.close(fd)
        pending = stdin.encode(locale.getpreferredencoding(False)) if stdin is not None else b""
        return self._collect(connection, argv, out_read, err_read, in_write, pending)

    def _collect(
        self,
        connection: socket.socket,
        argv: list[str],
        out_read: int,
        err_read: int,
        in_write: int,
        pending: bytes,
    ) -> subprocess.CompletedProcess[str]:
        """Feed stdin, read stdout, stderr and the control lines until all end (like ``run``)."""
        control = connection.fileno()
        chunks: dict[int, list[bytes]] = {out_read: [], err_read: [], control: []}
        selector = selectors.DefaultSelector()
        for fd in chunks:
            selector.register(fd, selectors.EVENT_READ)
        if in_write >= 0:
            os.set_blocking(in_write, False)
            selector.register(in_write, selectors.EVENT_WRITE)
        deadline = time.monotonic() + TIMEOUT
        open_fds = len(chunks)
        try:
            while open_fds or in_write >= 0:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self._kill(b"".join(chunks[control]))
                    raise subprocess.TimeoutExpired(argv, TIMEOUT)
                for key, _ in selector.select(remaining):
                    fd = int(key.fd)
                    if fd == in_write:
                        try:
                            pending = pending[os.write(fd, pending[:65536]) :]
                        except BrokenPipeError:
                            pending = b""
                        if not pending:
                            selector.unregister(fd)
                            os.close(fd)
                            in_write = -1
                        continue
                    data = os.read(fd, 65536)
                    if data:
                        chunks[fd].append(data)
                    else:
                        selector.unregister(fd)
                        open_fds -= 1
        finally:
            selector.close()
            for fd in (out_read, err_read) + ((in_write,) if in_write >= 0 else ()):
                os.close(fd)
            connection.close()
        lines = b"".join(chunks[control]).split()
        if len(lines) != 2:
            pytest.fail(f"the warm forge-compact server gave no exit status for {argv[1:]}")
        return subprocess.CompletedProcess(
            argv,
            int(lines[1]),
            _text(b"".join(chunks[out_read])),
            _text(b"".join(chunks[err_read])),
        )

    @staticmethod
    def _kill(control: bytes) -> None:
        if control.split():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(control.split()[0]), signal.SIGKILL)

    def stop(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def _interpreter(path: str) -> str:
    """The interpreter the console script's ``#!`` line names (else this one)."""
    with open(path, "rb") as handle:
        first = handle.readline().decode(errors="replace").strip()
    if first.startswith("#!") and " " not in first[2:].strip():
        candidate = first[2:].strip()
        if os.access(candidate, os.X_OK):
            return candidate
    return sys.executable


_SERVERS: dict[int, _Server] = {}


def _server() -> _Server:
    """This process's warm server (a fork of this process starts its own)."""
    pid = os.getpid()
    if pid not in _SERVERS:
        _SERVERS[pid] = _Server()
    return _SERVERS[pid]
