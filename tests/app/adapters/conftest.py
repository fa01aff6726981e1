"""Every adapter test runs with blockbuster on, as LangChain's and pydantic-ai's own suites and
``langgraph dev`` do: a blocking call (a file read, ``os.stat``, a lock wait) made on an event
loop with forge-compact's code on the stack fails the test. (The test harness's own blocking
calls, such as starting the loopback server inside a test, are not ours to judge; the
frameworks' own suites under ``tests/compat`` run it on every module.)"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from blockbuster import BlockBuster, blockbuster_ctx


@pytest.fixture(autouse=True)
def blockbuster() -> Iterator[BlockBuster]:
    """Blocking calls on an event loop raise ``BlockingError`` for the whole test."""
    with blockbuster_ctx(["forge_app", "forge_domain"]) as detector:
        yield detector
