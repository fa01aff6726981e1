"""ForgeSession under the real OpenAI Agents SDK runner, against a loopback OpenAI server."""

from __future__ import annotations

import json
from collections import deque

import pytest
from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    RunConfig,
    Runner,
    SQLiteSession,
    function_tool,
)
from agents.memory import Session, SessionSettings
from agents.testing import ScriptedModel, assistant_message, function_call

from forge_app.adapters import ForgeSession
from forge_domain import Compact, Context
from forge_domain.formats import find_violations, messages_from_responses
from tests.app.adapters import scenario
from tests.app.fake_openai_server import FakeOpenAIServer, Json, Reply

pytestmark = pytest.mark.anyio

RUNS = 4
"""User turns; each asks for two rounds of parallel tool calls, then gets an answer."""


def script() -> deque[Reply]:
    replies: deque[Reply] = deque()
    for run in range(RUNS):
        for turn in (2 * run, 2 * run + 1):
            calls = ((cid, name, json.dumps(args)) for cid, name, args in scenario.calls(turn))
            replies.append(Reply.calls(*calls))
        replies.append(Reply.text(f"{scenario.ANSWER} (run {run})"))
    return replies


def prompt(run: int) -> str:
    return scenario.TASK if run == 0 else f"Continue with parts {2 * run} and {2 * run + 1}."


async def test_agents_sdk_runner_accepts_every_compacted_session():
    replies = script()
    rejected: list[str] = []

    def responder(body: Json) -> Reply:
        rejected.extend(scenario.check(body["messages"]))  # type: ignore[arg-type]
        return replies.popleft()

    session = ForgeSession("chat-1", scenario.SETTINGS)
    config = RunConfig(tracing_disabled=True)
    with FakeOpenAIServer(responder) as server:
        agent = Agent(
            name="coder",
            instructions="You are a careful coder.",
            model=OpenAIChatCompletionsModel(model="gpt-4o", openai_client=server.client()),
            tools=[
                function_tool(scenario.read_file),
                function_tool(scenario.write_file),
                function_tool(scenario.shell),
            ],
        )
        outputs = [
            (await Runner.run(agent, prompt(run), session=session, run_config=config)).final_output
            for run in range(RUNS)
        ]
        requests = [body["messages"] for body in server.requests]

    items = await session.get_items()
    assert outputs == [f"{scenario.ANSWER} (run {run})" for run in range(RUNS)]
    assert rejected == []
    pruned_or_summarised, summarised = scenario.shrinks(requests)  # type: ignore[arg-type]
    assert (pruned_or_summarised >= 2, summarised >= 2) == (True, True)
    assert len(session.compactions) >= 2
    assert scenario.survives(requests[-1]) == []  # type: ignore[arg-type]
    assert [key for item in items for key in item if key.startswith("_")] == []


async def test_agents_sdk_responses_items_stay_valid_through_compaction():
    """The SDK's own ScriptedModel sends Responses items (ids, statuses) straight to the model."""
    steps: list[object] = []
    for run in range(RUNS):
        for turn in (2 * run, 2 * run + 1):
            steps.append([function_call(n, a, call_id=c) for c, n, a in scenario.calls(turn)])
        steps.append([assistant_message(f"{scenario.ANSWER} (run {run})")])
    model = ScriptedModel(steps)  # type: ignore[arg-type]
    session = ForgeSession("chat-2", scenario.SETTINGS)
    agent = Agent(
        name="coder",
        instructions="You are a careful coder.",
        model=model,
        tools=[
            function_tool(scenario.read_file),
            function_tool(scenario.write_file),
            function_tool(scenario.shell),
        ],
    )
    config = RunConfig(tracing_disabled=True)
    for run in range(RUNS):
        await Runner.run(agent, prompt(run), session=session, run_config=config)

    inputs = [call.input for call in model.calls]
    rejected = [
        str(v) for items in inputs for v in find_violations(Context(messages_from_responses(items)))
    ]
    assert rejected == []
    assert len(session.compactions) >= 2
    assert scenario.shrinks(inputs)[1] >= 2  # requests with fewer items than the one before
    assert scenario.survives(inputs[-1]) == []


async def test_forge_session_keeps_its_items_in_a_wrapped_session():
    store = SQLiteSession("wrapped")  # in memory
    session = ForgeSession("chat-3", scenario.SETTINGS, store=store)
    task = {"role": "user", "content": scenario.TASK}
    items: list = [task]
    for turn in range(6):
        for cid, name, args in scenario.calls(turn):
            items.append(
                {
                    "type": "function_call",
                    "call_id": cid,
                    "name": name,
                    "arguments": json.dumps(args),
                }
            )
        for cid, name, args in scenario.calls(turn):
            output = scenario.shell("x") if name == "shell" else scenario.read_file(args["path"])
            items.append({"type": "function_call_output", "call_id": cid, "output": output})

    await session.add_items(items[:1])
    for start in range(1, len(items), 6):  # one turn at a time, as the runner saves them
        await session.add_items(items[start : start + 6])
    stored = await store.get_items()
    last = await session.pop_item()
    after_pop = await session.get_items(limit=2)
    await session.clear_session()

    assert (isinstance(session, Session), len(session.compactions) >= 2) == (True, True)
    assert (stored[0], len(stored) < len(items), last) == (task, True, items[-1])
    assert after_pop == stored[-3:-1]
    assert (await session.get_items(), await store.get_items()) == ([], [])


async def test_forge_session_compacts_the_whole_history_of_a_limited_store():
    """A store's ``session_settings.limit`` limits its readers, not what compaction rewrites."""
    store = SQLiteSession("limited", session_settings=SessionSettings(limit=6))  # in memory
    session = ForgeSession(
        "chat-4", Compact(token_threshold=1_000, retention_window=2), store=store
    )
    task = {"role": "user", "content": "Read the ten small files, then the large one."}
    items: list = [task]
    for n in range(10):
        items.append(
            {"type": "function_call", "call_id": f"c{n}", "name": "read", "arguments": "{}"}
        )
        items.append({"type": "function_call_output", "call_id": f"c{n}", "output": f"small {n}"})
    await session.add_items(items)
    large = [
        {"type": "function_call", "call_id": "large", "name": "read", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "large", "output": "word " * 3_000},
        {"role": "assistant", "content": "Read them all."},
        {"role": "user", "content": "Next."},
    ]
    await session.add_items(large)

    stored = await store.get_items(limit=100)
    assert len(session.compactions) == 1
    assert (stored[0], stored[1:21], stored[-2:]) == (task, items[1:], large[-2:])
    assert len(json.dumps(stored)) < len(json.dumps(items + large))  # the large output shrank
    assert len(await session.get_items()) == 6  # readers still get the store's limit
