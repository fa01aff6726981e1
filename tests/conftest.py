"""Shared pytest configuration: hypothesis profiles, the anyio backend, clean logging.

Profiles (select with ``HYPOTHESIS_PROFILE``; ``ci`` is the default):

* ``ci`` — 200 examples per property, no deadline (shared CI machines are noisy);
* ``dev`` — 50 examples, for a quick local loop;
* ``thorough`` — 2,000 examples, for hunting a suspected bug.
"""

from __future__ import annotations

import os

import pytest
import structlog
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=50, deadline=None)
settings.register_profile("thorough", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def anyio_backend() -> str:
    """Async tests run on asyncio only."""
    return "asyncio"


@pytest.fixture(autouse=True)
def _structlog_defaults() -> None:
    """Every test starts with structlog's defaults (an in-process CLI run configures it)."""
    structlog.reset_defaults()
