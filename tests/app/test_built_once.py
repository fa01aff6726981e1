"""Each message's text item and one-item block built once per fit: summaries unchanged.

Within :func:`built_once`, :meth:`ContextSummary.from_messages` re-uses the item (and the
block of that item alone) it built for a message; the compactor opens one around a fit
to a budget, whose spans share their start. A summary built so must equal one built
afresh, whatever was built before in the block, and a compaction must give what it gives
with nothing re-used.
"""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.generator import generate_session
from benchmarks.replay_scale import chat_session
from forge_app.compaction import _compactor
from forge_app.compaction._compactor import Compactor
from forge_app.files._transcripts import parse_transcript
from forge_domain import (
    Compact,
    Context,
    ContextMessage,
    Role,
    TextMessage,
    ToolCall,
    ToolResult,
)
from forge_domain.summary import ContextSummary
from forge_domain.summary._summary import built_once
from forge_domain.tools import ToolCatalog

_CATALOG = ToolCatalog.default()


def _message(kind: int, text: str, index: int) -> list[ContextMessage]:
    """A user text, an assistant text, an empty assistant text, or a call and its result."""
    if kind == 0:
        return [TextMessage(role=Role.USER, content=text)]
    if kind == 1:
        return [TextMessage(role=Role.ASSISTANT, content=text)]
    if kind == 2:
        return [TextMessage(role=Role.ASSISTANT, content="")]
    call = ToolCall(id=f"c{index}", name="shell", arguments=json.dumps({"command": text}))
    return [
        TextMessage(role=Role.ASSISTANT, content=text if kind == 4 else "", tool_calls=(call,)),
        ToolResult(call_id=f"c{index}", content="Error: failed" if index % 3 else "ok"),
    ]


_texts = st.sampled_from(["fix it", "why", "run the tests", "Thought: ls\nAction: ls", "ok"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    shape=st.lists(st.tuples(st.integers(0, 4), _texts), min_size=1, max_size=40),
    ends=st.lists(st.integers(0, 60), min_size=1, max_size=4),
)
def test_summaries_built_in_a_block_equal_summaries_built_afresh(
    shape: list[tuple[int, str]], ends: list[int]
) -> None:
    messages = [m for index, (kind, text) in enumerate(shape) for m in _message(kind, text, index)]
    spans = [messages[: min(end, len(messages))] for end in ends]
    spans += [messages[start:] for start in ends if start < len(messages)]
    with built_once():
        built = [ContextSummary.from_messages(span, _CATALOG) for span in spans]
    assert built == [ContextSummary.from_messages(span, _CATALOG) for span in spans]


def test_a_second_summary_re_uses_the_first_one_s_blocks() -> None:
    messages = list(chat_session(400).messages)[1:]
    fresh = ContextSummary.from_messages(messages[:-1], _CATALOG)
    with built_once():
        longer = ContextSummary.from_messages(messages, _CATALOG)
        shorter = ContextSummary.from_messages(messages[:-1], _CATALOG)
    assert shorter == fresh
    assert all(a is b for a, b in zip(shorter.blocks, longer.blocks[:-1], strict=True))
    assert fresh.blocks[0] is not longer.blocks[0]  # outside the block nothing is kept


def _session(size: int, seed: int) -> list[ContextMessage]:
    data = json.dumps(generate_session(size, seed=seed)).encode()
    return list(parse_transcript(data, "generated.json").context)


@pytest.mark.parametrize(
    ("source", "max_tokens"),
    [("chat", 3_000), ("chat", 9_000), ("tools", 6_000), ("tools", 20_000)],
)
def test_a_fit_gives_what_it_gives_when_nothing_is_re_used(
    monkeypatch: pytest.MonkeyPatch, source: str, max_tokens: int
) -> None:
    if source == "chat":
        context = chat_session(3_000)
    else:
        messages = _session(1_500, 2)
        context = Context(messages, usage_floor=len(messages))
    config = Compact(retention_window=6, eviction_window=0.3, max_tokens=max_tokens)
    built = []
    real = ContextSummary.from_messages.__func__  # type: ignore[attr-defined]

    def counted(cls, *args, **kwargs):  # type: ignore[no-untyped-def]
        summary = real(cls, *args, **kwargs)
        built.append(summary)
        return summary

    monkeypatch.setattr(ContextSummary, "from_messages", classmethod(counted))
    reused = Compactor(config).compact(context)
    assert len(built) >= 2  # the fit built several summaries
    shared = {id(block) for block in built[0].blocks} & {id(b) for b in built[1].blocks}
    monkeypatch.setattr(_compactor, "built_once", contextlib.nullcontext)
    afresh = Compactor(config).compact(context)
    assert (reused.result, list(reused.context)) == (afresh.result, list(afresh.context))
    assert shared  # the second summary re-used blocks of the first
