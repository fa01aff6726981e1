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

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from forge_domain import Context, ContextMessage, Role

__all__ = ["PromptCost", "PromptCostSum", "prompt_cost", "uncompacted_requests"]


@dataclass(frozen=True, slots=True)
class PromptCost:
    """Prompt tokens of a session's requests, as sent and as billed."""

    sent: int
    """Every request's prompt tokens, summed."""
    cached: int
    """The part of ``sent`` served from the cache."""
    billed: float
    """``sent - cached * (1 - discount)``: what the provider charges, in full-price tokens."""


def _shared_prefix(previous: Iterable[ContextMessage], current: Iterable[ContextMessage]) -> int:
    count = 0
    for before, now in zip(previous, current, strict=False):
        if before is not now:
            break
        count += 1
    return count


class PromptCostSum:
    """:func:`prompt_cost` added up one request at a time, as each is sent.

    Keeps only the previous request (its cached prefix is the next one's), not every
    request: a replay's requests are each a whole context, compaction summaries included.
    """

    __slots__ = ("_previous", "cached", "sent")

    def __init__(self) -> None:
        """No request yet."""
        self._previous: Context | Sequence[ContextMessage] = ()
        self.sent = 0
        """Every request's prompt tokens so far."""
        self.cached = 0
        """The part of ``sent`` that repeats the request before it."""

    def add(self, messages: Context | Sequence[ContextMessage]) -> int:
        """Count the request ``messages``, sent after those already added.

        Returns how many of its first messages are those of the request before (the same
        objects): the cached prefix.
        """
        previous = self._previous
        if (
            isinstance(messages, Context)
            and isinstance(previous, Context)
            and messages.extends(previous)
        ):  # the request before, with messages added: its totals, in O(1)
            prefix = len(previous)
            self.sent += messages.token_count_approx()
            self.cached += previous.token_count_approx()
        else:
            prefix = _shared_prefix(previous, messages)
            self.sent += sum(m.approx_tokens for m in messages)
            self.cached += sum(m.approx_tokens for m in messages[:prefix])
        self._previous = messages
        return prefix

    def cost(self, *, discount: float = 0.1) -> PromptCost:
        """What the requests added so far cost with a cache at ``discount``."""
        sent, cached = self.sent, self.cached
        return PromptCost(sent=sent, cached=cached, billed=sent - cached * (1.0 - discount))


def prompt_cost(
    requests: Iterable[Context | Sequence[ContextMessage]], *, discount: float = 0.1
) -> PromptCost:
    """The cost of ``requests`` (each the messages sent) with a cache at ``discount``."""
    total = PromptCostSum()
    for messages in requests:
        total.add(messages)
    return total.cost(discount=discount)


def uncompacted_requests(transcript: Sequence[ContextMessage]) -> list[Context]:
    """The requests a run without compaction sends: the recording up to each response.

    Each request is a view of one growing context (each extends the one before it), so
    the list holds one object per request, not a copy of each prefix (a 20,000-message
    recording's prefixes are 100 million references), and :class:`PromptCostSum` reads
    each cached prefix from the context's totals in O(1).
    """
    requests: list[Context] = []
    request = Context()
    for index, message in enumerate(transcript):
        if index > 0 and message.has_role(Role.ASSISTANT):
            requests.append(request)
        request = request.append(message)
    return requests
