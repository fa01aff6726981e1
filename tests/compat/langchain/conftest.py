"""LangChain's own warning filters for its tests: shown, not errors.

forge-compact's suite turns every warning into an error (``filterwarnings = ["error"]``);
LangChain's ``pyproject.toml`` does not (it ignores its beta and deprecation warnings and
shows the rest). Three of its tests pass only on its own settings, with LangChain's own
``SummarizationMiddleware`` too: one expects two ``DeprecationWarning``s but names one in
``pytest.warns`` (the other is re-emitted), one builds a profile with an unknown key
(``UserWarning``), one streams with the experimental v3 protocol (``LangChainBetaWarning``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(HERE):
            item.add_marker(pytest.mark.filterwarnings("default"))
