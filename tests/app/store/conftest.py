"""Fixtures of the store tests: each test runs on SQLite and on a real PostgreSQL server.

The server is ``$FORGE_TEST_POSTGRES_URL`` (``.ci/run`` starts one) or, when that is
unset, one this session starts in a temporary directory and stops at the end.
Every test gets a fresh database on it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.app.store.postgres_server import URL_ENV, start, stop


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The URL of a PostgreSQL server (its ``postgres`` database)."""
    url = os.environ.get(URL_ENV)
    if url:
        yield url
        return
    directory = Path(tempfile.mkdtemp(prefix="forge-pg-"))
    try:
        yield start(directory)
    finally:
        stop(directory)
        shutil.rmtree(directory, ignore_errors=True)


def fresh_postgres_database(server: str) -> str:
    """Create an empty database on ``server``; its URL."""
    name = f"forge_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    return server.rsplit("/", 1)[0] + f"/{name}"


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A URL of an empty store, on each database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'sessions.db'}"
    server: str = request.getfixturevalue("postgres_server")
    return fresh_postgres_database(server)
