"""The one change to LangChain's tests: ``SummarizationMiddleware(...)`` builds ours.

Arguments that configure LangChain's own summary call (``summary_prompt``,
``trim_tokens_to_summarize``, ``summarizer``) have no counterpart: forge-compact's engine
writes the summary. They are not passed on; the tests that check them are listed, with
the reason, in ``conftest.py`` and the README.
"""

from __future__ import annotations

from typing import Any

from forge_app.adapters import ForgeCompactionMiddleware

LANGCHAIN_ONLY = ("summary_prompt", "trim_tokens_to_summarize", "summarizer")


def SummarizationMiddleware(model: Any, **kwargs: Any) -> ForgeCompactionMiddleware:
    for name in LANGCHAIN_ONLY:
        kwargs.pop(name, None)
    return ForgeCompactionMiddleware(model, **kwargs)
