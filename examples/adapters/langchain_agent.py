"""forge-compact inside a LangChain v1 agent, offline (pip install 'forge-compact[langchain]').

A scripted chat model plays a coding model that reads, edits and tests a file per
turn, three tool calls at a time. ForgeCompactionMiddleware replaces LangChain's
SummarizationMiddleware with the same trigger vocabulary and compacts the state's
messages at 3,000 tokens. Run: python examples/adapters/langchain_agent.py
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain.agents import create_agent
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

from forge_app.adapters import ForgeCompactionMiddleware

TURNS = 8


class ScriptedCoder(BaseChatModel):
    """Turn n reads, rewrites and tests src/part_n.py, in parallel; then it answers."""

    turn: int = 0

    @property
    def _llm_type(self) -> str:
        return "scripted-coder"

    def bind_tools(self, tools: Sequence[object], **kwargs: object) -> ScriptedCoder:  # type: ignore[override]
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: object = None,
        run_manager: object = None,
        **kw: object,
    ) -> ChatResult:
        turn, self.turn = self.turn, self.turn + 1
        if turn >= TURNS:
            reply = AIMessage("Fixed: divide() raises ZeroDivisionError.")
        else:
            path = f"src/part_{turn}.py"
            calls = [
                ("read_file", {"path": path}),
                ("write_file", {"path": path, "content": "def divide(a, b): ...\n" * 20}),
                ("shell", {"command": f"pytest -q tests/test_part_{turn}.py"}),
            ]
            reply = AIMessage(
                "",
                tool_calls=[
                    {"name": name, "args": args, "id": f"call_{turn}_{n}"}
                    for n, (name, args) in enumerate(calls)
                ],
            )
        return ChatResult(generations=[ChatGeneration(message=reply)])


@tool
def read_file(path: str) -> str:
    """Read a file."""
    return f"{path}: " + "def divide(a, b): return a / b\n" * 60


@tool
def write_file(path: str, content: str) -> str:
    """Write a file."""
    return f"wrote {len(content)} bytes to {path}"


@tool
def shell(command: str) -> str:
    """Run a command."""
    return f"$ {command}\n" + "test_divide PASSED\n" * 60


middleware = ForgeCompactionMiddleware(trigger=("tokens", 3_000), keep=("messages", 4))
agent = create_agent(
    ScriptedCoder(),
    tools=[read_file, write_file, shell],
    system_prompt="You are a careful coder.",
    middleware=[middleware],  # instead of SummarizationMiddleware(model, trigger=..., keep=...)
)

if __name__ == "__main__":
    task = "Fix divide(): it must raise ZeroDivisionError when b == 0"
    state = agent.invoke({"messages": [HumanMessage(task)]})
    print(state["messages"][-1].text)
    for number, compaction in enumerate(middleware.compactions, 1):
        print(
            f"compaction {number} ({compaction.engine}): "
            f"{compaction.original_tokens} -> {compaction.compacted_tokens} tokens"
        )
    print(f"compactions: {len(middleware.compactions)}, messages kept: {len(state['messages'])}")
    middleware.close()  # the engine's resources (the llm engine's HTTP client) and event loop
