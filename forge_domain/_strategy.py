"""Which span of a context to compact.

A :class:`CompactionStrategy` reduces to one number, how many trailing messages
to keep, and :func:`find_sequence_preserving_last_n` turns that into an inclusive
``(start, end)`` range that starts at the first assistant message and never
separates a tool call from its results.

Semantics are the documented ones, not forge's code (forge-spec §7.2 inverts them):

* ``evict(p)`` summarises at most a fraction ``p`` of the tokens counted from the
  first assistant message; ``0.0`` compacts nothing, ``1.0`` allows everything;
* ``retain(n)`` always keeps the last ``n`` messages;
* ``a.min(b)`` keeps the smaller number of messages (more aggressive),
  ``a.max(b)`` the larger one (more conservative).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, assert_never

from pydantic import BaseModel, ConfigDict, Field, RootModel

from forge_domain._context import Context
from forge_domain._errors import InvalidConfig
from forge_domain._messages import ContextMessage, Role


class Evict(BaseModel):
    """Summarise at most ``percentage`` of the compactable tokens."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: Literal["evict"] = "evict"
    percentage: float
    """Fraction of tokens (clamped to [0, 1])."""


class Retain(BaseModel):
    """Keep the last ``count`` messages."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: Literal["retain"] = "retain"
    count: int = Field(ge=0)
    """Messages kept at the end."""


class Min(BaseModel):
    """Keep the smaller number of messages of two strategies."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: Literal["min"] = "min"
    left: CompactionStrategy
    right: CompactionStrategy


class Max(BaseModel):
    """Keep the larger number of messages of two strategies."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: Literal["max"] = "max"
    left: CompactionStrategy
    right: CompactionStrategy


class CompactionStrategy(RootModel[Evict | Retain | Min | Max]):
    """A closed union of strategies; build with the factories below."""

    model_config = ConfigDict(frozen=True)
    root: Evict | Retain | Min | Max = Field(discriminator="kind")

    @classmethod
    def evict(cls, percentage: float) -> CompactionStrategy:
        """Summarise at most ``percentage`` of the compactable tokens."""
        return cls(Evict(percentage=percentage))

    @classmethod
    def retain(cls, count: int) -> CompactionStrategy:
        """Keep the last ``count`` messages."""
        return cls(Retain(count=count))

    def min(self, other: CompactionStrategy) -> CompactionStrategy:
        """Keep the fewer messages of the two (compact more)."""
        return CompactionStrategy(Min(left=self, right=other))

    def max(self, other: CompactionStrategy) -> CompactionStrategy:
        """Keep the more messages of the two (compact less)."""
        return CompactionStrategy(Max(left=self, right=other))

    def retained_count(self, context: Context) -> int:
        """How many trailing messages this strategy keeps."""
        strategy = self.root
        match strategy:
            case Retain(count=count):
                return count
            case Evict(percentage=percentage):
                return _evict_retained(context, percentage)
            case Min(left=left, right=right):
                return min(left.retained_count(context), right.retained_count(context))
            case Max(left=left, right=right):
                return max(left.retained_count(context), right.retained_count(context))
            case _:  # pragma: no cover  # the union is closed; mypy proves this unreachable
                assert_never(strategy)

    def eviction_range(self, context: Context) -> tuple[int, int] | None:
        """The inclusive range to compact, or None when nothing may be compacted."""
        return find_sequence_preserving_last_n(context, self.retained_count(context))


def _evict_retained(context: Context, percentage: float) -> int:
    start = context.first_index_of_role(Role.ASSISTANT)
    if start is None:
        return len(context)
    fraction = min(max(percentage, 0.0), 1.0) if percentage == percentage else 0.0
    messages = context[start:]
    budget = fraction * sum(message.approx_tokens for message in messages)
    used = 0
    last_inside = start - 1
    for offset, message in enumerate(messages):
        used += message.approx_tokens
        if used > budget:
            break
        last_inside = start + offset
    return len(context) - 1 - last_inside


def find_sequence_preserving_last_n(
    messages: Context | Sequence[ContextMessage], keep: int
) -> tuple[int, int] | None:
    """The inclusive range from the first assistant message that leaves ``keep`` messages.

    The end moves back so that no tool call is separated from its results. This
    is forge's algorithm except that indices never saturate at 0, so a range that
    would orphan tool results (forge's ``trr`` with keep 1) is None instead.

    Raises:
        InvalidConfig: ``keep`` is negative.
    """
    if keep < 0:
        raise InvalidConfig(f"keep must be 0 or more messages; got {keep}")
    length = len(messages)
    if length == 0 or keep >= length:
        return None
    start = next(
        (i for i, message in enumerate(messages) if message.has_role(Role.ASSISTANT)), None
    )
    if start is None:
        return None
    end = length - keep - 1
    if start > end:
        return None
    if messages[end].has_tool_call():
        return None if end == start else (start, end - 1)
    if messages[end].has_tool_result() and end + 1 < length and messages[end + 1].has_tool_result():
        while end >= start and messages[end].has_tool_result():
            end -= 1
        end -= 1
    return (start, end) if end >= start else None


Min.model_rebuild()
Max.model_rebuild()
