"""Which span a summarising engine replaces, and what it already knows about it.

The span runs from the end of the protected head (the system messages and the
task, as for the frame engine) to the start of the protected tail. Earlier
summaries inside it are not turns to summarise again: their bodies become the
*previous summary* the model is asked to update, and their structured frames
(``summary_data``) are folded into the frame of the span, which is built and
bounded exactly as the frame engine builds its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from forge_app.compaction._boundaries import head_end, tail_start
from forge_app.compaction._compactor import (
    SUMMARY_TEXT_LIMIT,
    is_summary_message,
    prepared_summary,
)
from forge_app.compaction._messages import with_content
from forge_app.compaction.llm._prompt import END_MARKER, SUMMARY_TITLE, summary_body
from forge_app.summary import read_frame
from forge_app.summary._bounded import bounded_summary
from forge_app.summary._fit_summary import fit_summary
from forge_domain import ContextMessage, Role, TextMessage
from forge_domain.summary import ContextSummary, SummaryBlock
from forge_domain.tools import ToolCatalog

__all__: list[str] = []  # internal: used by the engines, not part of the API


def is_engine_summary(message: ContextMessage) -> bool:
    """Return True for a message holding an earlier summary (ours, merged, or a frame)."""
    return is_summary_message(message) or message.text.startswith(SUMMARY_TITLE)


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
    head: tuple[ContextMessage, ...]
    """The protected head, kept verbatim: system messages and the task."""
    previous_for_model: str | None = None
    """``previous`` as the summariser is sent it: earlier frames rendered by ``frame_record``
    (bounded), earlier model-written summaries as they are."""

    @property
    def task(self) -> str | None:
        """The task the head protects (its user messages' text), None when it holds none."""
        texts = [m.text for m in self.head if m.has_role(Role.USER) and m.text.strip()]
        return "\n\n".join(texts) if texts else None


def find_span(
    messages: Sequence[ContextMessage],
    *,
    min_tail_messages: int,
    tail_tokens: int,
    frame_record: Callable[[ContextSummary], str] | None = None,
) -> Span | None:
    """The span between the protected head and tail, or None when it is empty.

    The head (system messages and the task, up to an earlier summary) is never
    summarised. When the whole conversation after the head fits the tail's
    token budget, the tail shrinks to ``min_tail_messages``. For the summariser, an
    earlier frame (the frame engine's summary, or the tiers') is the previous summary
    as ``frame_record`` renders its structured frame (the engine bounds it like the
    record of the span's own turns), else its text as it is.
    """
    start = head_end(messages, is_summary=is_engine_summary)
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
    for_model: list[str] = []
    earlier: list[SummaryBlock] = []
    for message in span:
        if not isinstance(message, TextMessage) or not is_engine_summary(message):
            turns.append(message)
            continue
        if message.summary_data is not None:
            data: ContextSummary | None = ContextSummary.model_validate(message.summary_data)
        else:  # kept as text only (a file, a framework): a frame reads back, prose does not
            data = read_frame(summary_body(message.text) or message.text)
        if data is not None:
            earlier.extend(data.blocks)
        body = summary_body(message.text)
        previous.append(body if body is not None else message.text)
        if body is None and data is not None and frame_record is not None:
            body = frame_record(data)
        for_model.append(body if body is not None else message.text)
        remainder = _after_marker(message.text)
        if remainder or message.tool_calls:  # a merged turn's calls are turns of the span
            turns.append(with_content(message, remainder or None))
    return Span(
        start=start,
        end=end,
        messages=span,
        turns=tuple(turns),
        previous="\n\n".join(previous) if previous else None,
        earlier_blocks=tuple(earlier),
        previous_for_model="\n\n".join(for_model) if for_model else None,
        head=tuple(messages[:start]),
    )


def _after_marker(text: str) -> str:
    """The part of a merged message that follows the summary's end marker."""
    if not text.startswith(SUMMARY_TITLE):
        return ""
    position = text.find(END_MARKER)
    return "" if position < 0 else text[position + len(END_MARKER) :].strip()


@dataclass(frozen=True, slots=True)
class SpanFrame:
    """The deterministic frame of a span, as the frame engine would write it."""

    raw: ContextSummary
    """The span's own turns, untransformed (pending asks are read from it)."""
    complete: ContextSummary
    """Folded with the earlier frames, transformed, operations merged, texts limited:
    the facts a summary must keep are read from it."""
    bounded: ContextSummary
    """``complete`` within the summary budget (what ``summary_data`` stores)."""
    text: str
    """``bounded`` rendered: what replaces the span when the model cannot deliver."""
    record: str
    """The frame of the span's own turns alone, rendered within the record's budget: what
    the summariser reads (the earlier turns reach it as the previous summary)."""


def frame_of(
    span: Span,
    catalog: ToolCatalog,
    transform: Callable[[ContextSummary], ContextSummary],
    render: Callable[[ContextSummary], str],
    budgets: tuple[int, int],
) -> SpanFrame:
    """The frames of a span, rendered within ``budgets``: (summary, record) characters.

    The steps are the frame engine's (``Compactor``): the bounded build (what the larger
    budget can keep; every ask, file change and failure, which the coverage facts read),
    transform, merge repeated operations, limit texts and narration, then fit the
    rendering to the budget.
    The summary's frame folds the earlier frames in; the record is the span's own.
    """
    max_chars, record_chars = budgets
    turns = [message for message in span.turns if not message.droppable]
    raw = bounded_summary(turns, catalog, max(budgets), SUMMARY_TEXT_LIMIT)
    complete = prepared_summary(
        ContextSummary.of_blocks((*span.earlier_blocks, *raw.blocks)), transform
    )
    bounded, text = fit_summary(complete, render, max_chars)
    own = prepared_summary(raw, transform) if span.earlier_blocks else complete
    record = fit_summary(own, render, record_chars)[1]
    return SpanFrame(raw=raw, complete=complete, bounded=bounded, text=text, record=record)
