"""When a summarising engine skips the summary model: the cooldown after a failure.

After a failed summary call the engine cools down: for ``cooldown_seconds`` no
summary call is made and the deterministic frame is used instead. A forced
(manual) compaction ignores the cooldown. Whether to compact at all is not
decided here: the :class:`~forge_app.runtime.plugins.CompactionHandler`'s loop guard is
the one place that holds automatic compaction back (and it always retries).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["CompactionGuard"]


@dataclass(slots=True)
class CompactionGuard:
    """The summary-call cooldown of one engine instance."""

    cooldown_seconds: float
    """How long summary calls are skipped after a failure."""
    clock: Callable[[], float]
    """Monotonic seconds."""
    fallback_streak: int = 0
    """Consecutive compactions that had to use the fallback (reported, never blocking)."""
    cooldown_until: float = 0.0
    """Clock value before which no summary call is made."""

    def is_cooling_down(self) -> bool:
        """Return True while summary calls are suspended."""
        return self.clock() < self.cooldown_until

    def record_success(self) -> None:
        """A model-written summary was used."""
        self.fallback_streak = 0
        self.cooldown_until = 0.0

    def record_fallback(self, *, failed_now: bool) -> None:
        """The fallback was used; ``failed_now`` starts a new cooldown (a call just failed)."""
        self.fallback_streak += 1
        if failed_now:
            self.cooldown_until = self.clock() + self.cooldown_seconds

    def reset(self) -> None:
        """Forget everything (a new session)."""
        self.fallback_streak = 0
        self.cooldown_until = 0.0
