"""Examples of a property test that asks for its own count, scaled by the hypothesis profile.

``@settings(max_examples=examples(400))`` runs 400 examples under the ``ci`` profile (its
200 per property is the reference), 100 under ``quick`` (the default of the test command)
and 4,000 under ``thorough``; see ``tests/conftest.py``.
"""

from __future__ import annotations

from hypothesis import settings

CI_EXAMPLES = 200
"""``max_examples`` of the ``ci`` profile: a test's own count is meant for it."""


def examples(at_ci: int) -> int:
    """``at_ci`` scaled by the loaded profile (never under 10)."""
    return max(10, round(at_ci * settings.default.max_examples / CI_EXAMPLES))
