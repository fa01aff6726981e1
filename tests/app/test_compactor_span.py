"""``Compactor.summarise_span``: exactly the span a caller chose becomes one summary."""

from __future__ import annotations

import pytest

from forge_app.compaction import Compactor, is_summary_message
from forge_app.errors import CompactionFailed
from forge_domain import Compact, Context, TextMessage, ToolCall, ToolResult


def test_summarise_span_replaces_the_task_and_user_messages_even_when_longer():
    """No protected head, no saving required: the caller's span is replaced, texts kept."""
    context = Context(
        [TextMessage.user("1"), TextMessage.user("2"), TextMessage.user("3"), TextMessage.user("4")]
    )

    outcome = Compactor(Compact()).summarise_span(context, (0, 2))

    summary, last = outcome.context
    assert (is_summary_message(summary), last is context[3]) == (True, True)
    assert [t for t in ("1", "2", "3") if f"````\n{t}\n````" in summary.text] == ["1", "2", "3"]
    assert (outcome.result.summarised_range, outcome.changed()) == ((0, 2), True)
    assert outcome.result.compacted_tokens > outcome.result.original_tokens


def test_summarise_span_refuses_to_separate_a_call_from_its_result():
    call = ToolCall(id="c1", name="read_file", arguments='{"path": "a.py"}')
    context = Context(
        [
            TextMessage.user("task"),
            TextMessage.assistant(None, (call,)),
            ToolResult(call_id="c1", name="read_file", content="x"),
        ]
    )

    with pytest.raises(CompactionFailed):
        Compactor(Compact()).summarise_span(context, (0, 1))
