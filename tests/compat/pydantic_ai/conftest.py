"""The helpers pydantic-ai's ``tests/conftest.py`` gives ``test_history_processor.py``, and
its expected differences held to the failure they expect.

``tests/compat/conftest.py`` turns blockbuster on for every module (pydantic-ai's own suite
scans its own packages, which are on the stack whenever it calls a history processor) and
marks the tests in ``expected.py`` as strict xfails; here those marks also require an
``AssertionError``, so that a blocking call or a crash in an expected difference fails.
"""

from __future__ import annotations

import pytest
from dirty_equals import IsDatetime, IsInstance, IsStr

from tests.compat.pydantic_ai.expected import EXPECTED

__all__ = ["IsDatetime", "IsInstance", "IsStr"]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """An expected difference fails by an assertion, nothing else (the first xfail mark wins)."""
    name = item.originalname if isinstance(item, pytest.Function) else item.name
    reason = EXPECTED.get(name)
    if reason is not None:
        item.add_marker(
            pytest.mark.xfail(reason=reason, strict=True, raises=AssertionError), append=False
        )
