"""Token counts and provider-reported usage, and when a reported total is believed."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from forge_domain._json import JsonObject

__all__ = ["TokenCount", "Usage"]  # the plausibility rule is for Context, not the package API

IMPLAUSIBLE_SHORTFALL = 4
"""A reported total this many times smaller than the chars/4 estimate is not believed.

The two errors are not alike. Distrusting a true report costs little: the count
is carried by the estimate instead (from the previous believed report, if any),
which is off by tens of percent on ordinary text, so compaction comes somewhat
early or late. Believing a false one switches compaction off. So the factor is
as wide as real tokenizers need and no wider:

- English prose runs 4-4.5 characters per token, source code and JSON 3-4,
  base64 and CJK text fewer: a true report is near or above the estimate, which
  also leaves out role markers, JSON framing and tool schemas;
- runs of spaces, indentation and separator lines (``-----``) merge into single
  tokens, so whitespace-heavy output (aligned tables, pretty-printed JSON) can
  reach 8 characters per token, half the estimate: a factor of 2 would flap there;
- a whole prompt cannot average 16 characters per token unless it is mostly
  padding, so a report under a quarter of the estimate is the provider's fault:
  a fixed placeholder (``total_tokens: 30`` on every call), prompt tokens that
  leave out cache hits, or the size of one delta instead of the whole request.
  Those fall short by orders of magnitude, and a constant one is caught as soon
  as the context passes 4 times its value, long before any threshold.
"""


def is_plausible_total(reported: int, estimate: int) -> bool:
    """Return True unless ``reported`` is under 1/:data:`IMPLAUSIBLE_SHORTFALL` of ``estimate``.

    Args:
        reported: the provider's ``total_tokens`` for one response.
        estimate: the chars/4 estimate of what that response measured: every
            message sent, plus the response itself.
    """
    return reported * IMPLAUSIBLE_SHORTFALL >= estimate


class TokenCount(BaseModel):
    """A number of tokens that is either reported by a provider or estimated.

    Adding two counts is actual only if both are actual (forge's rule).
    ``int(count)`` gives the value.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    value: int = 0
    """The number of tokens."""
    kind: Literal["actual", "approx"] = "actual"
    """Whether a provider reported the number or it was estimated."""

    @classmethod
    def actual(cls, value: int) -> TokenCount:
        """Build a provider-reported count."""
        return cls(value=value, kind="actual")

    @classmethod
    def approx(cls, value: int) -> TokenCount:
        """Build an estimated count."""
        return cls(value=value, kind="approx")

    def is_actual(self) -> bool:
        """Return True when a provider reported this count."""
        return self.kind == "actual"

    def __int__(self) -> int:
        return self.value

    def __add__(self, other: TokenCount) -> TokenCount:
        kind: Literal["actual", "approx"] = (
            "actual" if self.is_actual() and other.is_actual() else "approx"
        )
        return TokenCount(value=self.value + other.value, kind=kind)

    def __str__(self) -> str:
        return str(self.value) if self.is_actual() else f"~{self.value}"

    @classmethod
    def total(cls, counts: Sequence[TokenCount]) -> TokenCount:
        """The ``+`` fold of ``counts`` in one step: actual only if every count is."""
        kind: Literal["actual", "approx"] = (
            "actual" if all(count.kind == "actual" for count in counts) else "approx"
        )
        return cls(value=sum(count.value for count in counts), kind=kind)


class Usage(BaseModel):
    """Token usage and cost of one provider response."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt_tokens: TokenCount = TokenCount()
    """Tokens the provider read."""
    completion_tokens: TokenCount = TokenCount()
    """Tokens the provider wrote."""
    total_tokens: TokenCount = TokenCount()
    """Prompt plus completion tokens."""
    cached_tokens: TokenCount = TokenCount()
    """Prompt tokens served from the provider's cache."""
    cost: float | None = None
    """Cost in the provider's currency, when reported."""
    raw: JsonObject | None = None
    """The usage object exactly as it was read from a transcript, for lossless write-back."""

    @classmethod
    def reported(
        cls,
        *,
        prompt_tokens: int,
        completion_tokens: int,
        cached_tokens: int = 0,
        cost: float | None = None,
    ) -> Usage:
        """Build the usage a provider reported for one response."""
        return cls(
            prompt_tokens=TokenCount.actual(prompt_tokens),
            completion_tokens=TokenCount.actual(completion_tokens),
            total_tokens=TokenCount.actual(prompt_tokens + completion_tokens),
            cached_tokens=TokenCount.actual(cached_tokens),
            cost=cost,
        )

    @classmethod
    def total(cls, usages: Iterable[Usage]) -> Usage | None:
        """The :meth:`accumulate` fold of ``usages``, built once instead of once per step.

        None when there is none; a single usage is returned as it is (``raw`` included).
        """
        items = list(usages)
        if len(items) <= 1:
            return items[0] if items else None
        cost: float | None = None
        for usage in items:
            if usage.cost is not None:
                cost = usage.cost if cost is None else cost + usage.cost
        return cls(
            prompt_tokens=TokenCount.total([u.prompt_tokens for u in items]),
            completion_tokens=TokenCount.total([u.completion_tokens for u in items]),
            total_tokens=TokenCount.total([u.total_tokens for u in items]),
            cached_tokens=TokenCount.total([u.cached_tokens for u in items]),
            cost=cost,
        )

    def accumulate(self, other: Usage) -> Usage:
        """Add two usages field by field; costs add when both exist, else the one present."""
        if self.cost is not None and other.cost is not None:
            cost: float | None = self.cost + other.cost
        else:
            cost = self.cost if self.cost is not None else other.cost
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            cost=cost,
        )
