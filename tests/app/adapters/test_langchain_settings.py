"""ForgeCompactionMiddleware: LangChain's trigger vocabulary, and the state update it returns."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from forge_app import FrameEngine
from forge_app.adapters import ForgeCompactionMiddleware
from forge_domain import Agent
from tests.app.adapters import scenario

pytestmark = pytest.mark.anyio

SETTINGS = [
    ({"trigger": ("tokens", 5_000)}, (5_000, None, 6)),
    ({"trigger": ("messages", 30)}, (89_600, 30, 6)),
    ({"trigger": ("fraction", 0.5), "context_length": 10_000}, (5_000, None, 6)),
    (
        {"trigger": [("tokens", 8_000), ("fraction", 0.5)], "context_length": 10_000},
        (5_000, None, 6),
    ),
    ({"trigger": [{"tokens": 4_000}, ("messages", 12)]}, (4_000, 12, 6)),
    ({"keep": ("messages", 3)}, (89_600, None, 3)),
]


@pytest.mark.parametrize(
    ("options", "expected"), SETTINGS, ids=[str(options) for options, _ in SETTINGS]
)
def test_middleware_reads_langchain_trigger_vocabulary(options, expected):
    agent = ForgeCompactionMiddleware(**options).compactor.agent

    actual = (
        agent.compaction_threshold(),
        agent.compact.message_threshold,
        agent.compact.retention_window,
    )

    assert actual == expected


REFUSED = [
    ({"trigger": ("fraction", 0.5)}, "needs the model's window"),
    ({"trigger": {"tokens": 4_000, "messages": 10}}, "several conditions"),
    ({"trigger": ("tokens", 0)}, "must be > 0"),
    ({"trigger": ("turns", 3)}, "expected"),
    ({"keep": ("tokens", 2_000)}, "only \\('messages', N\\)"),
]


@pytest.mark.parametrize(("options", "match"), REFUSED, ids=[m for _, m in REFUSED])
def test_middleware_refuses_what_it_cannot_honour(options, match):
    with pytest.raises(ValueError, match=match):
        ForgeCompactionMiddleware(**options)


def conversation(turns: int) -> list:
    messages: list = [HumanMessage(scenario.TASK, id="task")]
    for t in range(turns):
        calls = scenario.calls(t)
        messages.append(
            AIMessage("", tool_calls=[{"name": n, "args": a, "id": c} for c, n, a in calls])
        )
        messages.extend(
            ToolMessage(
                scenario.shell("x") if n == "shell" else "ok " * 300, tool_call_id=c, name=n
            )
            for c, n, _ in calls
        )
    return messages


async def test_middleware_replaces_all_messages_keeping_untouched_originals():
    messages = conversation(6)
    middleware = ForgeCompactionMiddleware(trigger=("tokens", 3_000), keep=("messages", 4))

    update = await middleware.abefore_model({"messages": messages}, runtime=None)  # type: ignore[arg-type]

    assert update is not None
    first, *rest = update["messages"]
    assert (isinstance(first, RemoveMessage), first.id) == (True, REMOVE_ALL_MESSAGES)
    assert (
        rest[0] is messages[0],
        [m is o for m, o in zip(rest[-4:], messages[-4:], strict=True)],
    ) == (
        True,
        [True] * 4,
    )
    assert rest[1].additional_kwargs == {"lc_source": "summarization"}


async def test_middleware_leaves_state_alone_below_the_trigger():
    middleware = ForgeCompactionMiddleware(trigger=("tokens", 100_000))

    update = await middleware.abefore_model({"messages": conversation(2)}, runtime=None)  # type: ignore[arg-type]

    assert update is None


async def test_middleware_compacts_on_the_usage_the_provider_reported():
    messages = conversation(2)
    usage = {"input_tokens": 40_000, "output_tokens": 50, "total_tokens": 40_050}
    messages[-4] = messages[-4].model_copy(update={"usage_metadata": usage})  # the last AIMessage
    middleware = ForgeCompactionMiddleware(trigger=("tokens", 30_000), keep=("messages", 4))

    estimated = await ForgeCompactionMiddleware(trigger=("tokens", 30_000)).abefore_model(
        {"messages": conversation(2)},
        runtime=None,  # type: ignore[arg-type]
    )
    reported = await middleware.abefore_model({"messages": messages}, runtime=None)  # type: ignore[arg-type]

    assert (estimated, reported is not None) == (None, True)


def test_middleware_tells_an_injected_engine_the_model_window():
    engine = FrameEngine(Agent(id="a"))  # built without a window: 70% of 128,000

    ForgeCompactionMiddleware(engine=engine, context_length=4_000)

    assert engine.threshold == 2_800
