"""The span a summarising engine replaces, and the earlier summaries inside it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from forge_app.compaction._compactor import Compactor
from forge_app.compaction.llm._prompt import END_MARKER, SUMMARY_TITLE
from forge_app.compaction.llm._span import find_span, frame_of
from forge_app.compaction.llm._splice import splice_summary
from forge_app.summary import SummaryFrame, SummaryTransformer
from forge_app.summary._frame import SUMMARY_PREAMBLE
from forge_domain import (
    Compact,
    CompactionStrategy,
    Context,
    Role,
    TextMessage,
    ToolCall,
    ToolResult,
)
from forge_domain.formats import find_violations
from forge_domain.summary import ContextSummary
from forge_domain.testing import pattern
from forge_domain.tools import ToolCatalog
from tests.app.engine_sessions import coding_session


def _legacy(body: str) -> str:
    """A summary as earlier versions framed it, to merge into the next assistant turn."""
    prefix = (
        f"{SUMMARY_TITLE}\nThe turns before this point were condensed into the summary below, "
        "the authoritative record of them, to free space in the context window. "
        f"{SUMMARY_PREAMBLE}"
    )
    return f"{prefix}\n\n{body}\n\n{END_MARKER}"


def test_find_span_reads_a_summary_merged_into_a_message():
    fixture = [
        TextMessage.system("s"),
        TextMessage.assistant(_legacy("## Goal\nold goal") + "\n\nI kept working."),
        TextMessage.user("next"),
        TextMessage.assistant("more " * 200),
        TextMessage.user("latest"),
        TextMessage.assistant("ok"),
    ]

    span = find_span(fixture, min_tail_messages=2, tail_tokens=0)
    actual = (span.start, span.end, span.previous, [m.text for m in span.turns])

    assert actual == (1, 3, "## Goal\nold goal", ["I kept working.", "next", "more " * 200])


def test_find_span_folds_a_frame_summary():
    frame = Compactor(Compact()).compact(coding_session(), CompactionStrategy.retain(3))
    fixture = list(frame.context)

    span = find_span(fixture, min_tail_messages=2, tail_tokens=0)
    actual = (span.start, span.previous == fixture[2].text, len(span.earlier_blocks), span.task)

    assert actual == (2, True, 1, "Fix the failing tests in the parser.")


def test_find_span_never_summarises_the_task():
    fixture = list(pattern("suaaaaua"))

    actual = find_span(fixture, min_tail_messages=2, tail_tokens=10).start

    assert actual == 2


def test_find_span_keeps_the_task_after_an_earlier_summary():
    fixture = [
        TextMessage.system("s"),
        TextMessage.user("the task"),
        TextMessage.assistant(_legacy("## Goal\nold goal") + "\n\nI kept working."),
        *pattern("uaua"),
    ]

    span = find_span(fixture, min_tail_messages=2, tail_tokens=0)
    actual = (span.start, span.task, span.previous)

    assert actual == (2, "the task", "## Goal\nold goal")


def test_find_span_keeps_a_task_bigger_than_the_tail_budget():
    fixture = [TextMessage.system("s"), TextMessage.user("x" * 4_000), *pattern("aaaaua")]

    actual = find_span(fixture, min_tail_messages=2, tail_tokens=500).start

    assert actual == 2


def test_find_span_reads_a_summary_written_under_an_earlier_prefix():
    old = (
        "[EARLIER CONTEXT — REFERENCE ONLY]\nOlder wording of the prefix.\n\n## Goal\nold goal"
        f"\n\n{END_MARKER}"
    )
    fixture = [TextMessage.system("s"), TextMessage.user(old), *pattern("aaaaua")]

    span = find_span(fixture, min_tail_messages=2, tail_tokens=0)
    actual = (span.start, span.previous)

    assert actual == (1, "## Goal\nold goal")


FRAME = SummaryFrame().render


def test_find_span_keeps_the_calls_of_a_turn_a_summary_was_merged_into():
    call = ToolCall(id="c1", name="shell", arguments='{"command": "pytest"}')
    fixture = [
        TextMessage.system("s"),
        TextMessage.user("task"),
        TextMessage(role=Role.ASSISTANT, content=_legacy("## Goal\nold goal"), tool_calls=(call,)),
        ToolResult.failed("c1", "FAILED t.py::test_a"),
        TextMessage.user("next"),
        TextMessage.assistant("ok"),
    ]

    span = find_span(fixture, min_tail_messages=2, tail_tokens=0)
    actual = (span.previous, [(m.text, bool(getattr(m, "tool_calls", None))) for m in span.turns])

    assert actual == ("## Goal\nold goal", [("", True), ("FAILED t.py::test_a", False)])


VALID_UNITS = st.lists(st.sampled_from(["u", "a", "tr", "te", "Trr", "Tre"]), max_size=12).map(
    "".join
)


@given(VALID_UNITS, st.integers(0, 6), st.integers(0, 40))
def test_find_span_then_splice_is_valid_and_keeps_head_and_tail(letters, keep, budget):
    fixture = list(pattern("su" + letters))
    span = find_span(fixture, min_tail_messages=keep, tail_tokens=budget)
    if span is None:
        return
    spliced = splice_summary(fixture, (span.start, span.end), "## Goal\nx")
    kept_tail = len(fixture) - span.end - 1

    actual = (
        find_violations(Context(spliced)),
        spliced[: span.start] == fixture[: span.start],
        spliced[len(spliced) - kept_tail + 1 :] == fixture[span.end + 2 :],
    )

    assert actual == ([], True, True)


@given(VALID_UNITS, st.integers(0, 6), st.integers(0, 40))
def test_find_span_starts_at_or_after_the_first_assistant_message(letters, keep, budget):
    fixture = list(pattern("su" + letters))
    span = find_span(fixture, min_tail_messages=keep, tail_tokens=budget)
    first = next((i for i, m in enumerate(fixture) if m.has_role(Role.ASSISTANT)), len(fixture))

    actual = span is None or span.start == first

    assert actual is True


def _frame_of(span, budgets):
    return frame_of(span, ToolCatalog.default(), SummaryTransformer("/repo"), FRAME, budgets)


def test_frame_of_bounds_the_summary_and_the_record_but_not_the_facts():
    fixture = list(coding_session(rounds=12))
    span = find_span(fixture, min_tail_messages=2, tail_tokens=0)

    frame = frame_of(
        span, ToolCatalog.default(), SummaryTransformer("/repo"), FRAME, (3_000, 1_500)
    )
    actual = (
        len(frame.text) <= 3_000,
        len(frame.record) <= 1_500,
        sum(call.tool.definition.is_file_change for call in frame.complete.tool_calls()),
        "**Update:** `src/parser_12.py`" in frame.record,
    )

    assert actual == (True, True, 12, True)


def test_frame_of_gives_the_summariser_only_the_span_s_own_turns():
    first = Compactor(Compact()).compact(coding_session(), CompactionStrategy.retain(3)).context
    fixture = list(first.append(*coding_session(rounds=2)[3:]))
    span = find_span(fixture, min_tail_messages=2, tail_tokens=0)

    frame = frame_of(
        span, ToolCatalog.default(), SummaryTransformer("/repo"), FRAME, (9_000, 9_000)
    )
    actual = ("src/parser_4.py" in frame.text, "src/parser_4.py" in frame.record)

    assert actual == (True, False)


def test_frame_fold_keeps_the_calls_of_a_turn_an_llm_summary_was_merged_into():
    call = ToolCall(id="c1", name="shell", arguments='{"command": "pytest -x"}')
    merged = TextMessage(
        role=Role.ASSISTANT,
        content=_legacy("## Goal\nold goal"),
        tool_calls=(call,),
        summary_data=ContextSummary().model_dump(mode="json"),
    )
    fixture = Context(
        [
            TextMessage.system("s"),
            TextMessage.user("task"),
            merged,
            ToolResult.failed("c1", "FAILED t.py::test_a"),
            TextMessage.user("next"),
            TextMessage.assistant("ok"),
        ]
    )
    compactor = Compactor(Compact(retention_window=2))

    outcome = compactor.compact(fixture, compactor.forced_strategy())
    summary = next(m.text for m in outcome.context if m.summary_data is not None)

    assert ("```\npytest -x\n```" in summary, "FAILED t.py::test_a" in summary) == (True, True)
