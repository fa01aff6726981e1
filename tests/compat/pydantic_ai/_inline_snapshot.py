"""pydantic-ai's ``tests/_inline_snapshot.py``, as it behaves without ``--inline-snapshot``.

There, ``snapshot(value)`` compares with ``value`` (and warns on a mismatch). Here it is
``value`` itself: a mismatch fails the assertion and nothing else (inline-snapshot's own
``snapshot`` would also report an error at teardown, even for an expected difference).
"""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")


def snapshot(value: T) -> T:
    """The recorded value, compared as it is."""
    return value
