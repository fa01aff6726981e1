"""Which span a summarising engine replaces, and what it already knows about it.

The span runs from the end of the protected head to the start of the
protected tail. Earlier summaries inside it are not turns to summarise again:
their bodies become the *previous summary* the model is asked to update, and
their structured frames (``summary_data``) are folded into the frame of the span.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from forge_app.compaction._boundaries import head_end, tail_start
from forge_app.compaction._compactor import is_summary_message
from forge_app.compaction._messages import with_content
from forge_app.compaction.llm._prompt import END_MARKER, SUMMARY_PREFIX, summary_body
from forge_domain.messages import ContextMessage, TextMessage
from forge_domain.summary import ContextSummary, SummaryBlock
from forge_domain.tool_catalog import ToolCatalog

__all__: list[str] = []  # internal: used by the engines, not part of the API


def is_engine_summary(message: ContextMessage) -> bool:
    """Return True for a message holding an earlier summary (ours, merged, or a frame)."""
    return is_summary_message(message) or message.text.startswith(SUMMARY_PREFIX)


@dataclass(frozen=True, slots=True)
class Span:
    """The span to summarise."""

    start: int
    """Index of its first message."""
    end: int
    """Index of its last message (inclusive)."""
    messages: tuple[ContextMessage, ...]
    """The span's messages."""
    turns: tuple[ContextMessage, ...]
    """The messages to summarise: earlier summaries left out, merged messages without them."""
    previous: str | None
    """Bodies of the earlier summaries in the span, joined; None when there is none."""
    earlier_blocks: tuple[SummaryBlock, ...]
    """Structured frames of the earlier summaries, oldest first."""


def find_span(
    messages: Sequence[ContextMessage], *, min_tail_messages: int, tail_tokens: int
) -> Span | None:
    """The span between the protected head and tail, or None when it is empty.

    The first exchange is protected only while the conversation holds no
    summary yet (the first compaction) and only when it fits the tail's token
    budget. When the whole conversation after the head fits the tail's token
    budget, the tail shrinks to ``min_tail_messages``.
    """
    first_time = not any(is_engine_summary(message) for message in messages)
    start = head_end(messages, first_exchange=first_time)
    bare = head_end(messages, first_exchange=False)
    if sum(m.approx_tokens for m in messages[bare:start]) > max(tail_tokens, 0):
        start = bare  # a first exchange bigger than the tail budget is summarised, not kept
    end = tail_start(
        messages, lower=start, min_messages=min_tail_messages, token_budget=tail_tokens
    )
    if end <= start:  # everything fits the tail budget: keep only the minimum tail
        end = tail_start(messages, lower=start, min_messages=min_tail_messages, token_budget=0)
    end -= 1
    if end < start:
        return None
    span = tuple(messages[start : end + 1])
    turns: list[ContextMessage] = []
    previous: list[str] = []
    earlier: list[SummaryBlock] = []
    for message in span:
        if not isinstance(message, TextMessage) or not is_engine_summary(message):
            turns.append(message)
            continue
        if message.summary_data is not None:
            earlier.extend(ContextSummary.model_validate(message.summary_data).blocks)
        body = summary_body(message.text)
        previous.append(body if body is not None else message.text)
        remainder = _after_marker(message.text)
        if remainder:
            turns.append(with_content(message, remainder))
    return Span(
        start=start,
        end=end,
        messages=span,
        turns=tuple(turns),
        previous="\n\n".join(previous) if previous else None,
        earlier_blocks=tuple(earlier),
    )


def _after_marker(text: str) -> str:
    """The part of a merged message that follows the summary's end marker."""
    if not text.startswith(SUMMARY_PREFIX):
        return ""
    position = text.find(END_MARKER)
    return "" if position < 0 else text[position + len(END_MARKER) :].strip()


def frame_of(
    span: Span,
    catalog: ToolCatalog,
    transform: Callable[[ContextSummary], ContextSummary],
) -> tuple[ContextSummary, ContextSummary]:
    """The raw frame of the span's turns and the transformed frame including earlier ones."""
    raw = ContextSummary.from_messages(
        [message for message in span.turns if not message.droppable], catalog
    )
    folded = ContextSummary(blocks=(*span.earlier_blocks, *raw.blocks))
    return raw, transform(folded)
