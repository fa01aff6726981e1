"""Counting a context's tokens with a tokenizer the application injects.

The domain does no I/O, so it never loads a tokenizer: the application passes a
:data:`TextCounter` (``tiktoken``'s ``len(encode(text))``, say), or None for the
chars/4 rule every message already knows (``approx_tokens``). Text, tool names and
arguments, tool outputs and readable reasoning go through the counter; images,
encrypted reasoning and parts kept whole use the estimates of
:mod:`forge_domain.token_estimates` either way. A usage report the provider made
still anchors the count, exactly as in :meth:`Context.token_count`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeAlias

from forge_domain.context import Context
from forge_domain.messages import Content, ContextMessage, ImagePart, OtherPart, TextPart
from forge_domain.token_estimates import (
    CHARS_PER_TOKEN,
    image_tokens,
    opaque_chars,
    reasoning_text,
)
from forge_domain.usage import TokenCount

__all__ = ["TextCounter", "context_tokens", "message_tokens"]

TextCounter: TypeAlias = Callable[[str], int]
"""Tokens of one text, as a tokenizer counts them."""


def _content(content: Content) -> tuple[list[str], int, int]:
    """The texts of ``content``, the characters of parts kept whole, the images' tokens."""
    if content is None:
        return [], 0, 0
    if isinstance(content, str):
        return [content], 0, 0
    texts: list[str] = []
    opaque = images = 0
    for part in content:
        if isinstance(part, TextPart):
            texts.append(part.text)
        elif isinstance(part, ImagePart):
            images += image_tokens(part.detail)
        elif isinstance(part, OtherPart):
            opaque += opaque_chars(part.raw)
    return texts, opaque, images


def message_tokens(message: ContextMessage, count_text: TextCounter | None) -> int:
    """Tokens of one message: ``count_text`` over its texts, the estimates for the rest.

    With ``count_text`` None this is the message's ``approx_tokens`` (chars/4).
    """
    if count_text is None:
        return message.approx_tokens
    texts, opaque, images = _content(message.content)
    if message.kind == "text":
        for call in message.tool_calls or ():
            texts += (call.name, call.arguments)
        for detail in message.reasoning_details or ():
            text, hidden = reasoning_text(detail)
            texts.append(text)
            opaque += hidden
        if message.reasoning_content:
            texts.append(message.reasoning_content)
    counted = sum(count_text(text) for text in texts if text)
    return counted + -(-opaque // CHARS_PER_TOKEN) + images


def _sum(messages: Iterable[ContextMessage], count_text: TextCounter | None) -> int:
    return sum(message_tokens(message, count_text) for message in messages)


def context_tokens(context: Context, count_text: TextCounter | None) -> TokenCount:
    """The size of ``context``: the newest believed usage report plus the messages after
    it counted with ``count_text`` (actual), else every message counted (approx)."""
    anchor = context.usage_anchor()
    if anchor is None:
        return TokenCount.approx(_sum(context, count_text))
    index, total = anchor
    return TokenCount.actual(total + _sum(context[index + 1 :], count_text))
