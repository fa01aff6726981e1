"""The structured summary of a span, and what a summary carries over from it.

* :class:`ContextSummary` and its blocks and items, built from messages with the tool
  catalog of :mod:`forge_domain.tools` (``_summary.py``);
* the last reasoning and the accumulated usage a summary carries over from the span
  it replaces (``_carry_over.py``).

The modules are private; import from this package.

Every exported name is imported from its module the first time it is read (PEP 562,
``forge_domain._lazy``), so importing the package builds none of its models
(plans/008-performance.md, round 6b)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from forge_domain._lazy import LazyExports

if TYPE_CHECKING:  # the names load on first use (__getattr__)
    from forge_domain.summary._carry_over import accumulated_usage, carry_reasoning
    from forge_domain.summary._summary import (
        ContextSummary,
        SummaryBlock,
        SummaryItem,
        TextItem,
        ToolCallItem,
    )

_EXPORTS = LazyExports(
    "forge_domain.summary",
    {
        "forge_domain.summary._carry_over": ("accumulated_usage", "carry_reasoning"),
        "forge_domain.summary._summary": (
            "ContextSummary",
            "SummaryBlock",
            "SummaryItem",
            "TextItem",
            "ToolCallItem",
        ),
    },
)
"""Which module defines each exported name."""

__all__ = [
    "ContextSummary",
    "SummaryBlock",
    "SummaryItem",
    "TextItem",
    "ToolCallItem",
    "accumulated_usage",
    "carry_reasoning",
]


def __getattr__(name: str) -> object:
    """Import an exported name from its module the first time it is read (PEP 562)."""
    return _EXPORTS.load(globals(), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
