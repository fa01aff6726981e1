"""The cyclic garbage collector, paused while a command works on one transcript.

A transcript's decoded messages live until the command ends, and a compaction allocates
many small objects that do not form reference cycles. With the collector running, each of
its full collections walks every decoded message again: about a quarter of the CPU time
of ``forge-compact compact`` on a 100,000-message transcript (``plans/008-performance.md``,
"Round 7f"). The library never touches the collector (that is its caller's process); the
command line owns its process, so it pauses the collector around one transcript's read,
compaction and write, and gives it back as it found it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic collector for the block; re-enable it after, if it was enabled."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
