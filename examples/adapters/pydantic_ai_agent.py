"""forge-compact inside a pydantic-ai agent, offline (pip install 'forge-compact[pydantic-ai]').

A scripted FunctionModel plays a coding model that reads, edits and tests a file
per turn, three tool calls at a time; ForgeHistoryProcessor compacts the history
whenever it reaches 3,000 tokens. Run: python examples/adapters/pydantic_ai_agent.py
"""

from __future__ import annotations

import itertools

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from forge_app.adapters import ForgeHistoryProcessor
from forge_domain import Compact

TURNS = 8
TURN = itertools.count()


def scripted_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Turn n reads, rewrites and tests src/part_n.py, in parallel; then it answers."""
    turn = next(TURN)
    if turn >= TURNS:
        return ModelResponse(parts=[TextPart("Fixed: divide() raises ZeroDivisionError.")])
    path = f"src/part_{turn}.py"
    return ModelResponse(
        parts=[
            ToolCallPart("read_file", {"path": path}),
            ToolCallPart("write_file", {"path": path, "content": "def divide(a, b): ...\n" * 20}),
            ToolCallPart("shell", {"command": f"pytest -q tests/test_part_{turn}.py"}),
        ]
    )


processor = ForgeHistoryProcessor(Compact(token_threshold=3_000, retention_window=4))
agent = Agent(
    FunctionModel(scripted_model),
    system_prompt="You are a careful coder.",
    capabilities=[processor.capability()],  # pydantic-ai 1.x: history_processors=[processor]
)


@agent.tool_plain
def read_file(path: str) -> str:
    """Read a file."""
    return f"{path}: " + "def divide(a, b): return a / b\n" * 60


@agent.tool_plain
def write_file(path: str, content: str) -> str:
    """Write a file."""
    return f"wrote {len(content)} bytes to {path}"


@agent.tool_plain
def shell(command: str) -> str:
    """Run a command."""
    return f"$ {command}\n" + "test_divide PASSED\n" * 60


if __name__ == "__main__":
    result = agent.run_sync("Fix divide(): it must raise ZeroDivisionError when b == 0")
    print(result.output)
    for number, compaction in enumerate(processor.compactions, 1):
        print(
            f"compaction {number} ({compaction.engine}): "
            f"{compaction.original_tokens} -> {compaction.compacted_tokens} tokens"
        )
    print(f"compactions: {len(processor.compactions)}, messages kept: {len(result.all_messages())}")
