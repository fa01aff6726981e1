"""HistoryCompactor: when it compacts, what it keeps out, and when it waits."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from forge_app.adapters import HistoryCompactor
from forge_domain import (
    Agent,
    BaseContextEngine,
    Compact,
    CompactionMode,
    CompactionOutcome,
    Context,
    TextMessage,
    ToolCall,
    ToolResult,
    Usage,
    compaction_outcome,
)

pytestmark = pytest.mark.anyio


class StubbornEngine(BaseContextEngine):
    """Never manages to compact; counts the attempts."""

    name = "stubborn"

    def __init__(self, agent: Agent) -> None:
        self.calls: list[CompactionMode] = []
        super().__init__(agent)

    async def compress(
        self, context: Context, *, focus: str | None = None, mode: CompactionMode = "automatic"
    ) -> CompactionOutcome:
        self.calls.append(mode)
        return compaction_outcome(context, context, None, engine=self.name)


def conversation(turns: int, *, pending: bool = False) -> Context:
    messages: list = [TextMessage.system("You are a coder."), TextMessage.user("Fix divide().")]
    for t in range(turns):
        call = ToolCall(id=f"c{t}", name="read_file", arguments=f'{{"path": "src/p{t}.py"}}')
        messages += [TextMessage.assistant(None, (call,)), ToolResult.of(f"c{t}", "x" * 2_000)]
    if pending:
        call = ToolCall(id="late", name="shell", arguments='{"command": "pytest"}')
        messages.append(TextMessage.assistant(None, (call,)))
    return Context(messages)


async def test_history_compactor_does_nothing_below_the_threshold():
    compactor = HistoryCompactor(Compact(token_threshold=100_000))

    assert (await compactor.compact(conversation(3)), compactor.compactions) == (None, [])


async def test_history_compactor_keeps_a_call_without_results_out_and_last():
    pending = conversation(6, pending=True)
    compactor = HistoryCompactor(Compact(token_threshold=2_000, retention_window=2))

    actual = await compactor.compact(pending)

    assert actual is not None
    smaller = int(actual.token_count()) < int(pending.token_count())
    assert (smaller, actual[-1] is pending[-1]) == (True, True)


async def test_history_compactor_waits_for_growth_after_an_ineffective_compaction():
    agent = Agent(id="a", compact=Compact(token_threshold=2_000))
    engine = StubbornEngine(agent)
    compactor = HistoryCompactor(agent, engine=engine)

    first = await compactor.compact(conversation(4))
    again = await compactor.compact(conversation(4))  # no growth: held back
    grown = await compactor.compact(conversation(6))  # 1,000 tokens more: tried again

    assert (first, again, grown) == (None, None, None)
    assert engine.calls == ["automatic", "forced", "automatic", "forced"]


async def test_history_compactor_leaves_an_invalid_history_alone():
    half_answered = conversation(6, pending=True).append(ToolResult.of("other", "orphan"))
    compactor = HistoryCompactor(Compact(token_threshold=2_000))

    with capture_logs() as logs:
        actual = await compactor.compact(half_answered)

    assert (actual, [log["event"] for log in logs]) == (None, ["compaction_skipped"])


def test_history_compactor_tells_an_injected_engine_the_model_window():
    engine = StubbornEngine(Agent(id="a"))  # built without a window: 70% of 128,000

    HistoryCompactor(engine=engine, context_length=4_000)

    assert engine.threshold == 2_800


async def test_history_compactor_does_not_count_a_held_call_by_its_stale_usage():
    """The held-back call carries the usage of the request before the compaction."""
    pending = conversation(6, pending=True)
    measured = Usage.reported(prompt_tokens=int(pending.token_count()), completion_tokens=20)
    call = pending[-1].model_copy(update={"usage": measured})
    reported = Context([*pending[:-1], call])
    compactor = HistoryCompactor(Compact(token_threshold=2_000, retention_window=2))

    actual = await compactor.compact(reported)

    assert actual is not None
    assert (actual[-1] is call, actual.usage_floor) == (True, len(actual))
    assert int(actual.token_count()) < int(reported.token_count()) // 2


async def test_history_compactor_compact_before_waits_for_growth_after_saving_nothing():
    agent = Agent(id="a", compact=Compact(token_threshold=2_000))
    engine = StubbornEngine(agent)
    compactor = HistoryCompactor(agent, engine=engine)

    first = await compactor.compact_before(conversation(4), 4)
    again = await compactor.compact_before(conversation(4), 4)  # no growth: held back
    grown = await compactor.compact_before(conversation(6), 4)  # 1,000 tokens more: tried again

    assert (first, again, grown, engine.calls) == (None, None, None, ["forced", "forced"])
