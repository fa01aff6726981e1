"""How a turn's provider call is retried, and how long it may take in all.

Its own module, apart from the agent loop; the default deadline sits in ``_defaults``,
which ``forge-compact run --help`` reads without importing pydantic (start-up time).
"""

from __future__ import annotations

import random

from pydantic import BaseModel, ConfigDict, Field

from forge_app.runtime._defaults import TURN_DEADLINE


class RetryPolicy(BaseModel):
    """How transient provider errors (429, 5xx, timeouts) are retried."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    attempts: int = Field(default=4, ge=1)
    """Calls in total, the first one included."""
    initial_delay: float = Field(default=0.5, ge=0.0)
    """Scale of the exponential backoff, in seconds (full jitter)."""
    max_delay: float = Field(default=8.0, ge=0.0)
    """Longest wait between two calls, in seconds."""
    deadline: float = Field(default=TURN_DEADLINE, gt=0.0)
    """Seconds one turn's provider call may take in total, every attempt and wait
    included (a provider that hangs or trickles its answer costs no more)."""

    def wait(self, attempt: int) -> float:
        """Seconds to wait after the failed call number ``attempt`` (1-based): exponential
        backoff with full jitter, uniform between 0 and ``initial_delay * 2 ** (attempt - 1)``
        capped at ``max_delay``."""
        ceiling = min(self.max_delay, self.initial_delay * 2.0 ** min(attempt - 1, 1000))
        return random.uniform(0.0, ceiling)
