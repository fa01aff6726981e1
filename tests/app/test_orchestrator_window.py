"""No request exceeds the model's window: compaction fits, cutting is the last resort."""

from __future__ import annotations

import pytest

from forge_app.errors import ContextDoesNotFit
from forge_app.runtime._hookspecs import hookimpl
from forge_app.runtime._model import FunctionModel, ModelRequest, ModelResponse
from forge_app.runtime._orchestrator import Orchestrator
from forge_app.runtime._tools import Tool, ToolRegistry
from forge_domain import Agent, Compact, CompactionResult, Context, TextMessage, ToolCall
from forge_domain.formats import find_violations

WINDOW = 8_000


def dump_logs(path: str) -> str:
    """Return a huge log (~12,000 tokens, more than the whole window)."""
    return f"log of {path}\n" + "line of output\n" * 3_200 + "ERROR: the last line"


def sent_tokens(request: ModelRequest) -> int:
    return Context.from_openai(list(request.messages)).token_count_approx()


def read_log(path: str) -> str:
    """Return a log of about 1,500 tokens."""
    return "line of output\n" * 400 + path


class Watch:
    """Records the size of the context after each compaction."""

    def __init__(self) -> None:
        self.after: list[int] = []

    @hookimpl
    def forge_on_compaction_end(self, result: CompactionResult) -> None:
        self.after.append(result.compacted_tokens)


def scripted(turns: int, tool: str = "dump_logs") -> tuple[FunctionModel, list[int]]:
    """Call ``tool`` ``turns`` times, then answer; record every request's size."""
    sizes: list[int] = []
    served = iter(range(turns + 1))

    def answer(request: ModelRequest) -> ModelResponse:
        sizes.append(sent_tokens(request))
        number = next(served)
        if number == turns:
            return ModelResponse(message=TextMessage.assistant("done"))
        call = ToolCall(id=f"c{number}", name=tool, arguments=f'{{"path": "{number}"}}')
        return ModelResponse(message=TextMessage.assistant(f"reading {number}", (call,)))

    return FunctionModel(answer), sizes


@pytest.mark.anyio
async def test_tool_outputs_larger_than_the_window_never_make_a_request_overflow():
    agent = Agent(id="a", model="m", system_prompt="be brief", context_length=WINDOW, max_turns=12)
    model, sizes = scripted(8)
    orchestrator = Orchestrator(agent, model, tools=ToolRegistry([Tool.of(dump_logs)]))

    conversation = await orchestrator.chat("read the logs")

    context = conversation.context
    assert (
        len(sizes),
        max(sizes) <= WINDOW,
        find_violations(context),
        context[-1].text,
        context[1].text,
    ) == (9, True, [], "done", "read the logs")


@pytest.mark.anyio
async def test_a_system_prompt_larger_than_the_window_stops_the_run_before_any_request():
    agent = Agent(id="a", model="m", system_prompt="rule " * 8_000, context_length=WINDOW)
    model, sizes = scripted(0)
    orchestrator = Orchestrator(agent, model)

    with pytest.raises(ContextDoesNotFit) as raised:
        await orchestrator.chat("hi")

    error = raised.value
    assert (
        sizes,
        error.window,
        error.tokens > WINDOW,
        error.parts.startswith("system prompt"),
    ) == (
        [],
        WINDOW,
        True,
        True,
    )


@pytest.mark.anyio
async def test_each_automatic_compaction_leaves_the_headroom_below_the_threshold():
    compact = Compact(retention_window=2, eviction_window=0.2, headroom=0.4)
    agent = Agent(id="a", model="m", context_length=20_000, compact=compact, max_turns=30)
    threshold, target = agent.compaction_threshold(), compact.target_tokens(14_000)
    model, _ = scripted(25, "read_log")
    watch = Watch()
    orchestrator = Orchestrator(
        agent, model, tools=ToolRegistry([Tool.of(read_log)]), plugins=[("watch", watch)]
    )

    await orchestrator.chat("read the logs")

    assert (threshold, len(watch.after) >= 2, max(watch.after) <= target) == (14_000, True, True)
