"""forge-compact as an OpenAI Agents SDK session, offline (pip install 'forge-compact[agents]').

The SDK's own ScriptedModel plays a coding model that reads, edits and tests a
file per turn, three tool calls at a time, over four user turns. ForgeSession
stores the Responses items and compacts them at 3,000 tokens; each run starts
from the compacted history. Run: python examples/adapters/agents_sdk_session.py
"""

from __future__ import annotations

import asyncio

from agents import Agent, RunConfig, Runner, function_tool
from agents.testing import ScriptedModel, assistant_message, function_call

from forge_app.adapters import ForgeSession
from forge_domain import Compact

RUNS = 4


def steps() -> list[object]:
    """Each run: two turns of three parallel calls, then an answer."""
    script: list[object] = []
    for run in range(RUNS):
        for turn in (2 * run, 2 * run + 1):
            path = f"src/part_{turn}.py"
            script.append(
                [
                    function_call("read_file", {"path": path}, call_id=f"r{turn}"),
                    function_call(
                        "write_file",
                        {"path": path, "content": "def divide(a, b): ...\n" * 20},
                        call_id=f"w{turn}",
                    ),
                    function_call(
                        "shell",
                        {"command": f"pytest -q tests/test_part_{turn}.py"},
                        call_id=f"t{turn}",
                    ),
                ]
            )
        script.append([assistant_message(f"Parts {2 * run} and {2 * run + 1} are fixed.")])
    return script


@function_tool
def read_file(path: str) -> str:
    """Read a file."""
    return f"{path}: " + "def divide(a, b): return a / b\n" * 60


@function_tool
def write_file(path: str, content: str) -> str:
    """Write a file."""
    return f"wrote {len(content)} bytes to {path}"


@function_tool
def shell(command: str) -> str:
    """Run a command."""
    return f"$ {command}\n" + "test_divide PASSED\n" * 60


async def main() -> None:
    session = ForgeSession("demo", Compact(token_threshold=3_000, retention_window=4))
    agent = Agent(
        name="coder",
        instructions="You are a careful coder.",
        model=ScriptedModel(steps()),  # type: ignore[arg-type]
        tools=[read_file, write_file, shell],
    )
    config = RunConfig(tracing_disabled=True)
    prompts = ["Fix divide(): it must raise ZeroDivisionError when b == 0"]
    prompts += [f"Continue with parts {2 * run} and {2 * run + 1}." for run in range(1, RUNS)]
    for prompt in prompts:
        result = await Runner.run(agent, prompt, session=session, run_config=config)
        print(result.final_output)
    for number, compaction in enumerate(session.compactions, 1):
        print(
            f"compaction {number} ({compaction.engine}): "
            f"{compaction.original_tokens} -> {compaction.compacted_tokens} tokens"
        )
    items = await session.get_items()
    print(f"compactions: {len(session.compactions)}, items kept: {len(items)}")
    await session.aclose()  # the engine's resources (the llm engine's HTTP client)


if __name__ == "__main__":
    asyncio.run(main())
