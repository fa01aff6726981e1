"""The fit's kept tokens of many spans, from sums: what ``_kept_tokens`` gives for each.

``_KeptTokens`` reads, for one context, the tokens a splice of a span keeps besides its
summary from sums of the messages' estimates, and carries the span's newest reasoning
onto the first assistant message kept after it as ``carry_reasoning`` does. Every span
of every context must give what ``_kept_tokens`` (the kept messages counted) gives.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from forge_app.compaction._compactor import _kept_tokens, _KeptTokens
from forge_domain import Context, ContextMessage, Role, TextMessage, ToolCall, ToolResult

_REASONING = ({"type": "reasoning.text", "text": "think about the parser " * 5},)


def _message(kind: int, index: int) -> list[ContextMessage]:
    """A user text; an assistant text with or without reasoning (droppable or not); an
    assistant call and its result; a droppable user reminder."""
    text = "word " * (index % 7 + 1)
    if kind == 0:
        return [TextMessage(role=Role.USER, content=text)]
    if kind == 1:
        return [TextMessage(role=Role.ASSISTANT, content=text)]
    if kind == 2:
        return [TextMessage(role=Role.ASSISTANT, content=text, reasoning_details=_REASONING)]
    if kind == 3:
        return [
            TextMessage(
                role=Role.ASSISTANT, content=text, reasoning_details=_REASONING, droppable=True
            )
        ]
    if kind == 4:
        call = ToolCall(id=f"c{index}", name="shell", arguments='{"command": "ls"}')
        return [
            TextMessage(role=Role.ASSISTANT, content=None, tool_calls=(call,)),
            ToolResult(call_id=f"c{index}", content=text),
        ]
    return [TextMessage.user(text, droppable=True)]


@settings(max_examples=80, deadline=None)
@given(kinds=st.lists(st.integers(0, 5), min_size=1, max_size=30))
def test_every_span_keeps_what_the_kept_messages_count(kinds: list[int]) -> None:
    messages = [m for index, kind in enumerate(kinds) for m in _message(kind, index)]
    context = Context(messages, usage_floor=len(messages))
    kept = _KeptTokens(context)
    for start in range(len(messages)):
        for end in range(start, len(messages)):
            assert kept((start, end)) == _kept_tokens(context, (start, end)), (start, end)


def test_the_reasoning_carried_adds_to_the_message_after_the_span() -> None:
    """A table case: the span's reasoning lands on the first assistant message after it,
    which counts more; a message with its own reasoning keeps it and counts the same."""
    messages: list[ContextMessage] = [
        TextMessage(role=Role.USER, content="task"),
        TextMessage(role=Role.ASSISTANT, content="a", reasoning_details=_REASONING),
        TextMessage(role=Role.USER, content="more"),
        TextMessage(role=Role.ASSISTANT, content="b"),
        TextMessage(role=Role.ASSISTANT, content="c", reasoning_details=_REASONING),
    ]
    context = Context(messages, usage_floor=len(messages))
    kept = _KeptTokens(context)
    plain = sum(m.approx_tokens for m in (messages[0], messages[3], messages[4]))
    assert kept((1, 2)) > plain  # "b" carries the reasoning of "a"
    assert kept((1, 2)) == _kept_tokens(context, (1, 2))
    assert kept((1, 3)) == messages[0].approx_tokens + messages[4].approx_tokens
