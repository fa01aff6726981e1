"""What comes after a compaction lands on its span: the loop guard's suspension, a cut."""

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


async def test_otel_suspension_is_an_event_of_the_ineffective_compaction(telemetry):
    conversation = traced(TinyEngine(AGENT, noop=True), pattern("sutrutrutru"))

    for total in (900, 960, 970):  # threshold 700: held until 900 + 10% of 700 = 970
        await conversation.hooks.dispatch(respond(conversation, total))
    await conversation.hooks.dispatch(EndEvent(conversation=conversation, reason="final_answer"))
    spans = telemetry.spans("forge_compact.compaction")

    actual = [(s.attributes["forge_compact.mode"], events(s)) for s in spans]
    expected = [
        (
            mode,
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
            ],
        )
        for mode, attempts, tokens, retry, turns in (
            ("automatic", 1, 900, 970, 4),
            ("forced", 2, 970, 970 + 140, 8),
        )
    ]
    assert actual == expected


async def test_otel_cut_to_the_window_is_an_event_of_the_window_compaction(telemetry):
    big = pattern("sutrutrua")
    messages = list(big)
    messages[3] = ToolResult.of(messages[3].call_id, "output line\n" * 600)  # ~1,800 tokens
    conversation = traced(TinyEngine(AGENT, noop=True), Context(messages))

    await conversation.hooks.dispatch(RequestEvent(conversation=conversation, turn=1))
    await conversation.hooks.dispatch(EndEvent(conversation=conversation, reason="final_answer"))
    window = [
        s
        for s in telemetry.spans("forge_compact.compaction")
        if s.attributes["forge_compact.reason"] == "window"
    ]

    actual = [events(s) for s in window]
    expected = [
        [("forge_compact.cut", {"forge_compact.window": 1000, "forge_compact.reach": "task_too"})]
    ]
    assert (int(conversation.token_count()) <= 1000, actual) == (True, expected)
