"""find_span of summaries kept only as text: a frame reads back, a model's prose does not."""

from __future__ import annotations

from forge_app.compaction._compactor import Compactor
from forge_app.compaction.llm._prompt import framed
from forge_app.compaction.llm._span import find_span
from forge_app.summary import SummaryFrame
from forge_domain import Compact, CompactionStrategy, Context, TextMessage
from forge_domain.summary import ContextSummary, SummaryBlock, ToolCallItem
from tests.app.engine_sessions import coding_session

FRAME = SummaryFrame().render


def _frame_context() -> Context:
    return Compactor(Compact()).compact(coding_session(), CompactionStrategy.retain(3)).context


def _without_ids(blocks: tuple[SummaryBlock, ...]) -> tuple[SummaryBlock, ...]:
    """``blocks`` without call ids (a frame does not show them)."""
    return tuple(
        block.model_copy(
            update={
                "contents": tuple(
                    item.model_copy(update={"id": None}) if isinstance(item, ToolCallItem) else item
                    for item in block.contents
                )
            }
        )
        for block in blocks
    )


def test_find_span_reads_a_frame_kept_as_text_as_it_reads_the_frame_in_memory():
    in_memory = list(_frame_context())
    as_text = list(Context.from_openai(Context(in_memory).to_openai()))

    spans = [
        find_span(messages, min_tail_messages=2, tail_tokens=0, frame_record=FRAME)
        for messages in (in_memory, as_text)
    ]

    actual = [(_without_ids(s.earlier_blocks), s.previous, s.previous_for_model) for s in spans]
    assert (actual[1], len(actual[1][0])) == (actual[0], 1)


def test_find_span_reads_the_fallback_frame_of_a_model_summary_kept_as_text():
    context = _frame_context()
    frame = next(m for m in context if isinstance(m, TextMessage) and m.summary_data is not None)
    fixture = [*context[:2], TextMessage.user(framed(frame.text)), *context[3:]]

    span = find_span(fixture, min_tail_messages=2, tail_tokens=0)

    expected = ContextSummary.model_validate(frame.summary_data).blocks
    assert _without_ids(span.earlier_blocks) == _without_ids(expected)


def test_find_span_keeps_a_model_written_summary_as_prose():
    context = _frame_context()
    fixture = [*context[:2], TextMessage.user(framed("## Goal\nFix the parser.")), *context[3:]]

    span = find_span(fixture, min_tail_messages=2, tail_tokens=0)

    assert (span.earlier_blocks, span.previous) == ((), "## Goal\nFix the parser.")
