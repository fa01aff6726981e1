"""The watchdog behind every store call's deadline (no database needed)."""

from __future__ import annotations

import time

from forge_app.store import _deadline
from forge_app.store._deadline import Deadline


def test_deadline_expires_once_and_nested_operations_share_the_outer_clock():
    fired: list[float] = []
    deadline = Deadline(0.3, lambda: fired.append(time.monotonic()))
    started = time.monotonic()
    with deadline.running():
        time.sleep(0.2)
        with deadline.running():  # does not restart the clock
            time.sleep(0.3)
    with deadline.running():  # a new operation: a new clock, not expired
        quick = deadline.expired
    deadline.close()
    assert (len(fired), 0.3 <= fired[0] - started < 1.0, quick) == (1, True, False)


def test_deadline_watchdog_ends_when_idle_and_comes_back(monkeypatch):
    monkeypatch.setattr(_deadline, "IDLE_SECONDS", 0.2)
    deadline = Deadline(5.0, lambda: None)
    with deadline.running():
        pass
    first = deadline._thread
    time.sleep(0.6)
    idle = deadline._thread
    with deadline.running():
        again = deadline._thread
    deadline.close()
    assert (first is not None, idle, again is not None) == (True, None, True)
