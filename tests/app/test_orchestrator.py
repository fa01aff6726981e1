"""The agent loop with a FunctionModel: events, tools, limits, retries, overflow, cancellation."""

from __future__ import annotations

import anyio
import pytest
from structlog.testing import capture_logs

from forge_app.errors import ContextLengthExceeded, HookFailed, ProviderUnavailable, ToolFailed
from forge_app.runtime._hookspecs import hookimpl
from forge_app.runtime._model import FunctionModel, ModelRequest, ModelResponse
from forge_app.runtime._orchestrator import Orchestrator, RetryPolicy
from forge_app.runtime._tools import Tool, ToolRegistry
from forge_domain import Agent, Compact, PluginSelection, TextMessage, ToolCall, Usage
from forge_domain.formats import find_violations
from forge_domain.testing import pattern_of
from tests.app.tiny_engine import TinyEngine

AGENT = Agent(id="loop", model="m", system_prompt="be brief", max_turns=5)
NO_WAIT = RetryPolicy(attempts=3, initial_delay=0.0, max_delay=0.0)


class EventLog:
    """Records the name of every event, with the turn when there is one."""

    def __init__(self) -> None:
        self.names: list[str] = []

    @hookimpl
    def forge_on_start(self) -> None:
        self.names.append("start")

    @hookimpl
    def forge_on_request(self, turn) -> None:
        self.names.append(f"request:{turn}")

    @hookimpl
    def forge_on_response(self, turn) -> None:
        self.names.append(f"response:{turn}")

    @hookimpl
    def forge_on_tool_call_start(self, call) -> None:
        self.names.append(f"tool_start:{call.name}")

    @hookimpl
    def forge_on_tool_call_end(self, result) -> None:
        self.names.append(f"tool_end:{'error' if result.is_error else 'ok'}")

    @hookimpl
    def forge_on_turn_end(self, turn) -> None:
        self.names.append(f"turn_end:{turn}")

    @hookimpl
    def forge_on_context_overflow(self) -> None:
        self.names.append("overflow")

    @hookimpl
    def forge_on_end(self, reason) -> None:
        self.names.append(f"end:{reason}")


def call(name: str, arguments: str = "{}", call_id: str = "c1") -> TextMessage:
    return TextMessage.assistant(None, (ToolCall(id=call_id, name=name, arguments=arguments),))


def scripted(*messages: TextMessage) -> FunctionModel:
    queue = list(messages)

    def answer(request: ModelRequest) -> ModelResponse:
        return ModelResponse(message=queue.pop(0))

    return FunctionModel(answer)


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


async def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


def refuse(path: str) -> str:
    """Always fails."""
    raise ToolFailed(f"permission denied: {path}")


TOOLS = ToolRegistry([add, shout, refuse])


@pytest.mark.anyio
async def test_run_executes_tools_until_the_final_answer_and_fires_events_in_order():
    log = EventLog()
    model = scripted(
        call("add", '{"a": 2, "b": 3}'),
        call("shout", '{"text": "hi"}', "c2"),
        TextMessage.assistant("5 and HI"),
    )
    orchestrator = Orchestrator(
        AGENT, model, tools=TOOLS, plugins=[("log", log)], engine=TinyEngine
    )

    conversation = await orchestrator.chat("go")

    outputs = [m.text for m in conversation.context if m.has_tool_result()]
    actual = (pattern_of(conversation.context), outputs, log.names, conversation.turns)
    expected = (
        "sutrtra",
        ["5", "HI"],
        [
            "start",
            "request:1",
            "response:1",
            "tool_start:add",
            "tool_end:ok",
            "turn_end:1",
            "request:2",
            "response:2",
            "tool_start:shout",
            "tool_end:ok",
            "turn_end:2",
            "request:3",
            "response:3",
            "turn_end:3",
            "end:final_answer",
        ],
        3,
    )
    assert actual == expected


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (call("nope"), "unknown tool 'nope' (available: add, shout, refuse)"),
        (call("add", "{not json"), "arguments of tool call 'add' are not valid JSON"),
        (call("add", '{"a": 1}'), "validation error for add_arguments"),
        (call("add", "[1, 2]"), "arguments must be a JSON object"),
        (call("refuse", '{"path": "/etc"}'), "permission denied: /etc"),
    ],
    ids=["unknown-tool", "bad-json", "missing-argument", "not-an-object", "tool-failed"],
)
@pytest.mark.anyio
async def test_tool_failures_become_error_results(message, expected):
    model = scripted(message, TextMessage.assistant("sorry"))
    orchestrator = Orchestrator(AGENT, model, tools=TOOLS, engine=TinyEngine)

    conversation = await orchestrator.chat("go")

    result = conversation.context[3]
    assert (result.has_tool_result(), result.is_error, expected in result.text) == (
        True,
        True,
        True,
    )


@pytest.mark.anyio
async def test_run_stops_at_the_turn_limit_with_a_valid_context():
    model = FunctionModel(
        lambda request: ModelResponse(
            message=call("add", '{"a":1,"b":1}', f"c{len(request.messages)}")
        )
    )
    orchestrator = Orchestrator(AGENT, model, tools=TOOLS, engine=TinyEngine)
    conversation = orchestrator.open("go")

    reason = await orchestrator.run(conversation)

    actual = (reason, conversation.turns, find_violations(conversation.context))
    assert actual == ("max_turns", 5, [])


@pytest.mark.anyio
async def test_transient_errors_are_retried_and_logged():
    failures = [ProviderUnavailable("m", "rate limited", 429)] * 2

    def flaky(request: ModelRequest) -> ModelResponse:
        if failures:
            raise failures.pop()
        return ModelResponse(message=TextMessage.assistant("finally"))

    orchestrator = Orchestrator(AGENT, FunctionModel(flaky), retry=NO_WAIT, engine=TinyEngine)

    with capture_logs() as logs:
        conversation = await orchestrator.chat("go")

    retries = [e["attempt"] for e in logs if e["event"] == "model_call_retried"]
    assert (conversation.context[-1].text, retries) == ("finally", [1, 2])


@pytest.mark.anyio
async def test_retries_give_up_after_the_policy_attempts():
    def down(request: ModelRequest) -> ModelResponse:
        raise ProviderUnavailable("m", "down", 503)

    model = FunctionModel(down)
    log = EventLog()
    orchestrator = Orchestrator(
        AGENT, model, retry=NO_WAIT, plugins=[("log", log)], engine=TinyEngine
    )

    with pytest.raises(ProviderUnavailable):
        await orchestrator.chat("go")

    assert (len(model.requests), log.names[-1]) == (3, "end:error")


def overflowing_model(limit: int) -> FunctionModel:
    """Rejects requests with more than ``limit`` messages as too long."""

    def answer(request: ModelRequest) -> ModelResponse:
        if len(request.messages) > limit:
            raise ContextLengthExceeded("m", "maximum context length exceeded", 400)
        return ModelResponse(message=TextMessage.assistant("fits now"))

    return FunctionModel(answer)


LONG = Agent(id="long", model="m", compact=Compact(retention_window=2))


@pytest.mark.anyio
async def test_context_length_exceeded_forces_a_compaction_and_retries_once():
    engines: list[TinyEngine] = []

    def engine(agent: Agent) -> TinyEngine:
        engines.append(TinyEngine(agent))
        return engines[-1]

    log = EventLog()
    model = overflowing_model(limit=6)
    orchestrator = Orchestrator(LONG, model, plugins=[("log", log)], engine=engine)
    conversation = orchestrator.open([TextMessage.user("q"), TextMessage.assistant("a")] * 5)

    await orchestrator.run(conversation)

    actual = (
        [len(r.messages) for r in model.requests],
        engines[-1].calls,
        "overflow" in log.names,
        conversation.context[-1].text,
    )
    assert actual == ([10, 4], ["forced"], True, "fits now")


@pytest.mark.anyio
async def test_context_length_exceeded_without_compaction_fails_the_run():
    agent = LONG.model_copy(update={"plugins": PluginSelection(disable=("compaction",))})
    orchestrator = Orchestrator(agent, overflowing_model(limit=0), engine=TinyEngine)

    with pytest.raises(ContextLengthExceeded):
        await orchestrator.chat("first question that is too long")


class Exploding:
    @hookimpl
    def forge_on_tool_call_end(self) -> None:
        raise ValueError("plugin bug")


@pytest.mark.anyio
async def test_failing_plugin_aborts_the_run_and_leaves_a_valid_context():
    log = EventLog()
    model = scripted(call("add", '{"a": 1, "b": 2}'))
    orchestrator = Orchestrator(
        AGENT,
        model,
        tools=TOOLS,
        plugins=[("log", log), ("exploding", Exploding())],
        engine=TinyEngine,
    )
    conversation = orchestrator.open("go")

    with pytest.raises(HookFailed) as raised:
        await orchestrator.run(conversation)

    actual = (raised.value.plugin, find_violations(conversation.context), log.names[-1])
    assert actual == ("exploding", [], "end:error")


@pytest.mark.anyio
async def test_cancelled_run_leaves_a_consistent_conversation():
    started = anyio.Event()

    async def hang(seconds: int) -> str:
        """Never returns in time."""
        started.set()
        await anyio.sleep(seconds)
        return "done"

    log = EventLog()
    model = scripted(call("hang", '{"seconds": 60}'))
    orchestrator = Orchestrator(
        AGENT, model, tools=ToolRegistry([hang]), plugins=[("log", log)], engine=TinyEngine
    )
    conversation = orchestrator.open("go")

    async with anyio.create_task_group() as group:
        group.start_soon(orchestrator.run, conversation)
        await started.wait()
        group.cancel_scope.cancel()

    actual = (pattern_of(conversation.context), find_violations(conversation.context))
    assert (actual, log.names[-1]) == (("sute", []), "end:cancelled")


@pytest.mark.anyio
async def test_usage_accumulates_over_the_run():
    usage = Usage.reported(prompt_tokens=10, completion_tokens=2)
    model = scripted(
        call("add", '{"a": 1, "b": 2}').model_copy(update={"usage": usage}),
        TextMessage.assistant("3", usage=usage),
    )
    orchestrator = Orchestrator(AGENT, model, tools=TOOLS, engine=TinyEngine)

    conversation = await orchestrator.chat("go")

    assert conversation.usage == usage.accumulate(usage)


def test_tool_schema_comes_from_the_signature():
    actual = Tool.of(add).schema()

    expected = {
        "type": "function",
        "function": {
            "name": "add",
            "description": "Add two numbers.",
            "parameters": {
                "additionalProperties": False,
                "properties": {
                    "a": {"title": "A", "type": "integer"},
                    "b": {"title": "B", "type": "integer"},
                },
                "required": ["a", "b"],
                "type": "object",
            },
        },
    }
    assert actual == expected


def test_agent_tools_narrow_the_registry():
    agent = AGENT.model_copy(update={"tools": ("add",)})
    orchestrator = Orchestrator(agent, scripted(), tools=TOOLS, engine=TinyEngine)

    assert [s["function"]["name"] for s in orchestrator.tools.schemas()] == ["add"]


class _ClosableEngine(TinyEngine):
    """Records each release of what it holds."""

    def __init__(self, agent: Agent) -> None:
        super().__init__(agent)
        self.closed = 0

    async def aclose(self) -> None:
        self.closed += 1


@pytest.mark.anyio
async def test_a_conversation_releases_its_engine_when_closed_and_only_then():
    engines: list[_ClosableEngine] = []

    def factory(agent: Agent) -> _ClosableEngine:
        engines.append(_ClosableEngine(agent))
        return engines[-1]

    orchestrator = Orchestrator(AGENT, scripted(TextMessage.assistant("done")), engine=factory)
    conversation = await orchestrator.chat("go")
    before = engines[0].closed

    await conversation.aclose()

    assert (len(engines), before, engines[0].closed, conversation.engine is engines[0]) == (
        1,
        0,
        1,
        True,
    )
