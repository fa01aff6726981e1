"""What a session's prompts cost with a provider's prompt cache.

Providers bill the prefix of a request that repeats the previous request at a
discount (prompt caching: 10% on Anthropic, 50% on OpenAI), and everything from
the first message that differs at the full price. A compaction or a pruning
rewrites earlier messages, so it invalidates the cache from the first rewritten
message on: that is the price of compacting, and why compacting rarely pays at
every turn.

The model: requests ``r_1 … r_n``, each a list of messages with token counts;
``prefix(r_i)`` is the number of leading messages identical to those of
``r_{i-1}`` (the same message objects: a rewritten message is a new object).
The billed prompt tokens are
``sum(cached(r_i) * discount + (tokens(r_i) - cached(r_i)))`` with
``cached(r_i)`` the tokens of that prefix (0 for the first request).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from forge_domain import ContextMessage, Role

__all__ = ["PromptCost", "prompt_cost", "uncompacted_requests"]


@dataclass(frozen=True, slots=True)
class PromptCost:
    """Prompt tokens of a session's requests, as sent and as billed."""

    sent: int
    """Every request's prompt tokens, summed."""
    cached: int
    """The part of ``sent`` served from the cache."""
    billed: float
    """``sent - cached * (1 - discount)``: what the provider charges, in full-price tokens."""


def _shared_prefix(previous: Sequence[ContextMessage], current: Sequence[ContextMessage]) -> int:
    count = 0
    for before, now in zip(previous, current, strict=False):
        if before is not now:
            break
        count += 1
    return count


def prompt_cost(
    requests: Sequence[Sequence[ContextMessage]], *, discount: float = 0.1
) -> PromptCost:
    """The cost of ``requests`` (each the messages sent) with a cache at ``discount``."""
    sent = cached = 0
    previous: Sequence[ContextMessage] = ()
    for messages in requests:
        prefix = _shared_prefix(previous, messages)
        sent += sum(m.approx_tokens for m in messages)
        cached += sum(m.approx_tokens for m in messages[:prefix])
        previous = messages
    return PromptCost(sent=sent, cached=cached, billed=sent - cached * (1.0 - discount))


def uncompacted_requests(
    transcript: Sequence[ContextMessage],
) -> list[tuple[ContextMessage, ...]]:
    """The requests a run without compaction sends: the recording up to each response."""
    return [
        tuple(transcript[:index])
        for index, message in enumerate(transcript)
        if message.has_role(Role.ASSISTANT) and index > 0
    ]
