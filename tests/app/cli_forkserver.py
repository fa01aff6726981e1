"""A warm ``forge-compact``: one interpreter that imported the CLI forks a process per run.

``tests.app.cli_process.forge`` starts one per pytest process::

    python3 tests/app/cli_forkserver.py SOCKET SCRIPT

It puts ``SCRIPT``'s folder first on ``sys.path`` and imports ``forge_app.cli`` as the
installed console script does (nothing more: what a command imports lazily, each run
still imports), then listens on the unix socket ``SOCKET``. Each connection sends the
run's stdin, stdout and stderr (three file descriptors), then its argv, working
directory and environment. A monitor process forks the run, which takes those
descriptors as 0, 1 and 2, moves to the directory, replaces its environment and returns
to the top of this script to call ``main()`` the way the console script does: the
exit status, ``atexit``, the flush of stdout and a traceback on an uncaught exception
are the interpreter's own. The monitor sends the run's pid, waits for it and sends its
exit code (negative: the signal that ended it). The server exits, after the last run, when
its stdin (a pipe from the client) ends: the client stopped it or exited.

What differs from a fresh interpreter: the run skips Python's start-up and the CLI's
import (the point: about 0.3 s of CPU a run), its interpreter state before ``main()``
is the state the import left under the server's environment (so the client forks only
when the run's environment differs from the server's in variables read at run time),
and every run shares the server's string hash seed.
"""

from __future__ import annotations

import gc
import json
import os
import select
import socket
import sys


def _read_exact(connection: socket.socket, size: int, received: bytes = b"") -> bytes:
    data = received
    while len(data) < size:
        chunk = connection.recv(size - len(data))
        if not chunk:
            raise EOFError("the client closed the connection mid-request")
        data += chunk
    return data


def _receive(connection: socket.socket) -> tuple[dict[str, object], list[int]]:
    """The request: eight digits of length and three descriptors, then that much JSON."""
    head, fds, _flags, _address = socket.recv_fds(connection, 8, 3)
    head = _read_exact(connection, 8, head)
    if len(fds) != 3:
        raise EOFError(f"expected 3 file descriptors, got {len(fds)}")
    request = json.loads(_read_exact(connection, int(head)))
    return request, fds


def _become(request: dict[str, object], fds: list[int]) -> None:
    """In the run's process: take its stdio, directory, environment and argv."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        if fd > 2:
            os.close(fd)
    os.chdir(str(request["cwd"]))
    environment = request["env"]
    assert isinstance(environment, dict)
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in environment.items()})
    argv = request["argv"]
    assert isinstance(argv, list)
    sys.argv = [str(part) for part in argv]


def _monitor(connection: socket.socket) -> bool:
    """Fork the run and report on it; True in the run's process, never returns otherwise."""
    request, fds = _receive(connection)
    pid = os.fork()
    if pid == 0:
        connection.close()
        _become(request, fds)
        return True
    for fd in fds:
        os.close(fd)
    connection.sendall(f"{pid}\n".encode())
    _, status = os.waitpid(pid, 0)
    connection.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
    connection.close()
    os._exit(0)


def _reap(block: bool = False) -> None:
    """Wait for ended monitors (every monitor, when ``block``)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, 0 if block else os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def serve(path: str) -> None:
    """Accept runs until stdin ends (the client closed it or exited); returns only in a run."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    gc.freeze()  # the imported modules are shared, untouched, by every fork
    while True:
        ready, _, _ = select.select([listener, sys.stdin.fileno()], [], [])
        _reap()
        if sys.stdin.fileno() in ready:
            break
        connection, _ = listener.accept()
        if os.fork() == 0:
            listener.close()
            if _monitor(connection):
                return
        connection.close()
    listener.close()
    _reap(block=True)
    sys.exit(0)


if __name__ == "__main__":
    socket_path, script = sys.argv[1], sys.argv[2]
    sys.path[0] = os.path.dirname(script)  # what the console script has as sys.path[0]
    from forge_app.cli import main

    serve(socket_path)
    sys.exit(main())
