"""Shared pytest configuration: hypothesis profiles, the anyio backend, clean logging.

Profiles (select with ``HYPOTHESIS_PROFILE``; ``quick`` is the default):

* ``quick`` — 50 examples per property, and a quarter of the examples a test asks for
  itself (``tests.profiles.examples``): the README's test command (``./.ci/run``) on a
  laptop or a 2-core machine;
* ``ci`` — 200 examples per property, every test's own count in full, no deadline
  (``HYPOTHESIS_PROFILE=ci ./.ci/run``: what CI runs);
* ``thorough`` — 2,000 examples (ten times a test's own count), for hunting a suspected bug.
"""

from __future__ import annotations

import os

import pytest
import structlog
from hypothesis import HealthCheck, settings

settings.register_profile(
    "quick", max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("thorough", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "quick"))


@pytest.fixture
def anyio_backend() -> str:
    """Async tests run on asyncio only."""
    return "asyncio"


@pytest.fixture(autouse=True)
def _structlog_defaults() -> None:
    """Every test starts with structlog's defaults (an in-process CLI run configures it)."""
    structlog.reset_defaults()
