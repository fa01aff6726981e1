"""Metrics of one compaction."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from forge_domain._context import Context
from forge_domain._usage import Usage

BudgetStatus = Literal["not_set", "met", "exhausted"]
"""``max_tokens`` outcome: not configured, honoured, or nothing compactable was left."""


def _reduction(original: int, compacted: int) -> float:
    if original == 0 or compacted == 0:
        return 0.0
    return max(0, original - compacted) / original * 100.0


class CompactionResult(BaseModel):
    """Sizes before and after a compaction, plus how it went."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    original_tokens: int
    """Tokens before (the context's token count)."""
    compacted_tokens: int
    """Tokens after."""
    original_messages: int
    """Messages before."""
    compacted_messages: int
    """Messages after."""
    compacted_range: tuple[int, int] | None = None
    """The inclusive range of original indices the compaction changed (None: nothing was):
    from the first to the last message summarised, pruned or cut, both together."""
    summarised_range: tuple[int, int] | None = None
    """The inclusive range of original indices replaced by a summary (None: no summary)."""
    pruned_range: tuple[int, int] | None = None
    """The inclusive range of original indices whose outputs were only pruned or whose texts
    were only cut: the messages stay (None: none was)."""
    budget_status: BudgetStatus = "not_set"
    """Whether ``max_tokens`` was met."""
    engine: str = "frame"
    """The engine that wrote the summary."""
    summary_usage: Usage | None = None
    """Tokens spent by a summarising model, if one was called."""
    coverage: float | None = None
    """Fraction of deterministic facts an LLM summary covered before repair."""

    def token_reduction_percentage(self) -> float:
        """Percent of tokens removed; 0.0 when either side is 0, growth clamped to 0."""
        return _reduction(self.original_tokens, self.compacted_tokens)

    def message_reduction_percentage(self) -> float:
        """Percent of messages removed; 0.0 when either side is 0, growth clamped to 0."""
        return _reduction(self.original_messages, self.compacted_messages)


class CompactionOutcome(BaseModel):
    """What a compaction produced: the new context and its metrics.

    When nothing was compactable, ``context`` is the input and
    ``result.compacted_range`` is None.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    context: Context
    """The compacted context."""
    result: CompactionResult
    """Metrics of the compaction."""

    def changed(self) -> bool:
        """Return True when a span was actually compacted."""
        return self.result.compacted_range is not None
