"""Cooldowns and anti-thrashing: when a summarising engine stops compacting automatically."""

from __future__ import annotations

import pytest

from forge_app.engines.guard import CompactionGuard


class Clock:
    """Seconds the test sets by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


THRESHOLD = 1_000

SEQUENCES = [
    ("one_fallback_cools_down", ["fail"], (1, 0, True, False)),
    ("two_fallbacks_block", ["fail", "cooling"], (2, 0, True, True)),
    ("cooldown_expires", ["fail", "wait"], (1, 0, False, False)),
    ("success_clears_the_streak", ["fail", "wait", "success"], (0, 0, False, False)),
    ("usage_under_threshold_unblocks", ["fail", "cooling", "under"], (0, 0, True, False)),
    ("usage_over_after_compaction_is_ineffective", ["success", "over"], (0, 1, False, False)),
    ("two_ineffective_block", ["success", "over", "success", "over"], (0, 2, False, True)),
    ("usage_over_without_compaction_is_not_judged", ["over", "over"], (0, 0, False, False)),
    ("nothing_to_do_twice_blocks", ["nothing", "nothing"], (0, 2, False, True)),
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
        "nothing": guard.record_nothing_to_do,
        "under": lambda: guard.record_usage(THRESHOLD - 1, THRESHOLD),
        "over": lambda: guard.record_usage(THRESHOLD, THRESHOLD),
        "wait": lambda: setattr(clock, "now", clock.now + 61),
    }
    for event in events:
        steps[event]()

    actual = (guard.fallback_streak, guard.ineffective, guard.is_cooling_down(), guard.is_blocked())

    assert actual == expected


def test_compaction_guard_reset_forgets_everything():
    guard = CompactionGuard(cooldown_seconds=60.0, clock=Clock())
    guard.record_fallback(failed_now=True)
    guard.record_nothing_to_do()

    guard.reset()

    assert (guard.fallback_streak, guard.ineffective, guard.is_cooling_down()) == (0, 0, False)
