"""A throw-away PostgreSQL server for the store tests (the machine's server binaries).

``.ci/run`` starts one for the whole suite and exports ``FORGE_TEST_POSTGRES_URL``;
when that variable is unset the tests start their own (so plain ``pytest`` works)::

    python tests/app/store/postgres_server.py start DIR   # prints the URL
    python tests/app/store/postgres_server.py stop DIR

The data directory, the unix socket and the log live in ``DIR``; the server
listens on 127.0.0.1 on a free port, trusts local connections (superuser
``forge``) and runs without fsync. ``initdb`` refuses to run as root, so as root
the server runs as the ``postgres`` user (``runuser``), which owns ``DIR``.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import sys
from pathlib import Path

URL_ENV = "FORGE_TEST_POSTGRES_URL"
"""A server the tests may use instead of starting one."""
SUPERUSER = "forge"


def binaries() -> Path | None:
    """The directory of ``initdb`` and ``pg_ctl`` (PATH first, then the Debian layout)."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    return Path(candidates[0]).parent if candidates else None


def _as_server_user(command: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return command
    runuser = shutil.which("runuser")
    if runuser:
        return [runuser, "-u", "postgres", "--", *command]
    return ["su", "postgres", "-s", "/bin/sh", "-c", " ".join(command)]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start(directory: Path) -> str:
    """Initialise and start a server in ``directory``; its URL."""
    bin_dir = binaries()
    if bin_dir is None:
        raise RuntimeError("no PostgreSQL server binaries (initdb, pg_ctl) on this machine")
    directory.mkdir(parents=True, exist_ok=True)
    data = directory / "data"
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        directory.chmod(0o755)
        os.chown(directory, user.pw_uid, user.pw_gid)
    run = _as_server_user
    subprocess.run(
        run(
            [
                str(bin_dir / "initdb"),
                "-D",
                str(data),
                "-U",
                SUPERUSER,
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
                "--locale=C",
            ]
        ),
        check=True,
        capture_output=True,
    )
    port = _free_port()
    options = (
        f"-p {port} -k {directory} -c listen_addresses=127.0.0.1 -c fsync=off "
        "-c synchronous_commit=off -c full_page_writes=off -c max_connections=50"
    )
    subprocess.run(
        run(
            [
                str(bin_dir / "pg_ctl"),
                "-D",
                str(data),
                "-o",
                options,
                "-l",
                str(directory / "server.log"),
                "-w",
                "-t",
                "60",
                "start",
            ]
        ),
        check=True,
        capture_output=True,
    )
    return f"postgresql://{SUPERUSER}@127.0.0.1:{port}/postgres"


def stop(directory: Path) -> None:
    """Stop the server of ``directory`` (fast shutdown) if it runs."""
    bin_dir = binaries()
    data = directory / "data"
    if bin_dir is None or not (data / "postmaster.pid").exists():
        return
    subprocess.run(
        _as_server_user([str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]),
        check=False,
        capture_output=True,
    )


if __name__ == "__main__":
    action, where = sys.argv[1], Path(sys.argv[2])
    if action == "start":
        print(start(where))
    elif action == "stop":
        stop(where)
    else:
        raise SystemExit(f"usage: {sys.argv[0]} start|stop DIR")
