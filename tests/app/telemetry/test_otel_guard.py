"""What the loop decides after a compaction is marked on the turn's span: the guard's
suspension, a cut to the window."""

from __future__ import annotations

import pytest

from forge_app.runtime._conversation import Conversation
from forge_app.runtime._dispatch import Hooks
from forge_app.runtime._events import EndEvent, RequestEvent
from forge_app.runtime._telemetry import telemetry_plugin
from forge_app.runtime.plugins import CompactionHandler
from forge_domain import Context, ToolResult
from forge_domain.testing import pattern
from tests.app.test_hooks_compaction import AGENT, respond
from tests.app.tiny_engine import TinyEngine

pytestmark = pytest.mark.anyio


def traced(engine: TinyEngine, context: Context) -> Conversation:
    plugin = telemetry_plugin(AGENT)
    handler = CompactionHandler(engine, AGENT)
    hooks = Hooks(builtins=[("otel", plugin), ("compaction", handler)])
    return Conversation(id="c", agent=AGENT, context=context, hooks=hooks)


def events(span) -> list[tuple[str, dict[str, object]]]:
    return [(e.name, dict(e.attributes)) for e in span.events]


async def test_otel_suspension_is_an_event_of_the_span_around_the_compaction(telemetry):
    conversation = traced(TinyEngine(AGENT, noop=True), pattern("sutrutrutru"))
    tracer = telemetry.tracer_provider.get_tracer("test")

    with tracer.start_as_current_span("turn") as turn:
        for total in (900, 960, 970):  # threshold 700: held until 900 + 10% of 700 = 970
            await conversation.hooks.dispatch(respond(conversation, total))
    spans = telemetry.spans("forge_compact.compaction")
    (outer,) = telemetry.spans("turn")

    actual = (
        [(s.attributes["forge_compact.mode"], s.parent.span_id) for s in spans],
        events(outer),
    )
    expected = (
        [
            ("automatic", turn.get_span_context().span_id),
            ("forced", turn.get_span_context().span_id),
        ],
        [
            (
                "forge_compact.suspended",
                {
                    "forge_compact.attempts": attempts,
                    "forge_compact.tokens": tokens,
                    "forge_compact.threshold": 700,
                    "forge_compact.retry_at_tokens": retry,
                    "forge_compact.retry_after_turns": turns,
                },
            )
            for attempts, tokens, retry, turns in ((1, 900, 970, 4), (2, 970, 970 + 140, 8))
        ],
    )
    assert actual == expected


async def test_otel_cut_to_the_window_is_an_event_of_the_turn(telemetry):
    big = pattern("sutrutrua")
    messages = list(big)
    messages[3] = ToolResult.of(messages[3].call_id, "output line\n" * 600)  # ~1,800 tokens
    conversation = traced(TinyEngine(AGENT, noop=True), Context(messages))

    await conversation.hooks.dispatch(RequestEvent(conversation=conversation, turn=1))
    await conversation.hooks.dispatch(EndEvent(conversation=conversation, reason="final_answer"))
    reasons = [
        s.attributes["forge_compact.reason"] for s in telemetry.spans("forge_compact.compaction")
    ]

    actual = (reasons, [events(s) for s in telemetry.spans("forge_compact.turn")])
    suspended = (
        "forge_compact.suspended",
        {
            "forge_compact.attempts": 1,
            "forge_compact.tokens": 1840,
            "forge_compact.threshold": 700,
            "forge_compact.retry_at_tokens": 1910,
            "forge_compact.retry_after_turns": 4,
        },
    )
    cut = ("forge_compact.cut", {"forge_compact.window": 1000, "forge_compact.reach": "task_too"})
    # the preflight compaction changed nothing (suspended), the window one neither: cut
    expected = (["preflight", "window"], [[suspended, cut]])
    assert (int(conversation.token_count()) <= 1000, actual) == (True, expected)
