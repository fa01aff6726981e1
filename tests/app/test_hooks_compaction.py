"""CompactionHandler: threshold, preflight, pending calls, failures, loop guard, overflow."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from forge_app.errors import ContextLengthExceeded
from forge_app.runtime._conversation import Conversation
from forge_app.runtime._dispatch import Hooks
from forge_app.runtime._events import (
    ContextOverflowEvent,
    EndEvent,
    RequestEvent,
    ResponseEvent,
    StartEvent,
)
from forge_app.runtime._hookspecs import hookimpl
from forge_app.runtime._model import ModelRequest, ModelResponse
from forge_app.runtime.plugins import CompactionHandler, LoggingPlugin
from forge_domain import Agent, Compact, Context, TextMessage, Usage
from forge_domain.formats import find_violations
from forge_domain.testing import pattern, pattern_of
from tests.app.tiny_engine import TinyEngine

AGENT = Agent(
    id="tester",
    context_length=1000,
    compact=Compact(retention_window=2, eviction_window=0.5),
)
"""Threshold: floor(1000 x 0.7) = 700 tokens."""


class Spy:
    """Records the compaction events it sees."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, object]] = []

    @hookimpl
    def forge_on_compaction_start(self, reason, token_count, threshold) -> None:
        self.seen.append(("start", (reason, int(token_count), threshold)))

    @hookimpl
    def forge_on_compaction_end(self, reason, result) -> None:
        self.seen.append(("end", (reason, result.compacted_range)))

    @hookimpl
    def forge_on_compaction_failed(self, reason, error) -> None:
        self.seen.append(("failed", (reason, str(error))))

    @hookimpl
    def forge_on_compaction_suspended(
        self, attempts, threshold, retry_at_tokens, retry_after_turns
    ) -> None:
        self.seen.append(("suspended", (attempts, threshold, retry_at_tokens, retry_after_turns)))


def setup(engine: TinyEngine, letters: str, *, logging: bool = False):
    handler = CompactionHandler(engine, AGENT)
    spy = Spy()
    builtins: list[tuple[str, object]] = [("compaction", handler), ("spy", spy)]
    if logging:
        builtins.insert(0, ("logging", LoggingPlugin()))
    hooks = Hooks(builtins=builtins)
    conversation = Conversation(id="c", agent=AGENT, context=pattern(letters), hooks=hooks)
    return conversation, handler, spy


def respond(conversation: Conversation, total_tokens: int, *, tool_call: bool = False):
    """Append an assistant message with usage and build its response event."""
    usage = Usage.reported(prompt_tokens=total_tokens - 10, completion_tokens=10)
    message = (
        pattern("ut")[1].model_copy(update={"usage": usage})
        if tool_call
        else TextMessage.assistant("answer", usage=usage)
    )
    conversation.append(message)
    response = ModelResponse(message=message)
    request = ModelRequest(model=None, messages=())
    return ResponseEvent(conversation=conversation, turn=1, request=request, response=response)


@pytest.mark.anyio
async def test_response_over_threshold_compacts_and_logs():
    engine = TinyEngine(AGENT)
    conversation, _, spy = setup(engine, "sutrutrutru", logging=True)
    event = respond(conversation, 800)

    with capture_logs() as logs:
        await conversation.hooks.dispatch(event)

    names = [entry["event"] for entry in logs]
    compacted = next(entry for entry in logs if entry["event"] == "context_compacted")
    actual = (
        pattern_of(conversation.context),
        conversation.compactions,
        spy.seen,
        names,
        compacted["original_messages"],
        compacted["compacted_messages"],
    )
    expected = (
        "suutrutrua",
        1,
        [("start", ("threshold", 800, 700)), ("end", ("threshold", (2, 4)))],
        ["response_received", "compaction_triggered", "context_compacted"],
        12,
        10,
    )
    assert actual == expected


@pytest.mark.anyio
async def test_response_under_threshold_leaves_the_context_alone():
    engine = TinyEngine(AGENT)
    conversation, _, spy = setup(engine, "sutrutrutru")
    event = respond(conversation, 699)
    before = conversation.context

    await conversation.hooks.dispatch(event)

    assert (conversation.context is before, spy.seen, engine.calls) == (True, [], [])


@pytest.mark.anyio
async def test_a_response_calling_tools_defers_compaction_to_the_next_request():
    everything = Compact(retention_window=0, eviction_window=1.0)
    engine = TinyEngine(AGENT.model_copy(update={"compact": everything}))
    conversation, _, spy = setup(engine, "sutrutrutru")
    event = respond(conversation, 800, tool_call=True)

    await conversation.hooks.dispatch(event)
    at_response = (len(engine.calls), pattern_of(conversation.context))
    conversation.append(pattern("utr")[2])
    await conversation.hooks.dispatch(RequestEvent(conversation=conversation, turn=2))

    context = conversation.context
    actual = (at_response, pattern_of(context), spy.seen[0][1][0], find_violations(context))
    assert actual == ((0, "sutrutrutrut"), "suu", "threshold", [])


@pytest.mark.anyio
async def test_a_direct_compaction_keeps_a_pending_tool_call_out_and_counts_it_before():
    everything = Compact(retention_window=0, eviction_window=1.0)
    engine = TinyEngine(AGENT.model_copy(update={"compact": everything}))
    conversation, handler, _ = setup(engine, "sutrutrutru")
    respond(conversation, 800, tool_call=True)
    pending = conversation.context[-1]
    before = conversation.context

    result = await handler.compact(conversation, "threshold")

    context = conversation.context
    assert result is not None
    actual = (
        pattern_of(context),
        context[-1] is pending,
        context.token_count().is_actual(),
        (result.original_messages, result.original_tokens),
        (result.compacted_messages, result.compacted_tokens),
    )
    assert actual == (
        "suut",
        True,
        False,
        (len(before), int(before.token_count())),
        (len(context), int(context.token_count())),
    )


@pytest.mark.anyio
async def test_request_preflight_compacts_a_context_already_over_the_threshold():
    engine = TinyEngine(AGENT)
    big = "x" * 2800  # over the 700-token threshold, under the 1,000-token window
    conversation, _, spy = setup(engine, "sutrutr")
    conversation.append(TextMessage.user(big))

    await conversation.hooks.dispatch(RequestEvent(conversation=conversation, turn=1))

    assert (spy.seen[0][1][0], conversation.compactions, engine.calls) == (
        "preflight",
        1,
        ["automatic"],
    )


@pytest.mark.anyio
async def test_failed_compaction_fires_event_and_keeps_the_context():
    engine = TinyEngine(AGENT, failing=True)
    conversation, _, spy = setup(engine, "sutrutrutru")
    event = respond(conversation, 800)
    before = conversation.context

    await conversation.hooks.dispatch(event)

    assert (conversation.context is before, spy.seen[-1]) == (
        True,
        ("failed", ("threshold", "compaction failed during summary: tiny engine told to fail")),
    )


@pytest.mark.anyio
async def test_loop_guard_holds_back_after_an_ineffective_compaction_then_retries_forced():
    engine = TinyEngine(AGENT, noop=True)
    conversation, handler, spy = setup(engine, "sutrutrutru")

    for total in (900, 960, 970):  # threshold 700: held until 900 + 10% of 700 = 970
        await conversation.hooks.dispatch(respond(conversation, total))
    held_after_retry = (handler.suspended, list(engine.calls))
    await conversation.hooks.dispatch(respond(conversation, 100))

    kinds = [kind for kind, _ in spy.seen]
    actual = (held_after_retry, handler.suspended, kinds, spy.seen[2][1], spy.seen[-1][1])
    expected = (
        (True, ["automatic", "forced"]),
        False,
        ["start", "end", "suspended", "start", "end", "suspended"],
        (1, 700, 970, 4),
        (2, 700, 970 + 140, 8),
    )
    assert actual == expected


@pytest.mark.anyio
async def test_loop_guard_retries_after_a_number_of_turns_without_growth():
    engine = TinyEngine(AGENT, noop=True)
    conversation, _, _ = setup(engine, "sutrutrutru")

    await conversation.hooks.dispatch(respond(conversation, 900))
    calls_while_held = []
    for _ in range(4):
        conversation.turns += 1
        await conversation.hooks.dispatch(respond(conversation, 900))
        calls_while_held.append(len(engine.calls))

    assert calls_while_held == [1, 1, 1, 2]


@pytest.mark.anyio
async def test_loop_guard_judges_a_compaction_by_the_next_reported_usage():
    engine = TinyEngine(AGENT)
    conversation, handler, spy = setup(engine, "sutrutrutru")

    for total in (900, 900, 900):
        await conversation.hooks.dispatch(respond(conversation, total))
    held = (len(engine.calls), handler.suspended)
    await conversation.hooks.dispatch(respond(conversation, 1000))

    kinds = [kind for kind, _ in spy.seen]
    actual = (held, engine.calls, kinds)
    assert actual == (
        (1, True),
        ["automatic", "forced"],
        ["start", "end", "suspended", "start", "end"],
    )


@pytest.mark.anyio
async def test_context_overflow_forces_a_compaction_even_when_held_back():
    engine = TinyEngine(AGENT, noop=True)
    conversation, handler, spy = setup(engine, "sutrutrutru")
    await conversation.hooks.dispatch(respond(conversation, 900))
    engine.noop = False
    error = ContextLengthExceeded("m", "too long", 400)

    await conversation.hooks.dispatch(
        ContextOverflowEvent(conversation=conversation, turn=1, error=error)
    )

    actual = (handler.suspended, engine.calls, spy.seen[-1], find_violations(conversation.context))
    assert actual == (
        True,
        ["automatic", "forced"],
        ("end", ("context_length_exceeded", (2, 9))),
        [],
    )


def test_handler_threshold_uses_the_model_window_over_the_agent_one():
    handler = CompactionHandler(TinyEngine(AGENT), AGENT, context_length=200_000)

    assert handler.threshold == 140_000


def test_handler_tells_the_engine_about_the_model_window():
    engine = TinyEngine(AGENT)
    CompactionHandler(engine, AGENT, context_length=10_000)

    assert engine.threshold == 7_000


def test_context_is_never_mutated_in_place():
    context = Context(pattern("su"))
    appended = context.append(TextMessage.assistant("a"))

    assert (len(context), len(appended)) == (2, 3)


@pytest.mark.anyio
async def test_handler_tells_the_engine_when_a_session_starts_and_ends():
    engine = TinyEngine(AGENT)
    conversation, _, _ = setup(engine, "su")
    for _ in range(2):
        await conversation.hooks.dispatch(StartEvent(conversation=conversation))
        await conversation.hooks.dispatch(
            EndEvent(conversation=conversation, reason="final_answer")
        )
    assert (engine.sessions, engine.ended) == (["c", "c"], ["c", "c"])
