"""The summary-call cooldown: when a summarising engine uses the frame instead."""

from __future__ import annotations

import pytest

from forge_app.compaction.llm._guard import CompactionGuard


class Clock:
    """Seconds the test sets by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


SEQUENCES = [
    ("one_fallback_cools_down", ["fail"], (1, True)),
    ("a_fallback_while_cooling_keeps_the_cooldown", ["fail", "cooling"], (2, True)),
    ("cooldown_expires", ["fail", "wait"], (1, False)),
    ("success_clears_the_streak", ["fail", "wait", "success"], (0, False)),
    ("a_new_failure_restarts_the_cooldown", ["fail", "wait", "fail"], (2, True)),
]


@pytest.mark.parametrize(
    ("events", "expected"), [c[1:] for c in SEQUENCES], ids=[c[0] for c in SEQUENCES]
)
def test_compaction_guard_sequences(events, expected):
    clock = Clock()
    guard = CompactionGuard(cooldown_seconds=60.0, clock=clock)
    steps = {
        "fail": lambda: guard.record_fallback(failed_now=True),
        "cooling": lambda: guard.record_fallback(failed_now=False),
        "success": guard.record_success,
        "wait": lambda: setattr(clock, "now", clock.now + 61),
    }
    for event in events:
        steps[event]()

    actual = (guard.fallback_streak, guard.is_cooling_down())

    assert actual == expected


def test_compaction_guard_reset_forgets_everything():
    guard = CompactionGuard(cooldown_seconds=60.0, clock=Clock())
    guard.record_fallback(failed_now=True)

    guard.reset()

    assert (guard.fallback_streak, guard.is_cooling_down()) == (0, False)
