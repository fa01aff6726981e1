"""Properties of the Compactor over generated transcripts."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from forge_app.compaction._compactor import Compactor, is_summary_message
from forge_domain import (
    Compact,
    CompactionStrategy,
    Context,
    ContextMessage,
    ImagePart,
    TextMessage,
    TextPart,
    ToolCall,
    ToolResult,
)
from forge_domain.formats import find_violations
from tests.profiles import examples

TOOLS = [
    ("bash", '{"command": "pytest -x tests/test_%d.py"}'),
    ("read_file", '{"path": "/repo/src/mod_%d.py"}'),
    ("str_replace_editor", '{"command": "str_replace", "path": "/repo/src/mod_%d.py"}'),
    ("mystery_tool", '{"q": %d}'),
]

texts = st.text(alphabet="abcdefghij klmnop\n`{}%#", min_size=1, max_size=600).filter(str.strip)


@st.composite
def rounds(draw: st.DrawFn, *, follow_ups: bool = True) -> list[ContextMessage]:
    """One round: an assistant turn with calls and their results, or plain text, or a follow-up."""
    kinds = ["calls", "calls", "text", "follow_up", "image"] if follow_ups else ["calls", "text"]
    kind = draw(st.sampled_from(kinds))
    if kind == "text":
        return [TextMessage.assistant(draw(texts))]
    if kind == "follow_up":
        return [TextMessage.user(draw(texts))]
    if kind == "image":
        parts = (TextPart(text=draw(texts)), ImagePart(url="data:image/png;base64,AAAA"))
        return [TextMessage.model_validate({"role": "user", "content": parts})]
    count = draw(st.integers(min_value=1, max_value=3))
    calls = []
    for _ in range(count):
        name, arguments = draw(st.sampled_from(TOOLS))
        index = draw(st.integers(min_value=0, max_value=4))
        call_id = f"call_{draw(st.uuids()).hex[:12]}"
        calls.append(ToolCall(id=call_id, name=name, arguments=arguments % index))
    reasoning = draw(st.one_of(st.none(), st.just(({"text": "thinking", "signature": "s"},))))
    assistant = TextMessage.assistant(
        draw(st.one_of(st.none(), texts)), tuple(calls), reasoning_details=reasoning
    )
    results: list[ContextMessage] = [
        ToolResult(call_id=call.id, content=draw(texts), is_error=draw(st.booleans()))
        for call in calls
    ]
    return [assistant, *results]


@st.composite
def transcripts(draw: st.DrawFn, *, follow_ups: bool = True) -> Context:
    """A valid transcript: system, task, then rounds."""
    messages: list[ContextMessage] = [
        TextMessage.system("You are a coder."),
        TextMessage.user("Fix the bug."),
    ]
    for chunk in draw(st.lists(rounds(follow_ups=follow_ups), min_size=0, max_size=25)):
        messages.extend(chunk)
    return Context(messages)


strategies = st.one_of(
    st.builds(CompactionStrategy.retain, st.integers(min_value=0, max_value=12)),
    st.builds(CompactionStrategy.evict, st.floats(min_value=0.0, max_value=1.0)),
    st.builds(
        lambda p, n: CompactionStrategy.evict(p).max(CompactionStrategy.retain(n)),
        st.floats(min_value=0.0, max_value=1.0),
        st.integers(min_value=0, max_value=12),
    ),
)


def _same_but_carried_reasoning(before: ContextMessage, after: ContextMessage) -> bool:
    if before == after:
        return True
    return (
        isinstance(before, TextMessage)
        and isinstance(after, TextMessage)
        and not before.reasoning_details
        and after.model_copy(update={"reasoning_details": before.reasoning_details}) == before
    )


@settings(max_examples=examples(100))
@given(transcripts(), strategies)
def test_compaction_output_is_valid_smaller_and_keeps_tail(context, strategy):
    outcome = Compactor(Compact()).compact(context, strategy)
    after = outcome.context
    span = outcome.result.compacted_range
    kept = len(context) - span[1] - 1 if span else len(context)
    assert find_violations(after) == []
    assert find_violations(after, "anthropic") == []
    assert after.token_count_approx() <= context.token_count_approx()
    assert all(
        _same_but_carried_reasoning(b, a)
        for b, a in zip(context[len(context) - kept :], after[len(after) - kept :], strict=True)
    )


@settings(max_examples=examples(60))
@given(transcripts(), st.integers(min_value=0, max_value=12))
def test_compaction_is_identity_when_nothing_is_compactable(context, keep):
    strategy = CompactionStrategy.retain(keep)
    if strategy.eviction_range(context) is not None:
        context = Compactor(Compact()).compact(context, strategy).context
    if strategy.eviction_range(context) is None:
        assert Compactor(Compact()).compact(context, strategy).context is context


@settings(max_examples=15)
@given(st.lists(rounds(follow_ups=False), min_size=30, max_size=60))
def test_repeated_compaction_keeps_summary_bounded(chunks):
    compactor = Compactor(Compact())
    context = Context([TextMessage.system("You are a coder."), TextMessage.user("Fix the bug.")])
    largest = 0
    for chunk in chunks:
        context = context.append(*chunk)
        context = compactor.compact(context, CompactionStrategy.retain(4)).context
        summaries = [m for m in context if is_summary_message(m)]
        assert len(summaries) <= 1
        largest = max([largest, *(len(m.text) for m in summaries)])
    assert largest <= 40_000
