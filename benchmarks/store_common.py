"""What the store benchmarks share: a PostgreSQL server to measure on, a fresh database,
the 95th percentile, the machine line.

``benchmarks.store``, ``benchmarks.store_writers`` and ``benchmarks.store_search`` each
measure SQLite and PostgreSQL; they take a server's URL (``--postgres``) or start their
own (``tests/app/store/postgres_server.py``) for the run.
"""

from __future__ import annotations

import os
import platform
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from tests.app.store.postgres_server import start, stop


def p95(values: Sequence[float]) -> float:
    """The 95th percentile of ``values`` (the nearest sample)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


@contextmanager
def postgres_server(url: str | None) -> Iterator[str]:
    """The server at ``url``, or, when it is None, one started in a temporary directory for
    the ``with`` block (stopped and removed after it)."""
    if url is not None:
        yield url
        return
    directory = Path(tempfile.mkdtemp(prefix="forge-pg-bench-"))
    try:
        yield start(directory)
    finally:
        stop(directory)
        shutil.rmtree(directory, ignore_errors=True)


def fresh_database(server: str, name: str) -> str:
    """Create the database ``name`` on ``server`` (dropped first if it exists); its URL."""
    import psycopg

    with psycopg.connect(server, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
        connection.execute(f'CREATE DATABASE "{name}"')
    return server.rsplit("/", 1)[0] + f"/{name}"


def machine() -> str:
    """The platform, the Python version and the number of cores, for a report's first line."""
    return (
        f"machine: {platform.platform()}, Python {platform.python_version()}, "
        f"{os.cpu_count()} cores"
    )
