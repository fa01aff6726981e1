"""The Compactor: spans, splicing, folding, max_tokens and transactions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forge_app.compaction._compactor import Compactor, is_summary_message
from forge_app.errors import CompactionFailed, TemplateNotFound
from forge_domain import (
    Compact,
    CompactionStrategy,
    Context,
    InvalidTranscript,
    Role,
    TextMessage,
    ToolCall,
    ToolResult,
    Usage,
)
from forge_domain.formats import find_violations
from forge_domain.summary import ContextSummary, ToolCallItem
from forge_domain.testing import pattern, pattern_of
from forge_domain.tools import FileReadTool, failure_evidence
from tests.sessions import SESSIONS


def shape(context: Context) -> str:
    """Pattern letters with every summary message shown as ``S``."""
    letters = pattern_of(context)
    return "".join(
        "S" if is_summary_message(message) else letter
        for letter, message in zip(letters, context, strict=True)
    )


def padded(letters: str, size: int = 2_000) -> Context:
    """A pattern whose tool results are long, as real tool outputs are.

    Summaries keep assistant and user text and drop tool output, so only spans
    holding tool output shrink.
    """
    return Context(
        message.model_copy(update={"content": message.text + " " + "x" * size})
        if isinstance(message, ToolResult)
        else message
        for message in pattern(letters)
    )


SPLICE_CASES = [
    ("sutrtraa", 2, "suSaa"),
    ("sutrua", 0, "suS"),
    ("sutrtrtra", 2, "suStra"),
    ("suTrrua", 1, "suSa"),
    ("sutrutrutra", 3, "suStra"),
    ("su", 0, "su"),
    ("sutrtraa", 8, "sutrtraa"),
    ("sutrtraa", 6, "sutrtraa"),
    ("suaaaa", 0, "suaaaa"),
]


@pytest.mark.parametrize(
    ("letters", "keep", "expected"), SPLICE_CASES, ids=[f"{c[0]}-keep{c[1]}" for c in SPLICE_CASES]
)
def test_compactor_splices_one_summary(letters, keep, expected):
    outcome = Compactor(Compact()).compact(padded(letters), CompactionStrategy.retain(keep))
    assert shape(outcome.context) == expected


def test_compactor_keeps_tail_identical():
    fixture = padded("sutrutrutraua")
    outcome = Compactor(Compact()).compact(fixture, CompactionStrategy.retain(4))
    assert outcome.context[-4:] == fixture[-4:]


def test_compactor_nothing_compactable_returns_input():
    fixture = padded("sutra")
    outcome = Compactor(Compact()).compact(fixture, CompactionStrategy.retain(5))
    assert (outcome.context is fixture, outcome.changed(), outcome.result.compacted_range) == (
        True,
        False,
        None,
    )


def test_compactor_does_not_grow_a_tiny_context():
    fixture = pattern("sutrua")
    outcome = Compactor(Compact()).compact(fixture, CompactionStrategy.retain(0))
    assert outcome.context is fixture


def test_compactor_result_metrics():
    fixture = padded("sutrutrua")
    outcome = Compactor(Compact()).compact(fixture, CompactionStrategy.retain(2))
    after = outcome.context
    assert outcome.result.model_dump(exclude={"summary_usage", "coverage"}) == {
        "original_tokens": fixture.token_count_approx(),
        "compacted_tokens": after.token_count_approx(),
        "original_messages": 9,
        "compacted_messages": 5,
        "compacted_range": (2, 6),
        "summarised_range": (2, 6),
        "pruned_range": None,
        "budget_status": "not_set",
        "engine": "frame",
    }


def test_compactor_automatic_strategy_is_the_more_conservative():
    compactor = Compactor(Compact(eviction_window=1.0, retention_window=3))
    fixture = padded("sutrutrutrau")
    outcome = compactor.compact(fixture)
    assert shape(outcome.context) == "suStrau"


def test_compactor_rejects_invalid_input_untouched():
    fixture = pattern("sutua")
    with pytest.raises(InvalidTranscript, match=r"messages\[2\]"):
        Compactor(Compact()).compact(fixture, CompactionStrategy.retain(0))
    assert pattern_of(fixture) == "sutua"


def test_compactor_drops_droppables_inside_span_only():
    messages = list(padded("suaaua"))
    messages[3] = TextMessage.user("attached file", droppable=True)
    messages.append(TextMessage.user("fresh attachment", droppable=True))
    fixture = Context(messages)
    outcome = Compactor(Compact()).compact(fixture, CompactionStrategy.retain(2))
    texts = [m.text for m in outcome.context]
    assert ("attached file" in outcome.context[2].text, texts[-1]) == (False, "fresh attachment")


def test_compactor_usage_goes_to_span_usage_not_size():
    usage = Usage.reported(prompt_tokens=50_000, completion_tokens=100)
    messages = list(padded("sutrtrua"))
    messages[2] = messages[2].model_copy(update={"usage": usage})
    messages[4] = messages[4].model_copy(update={"usage": usage})
    outcome = Compactor(Compact()).compact(Context(messages), CompactionStrategy.retain(0))
    summary = outcome.context[2]
    assert (
        summary.usage,
        summary.span_usage.total_tokens.value,
        outcome.context.token_count().kind,
    ) == (None, 100_200, "approx")


def test_compactor_carries_reasoning_to_first_assistant_after_summary():
    messages = list(padded("sutrtrua"))
    messages[4] = messages[4].model_copy(update={"reasoning_details": ({"text": "last thought"},)})
    outcome = Compactor(Compact()).compact(Context(messages), CompactionStrategy.retain(2))
    assert outcome.context[-1].reasoning_details == ({"text": "last thought"},)


def test_compactor_folds_earlier_summary():
    compactor = Compactor(Compact())
    first = compactor.compact(padded("sutrutraua"), CompactionStrategy.retain(2)).context
    grown = first.append(*list(padded("sutrutrua"))[2:])
    second = compactor.compact(grown, CompactionStrategy.retain(2)).context
    assert shape(second) == "suSua"


def _calls(context: Context) -> list[ToolCallItem]:
    """The tool-call lines of the context's summary, as stored in its ``summary_data``."""
    (summary,) = [m for m in context if isinstance(m, TextMessage) and is_summary_message(m)]
    return list(ContextSummary.model_validate(summary.summary_data).tool_calls())


def _read(
    call_id: str,
    success: bool,
    earlier: int,
    earlier_failures: int = 0,
    evidence: str | None = None,
) -> ToolCallItem:
    return ToolCallItem(
        id=call_id,
        tool=FileReadTool(path="/test/path"),
        is_success=success,
        earlier=earlier,
        earlier_failures=earlier_failures,
        evidence=evidence,
    )


ERROR = failure_evidence(padded("sute")[3].text)
"""The evidence an error result of ``padded`` leaves (its text: no line says more)."""

AGGREGATE_CASES = [
    ("sutrtrtraua", [_read("call_7", True, 2)]),
    ("sutetrtraua", [_read("call_7", True, 2, 1, ERROR)]),
    ("sutrtrteaua", [_read("call_7", False, 2, 0, ERROR)]),
    ("sutrauteaua", [_read("call_7", False, 1, 0, ERROR)]),
]


@pytest.mark.parametrize(
    ("letters", "expected"),
    AGGREGATE_CASES,
    ids=["reads-x3", "earlier-failure", "last-failed", "across-turns"],
)
def test_compactor_merges_repeated_calls_into_one_counted_line(letters, expected):
    outcome = Compactor(Compact()).compact(padded(letters), CompactionStrategy.retain(2))
    assert _calls(outcome.context) == expected


def test_compactor_fold_adds_to_an_aggregated_line():
    compactor = Compactor(Compact())
    first = compactor.compact(padded("sutrtrautrtrua"), CompactionStrategy.retain(8)).context
    second = compactor.compact(first, CompactionStrategy.retain(2)).context
    assert (_calls(first), _calls(second)) == (
        [_read("call_5", True, 1)],
        [_read("call_11", True, 3)],
    )


def test_compactor_max_tokens_shrinks_tail():
    fixture = padded("sutrutrutrutrua")
    budget = fixture.token_count_approx() // 3
    outcome = Compactor(Compact(max_tokens=budget, retention_window=8)).compact(
        fixture, CompactionStrategy.retain(8)
    )
    assert (outcome.result.budget_status, outcome.context.token_count_approx() <= budget) == (
        "met",
        True,
    )


def test_compactor_max_tokens_exhausted_when_nothing_left():
    fixture = padded("sutrua")
    outcome = Compactor(Compact(max_tokens=5)).compact(fixture, CompactionStrategy.retain(0))
    assert outcome.result.budget_status == "exhausted"


def test_compactor_missing_template_dir_is_typed(tmp_path):
    with pytest.raises(TemplateNotFound):
        Compactor(Compact(), template_dir=tmp_path / "nope").compact(
            padded("suaaua"), CompactionStrategy.retain(0)
        )


def test_compactor_broken_template_fails_transactionally(tmp_path):
    (tmp_path / "forge-partial-summary-frame.md").write_text("{{ undefined_name.attr }}")
    fixture = padded("suaaua")
    with pytest.raises(CompactionFailed):
        Compactor(Compact(), template_dir=tmp_path).compact(fixture, CompactionStrategy.retain(0))
    assert shape(fixture) == "suaaua"


def test_compactor_summary_is_a_user_message_with_structure():
    outcome = Compactor(Compact()).compact(padded("sutrua"), CompactionStrategy.retain(0))
    summary = outcome.context[2]
    assert (summary.role, summary.summary_data is not None, "## Summary" in summary.text) == (
        Role.USER,
        True,
        True,
    )


def _sessions() -> list[Path]:
    return sorted(SESSIONS.glob("*.json"))


@pytest.mark.skipif(not SESSIONS.is_dir(), reason="shared sessions are not on this machine")
@pytest.mark.parametrize("path", _sessions(), ids=lambda p: p.stem)
def test_compactor_real_sessions_valid_and_smaller(path):
    fixture = Context.from_openai(json.loads(path.read_text()))
    outcome = Compactor(Compact()).compact(fixture, CompactionStrategy.retain(6))
    after = outcome.context
    assert (
        find_violations(after),
        find_violations(after, "anthropic"),
        after.token_count_approx() < fixture.token_count_approx() or len(fixture) < 20,
        outcome.changed() or len(fixture) < 20,
        after[-6:] == fixture[-6:],
    ) == ([], [], True, True, True)


def test_compactor_tool_call_without_result_in_span_never_happens():
    call = ToolCall(id="c1", name="bash", arguments='{"command": "ls"}')
    messages = [
        TextMessage.system("s"),
        TextMessage.user("task " + "x" * 400),
        TextMessage.assistant("look " + "y" * 400, (call,)),
        ToolResult.of("c1", "files " + "z" * 1_200),
        TextMessage.assistant("done " + "w" * 400),
    ]
    outcome = Compactor(Compact()).compact(Context(messages), CompactionStrategy.retain(1))
    assert (shape(outcome.context), find_violations(outcome.context)) == ("suSa", [])


def test_compactor_meets_max_tokens_when_the_retention_window_covers_everything():
    """A strategy with nothing to evict still compacts when ``max_tokens`` is not met."""
    big = TextMessage.assistant("x" * 8_000)
    fixture = pattern("sutrutru").append(big, TextMessage.user("next"))
    compactor = Compactor(Compact(retention_window=20, max_tokens=1_000))

    outcome = compactor.compact(fixture)

    actual = (
        outcome.result.compacted_range is not None,
        outcome.result.budget_status,
        outcome.context.token_count_approx() <= 1_000,
        find_violations(outcome.context),
    )
    assert actual == (True, "met", True, [])
