"""A provider whose usage is far below what was sent: distrusted, logged, compaction still on."""

from __future__ import annotations

import dataclasses

import pytest
from structlog.testing import capture_logs

from forge_app.runtime._hookspecs import hookimpl
from forge_app.runtime._model import OpenAIChatModel
from forge_app.runtime._orchestrator import Orchestrator
from tests.app.fake_openai_server import FakeOpenAIServer, Json, Reply
from tests.app.test_orchestrator_openai import SMALL, TOOLS, ToolSession

THRESHOLD = 1400
"""SMALL's threshold: floor(2000 x 0.7)."""


class FlatUsage:
    """Reads files like :class:`ToolSession`, but reports ``total_tokens: 30`` on every call."""

    def __init__(self, turns: int) -> None:
        self.session = ToolSession(turns)

    def __call__(self, body: Json) -> Reply:
        return dataclasses.replace(self.session(body), prompt_tokens=20, completion_tokens=10)


class Sizes:
    """The context's count and estimate after each response, and the count at each compaction."""

    def __init__(self) -> None:
        self.after_response: list[tuple[int, int]] = []
        self.compaction_starts: list[int] = []

    @hookimpl(tryfirst=True)
    def forge_on_response(self, conversation) -> None:
        context = conversation.context
        self.after_response.append((context.token_count().value, context.token_count_approx()))

    @hookimpl
    def forge_on_compaction_start(self, token_count) -> None:
        self.compaction_starts.append(token_count.value)


@pytest.mark.anyio
async def test_flat_usage_of_30_is_distrusted_logged_and_compaction_still_fires():
    sizes = Sizes()
    with FakeOpenAIServer(FlatUsage(turns=8)) as server:
        orchestrator = Orchestrator(
            SMALL,
            OpenAIChatModel(server.client(), SMALL.model),
            tools=TOOLS,
            plugins=[("sizes", sizes)],
        )
        with capture_logs() as logs:
            conversation = await orchestrator.chat("Fix the bug in src/.")
    warnings = [log for log in logs if log["event"] == "usage_distrusted"]
    actual = {
        "answer": conversation.context[-1].text,
        "reported": {
            (log["conversation_id"], log["reported"], log["log_level"]) for log in warnings
        },
        "estimates beyond 4 x 30": all(log["estimate"] > 4 * 30 for log in warnings),
        "warnings": len(warnings),
        "counts near the estimate": all(
            abs(count - estimate) <= 30 for count, estimate in sizes.after_response
        ),
        "compacted": conversation.compactions >= 1,
        "compacted at the threshold": all(count >= THRESHOLD for count in sizes.compaction_starts),
    }
    expected = {
        "answer": "Done with ",
        "reported": {(conversation.id, 30, "warning")},
        "estimates beyond 4 x 30": True,
        "warnings": conversation.turns - 1,  # 30 is plausible for the first (~20 tokens)
        "counts near the estimate": True,
        "compacted": True,
        "compacted at the threshold": True,
    }
    assert actual == expected
