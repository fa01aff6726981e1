"""ForgeCompactionMiddleware: LangChain's trigger vocabulary, and the state update it returns."""

from __future__ import annotations

import re

import pytest
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from forge_app import FrameEngine
from forge_app.adapters import ForgeCompactionMiddleware
from forge_domain import Agent, Compact
from forge_domain import Agent as ForgeAgent
from tests.app.adapters import scenario

pytestmark = pytest.mark.anyio

FIRES = [  # conversation(2): 9 messages, about 2,000 tokens
    ({"trigger": ("tokens", 1_500)}, True),
    ({"trigger": ("tokens", 5_000)}, False),
    ({"trigger": ("messages", 9)}, True),
    ({"trigger": ("messages", 10)}, False),
    ({"trigger": ("fraction", 0.5), "context_length": 3_000}, True),
    ({"trigger": {"tokens": 1_500, "messages": 10}}, False),  # AND: one condition fails
    ({"trigger": {"tokens": 1_500, "messages": 9}}, True),
    ({"trigger": [{"tokens": 9_000, "messages": 2}, ("messages", 5)]}, True),  # OR
    ({"trigger": None}, False),  # never, as LangChain's
    ({"trigger": []}, False),
    ({"trigger": ("tokens", 1_000), "token_counter": lambda messages: 10}, False),
    ({"trigger": ("tokens", 100), "token_counter": lambda messages: 100}, True),
    ({"settings": ForgeAgent(id="a", context_length=2_000)}, True),  # omitted: the agent's 70%
    ({"settings": ForgeAgent(id="a", context_length=4_000)}, False),
]


def _stable_id(options: dict) -> str:
    """A test id that is the same in every process (a function's repr holds its address)."""
    return re.sub(r" at 0x[0-9a-f]+", "", str(options))


@pytest.mark.parametrize(("options", "expected"), FIRES, ids=[_stable_id(o) for o, _ in FIRES])
async def test_middleware_fires_as_langchain_triggers_say(options, expected):
    middleware = ForgeCompactionMiddleware(keep=("messages", 3), **options)

    update = await middleware.abefore_model({"messages": conversation(2)}, runtime=None)  # type: ignore[arg-type]

    assert (update is not None) == expected


KEEP = [
    ({}, ("messages", 20)),  # LangChain's default
    ({"settings": Compact(retention_window=4)}, ("messages", 4)),
    ({"keep": ("tokens", 2_000)}, ("tokens", 2_000)),
    ({"keep": ("fraction", 0.25), "context_length": 8_000}, ("fraction", 0.25)),
]


@pytest.mark.parametrize(("options", "expected"), KEEP, ids=[_stable_id(o) for o, _ in KEEP])
def test_middleware_keeps_what_keep_says_by_default_langchains_20(options, expected):
    assert ForgeCompactionMiddleware(**options).keep == expected


REFUSED = [
    ({"trigger": ("fraction", 0.5)}, ValueError, "Model profile information is required"),
    ({"keep": ("fraction", 0.5)}, ValueError, "Model profile information is required"),
    ({"trigger": ("tokens", 0)}, ValueError, "trigger thresholds must be greater than 0"),
    ({"trigger": ("turns", 3)}, ValueError, "Unsupported context size type turns"),
    ({"trigger": ("tokens", 1000.5)}, ValueError, "tokens trigger values must be integers"),
    ({"trigger": ("messages", True)}, ValueError, "messages trigger value must be numeric"),
    ({"trigger": {"messages": "10"}}, ValueError, "messages trigger values must be integers"),
    ({"trigger": {"fraction": 1.5}}, ValueError, "Fractional trigger values must be between"),
    ({"trigger": {}}, ValueError, "must specify at least one"),
    ({"trigger": ["x"]}, TypeError, "Unsupported trigger item type"),
    ({"trigger": "x"}, TypeError, "Unsupported trigger type"),
    ({"keep": ("messages", 2.5)}, ValueError, "messages keep values must be integers"),
    ({"keep": ("tokens", -1)}, ValueError, "keep thresholds must be greater than 0"),
]


@pytest.mark.parametrize(("options", "error", "match"), REFUSED, ids=[m for *_, m in REFUSED])
def test_middleware_refuses_invalid_sizes_naming_them(options, error, match):
    with pytest.raises(error, match=match):
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
        len(rest),
        [m is o for m, o in zip(rest[-4:], messages[-4:], strict=True)],
    ) == (
        5,
        [True] * 4,
    )
    assert rest[0].additional_kwargs == {"lc_source": "summarization"}
    assert rest[0].text.startswith("Here is a summary of the conversation to date:\n\n")
    assert scenario.TASK in rest[0].text  # the task, word for word, in the summary


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


async def test_middleware_bounds_the_message_count_its_trigger_names():
    middleware = ForgeCompactionMiddleware(trigger=("messages", 10), keep=("messages", 4))

    update = await middleware.abefore_model({"messages": conversation(6)}, runtime=None)  # type: ignore[arg-type]

    assert update is not None
    assert len(update["messages"][1:]) == 5  # the summary, the 4 kept


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_middleware_summarises_user_messages_alone_keeping_every_text(mode, blockbuster):
    """Only user messages before the cut (the engine would keep them): one summary holds
    each of them word for word, and the count is the bound LangChain's would keep."""
    if mode == "sync":  # a sync call on a loop's thread blocks it: the caller's choice
        blockbuster.deactivate()
    messages = [HumanMessage(f"request number {n}: add feature {n * 7}") for n in range(12)]
    middleware = ForgeCompactionMiddleware(trigger=("messages", 10), keep=("messages", 4))
    state = {"messages": messages}
    if mode == "sync":
        with middleware:
            update = middleware.before_model(state, runtime=None)  # type: ignore[arg-type]
    else:
        async with middleware:
            update = await middleware.abefore_model(state, runtime=None)  # type: ignore[arg-type]

    assert update is not None
    summary, *kept = update["messages"][1:]
    assert (kept, summary.additional_kwargs) == (messages[-4:], {"lc_source": "summarization"})
    assert [m.text for m in messages[:8] if m.text not in summary.text] == []
    assert len(middleware.compactions) == 1


async def test_middleware_summary_longer_than_a_short_part_still_replaces_it():
    """A few words before the cut: the summary is longer, but the bound asked for wins."""
    messages = [HumanMessage("1"), AIMessage("2"), HumanMessage("3"), AIMessage("4")]
    middleware = ForgeCompactionMiddleware(trigger=("messages", 4), keep=("messages", 2))

    update = await middleware.abefore_model({"messages": messages}, runtime=None)  # type: ignore[arg-type]

    assert update is not None
    summary, *kept = update["messages"][1:]
    assert kept == messages[2:]
    assert ("````\n1\n````" in summary.text, "````\n2\n````" in summary.text) == (True, True)
    result = middleware.compactions[0]
    assert result.compacted_tokens > result.original_tokens  # longer, and still applied


async def test_middleware_keeps_a_task_the_summary_cannot_hold_word_for_word():
    """A task longer than a summary keeps a text (2,000 characters) stays a message of its
    own before the summary: the bound yields to the task, never the other way."""
    task = "Implement the parser. " + "Requirement: keep every field. " * 120
    messages = [HumanMessage(task), AIMessage("reading"), HumanMessage("go on"), AIMessage("ok")]
    middleware = ForgeCompactionMiddleware(trigger=("messages", 4), keep=("messages", 1))

    update = await middleware.abefore_model({"messages": messages}, runtime=None)  # type: ignore[arg-type]

    assert update is not None
    first, summary, *kept = update["messages"][1:]
    assert (first.text, kept) == (task, messages[-1:])
    assert (summary.additional_kwargs, "go on" in summary.text) == (
        {"lc_source": "summarization"},
        True,
    )
    assert "Implement the parser" not in summary.text  # no cut copy of it in the summary


async def test_middleware_folds_its_own_summary_at_the_next_compaction():
    """The summary reads back (LangChain's first line taken off): the next compaction folds
    it into one summary holding the task, not a summary of a summary."""
    middleware = ForgeCompactionMiddleware(trigger=("messages", 5), keep=("messages", 2))
    first = await middleware.abefore_model({"messages": conversation(1)}, runtime=None)  # type: ignore[arg-type]
    assert first is not None
    grown = [*first["messages"][1:], *conversation(2)[5:]]

    second = await middleware.abefore_model({"messages": grown}, runtime=None)  # type: ignore[arg-type]

    assert second is not None
    summary = second["messages"][1]
    counts = (summary.text.count("Here is a summary"), summary.text.count("authoritative record"))
    assert counts == (1, 1)
    assert scenario.TASK in summary.text


def test_middleware_takes_langchains_deprecated_arguments_with_its_warning():
    with pytest.warns(DeprecationWarning, match="max_tokens_before_summary is deprecated"):
        tokens = ForgeCompactionMiddleware(max_tokens_before_summary=1_000)
    with pytest.warns(DeprecationWarning, match="messages_to_keep is deprecated"):
        kept = ForgeCompactionMiddleware(messages_to_keep=3)

    assert (tokens.trigger, kept.keep) == (("tokens", 1_000), ("messages", 3))


async def test_middleware_does_not_wait_after_a_part_that_is_its_summary_alone():
    """A token trigger fired but only the summary is before the cut: nothing to do, and the
    next call, one message later, compacts (no wait for the history to grow by tokens)."""
    middleware = ForgeCompactionMiddleware(trigger=("messages", 3), keep=("messages", 2))
    first = await middleware.abefore_model(
        {"messages": [HumanMessage("task one"), AIMessage("a"), HumanMessage("b")]},
        runtime=None,  # type: ignore[arg-type]
    )
    assert first is not None
    summary, *kept = first["messages"][1:]
    alone = await middleware.abefore_model({"messages": [summary, *kept]}, runtime=None)  # type: ignore[arg-type]
    grown = [summary, *kept, AIMessage("c")]

    again = await middleware.abefore_model({"messages": grown}, runtime=None)  # type: ignore[arg-type]

    assert (alone, again is not None) == (None, True)
    assert [m.text for m in again["messages"][2:]] == ["b", "c"]
