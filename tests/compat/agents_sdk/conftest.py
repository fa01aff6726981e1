"""Blockbuster on forge-compact's modules only: the Agents SDK's own suite does not run it, and
its ``SQLiteSession`` and these tests' temporary directories block the loop themselves."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from blockbuster import BlockBuster, blockbuster_ctx


@pytest.fixture(autouse=True)
def blockbuster() -> Iterator[BlockBuster]:
    """Blocking calls on an event loop with forge-compact's code on the stack fail the test."""
    with blockbuster_ctx(["forge_app", "forge_domain"]) as detector:
        yield detector
