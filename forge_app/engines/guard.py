"""When a summarising engine should stop trying: cooldowns and anti-thrashing.

After a failed summary call the engine cools down (no summary calls, the
deterministic frame is used instead). Two fallbacks in a row, or two
compactions that did not bring the context under the threshold, stop
automatic compaction until a provider reports a context under the threshold
again. A forced (manual) compaction ignores both.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["CompactionGuard"]

BLOCK_AFTER = 2
"""Consecutive fallbacks (or ineffective compactions) that stop automatic compaction."""


@dataclass(slots=True)
class CompactionGuard:
    """Failure and effectiveness bookkeeping of one engine instance."""

    cooldown_seconds: float
    """How long summary calls are skipped after a failure."""
    clock: Callable[[], float]
    """Monotonic seconds."""
    fallback_streak: int = 0
    """Consecutive compactions that had to use the fallback."""
    ineffective: int = 0
    """Consecutive compactions that left the context over the threshold."""
    cooldown_until: float = 0.0
    """Clock value before which no summary call is made."""
    awaiting_usage: bool = field(default=False)
    """A compaction happened and the next usage report will judge it."""

    def is_cooling_down(self) -> bool:
        """Return True while summary calls are suspended."""
        return self.clock() < self.cooldown_until

    def is_blocked(self) -> bool:
        """Return True when automatic compaction is stopped."""
        return self.fallback_streak >= BLOCK_AFTER or self.ineffective >= BLOCK_AFTER

    def record_success(self) -> None:
        """A model-written summary was used."""
        self.fallback_streak = 0
        self.cooldown_until = 0.0
        self.awaiting_usage = True

    def record_fallback(self, *, failed_now: bool) -> None:
        """The fallback was used; ``failed_now`` starts a new cooldown (a call just failed)."""
        self.fallback_streak += 1
        if failed_now:
            self.cooldown_until = self.clock() + self.cooldown_seconds
        self.awaiting_usage = True

    def record_nothing_to_do(self) -> None:
        """A compaction was asked for but nothing could be compacted."""
        self.ineffective += 1

    def record_usage(self, context_tokens: int, threshold: int) -> None:
        """A provider reported the context's real size."""
        if context_tokens < threshold:
            self.fallback_streak = 0
            self.ineffective = 0
        elif self.awaiting_usage:
            self.ineffective += 1
        self.awaiting_usage = False

    def reset(self) -> None:
        """Forget everything (a new session)."""
        self.fallback_streak = 0
        self.ineffective = 0
        self.cooldown_until = 0.0
        self.awaiting_usage = False
