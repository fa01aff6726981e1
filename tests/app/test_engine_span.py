"""The span a summarising engine replaces, and the earlier summaries inside it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from forge_app.compaction._compactor import Compactor
from forge_app.compaction.llm._prompt import framed
from forge_app.compaction.llm._span import find_span
from forge_app.compaction.llm._splice import splice_summary
from forge_domain import Compact, CompactionStrategy, Context, TextMessage
from forge_domain.testing import pattern
from forge_domain.validation import find_violations
from tests.app.engine_sessions import coding_session


def test_find_span_reads_a_summary_merged_into_a_message():
    fixture = [
        TextMessage.system("s"),
        TextMessage.assistant(framed("## Goal\nold goal") + "\n\nI kept working."),
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
    actual = (span.start, span.previous == fixture[2].text, len(span.earlier_blocks))

    assert actual == (1, True, 1)


def test_find_span_protects_the_first_exchange_only_the_first_time():
    fixture = list(pattern("suaaaaua"))

    actual = find_span(fixture, min_tail_messages=2, tail_tokens=10).start

    assert actual == 3


def test_find_span_does_not_protect_a_first_exchange_bigger_than_the_tail_budget():
    fixture = [TextMessage.system("s"), TextMessage.user("x" * 4_000), *pattern("aaaaua")]

    actual = find_span(fixture, min_tail_messages=2, tail_tokens=500).start

    assert actual == 1


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
